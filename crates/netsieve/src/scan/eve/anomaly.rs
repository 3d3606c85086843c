//! The `anomaly` record: an event a packet raised, with the layer that raised it. An
//! application-layer event is named as Suricata's anomaly log names it: without its
//! protocol's prefix, and in libhtp's upper case for HTTP (`REQUEST_LINE_MISSING_PROTOCOL`);
//! a stream event with its `stream.` prefix.

use netsieve_applayer::AppProto;
use netsieve_detect::log::{Anomaly, TxLog};
use serde::Serialize;

use super::{Ip, Timestamp, proto_name};

#[derive(Serialize)]
pub(super) struct Record {
    timestamp: Timestamp,
    flow_id: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pcap_cnt: Option<u64>,
    event_type: &'static str,
    src_ip: Ip,
    src_port: u16,
    dest_ip: Ip,
    dest_port: u16,
    proto: String,
    ip_v: u8,
    pkt_src: &'static str,
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
                    event: if proto == AppProto::Http {
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
            timestamp: Timestamp(t.ts),
            flow_id: t.flow_id,
            pcap_cnt: (t.pseudo.is_none() && t.tunnel.is_none()).then_some(t.packet),
            event_type: "anomaly",
            src_ip: Ip(t.src.0),
            src_port: t.src.1,
            dest_ip: Ip(t.dst.0),
            dest_port: t.dst.1,
            proto: proto_name(t.proto),
            ip_v: if t.src.0.is_ipv4() { 4 } else { 6 },
            pkt_src: match t.tunnel {
                Some(tu) if tu.src.is_ipv4() => "ipv4 tunnel",
                Some(_) => "ipv6 tunnel",
                None if t.pseudo.is_some() => "stream (flow timeout)",
                None => "wire/pcap",
            },
            tx_id: match *a {
                Anomaly::App { tx_id, .. } => tx_id,
                Anomaly::Stream(_) => None,
            },
            anomaly,
        }
    }
}
