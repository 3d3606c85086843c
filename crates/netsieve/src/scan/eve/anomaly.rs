//! The `anomaly` record: an event a packet raised, with the layer that raised it. An
//! application-layer event is named as Suricata's anomaly log names it: without its
//! protocol's prefix, and in libhtp's upper case for HTTP (`REQUEST_LINE_MISSING_PROTOCOL`);
//! a stream event with its `stream.` prefix.

use netsieve_applayer::AppProto;
use netsieve_detect::log::{Anomaly, TxLog};
use serde::Serialize;

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
            head: Head::of(t, "anomaly"),
            tx_id: match *a {
                Anomaly::App { tx_id, .. } => tx_id,
                Anomaly::Stream(_) => None,
            },
            anomaly,
        }
    }
}
