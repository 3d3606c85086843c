//! The `anomaly` record: an event a packet raised, with the layer that raised it. An
//! application-layer event is named as Suricata's anomaly log names it: without its
//! protocol's prefix, and in upper case for HTTP and SMTP, as Suricata names theirs (`REQUEST_LINE_MISSING_PROTOCOL`, `MIME_LONG_BOUNDARY`);
//! a stream event with its `stream.` prefix; a decoder event (its own record, [`Decode`],
//! made from the packet) with its `decoder.` prefix.

use netsieve_applayer::AppProto;
use netsieve_detect::log::{Anomaly, TxLog};
use netsieve_packet::decode::L4;
use netsieve_packet::{DecodeEvent, Packet};
use serde::Serialize;

use super::alert::Ether;
use super::packet::{HeadLine, PacketHead};
use super::tx::Head;

#[derive(Serialize)]
pub(super) struct Record {
    #[serde(flatten)]
    head: Head,
    #[serde(skip_serializing_if = "Option::is_none")]
    tx_id: Option<u64>,
    anomaly: Object,
}

/// EVE's `anomaly` object, in Suricata's key order.
#[derive(Serialize)]
struct Object {
    #[serde(skip_serializing_if = "Option::is_none")]
    app_proto: Option<&'static str>,
    #[serde(rename = "type")]
    kind: &'static str,
    event: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    layer: Option<&'static str>,
}

impl Record {
    pub fn of(t: &TxLog, a: &Anomaly) -> Record {
        let anomaly = match *a {
            Anomaly::App { proto, event, .. } => {
                let name = event.name();
                let bare = name.split_once('.').map_or(name, |(_, e)| e);
                Object {
                    app_proto: Some(proto.name()),
                    kind: "applayer",
                    event: if matches!(proto, AppProto::Http | AppProto::Smtp) {
                        bare.to_ascii_uppercase()
                    } else {
                        bare.to_string()
                    },
                    layer: Some("proto_parser"),
                }
            }
            Anomaly::Stream(e) => Object {
                app_proto: None,
                kind: "stream",
                event: format!("stream.{}", e.name()),
                layer: None,
            },
        };
        Record {
            head: Head::of(t, "anomaly"),
            tx_id: match *a {
                Anomaly::App { tx_id, .. } => tx_id,
                Anomaly::Stream(_) => None,
            },
            anomaly,
        }
    }
}

/// A decoder event's `anomaly` record (`anomaly.types.decode`): the packet's header as
/// an alert's (no addresses when it has no IP layer), then the event, named with its
/// `decoder.` prefix. One per event the packet raised, repeats included, as Suricata
/// writes them.
pub(in crate::scan) struct Decode {
    head: PacketHead,
    icmp: Option<(u8, u8)>,
    ether: Option<[u8; 14]>,
    event: DecodeEvent,
}

impl Decode {
    /// The records of packet `p`'s decoder events (`flow_id`: its flow's, if it has one).
    pub fn of(p: &Packet, flow_id: Option<u64>) -> impl Iterator<Item = Decode> + '_ {
        let head = PacketHead::of(p, flow_id);
        let icmp = match p.l4 {
            L4::Icmp { itype, icode, .. } => Some((itype, icode)),
            _ => None,
        };
        let ether = match p.linktype {
            1 => p.data.get(..14).and_then(|h| h.try_into().ok()),
            _ => None,
        };
        p.events.iter().map(move |&event| Decode {
            head: head.clone(),
            icmp,
            ether,
            event,
        })
    }

    /// Its place among alerts: after the alerts of its packet.
    pub fn order(&self) -> (u64, bool, u64, u64) {
        self.head.order()
    }

    /// The number of its packet.
    pub fn pcap_cnt(&self) -> u64 {
        self.head.pcap_cnt()
    }

    /// The record as eve.json writes it, with the frame's Ethernet header when
    /// `ethernet` asks, and the capture `file` it came from when known.
    pub fn line<'a>(&'a self, ethernet: bool, file: Option<&'a str>) -> impl Serialize + 'a {
        DecodeLine {
            head: self.head.line("anomaly"),
            icmp_type: self.icmp.map(|i| i.0),
            icmp_code: self.icmp.map(|i| i.1),
            pkt_src: self.head.pkt_src(),
            ether: self.ether.as_ref().filter(|_| ethernet).map(Ether::of),
            anomaly: Object {
                app_proto: None,
                kind: "decode",
                event: format!("decoder.{}", self.event.name()),
                layer: None,
            },
            pcap_filename: file,
        }
    }
}

#[derive(Serialize)]
struct DecodeLine<'a> {
    #[serde(flatten)]
    head: HeadLine<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icmp_type: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icmp_code: Option<u8>,
    pkt_src: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ether: Option<Ether>,
    anomaly: Object,
    #[serde(skip_serializing_if = "Option::is_none")]
    pcap_filename: Option<&'a str>,
}
