//! The `packet` record: a packet a `tag` holds (`types.alert.tagged-packets`), written
//! whole in base64 after its header fields, as Suricata writes a tagged packet.

use std::time::Duration;

use base64::Engine;
use netsieve_packet::Packet;
use serde::Serialize;

use super::alert::{IpFields, PacketInfo};
use super::{Timestamp, pkt_src};

/// A tagged packet's record, made on the worker from the packet.
pub(in crate::scan) struct Tagged {
    ts: Duration,
    flow_id: Option<u64>,
    pcap_cnt: u64,
    ip: Option<IpFields>,
    pkt_src: &'static str,
    linktype: u32,
    frame: Vec<u8>,
}

impl Tagged {
    /// Packet `p`'s record (`flow_id`: its flow's, if it has one).
    pub fn of(p: &Packet, flow_id: Option<u64>) -> Tagged {
        Tagged {
            ts: p.ts,
            flow_id,
            pcap_cnt: p.num,
            ip: IpFields::of_packet(p),
            pkt_src: pkt_src(p),
            linktype: p.linktype,
            frame: p.data.clone(),
        }
    }

    /// Its place among alerts: after the alerts of its packet.
    pub fn order(&self) -> (u64, bool, u64, u64) {
        (self.pcap_cnt, true, u64::MAX, u64::MAX)
    }

    /// The record as eve.json writes it.
    pub fn line(&self) -> impl Serialize + '_ {
        Line {
            timestamp: Timestamp(self.ts),
            flow_id: self.flow_id,
            pcap_cnt: self.pcap_cnt,
            event_type: "packet",
            ip: self.ip.as_ref(),
            pkt_src: self.pkt_src,
            packet: base64::engine::general_purpose::STANDARD.encode(&self.frame),
            packet_info: PacketInfo::of(self.linktype),
        }
    }
}

#[derive(Serialize)]
struct Line<'a> {
    timestamp: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    flow_id: Option<u64>,
    pcap_cnt: u64,
    event_type: &'static str,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    ip: Option<&'a IpFields>,
    pkt_src: &'static str,
    packet: String,
    packet_info: PacketInfo,
}
