//! DNS messages (RFC 1035) over UDP (one per datagram) and TCP (each behind a two-byte
//! length). Every message is a transaction of its own, as Suricata keeps them: a query
//! is inspected to the server, a response to the client.
//!
//! Names are decoded to dotted form with compression pointers followed either way, as
//! Suricata accepts them (a question may point forward to the next one), but at most
//! 128 pointers and 255 bytes per name, so a hostile message cannot loop; labels are
//! bounded by the message.

use crate::txs::{Events, Numbered, Txs};
use netsieve_wire::{AppEvent, Direction, PerDir};

/// One question or answer record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The owner name in dotted form, without the final dot.
    pub name: Vec<u8>,
    pub rtype: u16,
    pub class: u16,
    pub ttl: u32,
    /// Answers: the record data (A/AAAA addresses, names in dotted form for CNAME,
    /// NS, PTR, MX; as sent otherwise).
    pub data: Vec<u8>,
    /// An SOA record's fields.
    pub soa: Option<Box<Soa>>,
}

/// A start of authority record's fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Soa {
    pub mname: Vec<u8>,
    pub rname: Vec<u8>,
    pub serial: u32,
    pub refresh: u32,
    pub retry: u32,
    pub expire: u32,
    pub minimum: u32,
}

/// A parsed message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Message {
    pub id: u16,
    pub response: bool,
    pub opcode: u8,
    pub rcode: u8,
    pub flags: u16,
    pub questions: Vec<Record>,
    pub answers: Vec<Record>,
    pub authorities: Vec<Record>,
    pub additionals: Vec<Record>,
}

/// A message and the transaction id it got.
#[derive(Clone, Debug)]
pub struct Tx {
    pub id: u64,
    pub dir: Direction,
    pub msg: Message,
}

/// Something wrong with a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Malformed,
    /// A TCP message longer than the stream holds before the flow ended.
    Truncated,
    /// A response sent to the server.
    NotARequest,
    /// A request sent to the client.
    NotAResponse,
    /// The header's reserved Z bit is set.
    ZFlagSet,
    /// An opcode no standard defines.
    InvalidOpcode,
}

impl Event {
    /// The event as rules name it (`app-layer-event:dns.z_flag_set`), if they do.
    pub fn app_event(self) -> Option<AppEvent> {
        Some(match self {
            Event::Malformed => AppEvent::DnsMalformedData,
            Event::NotARequest => AppEvent::DnsNotARequest,
            Event::NotAResponse => AppEvent::DnsNotAResponse,
            Event::ZFlagSet => AppEvent::DnsZFlagSet,
            Event::InvalidOpcode => AppEvent::DnsInvalidOpcode,
            Event::Truncated => return None,
        })
    }
}

/// Messages held at most (older ones are dropped once inspected or not).
const MAX_TXS: usize = 256;
/// Records parsed per section at most.
const MAX_RECORDS: usize = 64;

/// A flow's DNS state.
#[derive(Clone, Debug, Default)]
pub struct Dns {
    pub txs: Txs<Tx, MAX_TXS>,
    /// TCP: bytes of an incomplete message per direction.
    buf: PerDir<Vec<u8>>,
    /// The events raised.
    pub events: Events<Event>,
}

impl Dns {
    /// One UDP datagram. Returns whether it held a message.
    pub fn datagram(&mut self, dir: Direction, data: &[u8]) -> bool {
        match parse(data) {
            Some(m) => {
                self.push(dir, m);
                true
            }
            None => {
                self.events.raise(Event::Malformed);
                false
            }
        }
    }

    /// In-order TCP bytes. Returns whether they completed a message.
    pub fn stream(&mut self, dir: Direction, data: &[u8]) -> bool {
        let d = dir;
        self.buf[d].extend_from_slice(data);
        let mut done = false;
        loop {
            let b = &self.buf[d];
            if b.len() < 2 {
                break;
            }
            let n = u16::from_be_bytes([b[0], b[1]]) as usize;
            if b.len() < 2 + n {
                break;
            }
            let m = parse(&b[2..2 + n]);
            self.buf[d].drain(..2 + n);
            match m {
                Some(m) => {
                    self.push(dir, m);
                    done = true;
                }
                None => self.events.raise(Event::Malformed),
            }
        }
        done
    }

    fn push(&mut self, dir: Direction, msg: Message) {
        if msg.response != (dir == Direction::ToClient) {
            self.events.raise(if msg.response {
                Event::NotARequest
            } else {
                Event::NotAResponse
            });
        }
        if msg.flags & 0x0040 != 0 {
            self.events.raise(Event::ZFlagSet);
        }
        if !matches!(msg.opcode, 0 | 1 | 2 | 4 | 5 | 6) {
            self.events.raise(Event::InvalidOpcode);
        }
        self.txs.begin(|id| Tx { id, dir, msg });
    }
}

/// Parses one DNS message; `None` if its header or a question is malformed. Answers
/// that do not parse are left out.
pub fn parse(b: &[u8]) -> Option<Message> {
    if b.len() < 12 {
        return None;
    }
    let u16at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
    let flags = u16at(2);
    let mut m = Message {
        id: u16at(0),
        response: flags & 0x8000 != 0,
        opcode: ((flags >> 11) & 0xf) as u8,
        rcode: (flags & 0xf) as u8,
        flags,
        ..Message::default()
    };
    let (qd, an) = (u16at(4) as usize, u16at(6) as usize);
    let mut at = 12;
    for _ in 0..qd.min(MAX_RECORDS) {
        let (name, next) = name(b, at)?;
        if next + 4 > b.len() {
            return None;
        }
        m.questions.push(Record {
            name,
            rtype: u16at(next),
            class: u16at(next + 2),
            ttl: 0,
            data: Vec::new(),
            soa: None,
        });
        at = next + 4;
    }
    let (ns, ar) = (u16at(8) as usize, u16at(10) as usize);
    // A section cut short ends the message's records there; what came before stays.
    let mut sections = [Vec::new(), Vec::new(), Vec::new()];
    'sections: for (count, out) in [an, ns, ar].into_iter().zip(&mut sections) {
        for _ in 0..count.min(MAX_RECORDS) {
            match resource(b, at) {
                Some((r, next)) => {
                    out.push(r);
                    at = next;
                }
                None => break 'sections,
            }
        }
    }
    [m.answers, m.authorities, m.additionals] = sections;
    Some(m)
}

/// The resource record at `at`, and the offset after it.
fn resource(b: &[u8], at: usize) -> Option<(Record, usize)> {
    let u16at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
    let (name, next) = name(b, at)?;
    if next + 10 > b.len() {
        return None;
    }
    let rtype = u16at(next);
    let len = u16at(next + 8) as usize;
    let start = next + 10;
    let raw = b.get(start..start + len)?;
    let mut soa = None;
    let data = match rtype {
        // CNAME, NS, PTR: a name; MX: preference then a name.
        2 | 5 | 12 => self::name(b, start).map(|x| x.0).unwrap_or_default(),
        15 if len > 2 => self::name(b, start + 2).map(|x| x.0).unwrap_or_default(),
        6 => {
            soa = self::soa(b, start, start + len).map(Box::new);
            raw.to_vec()
        }
        _ => raw.to_vec(),
    };
    let ttl = u32::from_be_bytes([b[next + 4], b[next + 5], b[next + 6], b[next + 7]]);
    let r = Record {
        name,
        rtype,
        class: u16at(next + 2),
        ttl,
        data,
        soa,
    };
    Some((r, start + len))
}

/// A start of authority's fields (RFC 1035 3.3.13), from `at` to `end`.
fn soa(b: &[u8], at: usize, end: usize) -> Option<Soa> {
    let (mname, next) = name(b, at)?;
    let (rname, next) = name(b, next)?;
    let n = b.get(next..end)?;
    let num = |i: usize| Some(u32::from_be_bytes(n.get(i..i + 4)?.try_into().ok()?));
    Some(Soa {
        mname,
        rname,
        serial: num(0)?,
        refresh: num(4)?,
        retry: num(8)?,
        expire: num(12)?,
        minimum: num(16)?,
    })
}

/// A name at `at`: its dotted form and the offset after it (after the first pointer
/// if it has one). Pointers may go anywhere in the message; a chain of more than 128
/// of them (a loop) or a name longer than 255 bytes fails.
pub fn name(b: &[u8], at: usize) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut pos = at;
    let mut end = None;
    // A name is at most 255 bytes; a pointer chain at most as many hops as bytes.
    let mut hops = 0;
    loop {
        let len = *b.get(pos)? as usize;
        match len & 0xc0 {
            0 if len == 0 => {
                return Some((out, end.unwrap_or(pos + 1)));
            }
            0 => {
                let label = b.get(pos + 1..pos + 1 + len)?;
                if !out.is_empty() {
                    out.push(b'.');
                }
                out.extend_from_slice(label);
                if out.len() > 255 {
                    return None;
                }
                pos += 1 + len;
            }
            0xc0 => {
                let target = ((len & 0x3f) << 8) | *b.get(pos + 1)? as usize;
                if hops >= 128 {
                    return None;
                }
                hops += 1;
                end.get_or_insert(pos + 2);
                pos = target;
            }
            _ => return None,
        }
    }
}

/// The name of a response code, as EVE writes it (RFC 1035 and RFC 2136's codes).
pub fn rcode_name(c: u8) -> String {
    let names = [
        "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET",
        "NXRRSET", "NOTAUTH", "NOTZONE",
    ];
    names
        .get(c as usize)
        .map_or_else(|| c.to_string(), |n| (*n).to_string())
}

/// The name of a record type, as EVE writes it.
pub fn rtype_name(t: u16) -> String {
    match t {
        1 => "A".into(),
        2 => "NS".into(),
        5 => "CNAME".into(),
        6 => "SOA".into(),
        10 => "NULL".into(),
        12 => "PTR".into(),
        13 => "HINFO".into(),
        15 => "MX".into(),
        16 => "TXT".into(),
        28 => "AAAA".into(),
        33 => "SRV".into(),
        35 => "NAPTR".into(),
        41 => "OPT".into(),
        43 => "DS".into(),
        46 => "RRSIG".into(),
        47 => "NSEC".into(),
        48 => "DNSKEY".into(),
        50 => "NSEC3".into(),
        64 => "SVCB".into(),
        65 => "HTTPS".into(),
        99 => "SPF".into(),
        252 => "AXFR".into(),
        255 => "ANY".into(),
        257 => "CAA".into(),
        t => format!("{t}"),
    }
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(name: &str) -> Vec<u8> {
        let mut b = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for l in name.split('.') {
            b.push(l.len() as u8);
            b.extend_from_slice(l.as_bytes());
        }
        b.extend_from_slice(&[0, 0, 1, 0, 1]);
        b
    }

    #[test]
    fn parses_a_query_and_tcp_framing() {
        let q = query("www.example.com");
        let m = parse(&q).unwrap();
        assert_eq!(m.id, 0x1234);
        assert!(!m.response);
        assert_eq!(m.questions[0].name, b"www.example.com");
        assert_eq!(m.questions[0].rtype, 1);
        let mut d = Dns::default();
        let mut framed = vec![0, q.len() as u8];
        framed.extend_from_slice(&q);
        assert!(!d.stream(Direction::ToServer, &framed[..5]));
        assert!(d.stream(Direction::ToServer, &framed[5..]));
        assert_eq!(d.txs.len(), 1);
    }

    #[test]
    fn pointers_go_either_way_but_never_loop() {
        // A name that points at itself, two that point at each other, and a label
        // followed by a pointer back to it (a name that grows without end).
        for name in [
            &[0xc0, 12][..],
            &[0xc0, 14, 0xc0, 12][..],
            &[1, b'a', 0xc0, 12][..],
        ] {
            let mut b = vec![0u8; 12];
            b[5] = 1;
            b.extend_from_slice(name);
            b.extend_from_slice(&[0, 1, 0, 1]);
            assert!(parse(&b).is_none(), "{name:?}");
        }
        // A question that points forward to the next one (suricata-verify's
        // dns-forward-pointer).
        let mut b = vec![0u8; 12];
        b[5] = 2;
        b.extend_from_slice(&[0xc0, 18, 0, 1, 0, 1]);
        b.extend_from_slice(&[3, b'w', b'w', b'w', 0, 0, 1, 0, 1]);
        let m = parse(&b).unwrap();
        assert_eq!(m.questions[0].name, b"www");
        assert_eq!(m.questions[1].name, b"www");
        // A pointer to an earlier name.
        let mut q = query("example.com");
        let n = q.len();
        q[5] = 2;
        q.extend_from_slice(&[3, b'w', b'w', b'w', 0xc0, 12, 0, 1, 0, 1]);
        let m = parse(&q).unwrap();
        assert_eq!(m.questions[1].name, b"www.example.com");
        assert!(n > 12);
    }
}
