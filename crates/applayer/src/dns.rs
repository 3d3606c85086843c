//! DNS messages (RFC 1035) over UDP (one per datagram) and TCP (each behind a two-byte
//! length). Every message is a transaction of its own, as Suricata keeps them: a query
//! is inspected to the server, a response to the client.
//!
//! Names are decoded to dotted form with compression pointers followed either way, as
//! Suricata reads them (a question may point forward to the next one): a name is kept
//! to its first [`MAX_NAME`] bytes (the rest read, not kept: `name_too_long`), at most
//! 255 labels and pointers are followed (`too_many_labels`), and a pointer to itself
//! ends the name (`infinite_loop`); the message is still read and logged. So a hostile
//! message cannot loop.

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
    /// The name was longer than [`MAX_NAME`] and is cut there (`rrname_truncated`).
    pub truncated: bool,
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
    /// What reading it ran into, raised when it is pushed (names, sections).
    pub events: Vec<Event>,
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
    /// A name over [`MAX_NAME`] bytes (kept cut).
    NameTooLong,
    /// A name of more than 255 labels and pointers.
    TooManyLabels,
    /// A compression pointer to itself.
    InfiniteLoop,
    /// The authority section does not parse (what came before stays).
    InvalidAuthorities,
    /// The additional section does not parse.
    InvalidAdditionals,
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
            Event::NameTooLong => AppEvent::DnsNameTooLong,
            Event::TooManyLabels => AppEvent::DnsTooManyLabels,
            Event::InfiniteLoop => AppEvent::DnsInfiniteLoop,
            Event::InvalidAuthorities => AppEvent::DnsInvalidAuthorities,
            Event::InvalidAdditionals => AppEvent::DnsInvalidAdditionals,
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
        for &e in &msg.events {
            self.events.raise(e);
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
        let n = name(b, at)?;
        let next = n.next;
        if next + 4 > b.len() {
            return None;
        }
        m.note(&n);
        m.questions.push(Record {
            name: n.text,
            rtype: u16at(next),
            class: u16at(next + 2),
            ttl: 0,
            truncated: n.truncated,
            data: Vec::new(),
            soa: None,
        });
        at = next + 4;
    }
    let (ns, ar) = (u16at(8) as usize, u16at(10) as usize);
    // A section cut short ends the message's records there; what came before stays
    // (an authority or additional section that does not parse raises its event).
    let mut sections = [Vec::new(), Vec::new(), Vec::new()];
    let bad = [
        None,
        Some(Event::InvalidAuthorities),
        Some(Event::InvalidAdditionals),
    ];
    'sections: for ((count, out), bad) in [an, ns, ar].into_iter().zip(&mut sections).zip(bad) {
        for _ in 0..count.min(MAX_RECORDS) {
            match resource(b, at, &mut m.events) {
                Some((r, next)) => {
                    out.push(r);
                    at = next;
                }
                None => {
                    m.events.extend(bad);
                    break 'sections;
                }
            }
        }
    }
    [m.answers, m.authorities, m.additionals] = sections;
    Some(m)
}

impl Message {
    /// Notes what reading name `n` ran into.
    fn note(&mut self, n: &Name) {
        note(n, &mut self.events);
    }
}

/// Adds the events of reading name `n` to `events`, each once.
fn note(n: &Name, events: &mut Vec<Event>) {
    for (hit, e) in [
        (n.truncated, Event::NameTooLong),
        (n.too_many_labels, Event::TooManyLabels),
        (n.infinite_loop, Event::InfiniteLoop),
    ] {
        if hit && !events.contains(&e) {
            events.push(e);
        }
    }
}

/// The resource record at `at`, and the offset after it; what reading its owner name
/// ran into goes to `events`.
fn resource(b: &[u8], at: usize, events: &mut Vec<Event>) -> Option<(Record, usize)> {
    let u16at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
    let n = name(b, at)?;
    note(&n, events);
    let next = n.next;
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
        2 | 5 | 12 => self::name(b, start).map(|x| x.text).unwrap_or_default(),
        15 if len > 2 => self::name(b, start + 2).map(|x| x.text).unwrap_or_default(),
        6 => {
            soa = self::soa(b, start, start + len).map(Box::new);
            raw.to_vec()
        }
        _ => raw.to_vec(),
    };
    let ttl = u32::from_be_bytes([b[next + 4], b[next + 5], b[next + 6], b[next + 7]]);
    let r = Record {
        name: n.text,
        rtype,
        class: u16at(next + 2),
        ttl,
        truncated: n.truncated,
        data,
        soa,
    };
    Some((r, start + len))
}

/// A start of authority's fields (RFC 1035 3.3.13), from `at` to `end`.
fn soa(b: &[u8], at: usize, end: usize) -> Option<Soa> {
    let m = name(b, at)?;
    let r = name(b, m.next)?;
    let n = b.get(r.next..end)?;
    let (mname, rname) = (m.text, r.text);
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

/// The longest name kept (Suricata's limit), in dotted form.
pub const MAX_NAME: usize = 1025;

/// A name as read from a message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Name {
    /// Dotted form, at most [`MAX_NAME`] bytes.
    pub text: Vec<u8>,
    /// The offset after it (after its first pointer if it has one).
    pub next: usize,
    /// It was longer than [`MAX_NAME`].
    pub truncated: bool,
    /// Reading stopped after 255 labels and pointers.
    pub too_many_labels: bool,
    /// Reading stopped at a pointer to itself.
    pub infinite_loop: bool,
}

/// The name at `at`. Pointers may go anywhere in the message; reading stops (and the
/// name is what was read) after 255 labels and pointers or at a pointer to itself. A
/// label or pointer past the message's end, or a reserved label type, fails.
pub fn name(b: &[u8], at: usize) -> Option<Name> {
    let mut n = Name::default();
    let mut pos = at;
    let mut after_pointer = None;
    let mut steps = 0;
    loop {
        let len = *b.get(pos)? as usize;
        match len & 0xc0 {
            0 if len == 0 => {
                pos += 1;
                break;
            }
            0 => {
                let label = b.get(pos + 1..pos + 1 + len)?;
                if !n.truncated {
                    if !n.text.is_empty() {
                        n.text.push(b'.');
                    }
                    n.text.extend_from_slice(label);
                    if n.text.len() > MAX_NAME {
                        n.text.truncate(MAX_NAME);
                        n.truncated = true;
                    }
                }
                pos += 1 + len;
            }
            0xc0 => {
                let target = ((len & 0x3f) << 8) | *b.get(pos + 1)? as usize;
                if target >= b.len() {
                    return None;
                }
                after_pointer.get_or_insert(pos + 2);
                if target == pos {
                    n.infinite_loop = true;
                    break;
                }
                pos = target;
            }
            _ => return None,
        }
        steps += 1;
        if steps > 255 {
            n.too_many_labels = true;
            break;
        }
    }
    n.next = after_pointer.unwrap_or(pos);
    Some(n)
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
        // followed by a pointer back to it (a name that grows without end): each ends
        // with its event, as Suricata's does, and the message is still read.
        for (name, event) in [
            (&[0xc0, 12][..], Event::InfiniteLoop),
            (&[0xc0, 14, 0xc0, 12][..], Event::TooManyLabels),
            (&[1, b'a', 0xc0, 12][..], Event::TooManyLabels),
        ] {
            let mut b = vec![0u8; 12];
            b[5] = 1;
            b.extend_from_slice(name);
            b.extend_from_slice(&[0, 1, 0, 1]);
            let m = parse(&b).unwrap_or_else(|| panic!("{name:?}"));
            assert_eq!(m.events, [event], "{name:?}");
        }
        // A name over 1025 bytes is kept cut, and says so.
        let long = vec!["abcdefghij"; 120].join(".");
        let m = parse(&query(&long)).unwrap();
        assert_eq!(m.questions[0].name.len(), MAX_NAME);
        assert!(m.questions[0].truncated);
        assert_eq!(m.events, [Event::NameTooLong]);
        // An additional record cut short: the answers stay, with the event.
        let mut r = query("a.b");
        r[2] = 0x81;
        r[7] = 1;
        r[11] = 1;
        r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 9, 0, 4, 1, 2, 3, 4]);
        r.extend_from_slice(&[0xc0, 12, 0, 1]);
        let m = parse(&r).unwrap();
        assert_eq!(m.answers.len(), 1);
        assert_eq!(m.events, [Event::InvalidAdditionals]);
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
