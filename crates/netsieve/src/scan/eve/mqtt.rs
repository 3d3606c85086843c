//! The `mqtt` object: one MQTT exchange, each of its control packets under its type's
//! name (`connect`, `connack`, `publish`, ...), with the fixed header's flags and the
//! packet's fields in Suricata's key order. `mqtt` records and alerts on MQTT flows
//! carry it.

use netsieve_applayer::mqtt::{Body, Connect, Message, Property, Tx, Value, property_name};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// EVE's `mqtt` object.
pub(super) struct Object<'a>(pub &'a Tx);

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for msg in &self.0.msgs {
            if let Some(name) = name(msg) {
                m.serialize_entry(name, &Packet(msg))?;
            }
        }
        m.end()
    }
}

/// The key a packet is written under; `None` for one that is not written (type 0, or
/// one that did not parse).
fn name(m: &Message) -> Option<&'static str> {
    const NAMES: [&str; 16] = [
        "",
        "connect",
        "connack",
        "publish",
        "puback",
        "pubrec",
        "pubrel",
        "pubcomp",
        "subscribe",
        "suback",
        "unsubscribe",
        "unsuback",
        "pingreq",
        "pingresp",
        "disconnect",
        "auth",
    ];
    match m.body {
        Body::Unread => None,
        _ => Some(NAMES[usize::from(m.header.kind & 15)]),
    }
}

struct Packet<'a>(&'a Message);

impl Serialize for Packet<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Message { header: h, body } = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("qos", &h.qos)?;
        m.serialize_entry("retain", &h.retain)?;
        m.serialize_entry("dup", &h.dup)?;
        let properties = match body {
            Body::Connect(c) => {
                connect(&mut m, c)?;
                &c.properties
            }
            Body::Connack {
                session_present,
                return_code,
                properties,
            } => {
                m.serialize_entry("session_present", session_present)?;
                m.serialize_entry("return_code", return_code)?;
                properties
            }
            Body::Publish {
                topic,
                message_id,
                message,
                properties,
            } => {
                m.serialize_entry("topic", &text(topic))?;
                if let Some(id) = message_id {
                    m.serialize_entry("message_id", id)?;
                }
                m.serialize_entry("message", &text(message))?;
                properties
            }
            Body::PubAck {
                message_id,
                reason_code,
                properties,
            } => {
                m.serialize_entry("message_id", message_id)?;
                if let Some(r) = reason_code {
                    m.serialize_entry("reason_code", r)?;
                }
                properties
            }
            Body::Subscribe {
                message_id,
                topics,
                properties,
            } => {
                #[derive(Serialize)]
                struct Topic {
                    topic: String,
                    qos: u8,
                }
                m.serialize_entry("message_id", message_id)?;
                let topics: Vec<Topic> = topics
                    .iter()
                    .map(|(t, qos)| Topic {
                        topic: text(t),
                        qos: *qos,
                    })
                    .collect();
                m.serialize_entry("topics", &topics)?;
                properties
            }
            Body::Suback {
                message_id,
                qos_granted,
                properties,
            } => {
                m.serialize_entry("message_id", message_id)?;
                m.serialize_entry("qos_granted", qos_granted)?;
                properties
            }
            Body::Unsubscribe {
                message_id,
                topics,
                properties,
            } => {
                m.serialize_entry("message_id", message_id)?;
                let topics: Vec<String> = topics.iter().map(|t| text(t)).collect();
                m.serialize_entry("topics", &topics)?;
                properties
            }
            Body::Unsuback {
                message_id,
                reason_codes,
                properties,
            } => {
                m.serialize_entry("message_id", message_id)?;
                if let Some(r) = reason_codes {
                    m.serialize_entry("reason_codes", r)?;
                }
                properties
            }
            Body::Reason {
                reason_code,
                properties,
            } => {
                if let Some(r) = reason_code {
                    m.serialize_entry("reason_code", r)?;
                }
                properties
            }
            Body::Ping | Body::Unread => &Vec::new(),
        };
        if !properties.is_empty() {
            m.serialize_entry("properties", &Properties(properties))?;
        }
        m.end()
    }
}

/// A CONNECT's fields after the fixed header's.
fn connect<M: SerializeMap>(m: &mut M, c: &Connect) -> Result<(), M::Error> {
    #[derive(Serialize)]
    struct Flags {
        username: bool,
        password: bool,
        will_retain: bool,
        will: bool,
        clean_session: bool,
    }
    #[derive(Serialize)]
    struct Will<'a> {
        topic: String,
        message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        properties: Option<Properties<'a>>,
    }
    let flag = |bit: u8| c.flags & bit != 0;
    m.serialize_entry("protocol_string", &text(&c.protocol_string))?;
    m.serialize_entry("protocol_version", &c.protocol_version)?;
    m.serialize_entry("client_id", &text(&c.client_id))?;
    m.serialize_entry(
        "flags",
        &Flags {
            username: flag(Connect::USERNAME),
            password: flag(Connect::PASSWORD),
            will_retain: flag(Connect::WILL_RETAIN),
            will: flag(Connect::WILL),
            clean_session: flag(Connect::CLEAN_SESSION),
        },
    )?;
    if let Some(u) = &c.username {
        m.serialize_entry("username", &text(u))?;
    }
    if let Some(p) = &c.password {
        m.serialize_entry("password", &text(p))?;
    }
    if let Some(w) = &c.will {
        m.serialize_entry(
            "will",
            &Will {
                topic: text(&w.topic),
                message: text(&w.message),
                properties: (!w.properties.is_empty()).then_some(Properties(&w.properties)),
            },
        )?;
    }
    Ok(())
}

/// Version 5 properties: each under its name (a user property under its own), numbers
/// as numbers and the rest as text.
struct Properties<'a>(&'a [Property]);

impl Serialize for Properties<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for p in self.0 {
            match (&p.value, property_name(p.id)) {
                (Value::Int(n), Some(name)) => m.serialize_entry(name, n)?,
                (Value::Text(t), Some(name)) => m.serialize_entry(name, &text(t))?,
                (Value::Pair(k, v), _) => m.serialize_entry(&text(k), &text(v))?,
                (_, None) => {}
            }
        }
        m.end()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
