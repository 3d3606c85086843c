//! What the integration tests share: the engine run over Ethernet frames, as the scan
//! runs it (decoder, flow table, detector, flow ends).

use std::sync::Arc;
use std::time::Duration;

use netsieve_detect::{Alert, DetectOptions, Detector, FlowData, RuleSet};
use netsieve_packet::capture::Frame;
use netsieve_packet::decode::{Decoder, Packet};
use netsieve_packet::flow::{FlowConfig, FlowTable};

/// Every alert `set` raises over `frames` (frame `i` at `i` ms, packet number `i + 1`),
/// the flows ended after the last one.
pub fn run(set: &Arc<RuleSet>, frames: &[Vec<u8>], opts: DetectOptions) -> Vec<Alert> {
    let mut det = Detector::new(Arc::clone(set), opts);
    let mut flows: FlowTable<FlowData> = FlowTable::new(FlowConfig::default());
    let mut decoder = Decoder::new(false);
    let mut out = Vec::new();
    for (i, data) in frames.iter().enumerate() {
        let frame = Frame {
            ts: Duration::from_millis(i as u64),
            linktype: 1,
            orig_len: data.len() as u32,
            data: data.clone(),
        };
        let mut p = Packet::default();
        decoder.decode(&frame, i as u64 + 1, &mut p);
        match flows.packet(&p, true) {
            Some((f, obs)) => det.inspect(&p, Some((f, &obs)), &mut out),
            None => det.inspect(&p, None, &mut out),
        }
    }
    for mut f in flows.drain() {
        det.flow_end(&mut f, frames.len() as u64 + 1, &mut out);
    }
    out
}
