//! SIP (RFC 3261) over UDP and TCP: requests and responses, each its own transaction as
//! Suricata counts them (a response is not paired with its request).
//!
//! A message is a start line (`INVITE sip:bob@example.com SIP/2.0`, or `SIP/2.0 200
//! OK`), header lines up to an empty line, and a body: on UDP the rest of the datagram,
//! on TCP the `Content-Length` bytes that follow. Compact header names (`f:` for
//! `From`, RFC 3261 section 7.3.3) are read under their full name, and a body whose
//! `Content-Type` is `application/sdp` is read as a session description ([`crate::sdp`]).
//!
//! Bounded: a TCP message (head and body) may take [`MAX_MESSAGE`] bytes, past which the
//! direction is given up, and at most 256 transactions are kept.

use crate::frames::Marks;
use crate::held::Held;
use crate::txs::{Numbered, Txs};
use netsieve_wire::{Direction, FrameType, PerDir};

use crate::Probe;
use crate::sdp::{self, Sdp};

/// The largest message read from a TCP stream.
pub const MAX_MESSAGE: usize = 256 * 1024;
/// Transactions kept (the oldest go first).
const MAX_TXS: usize = 256;

/// The request methods that name a flow as SIP (RFC 3261 and its extensions).
const METHODS: &[&[u8]] = &[
    b"REGISTER",
    b"INVITE",
    b"ACK",
    b"BYE",
    b"CANCEL",
    b"UPDATE",
    b"REFER",
    b"PRACK",
    b"SUBSCRIBE",
    b"NOTIFY",
    b"PUBLISH",
    b"MESSAGE",
    b"INFO",
    b"OPTIONS",
];

/// Compact header names and the names they stand for.
const COMPACT: &[(u8, &[u8])] = &[
    (b'i', b"Call-ID"),
    (b'm', b"Contact"),
    (b'e', b"Content-Encoding"),
    (b'l', b"Content-Length"),
    (b'c', b"Content-Type"),
    (b'f', b"From"),
    (b's', b"Subject"),
    (b'k', b"Supported"),
    (b't', b"To"),
    (b'v', b"Via"),
];

/// What the start line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    Request { method: Vec<u8>, uri: Vec<u8> },
    Response { code: Vec<u8>, reason: Vec<u8> },
}

/// One header line, its name spelled out in full.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: Vec<u8>,
    pub value: Vec<u8>,
}

/// A request or a response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The start line, without its line end.
    pub line: Vec<u8>,
    /// `SIP/2.0`.
    pub version: Vec<u8>,
    pub start: Start,
    pub headers: Vec<Header>,
    /// The body, when it is a session description.
    pub sdp: Option<Sdp>,
}

impl Message {
    /// Whether a message of its kind is read in direction `dir`: as Suricata reads
    /// SIP, requests only from the flow's client and responses only from its server
    /// (a request the server sends is not read).
    fn sent_by(&self, dir: Direction) -> bool {
        matches!(self.start, Start::Request { .. }) == (dir == Direction::ToServer)
    }

    /// The values of the headers named `name` (any case), in order.
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name.as_bytes()))
            .map(|h| &h.value[..])
    }
}

/// One message, in the direction it was sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    pub dir: Direction,
    pub msg: Message,
}

/// A flow's SIP state.
#[derive(Debug, Default)]
pub struct Sip {
    pub txs: Txs<Tx, MAX_TXS>,
    /// TCP: each direction's bytes of the message being read; a direction that sent
    /// something that is not SIP, or too much, is given up.
    held: Held,
    /// TCP: what each direction's held bytes wait for.
    wait: PerDir<Wait>,
    /// The messages of the latest feed or datagram, as frames (see [`crate::frames`]).
    pub marks: Marks,
}

/// What a TCP direction's held bytes wait for.
#[derive(Clone, Copy, Debug)]
enum Wait {
    /// The empty line that ends the head; the first `searched` bytes hold none.
    Head { searched: usize },
    /// The message's `total` bytes (head and body).
    Body { total: usize },
}

impl Default for Wait {
    fn default() -> Wait {
        Wait::Head { searched: 0 }
    }
}

impl Sip {
    /// One UDP datagram: one message. Returns whether it was one.
    pub fn datagram(&mut self, dir: Direction, data: &[u8]) -> bool {
        match split(data).filter(|m| m.sent_by(dir)) {
            Some(msg) => {
                self.push(dir, msg, data, 0);
                true
            }
            None => false,
        }
    }

    /// Feeds in-order TCP bytes of one direction. Returns whether a message completed.
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) -> bool {
        // Where `held[0]` lies relative to `bytes[0]`.
        let at = -(self.held.bytes(dir).len() as i64);
        let Some(held) = self.held.take(dir, bytes) else {
            return false;
        };
        let mut used = 0;
        let mut done = false;
        loop {
            let data = &held[used..];
            match self.wait[dir] {
                Wait::Head { searched: 0 } if data.starts_with(b"\r\n") => {
                    // Line ends between messages are allowed (RFC 3261 section 7.5).
                    used += 2;
                    continue;
                }
                Wait::Head { searched } => match head_end(data, searched) {
                    Some((head, body_at)) => {
                        let Some(length) = head_length(&data[..head]) else {
                            self.held.give_up(dir);
                            return done;
                        };
                        self.wait[dir] = Wait::Body {
                            total: body_at.saturating_add(length),
                        };
                        continue;
                    }
                    None => {
                        self.wait[dir] = Wait::Head {
                            searched: data.len(),
                        }
                    }
                },
                Wait::Body { total } if total <= data.len() => {
                    match split(&data[..total]) {
                        Some(msg) if msg.sent_by(dir) => {
                            self.push(dir, msg, &data[..total], at + used as i64);
                            done = true;
                        }
                        _ => {
                            self.held.give_up(dir);
                            return done;
                        }
                    }
                    used += total;
                    self.wait[dir] = Wait::Head { searched: 0 };
                    continue;
                }
                Wait::Body { .. } => {}
            }
            break;
        }
        self.held.keep(dir, held, used);
        let total = match self.wait[dir] {
            Wait::Head { .. } => self.held.bytes(dir).len(),
            Wait::Body { total } => total,
        };
        if total > MAX_MESSAGE {
            self.held.give_up(dir);
        }
        done
    }

    /// Message `msg`, whose bytes are `raw`, starting at `start` relative to the
    /// feed's first byte: a transaction, and its frames.
    fn push(&mut self, dir: Direction, msg: Message, raw: &[u8], start: i64) {
        let request = matches!(msg.start, Start::Request { .. });
        let tx = self.txs.begin(|id| Tx { id, dir, msg }).id;
        let [line_t, headers_t, body_t] = if request {
            [
                FrameType::SipRequestLine,
                FrameType::SipRequestHeaders,
                FrameType::SipRequestBody,
            ]
        } else {
            [
                FrameType::SipResponseLine,
                FrameType::SipResponseHeaders,
                FrameType::SipResponseBody,
            ]
        };
        let line = raw
            .iter()
            .position(|&c| c == b'\n')
            .map_or(raw.len(), |i| i + 1);
        let (head, body_at) = head_end(raw, 0).unwrap_or((raw.len(), raw.len()));
        // The headers end with the last header's line end.
        let headers_end = raw[head..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(head, |i| head + i + 1);
        let m = &mut self.marks;
        m.add(FrameType::SipPdu, start, raw.len(), None);
        m.add(line_t, start, line, Some(tx));
        if headers_end > line {
            m.add(headers_t, start + line as i64, headers_end - line, Some(tx));
        }
        if body_at < raw.len() {
            m.add(
                body_t,
                start + body_at as i64,
                raw.len() - body_at,
                Some(tx),
            );
        }
    }
}

/// Names SIP from a direction's first bytes: a request line of a known method and
/// version `SIP/2.0`, or a status line of that version.
pub fn probe(data: &[u8]) -> Probe {
    let Some(end) = data.iter().position(|&c| c == b'\n') else {
        // The bytes so far could open `SIP/2.0 ` or a method and its space.
        let opens = |word: &[u8]| {
            let (head, sp) = data.split_at(data.len().min(word.len()));
            word.starts_with(head) && sp.first().is_none_or(|&c| c == b' ')
        };
        let could_be = opens(b"SIP/2.0") || METHODS.iter().any(|m| opens(m));
        return if could_be {
            Probe::NeedMore
        } else {
            Probe::Unknown
        };
    };
    match start_line(trim_eol(&data[..end])) {
        Some((version, Start::Request { method, .. }))
            if version == b"SIP/2.0" && METHODS.contains(&&method[..]) =>
        {
            Probe::Is(crate::AppProto::Sip)
        }
        Some((version, Start::Response { .. })) if version == b"SIP/2.0" => {
            Probe::Is(crate::AppProto::Sip)
        }
        _ => Probe::Unknown,
    }
}

/// Reads `data` as one message: its head may end without an empty line, and its body
/// is the rest of it (a datagram's `Content-Length` is not read, as Suricata does not).
fn split(data: &[u8]) -> Option<Message> {
    let (head, body_at) = head_end(data, 0).unwrap_or((data.len(), data.len()));
    let head = &data[..head];
    let mut lines = head.split(|&c| c == b'\n').map(trim_eol);
    let (version, start) = lines.next().and_then(start_line)?;
    let line = trim_eol(head.split(|&c| c == b'\n').next().unwrap_or_default()).to_vec();
    let headers: Vec<Header> = lines.filter_map(header).collect();
    let body = &data[body_at..];
    let is_sdp = headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case(b"Content-Type")
            && h.value.len() >= 15
            && h.value[..15].eq_ignore_ascii_case(b"application/sdp")
    });
    let msg = Message {
        line,
        version: version.to_vec(),
        start,
        sdp: if is_sdp { sdp::parse(body) } else { None },
        headers,
    };
    Some(msg)
}

/// Where the head at the front of `data` ends (its empty line), and where the body
/// starts; the first `searched` bytes are known to hold no end.
fn head_end(data: &[u8], searched: usize) -> Option<(usize, usize)> {
    let from = searched.saturating_sub(3);
    let i = data[from..].iter().position(|&c| c == b'\n')?;
    let mut at = from + i;
    let cr = |at: usize| usize::from(data[..at].ends_with(b"\r"));
    loop {
        // `at` is a line feed: the head ends if the next line is empty.
        match &data[at + 1..] {
            [b'\n', ..] => return Some((at - cr(at), at + 2)),
            [b'\r', b'\n', ..] => return Some((at - cr(at), at + 3)),
            _ => at += 1 + data[at + 1..].iter().position(|&c| c == b'\n')?,
        }
    }
}

/// A TCP message's body length, from the head; `None` when the head's start line is not
/// SIP's. A message without `Content-Length` has no body.
fn head_length(head: &[u8]) -> Option<usize> {
    let mut lines = head.split(|&c| c == b'\n').map(trim_eol);
    start_line(lines.next()?)?;
    Some(
        lines
            .filter_map(header)
            .find(|h| h.name.eq_ignore_ascii_case(b"Content-Length"))
            .and_then(|h| std::str::from_utf8(&h.value).ok()?.trim().parse().ok())
            .unwrap_or(0),
    )
}

/// A request line (`METHOD URI VERSION`) or a status line (`VERSION CODE REASON`), with
/// the version.
fn start_line(line: &[u8]) -> Option<(&[u8], Start)> {
    let version_ok = |v: &[u8]| {
        v.strip_prefix(b"SIP/").is_some_and(|n| {
            let mut parts = n.split(|&c| c == b'.');
            let digits = |p: Option<&[u8]>| {
                p.is_some_and(|p| !p.is_empty() && p.iter().all(u8::is_ascii_digit))
            };
            digits(parts.next()) && digits(parts.next()) && parts.next().is_none()
        })
    };
    let mut words = line.splitn(3, |&c| c == b' ');
    let (a, b) = (words.next()?, words.next()?);
    let c = words.next().unwrap_or_default();
    if version_ok(a) {
        // Status line: a three-digit code, then the reason (possibly empty).
        let code_ok = b.len() == 3 && b.iter().all(u8::is_ascii_digit);
        return code_ok.then(|| {
            (
                a,
                Start::Response {
                    code: b.to_vec(),
                    reason: c.to_vec(),
                },
            )
        });
    }
    let method_ok = !a.is_empty() && a.iter().all(|c| c.is_ascii_alphabetic());
    (method_ok && !b.is_empty() && version_ok(c)).then(|| {
        (
            c,
            Start::Request {
                method: a.to_vec(),
                uri: b.to_vec(),
            },
        )
    })
}

/// A header line `name: value`; a line without a colon is passed over.
fn header(line: &[u8]) -> Option<Header> {
    let colon = line.iter().position(|&c| c == b':')?;
    let name = line[..colon].trim_ascii();
    if name.is_empty() {
        return None;
    }
    let name = match name {
        [c] => COMPACT
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(c))
            .map_or(name, |(_, full)| full),
        _ => name,
    };
    Some(Header {
        name: name.to_vec(),
        value: line[colon + 1..].trim_ascii().to_vec(),
    })
}

fn trim_eol(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AppProto;

    const INVITE: &[u8] = b"INVITE sip:bob@example.com SIP/2.0\r\n\
        v: SIP/2.0/UDP 10.0.0.1:5060\r\n\
        f: <sip:alice@example.com>;tag=1\r\n\
        To: <sip:bob@example.com>\r\n\
        t: <sip:carol@example.com>\r\n\
        c: application/sdp\r\n\
        l: 34\r\n\
        \r\n\
        v=0\r\ns=call\r\nm=audio 1 RTP/AVP 0\r\n";

    #[test]
    fn a_request_with_compact_headers_and_a_body() {
        let mut s = Sip::default();
        assert!(s.datagram(Direction::ToServer, INVITE));
        let t = &s.txs[0];
        assert_eq!(t.msg.line, b"INVITE sip:bob@example.com SIP/2.0");
        assert_eq!(
            t.msg.start,
            Start::Request {
                method: b"INVITE".to_vec(),
                uri: b"sip:bob@example.com".to_vec()
            }
        );
        let to: Vec<&[u8]> = t.msg.values("to").collect();
        assert_eq!(
            to,
            [&b"<sip:bob@example.com>"[..], b"<sip:carol@example.com>"]
        );
        assert_eq!(
            t.msg.values("Via").next(),
            Some(&b"SIP/2.0/UDP 10.0.0.1:5060"[..])
        );
        let sdp = t.msg.sdp.as_ref().unwrap();
        assert_eq!(sdp.session_name.as_deref(), Some(&b"call"[..]));
        assert_eq!(sdp.media[0].media, b"audio 1 RTP/AVP 0");
        // A request is read from the client only, a response from the server only.
        assert!(!s.datagram(Direction::ToClient, INVITE));
        assert!(!s.datagram(Direction::ToServer, b"SIP/2.0 200 OK\r\n\r\n"));
        assert!(s.datagram(Direction::ToClient, b"SIP/2.0 200 OK\r\n\r\n"));
    }

    #[test]
    fn tcp_messages_in_any_split() {
        let bye = b"BYE sip:bob@example.com SIP/2.0\r\nContent-Length: 3\r\n\r\nabc";
        let stream = [INVITE, bye].concat();
        for cut in 0..stream.len() {
            let mut s = Sip::default();
            let a = s.feed(Direction::ToServer, &stream[..cut]);
            let b = s.feed(Direction::ToServer, &stream[cut..]);
            assert!(a || b, "cut {cut}");
            assert_eq!(s.txs.len(), 2, "cut {cut}");
            assert_eq!(s.txs[1].msg.line, b"BYE sip:bob@example.com SIP/2.0");
            assert_eq!(s.txs[0].msg.sdp.as_ref().unwrap().media.len(), 1);
        }
    }

    #[test]
    fn probing() {
        assert_eq!(
            probe(b"REGISTER sip:x SIP/2.0\r\n"),
            Probe::Is(AppProto::Sip)
        );
        assert_eq!(probe(b"SIP/2.0 100 Trying\r\n"), Probe::Is(AppProto::Sip));
        assert_eq!(probe(b"OPTIONS sip:x SI"), Probe::NeedMore);
        assert_eq!(probe(b"OPTIONS * HTTP/1.1\r\n"), Probe::Unknown);
        assert_eq!(probe(b"NOTIFY * HTTP/1.1\r\n"), Probe::Unknown);
        assert_eq!(probe(b"GET / HTTP/1.1\r\n"), Probe::Unknown);
        assert_eq!(probe(b"\x16\x03\x01"), Probe::Unknown);
    }

    #[test]
    fn what_is_not_sip_is_given_up_and_memory_stays_bounded() {
        let mut s = Sip::default();
        assert!(!s.feed(Direction::ToServer, b"hello\r\n\r\n"));
        assert!(!s.feed(Direction::ToServer, INVITE));
        assert!(s.txs.is_empty());
        let mut s = Sip::default();
        let big = vec![b'a'; MAX_MESSAGE];
        s.feed(Direction::ToClient, b"SIP/2.0 200 OK\r\nX: ");
        s.feed(Direction::ToClient, &big);
        assert!(s.held.bytes(Direction::ToClient).is_empty());
        assert!(!s.datagram(Direction::ToServer, b"\xff\xfe"));
    }
}
