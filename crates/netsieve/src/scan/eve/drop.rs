//! The `drop` record (IPS mode): one per dropped packet, with its IP and transport
//! header fields, why it was dropped and, when a rule dropped it, that rule, in the order
//! Suricata 8 writes them.

use netsieve_detect::{DropReason, RuleSet};
use netsieve_packet::decode::L4;
use netsieve_packet::{Direction, Packet};
use serde::Serialize;

use super::alert::Rule;
use super::{Endpoints, Timestamp, pkt_src};

#[derive(Serialize)]
pub(in crate::scan) struct Record {
    timestamp: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    flow_id: Option<u64>,
    pcap_cnt: u64,
    event_type: &'static str,
    #[serde(flatten)]
    ends: Endpoints,
    #[serde(serialize_with = "super::flow::proto_name")]
    proto: u8,
    ip_v: u8,
    pkt_src: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    direction: Option<&'static str>,
    drop: Fields,
    /// The rule that dropped the packet (written by [`Record::with_rule`]).
    #[serde(skip)]
    sig: Option<u32>,
}

/// The dropped packet's header fields.
#[derive(Serialize, Default)]
struct Fields {
    len: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    tos: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tc: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hoplimit: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    flowlbl: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ipid: Option<u16>,
    #[serde(flatten)]
    tcp: Option<TcpFields>,
    #[serde(skip_serializing_if = "Option::is_none")]
    udplen: Option<u16>,
    reason: &'static str,
}

#[derive(Serialize)]
struct TcpFields {
    tcpseq: u32,
    tcpack: u32,
    tcpwin: u16,
    syn: bool,
    ack: bool,
    psh: bool,
    rst: bool,
    urg: bool,
    fin: bool,
    tcpres: u8,
    tcpurgp: u16,
}

impl Record {
    /// The record of packet `p`, dropped for `reason`; `flow` is its flow's id and the
    /// packet's direction in it.
    pub fn of(p: &Packet, flow: Option<(u64, Direction)>, reason: DropReason) -> Option<Record> {
        let ip = p.ip?;
        let be16 = |at: usize| {
            p.data
                .get(at..at + 2)
                .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
        };
        let byte = |at: usize| p.data.get(at).copied().unwrap_or(0);
        let v4 = ip.src.is_ipv4();
        let l3 = p.l3_at;
        let mut fields = Fields {
            reason: reason.name(),
            ..Fields::default()
        };
        if v4 {
            fields.len = be16(l3 + 2);
            fields.tos = Some(ip.tos);
            fields.ttl = Some(ip.ttl);
            fields.ipid = Some(ip.id as u16);
        } else {
            fields.len = be16(l3 + 4);
            fields.tc = Some(ip.tos);
            fields.hoplimit = Some(ip.ttl);
            fields.flowlbl = Some(u32::from_be_bytes([
                0,
                byte(l3 + 1) & 0x0f,
                byte(l3 + 2),
                byte(l3 + 3),
            ]));
        }
        let l4 = p.l4_at;
        match p.l4 {
            L4::Tcp(t) => {
                let has = |bit: u8| t.flags & bit != 0;
                fields.tcp = Some(TcpFields {
                    tcpseq: t.seq,
                    tcpack: t.ack,
                    tcpwin: t.window,
                    syn: has(0x02),
                    ack: has(0x10),
                    psh: has(0x08),
                    rst: has(0x04),
                    urg: has(0x20),
                    fin: has(0x01),
                    tcpres: byte(l4 + 12) & 0x0f,
                    tcpurgp: be16(l4 + 18),
                });
            }
            L4::Udp { .. } => fields.udplen = Some(be16(l4 + 4)),
            _ => {}
        }
        Some(Record {
            timestamp: Timestamp(p.ts),
            flow_id: flow.map(|f| f.0),
            pcap_cnt: p.num,
            event_type: "drop",
            ends: Endpoints::of(p)?,
            proto: ip.proto,
            ip_v: if v4 { 4 } else { 6 },
            pkt_src: pkt_src(p),
            direction: flow.map(|f| match f.1 {
                Direction::ToServer => "to_server",
                Direction::ToClient => "to_client",
            }),
            drop: fields,
            sig: reason.rule(),
        })
    }

    /// Its place among alerts ([`netsieve_detect::Alert::order`]): after the alerts of
    /// its packet.
    pub fn order(&self) -> (u64, bool, u64, u64) {
        (self.pcap_cnt, true, u64::MAX, u64::MAX)
    }

    /// The record as written, with the rule that dropped the packet (named from `set`)
    /// when there is one and `alerts` asks for it.
    pub fn with_rule<'a>(&'a self, set: &'a RuleSet, alerts: bool) -> impl Serialize + 'a {
        #[derive(Serialize)]
        struct Written<'a> {
            #[serde(flatten)]
            rec: &'a Record,
            #[serde(skip_serializing_if = "Option::is_none")]
            alert: Option<Rule<'a>>,
        }
        Written {
            rec: self,
            alert: self.sig.filter(|_| alerts).map(|s| Rule::of(set, s, true)),
        }
    }
}
