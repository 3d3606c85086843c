//! The `packet` record: a packet a `tag` holds (`types.alert.tagged-packets`), written
//! whole in base64 after its header fields, as Suricata writes a tagged packet.

use std::time::Duration;

use base64::Engine;
use netsieve_packet::Packet;
use serde::Serialize;

use super::alert::{IpFields, PacketInfo};
use super::{Timestamp, pkt_src};

/// What a record made from a packet alone (a tagged packet's, a decoder event's)
/// says of it: its time, flow, number, addresses, and where it came from.
#[derive(Clone)]
pub(super) struct PacketHead {
    ts: Duration,
    flow_id: Option<u64>,
    pcap_cnt: u64,
    ip: Option<IpFields>,
    pkt_src: &'static str,
}

impl PacketHead {
    /// Packet `p`'s (`flow_id`: its flow's, if it has one).
    pub fn of(p: &Packet, flow_id: Option<u64>) -> PacketHead {
        PacketHead {
            ts: p.ts,
            flow_id,
            pcap_cnt: p.num,
            ip: IpFields::of_packet(p),
            pkt_src: pkt_src(p),
        }
    }

    pub fn pcap_cnt(&self) -> u64 {
        self.pcap_cnt
    }

    pub fn pkt_src(&self) -> &'static str {
        self.pkt_src
    }

    /// Its record's place among alerts: after the alerts of its packet.
    pub fn order(&self) -> (u64, bool, u64, u64) {
        (self.pcap_cnt, true, u64::MAX, u64::MAX)
    }

    /// The record's first keys, with its `event_type`.
    pub fn line(&self, event_type: &'static str) -> HeadLine<'_> {
        HeadLine {
            timestamp: Timestamp(self.ts),
            flow_id: self.flow_id,
            pcap_cnt: self.pcap_cnt,
            event_type,
            ip: self.ip.as_ref(),
        }
    }
}

/// [`PacketHead`] as eve.json writes it.
#[derive(Serialize)]
pub(super) struct HeadLine<'a> {
    timestamp: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    flow_id: Option<u64>,
    pcap_cnt: u64,
    event_type: &'static str,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    ip: Option<&'a IpFields>,
}

/// A tagged packet's record, made on the worker from the packet.
pub(in crate::scan) struct Tagged {
    head: PacketHead,
    linktype: u32,
    frame: Vec<u8>,
}

impl Tagged {
    /// Packet `p`'s record (`flow_id`: its flow's, if it has one).
    pub fn of(p: &Packet, flow_id: Option<u64>) -> Tagged {
        Tagged {
            head: PacketHead::of(p, flow_id),
            linktype: p.linktype,
            frame: p.data.clone(),
        }
    }

    pub fn order(&self) -> (u64, bool, u64, u64) {
        self.head.order()
    }

    /// The record as eve.json writes it.
    pub fn line(&self) -> impl Serialize + '_ {
        Line {
            head: self.head.line("packet"),
            pkt_src: self.head.pkt_src(),
            packet: base64::engine::general_purpose::STANDARD.encode(&self.frame),
            packet_info: PacketInfo::of(self.linktype),
        }
    }
}

#[derive(Serialize)]
struct Line<'a> {
    #[serde(flatten)]
    head: HeadLine<'a>,
    pkt_src: &'static str,
    packet: String,
    packet_info: PacketInfo,
}
