//! What the integration tests share: the engine run over Ethernet frames, as the scan
//! runs it (decoder, flow table, detector, flow ends), and the frames of made-up
//! conversations to run it over.
#![allow(dead_code)] // each test file uses its own part

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

/// The usual client and server of a made-up conversation.
pub const CLIENT: [u8; 4] = [10, 0, 0, 1];
pub const SERVER: [u8; 4] = [10, 0, 0, 2];

/// One message of a made-up conversation, from the client to the server.
#[derive(Clone, Debug)]
pub struct Msg {
    pub udp: bool,
    pub client: ([u8; 4], u16),
    pub server: ([u8; 4], u16),
    pub payload: Vec<u8>,
}

impl Msg {
    pub fn between(
        udp: bool,
        client: ([u8; 4], u16),
        server: ([u8; 4], u16),
        payload: &[u8],
    ) -> Msg {
        Msg {
            udp,
            client,
            server,
            payload: payload.to_vec(),
        }
    }
}

/// One IPv4 packet of a made-up conversation: UDP, or TCP with `flags`, `seq`, `ack`.
struct Seg<'a> {
    msg: &'a Msg,
    to_server: bool,
    flags: u8,
    seq: u32,
    ack: u32,
    payload: &'a [u8],
}

impl Seg<'_> {
    fn frame(&self) -> Vec<u8> {
        let (client, server) = (self.msg.client, self.msg.server);
        let ((src, sp), (dst, dp)) = if self.to_server {
            (client, server)
        } else {
            (server, client)
        };
        let tcp = !self.msg.udp;
        let hdr = if tcp { 20 } else { 8 };
        let mut f = vec![0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 6, 8, 0, 0x45, 0];
        f.extend_from_slice(&((20 + hdr + self.payload.len()) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 1, 0, 0, 64, if tcp { 6 } else { 17 }, 0, 0]);
        f.extend_from_slice(&src);
        f.extend_from_slice(&dst);
        f.extend_from_slice(&sp.to_be_bytes());
        f.extend_from_slice(&dp.to_be_bytes());
        if tcp {
            f.extend_from_slice(&self.seq.to_be_bytes());
            f.extend_from_slice(&self.ack.to_be_bytes());
            f.extend_from_slice(&[0x50, self.flags, 0xff, 0xff, 0, 0, 0, 0]);
        } else {
            f.extend_from_slice(&((8 + self.payload.len()) as u16).to_be_bytes());
            f.extend_from_slice(&[0, 0]);
        }
        f.extend_from_slice(self.payload);
        f
    }
}

/// The frames of `msgs`: a TCP flow starts with a handshake, and each segment is
/// acknowledged, so that its bytes are inspected on the stream as well as on the packet.
pub fn conversation(msgs: &[Msg]) -> Vec<Vec<u8>> {
    // The client's next sequence number, per (client, server).
    type Ends = (([u8; 4], u16), ([u8; 4], u16));
    let mut seqs: std::collections::HashMap<Ends, u32> = Default::default();
    let mut out = Vec::new();
    for msg in msgs {
        let seg = |to_server, flags, seq, ack, payload| Seg {
            msg,
            to_server,
            flags,
            seq,
            ack,
            payload,
        };
        if msg.udp {
            out.push(seg(true, 0, 0, 0, &msg.payload).frame());
            continue;
        }
        let seq = *seqs.entry((msg.client, msg.server)).or_insert_with(|| {
            out.push(seg(true, 0x02, 1000, 0, b"").frame());
            out.push(seg(false, 0x12, 5000, 1001, b"").frame());
            out.push(seg(true, 0x10, 1001, 5001, b"").frame());
            1001
        });
        out.push(seg(true, 0x18, seq, 5001, &msg.payload).frame());
        let next = seq + msg.payload.len() as u32;
        out.push(seg(false, 0x10, 5001, next, b"").frame());
        seqs.insert((msg.client, msg.server), next);
    }
    out
}

/// A TCP segment as an Ethernet frame between 10.0.0.1:40000 (the client) and
/// 10.0.0.2:`port`, with `flags`, `seq` and `ack`.
pub fn tcp_segment(
    port: u16,
    to_server: bool,
    flags: u8,
    seq: u32,
    ack: u32,
    payload: &[u8],
) -> Vec<u8> {
    let (src, dst, sp, dp) = if to_server {
        ([10, 0, 0, 1], [10, 0, 0, 2], 40000u16, port)
    } else {
        ([10, 0, 0, 2], [10, 0, 0, 1], port, 40000)
    };
    let mut f = vec![0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 6, 8, 0, 0x45, 0];
    f.extend_from_slice(&((40 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 1, 0, 0, 64, 6, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&sp.to_be_bytes());
    f.extend_from_slice(&dp.to_be_bytes());
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend_from_slice(&ack.to_be_bytes());
    f.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    f.extend_from_slice(payload);
    f
}
