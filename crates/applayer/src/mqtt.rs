//! MQTT 3.1, 3.1.1 and 5.0 over TCP: control packets grouped into transactions as
//! Suricata groups them.
//!
//! A control packet is a fixed header (its type in the high nibble of the first byte,
//! the DUP, QoS and RETAIN flags in the low one, then the remaining length as a variable
//! byte integer of at most four bytes) and that many bytes of variable header and
//! payload. Version 5 adds properties to most packets; the version is the one the
//! client's CONNECT names.
//!
//! Transactions: a CONNECT waits for its CONNACK; a PUBLISH of QoS 1 for its PUBACK, of
//! QoS 2 for its PUBREC, PUBREL and PUBCOMP; a SUBSCRIBE for its SUBACK and an
//! UNSUBSCRIBE for its UNSUBACK (answers are paired by packet identifier). Every other
//! packet is a transaction of its own. An answer with nothing to answer, a second
//! CONNECT, a packet before any CONNECT, QoS 3 and packet type 0 raise events.
//!
//! Bounded: a packet may take [`MAX_MESSAGE`] bytes, past which the direction is given
//! up, and at most 256 transactions are kept.

use crate::frames::Marks;
use crate::held::Held;
use crate::txs::{Events, Numbered, Txs};
use netsieve_wire::{AppEvent, Direction, FrameType};

/// The largest control packet read (Suricata's `app-layer.protocols.mqtt.max-msg-length`
/// default, 1 MiB).
pub const MAX_MESSAGE: usize = 1 << 20;
/// Transactions kept (the oldest go first).
const MAX_TXS: usize = 256;

/// The fixed header's first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: u8,
    pub dup: bool,
    pub qos: u8,
    pub retain: bool,
}

impl Header {
    fn of(b: u8) -> Header {
        Header {
            kind: b >> 4,
            dup: b & 0x08 != 0,
            qos: (b >> 1) & 3,
            retain: b & 1 != 0,
        }
    }

    /// The low nibble (`mqtt.flags` tests its DUP and RETAIN bits).
    pub fn flags(&self) -> u8 {
        u8::from(self.dup) << 3 | self.qos << 1 | u8::from(self.retain)
    }
}

/// A version 5 property's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Int(u32),
    Text(Vec<u8>),
    /// A user property: its own name and value.
    Pair(Vec<u8>, Vec<u8>),
}

/// A version 5 property: its identifier and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    pub id: u8,
    pub value: Value,
}

/// The name EVE gives property `id`, or `None` for user properties (named by their
/// own name) and identifiers no version defines.
pub fn property_name(id: u8) -> Option<&'static str> {
    Some(match id {
        0x01 => "payload_format_indicator",
        0x02 => "message_expiry_interval",
        0x03 => "content_type",
        0x08 => "response_topic",
        0x09 => "correlation_data",
        0x0b => "subscription_identifier",
        0x11 => "session_expiry_interval",
        0x12 => "assigned_client_identifier",
        0x13 => "server_keep_alive",
        0x15 => "authentication_method",
        0x16 => "authentication_data",
        0x17 => "request_problem_information",
        0x18 => "will_delay_interval",
        0x19 => "request_response_information",
        0x1a => "response_information",
        0x1c => "server_reference",
        0x1f => "reason_string",
        0x21 => "receive_maximum",
        0x22 => "topic_alias_maximum",
        0x23 => "topic_alias",
        0x24 => "maximum_qos",
        0x25 => "retain_available",
        0x27 => "maximum_packet_size",
        0x28 => "wildcard_subscription_available",
        0x29 => "subscription_identifier_available",
        0x2a => "shared_subscription_available",
        _ => return None,
    })
}

/// A CONNECT's will.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Will {
    pub topic: Vec<u8>,
    pub message: Vec<u8>,
    pub properties: Vec<Property>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Connect {
    pub protocol_string: Vec<u8>,
    pub protocol_version: u8,
    /// The connect flags byte (`mqtt.connect.flags`).
    pub flags: u8,
    pub keepalive: u16,
    pub client_id: Vec<u8>,
    pub will: Option<Will>,
    pub username: Option<Vec<u8>>,
    pub password: Option<Vec<u8>>,
    pub properties: Vec<Property>,
}

impl Connect {
    pub const USERNAME: u8 = 0x80;
    pub const PASSWORD: u8 = 0x40;
    pub const WILL_RETAIN: u8 = 0x20;
    pub const WILL: u8 = 0x04;
    pub const CLEAN_SESSION: u8 = 0x02;
}

/// What a control packet carries after its fixed header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    Connect(Box<Connect>),
    Connack {
        session_present: bool,
        return_code: u8,
        properties: Vec<Property>,
    },
    Publish {
        topic: Vec<u8>,
        /// Present for QoS above 0.
        message_id: Option<u16>,
        message: Vec<u8>,
        properties: Vec<Property>,
    },
    /// PUBACK, PUBREC, PUBREL and PUBCOMP (the header tells which).
    PubAck {
        message_id: u16,
        reason_code: Option<u8>,
        properties: Vec<Property>,
    },
    Subscribe {
        message_id: u16,
        /// Each topic filter and the QoS asked for it.
        topics: Vec<(Vec<u8>, u8)>,
        properties: Vec<Property>,
    },
    Suback {
        message_id: u16,
        qos_granted: Vec<u8>,
        properties: Vec<Property>,
    },
    Unsubscribe {
        message_id: u16,
        topics: Vec<Vec<u8>>,
        properties: Vec<Property>,
    },
    Unsuback {
        message_id: u16,
        /// Version 5 only.
        reason_codes: Option<Vec<u8>>,
        properties: Vec<Property>,
    },
    /// PINGREQ and PINGRESP.
    Ping,
    /// DISCONNECT and AUTH.
    Reason {
        reason_code: Option<u8>,
        properties: Vec<Property>,
    },
    /// Packet type 0, or a packet that does not parse: nothing is logged of it.
    Unread,
}

/// One control packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub header: Header,
    pub body: Body,
}

impl Message {
    /// The packet identifier an answer is paired by.
    fn message_id(&self) -> Option<u16> {
        match &self.body {
            Body::Publish { message_id, .. } => *message_id,
            Body::PubAck { message_id, .. }
            | Body::Subscribe { message_id, .. }
            | Body::Suback { message_id, .. }
            | Body::Unsubscribe { message_id, .. }
            | Body::Unsuback { message_id, .. } => Some(*message_id),
            _ => None,
        }
    }

    /// The reason codes it carries (`mqtt.reason_code`): a CONNACK's return code, an
    /// acknowledgement's, DISCONNECT's and AUTH's reason code, and a SUBACK's or an
    /// UNSUBACK's list.
    pub fn reason_codes(&self) -> &[u8] {
        match &self.body {
            Body::Connack { return_code, .. } => std::slice::from_ref(return_code),
            Body::PubAck { reason_code, .. } | Body::Reason { reason_code, .. } => {
                reason_code.as_slice()
            }
            Body::Suback { qos_granted, .. } => qos_granted,
            Body::Unsuback { reason_codes, .. } => reason_codes.as_deref().unwrap_or_default(),
            _ => &[],
        }
    }
}

/// Control packets grouped as one exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    /// The direction of its latest packet: the one it is inspected in once complete.
    pub dir: Direction,
    pub msgs: Vec<Message>,
    /// Its last packet came (or the flow ended).
    pub complete: bool,
    pub events: Vec<AppEvent>,
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

/// A flow's MQTT state.
#[derive(Debug, Default)]
pub struct Mqtt {
    pub txs: Txs<Tx, MAX_TXS>,
    /// Each direction's bytes of the packet being read.
    held: Held,
    /// A CONNACK was seen: packets other than CONNECT and CONNACK before it raise
    /// `unintroduced_message`, and a CONNECT after it `double_connect`.
    connected: bool,
    /// The version the latest CONNECT named: it decides how the packets after it read.
    version: u8,
    /// The events raised.
    pub events: Events<AppEvent>,
    /// The control packets of the latest feed, as frames (see [`crate::frames`]).
    pub marks: Marks,
}

/// A control packet's frames: the packet, its fixed header, the rest.
const FRAMES: [FrameType; 3] = [
    FrameType::MqttPdu,
    FrameType::MqttHeader,
    FrameType::MqttData,
];

/// Why a packet could not be read.
enum Bad {
    /// More bytes are needed.
    Short,
    /// The bytes are not MQTT.
    Malformed,
}

/// The remaining length at the start of `b`: (length, bytes it took).
fn remaining_length(b: &[u8]) -> Result<(usize, usize), Bad> {
    let mut n = 0usize;
    for (i, &c) in b.iter().enumerate().take(4) {
        n |= usize::from(c & 0x7f) << (7 * i);
        if c & 0x80 == 0 {
            return Ok((n, i + 1));
        }
    }
    if b.len() >= 4 {
        Err(Bad::Malformed)
    } else {
        Err(Bad::Short)
    }
}

/// Whether `data` could open an MQTT stream: a fixed header of a defined type whose
/// remaining length reads (port 1883 decides the rest).
pub fn plausible(data: &[u8]) -> bool {
    data.first().is_some_and(|b| b >> 4 != 0) && remaining_length(&data[1..]).is_ok()
}

/// A reader over one packet's bytes; every read fails on too few bytes.
struct Cursor<'a> {
    b: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn u8(&mut self) -> Option<u8> {
        let (&v, rest) = self.b.split_first()?;
        self.b = rest;
        Some(v)
    }

    fn u16(&mut self) -> Option<u16> {
        let v = self.b.get(..2)?;
        let v = u16::from_be_bytes([v[0], v[1]]);
        self.b = &self.b[2..];
        Some(v)
    }

    fn u32(&mut self) -> Option<u32> {
        let v = self.take(4)?;
        Some(u32::from_be_bytes([v[0], v[1], v[2], v[3]]))
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let v = self.b.get(..n)?;
        self.b = &self.b[n..];
        Some(v)
    }

    /// A length-prefixed string or binary field.
    fn field(&mut self) -> Option<Vec<u8>> {
        let n = self.u16()?;
        Some(self.take(n.into())?.to_vec())
    }

    fn varint(&mut self) -> Option<u32> {
        let (n, used) = remaining_length(self.b).ok()?;
        self.b = &self.b[used..];
        Some(n as u32)
    }

    fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.b)
    }

    fn is_empty(&self) -> bool {
        self.b.is_empty()
    }

    /// Version 5 properties: their length, then each identifier and value.
    fn properties(&mut self) -> Option<Vec<Property>> {
        let n = self.varint()? as usize;
        let mut c = Cursor { b: self.take(n)? };
        let mut out = Vec::new();
        while !c.is_empty() {
            let id = c.u8()?;
            let value = match id {
                0x01 | 0x17 | 0x19 | 0x24 | 0x25 | 0x28 | 0x29 | 0x2a => Value::Int(c.u8()?.into()),
                0x13 | 0x21 | 0x22 | 0x23 => Value::Int(c.u16()?.into()),
                0x02 | 0x11 | 0x18 | 0x27 => Value::Int(c.u32()?),
                0x0b => Value::Int(c.varint()?),
                0x03 | 0x08 | 0x09 | 0x12 | 0x15 | 0x16 | 0x1a | 0x1c | 0x1f => {
                    Value::Text(c.field()?)
                }
                0x26 => Value::Pair(c.field()?, c.field()?),
                _ => return None,
            };
            out.push(Property { id, value });
        }
        Some(out)
    }
}

/// The body of a packet of type `h.kind`, read as `version` reads it.
fn body(h: Header, version: u8, b: &[u8]) -> Option<Body> {
    let v5 = version >= 5;
    let mut c = Cursor { b };
    let props = |c: &mut Cursor| -> Option<Vec<Property>> {
        if v5 && !c.is_empty() {
            c.properties()
        } else {
            Some(Vec::new())
        }
    };
    Some(match h.kind {
        1 => {
            let protocol_string = c.field()?;
            let protocol_version = c.u8()?;
            let flags = c.u8()?;
            let keepalive = c.u16()?;
            let properties = if protocol_version >= 5 {
                c.properties()?
            } else {
                Vec::new()
            };
            let client_id = c.field()?;
            let will = if flags & Connect::WILL != 0 {
                let properties = if protocol_version >= 5 {
                    c.properties()?
                } else {
                    Vec::new()
                };
                Some(Will {
                    properties,
                    topic: c.field()?,
                    message: c.field()?,
                })
            } else {
                None
            };
            let username = (flags & Connect::USERNAME != 0)
                .then(|| c.field())
                .flatten();
            let password = (flags & Connect::PASSWORD != 0)
                .then(|| c.field())
                .flatten();
            Body::Connect(Box::new(Connect {
                protocol_string,
                protocol_version,
                flags,
                keepalive,
                client_id,
                will,
                username,
                password,
                properties,
            }))
        }
        2 => Body::Connack {
            session_present: c.u8()? & 1 != 0,
            return_code: c.u8()?,
            properties: props(&mut c)?,
        },
        3 => {
            let topic = c.field()?;
            let message_id = if h.qos > 0 { Some(c.u16()?) } else { None };
            let properties = if v5 { c.properties()? } else { Vec::new() };
            Body::Publish {
                topic,
                message_id,
                properties,
                message: c.rest().to_vec(),
            }
        }
        4..=7 => {
            let message_id = c.u16()?;
            let reason_code = if v5 && !c.is_empty() {
                Some(c.u8()?)
            } else {
                None
            };
            Body::PubAck {
                message_id,
                reason_code,
                properties: props(&mut c)?,
            }
        }
        8 => {
            let message_id = c.u16()?;
            let properties = if v5 { c.properties()? } else { Vec::new() };
            let mut topics = Vec::new();
            while !c.is_empty() {
                topics.push((c.field()?, c.u8()? & 3));
            }
            Body::Subscribe {
                message_id,
                topics,
                properties,
            }
        }
        9 => {
            let message_id = c.u16()?;
            let properties = if v5 { c.properties()? } else { Vec::new() };
            Body::Suback {
                message_id,
                properties,
                qos_granted: c.rest().to_vec(),
            }
        }
        10 => {
            let message_id = c.u16()?;
            let properties = if v5 { c.properties()? } else { Vec::new() };
            let mut topics = Vec::new();
            while !c.is_empty() {
                topics.push(c.field()?);
            }
            Body::Unsubscribe {
                message_id,
                topics,
                properties,
            }
        }
        11 => {
            let message_id = c.u16()?;
            let properties = if v5 { c.properties()? } else { Vec::new() };
            Body::Unsuback {
                message_id,
                properties,
                reason_codes: v5.then(|| c.rest().to_vec()),
            }
        }
        12 | 13 => Body::Ping,
        14 | 15 => {
            // A version 5 DISCONNECT may leave its reason code out (0, normal
            // disconnection); one of a single byte reads as 0 too, as Suricata reads it.
            let reason_code = match (v5, b.len()) {
                (false, _) => None,
                (true, 0 | 1) if h.kind == 14 => {
                    c.rest();
                    Some(0)
                }
                (true, _) => Some(c.u8()?),
            };
            Body::Reason {
                reason_code,
                properties: props(&mut c)?,
            }
        }
        _ => Body::Unread,
    })
}

impl Mqtt {
    /// Feeds in-order stream bytes of one direction. Returns whether a transaction
    /// completed.
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) -> bool {
        // Where `held[0]` lies relative to `bytes[0]`.
        let at = -(self.held.bytes(dir).len() as i64);
        let Some(held) = self.held.take(dir, bytes) else {
            return false;
        };
        let mut used = 0;
        let mut done = false;
        while used < held.len() {
            let data = &held[used..];
            let (len, n) = match remaining_length(&data[1..]) {
                Ok(v) => v,
                Err(Bad::Short) => break,
                Err(Bad::Malformed) => {
                    self.malformed(dir);
                    return done;
                }
            };
            let total = 1 + n + len;
            if total > MAX_MESSAGE {
                self.malformed(dir);
                return done;
            }
            if data.len() < total {
                break;
            }
            self.marks.add_split(FRAMES, at + used as i64, 1 + n, total);
            let h = Header::of(data[0]);
            let version = if h.kind == 1 { 0 } else { self.version };
            match body(h, version, &data[1 + n..total]) {
                Some(body) => done |= self.message(dir, Message { header: h, body }),
                None => {
                    self.malformed(dir);
                    return done;
                }
            }
            used += total;
        }
        self.held.keep(dir, held, used);
        done
    }

    /// A packet that does not parse: a transaction of its own with the event, and the
    /// direction is read no further.
    fn malformed(&mut self, dir: Direction) {
        self.held.give_up(dir);
        let header = Header::of(0);
        let tx = self.begin(
            dir,
            Message {
                header,
                body: Body::Unread,
            },
        );
        tx.complete = true;
        self.events.raise(AppEvent::MqttMalformedTraffic);
    }

    /// Places a parsed packet in its transaction. Returns whether that completed one.
    fn message(&mut self, dir: Direction, m: Message) -> bool {
        let kind = m.header.kind;
        let mut events = Vec::new();
        if !self.connected && !matches!(kind, 1 | 2) {
            events.push(AppEvent::MqttUnintroducedMessage);
        }
        if m.header.qos == 3 && kind == 3 {
            events.push(AppEvent::MqttInvalidQosLevel);
        }
        let (complete, event) = match kind {
            0 => {
                events.push(AppEvent::MqttUnassignedMsgType);
                (true, None)
            }
            1 => {
                if self.connected {
                    events.push(AppEvent::MqttDoubleConnect);
                }
                if let Body::Connect(c) = &m.body {
                    self.version = c.protocol_version;
                }
                (false, None)
            }
            // An answer goes to what it answers, else it stands alone with an event.
            2 => {
                self.connected = true;
                let asks = |x: &Message| x.header.kind == 1;
                return self.answer(dir, m, asks, true, AppEvent::MqttMissingConnect, events);
            }
            3 => (m.header.qos == 0, None),
            4 | 7 => (true, Some((3, AppEvent::MqttMissingPublish))),
            5 | 6 => (false, Some((3, AppEvent::MqttMissingPublish))),
            8 | 10 => (false, None),
            9 => (true, Some((8, AppEvent::MqttMissingSubscribe))),
            11 => (true, Some((10, AppEvent::MqttMissingUnsubscribe))),
            _ => (true, None),
        };
        if let Some((asked, event)) = event {
            let id = m.message_id();
            return self.answer(
                dir,
                m,
                move |x| x.header.kind == asked && x.message_id() == id,
                complete,
                event,
                events,
            );
        }
        let tx = self.begin(dir, m);
        tx.complete = complete;
        tx.events.extend(&events);
        for e in events {
            self.events.raise(e);
        }
        complete
    }

    /// Adds answer `m` to the oldest open transaction whose first packet `asks` for it
    /// and that has no answer of its kind yet (completing it when `completes`), or
    /// begins one of its own with `missing`.
    fn answer(
        &mut self,
        dir: Direction,
        m: Message,
        asks: impl Fn(&Message) -> bool,
        completes: bool,
        missing: AppEvent,
        mut events: Vec<AppEvent>,
    ) -> bool {
        // An exchange takes each kind of answer once (a repeated PUBREC stands alone),
        // so that it stays at most four packets long.
        let kind = m.header.kind;
        let open = self.txs.iter_mut().find(|t| {
            !t.complete
                && t.msgs.first().is_some_and(&asks)
                && t.msgs.iter().all(|x| x.header.kind != kind)
        });
        let complete = match open {
            Some(tx) => {
                tx.msgs.push(m);
                tx.dir = dir;
                tx.complete = completes;
                tx.events.extend(&events);
                completes
            }
            None => {
                events.push(missing);
                let tx = self.begin(dir, m);
                tx.complete = true;
                tx.events.extend(&events);
                true
            }
        };
        for e in events {
            self.events.raise(e);
        }
        complete
    }

    fn begin(&mut self, dir: Direction, m: Message) -> &mut Tx {
        self.txs.begin(|id| Tx {
            id,
            dir,
            msgs: vec![m],
            complete: false,
            events: Vec::new(),
        })
    }

    /// The flow ended: open transactions count as complete.
    pub fn finish(&mut self) {
        for t in self.txs.iter_mut() {
            t.complete = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONNECT_V5: &[u8] =
        b"\x10\x1c\x00\x04MQTT\x05\xc2\x00\x3c\x03\x21\x00\x14\x00\x00\x00\x04user\x00\x04pass";
    const CONNACK_V5: &[u8] = b"\x20\x03\x00\x00\x00";

    #[test]
    fn connect_then_connack_is_one_transaction() {
        let mut m = Mqtt::default();
        assert!(!m.feed(Direction::ToServer, CONNECT_V5));
        assert!(m.feed(Direction::ToClient, CONNACK_V5));
        assert_eq!(m.txs.len(), 1);
        let t = &m.txs[0];
        assert!(t.complete);
        let Body::Connect(c) = &t.msgs[0].body else {
            panic!("not a connect: {:?}", t.msgs[0]);
        };
        assert_eq!(c.protocol_version, 5);
        assert_eq!(c.username.as_deref(), Some(&b"user"[..]));
        assert_eq!(c.password.as_deref(), Some(&b"pass"[..]));
        assert_eq!(
            c.properties,
            [Property {
                id: 0x21,
                value: Value::Int(20)
            }]
        );
        assert_eq!(m.events.raised(), 0);
    }

    #[test]
    fn packets_split_anywhere_read_the_same() {
        let mut whole = Mqtt::default();
        whole.feed(Direction::ToServer, CONNECT_V5);
        for cut in 0..CONNECT_V5.len() {
            let mut m = Mqtt::default();
            m.feed(Direction::ToServer, &CONNECT_V5[..cut]);
            m.feed(Direction::ToServer, &CONNECT_V5[cut..]);
            assert_eq!(m.txs[0], whole.txs[0], "cut at {cut}");
        }
    }

    #[test]
    fn answers_pair_by_packet_identifier() {
        let mut m = Mqtt::default();
        m.feed(
            Direction::ToServer,
            b"\x10\x0c\x00\x04MQTT\x04\x02\x00\x3c\x00\x00",
        );
        m.feed(Direction::ToClient, b"\x20\x02\x00\x00");
        // Two QoS 1 publishes, answered in the other order.
        m.feed(
            Direction::ToServer,
            b"\x32\x05\x00\x01a\x00\x07\x32\x05\x00\x01b\x00\x08",
        );
        assert!(m.feed(Direction::ToClient, b"\x40\x02\x00\x08"));
        assert!(m.txs[2].complete && !m.txs[1].complete);
        // An acknowledgement of nothing stands alone, with an event.
        m.feed(Direction::ToClient, b"\x40\x02\x00\x09");
        assert_eq!(m.txs.len(), 4);
        assert_eq!(m.events, [AppEvent::MqttMissingPublish]);
    }

    #[test]
    fn an_exchange_takes_each_answer_once() {
        let mut m = Mqtt::default();
        m.feed(
            Direction::ToServer,
            b"\x10\x0c\x00\x04MQTT\x04\x02\x00\x3c\x00\x00",
        );
        m.feed(Direction::ToClient, b"\x20\x02\x00\x00");
        m.feed(Direction::ToServer, b"\x34\x05\x00\x01a\x00\x07");
        for _ in 0..3 {
            m.feed(Direction::ToClient, b"\x50\x02\x00\x07");
        }
        assert_eq!(m.txs[1].msgs.len(), 2);
        assert_eq!(m.txs.len(), 4);
        assert_eq!(m.events, [AppEvent::MqttMissingPublish; 2]);
    }

    #[test]
    fn events_for_what_breaks_the_order() {
        let mut m = Mqtt::default();
        m.feed(Direction::ToServer, b"\xc0\x00");
        assert_eq!(m.events, [AppEvent::MqttUnintroducedMessage]);
        // A packet after a CONNECT that is not yet accepted is still unintroduced.
        m.feed(
            Direction::ToServer,
            b"\x10\x0c\x00\x04MQTT\x04\x02\x00\x3c\x00\x00",
        );
        m.feed(Direction::ToServer, b"\xc0\x00");
        assert_eq!(m.events[1], AppEvent::MqttUnintroducedMessage);
        m.feed(Direction::ToClient, b"\x20\x02\x00\x00\x20\x02\x00\x00");
        assert_eq!(m.events[2], AppEvent::MqttMissingConnect);
        m.feed(
            Direction::ToServer,
            b"\x10\x0c\x00\x04MQTT\x04\x02\x00\x3c\x00\x00",
        );
        assert_eq!(m.events[3], AppEvent::MqttDoubleConnect);
        m.feed(Direction::ToServer, b"\x00\x00");
        assert_eq!(m.events[4], AppEvent::MqttUnassignedMsgType);
    }

    #[test]
    fn bad_input_gives_the_direction_up() {
        let mut m = Mqtt::default();
        // A remaining length of five bytes.
        m.feed(Direction::ToServer, b"\x30\xff\xff\xff\xff\x01");
        assert_eq!(m.events, [AppEvent::MqttMalformedTraffic]);
        assert!(!m.feed(Direction::ToServer, b"\xc0\x00"));
        // Version 5 properties longer than their packet.
        let mut m = Mqtt::default();
        m.feed(Direction::ToServer, CONNECT_V5);
        m.feed(Direction::ToClient, b"\x20\x03\x00\x00\x09");
        assert_eq!(m.events, [AppEvent::MqttMalformedTraffic]);
    }
}
