//! HTTP/2 over cleartext TCP (RFC 9113): frames, HPACK header blocks and streams as
//! transactions, as Suricata reads them.
//!
//! A connection opens with the client's preface (`PRI * HTTP/2.0...`); then each side
//! sends frames: a 9-byte header (payload length in 24 bits, type, flags, stream id in
//! 31 bits) and the payload. Header blocks (HEADERS, then CONTINUATION frames until one
//! has END_HEADERS) are decoded with HPACK (RFC 7541), one decoder per direction,
//! since the dynamic table lives as long as the connection.
//!
//! Transactions, as Suricata makes them:
//! - each stream (an odd id the client opened, or an even one a PUSH_PROMISE
//!   reserved) is one transaction: its request headers and body, its response headers
//!   and body, and the frames each side sent on it;
//! - each frame on stream 0 (SETTINGS, PING, GOAWAY, a connection WINDOW_UPDATE) is a
//!   transaction of its own, complete at once.
//!
//! A stream's request is complete on the client's END_STREAM, its response on the
//! server's (or either side's RST_STREAM). Bodies are kept up to [`MAX_BODY`] bytes; a
//! header block past [`MAX_BLOCK`] bytes or a frame that cannot be parsed raises an
//! event and is skipped; HPACK errors end the direction's header decoding (its table
//! no longer matches the peer's). At most [`MAX_TXS`] transactions are kept.

use crate::dns;
use crate::http::{Header, Http, Message};
use crate::txs::{Events, Numbered, Txs};
use netsieve_wire::{AppEvent, Direction, PerDir};

/// The client's connection preface.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Body bytes kept per message.
pub const MAX_BODY: usize = 1 << 20;
/// The largest header block (HEADERS and its CONTINUATION frames) decoded.
pub const MAX_BLOCK: usize = 256 << 10;
/// Transactions kept (the oldest go first).
pub const MAX_TXS: usize = 512;
/// The longest DNS message read from a DoH stream (UDP's limit, as Suricata's).
const MAX_DNS: usize = 65535;
/// The longest DATA frame read whole; of a longer one only the bytes that come with
/// its header are (an event says so).
const MAX_DATA_FRAME: usize = 65536;
/// The largest payload of a frame other than DATA that is read (SETTINGS, PING, ...);
/// a longer one is skipped.
const MAX_CONTROL: usize = 64 << 10;

/// Frame types (RFC 9113 section 6).
pub mod kind {
    pub const DATA: u8 = 0;
    pub const HEADERS: u8 = 1;
    pub const PRIORITY: u8 = 2;
    pub const RST_STREAM: u8 = 3;
    pub const SETTINGS: u8 = 4;
    pub const PUSH_PROMISE: u8 = 5;
    pub const PING: u8 = 6;
    pub const GOAWAY: u8 = 7;
    pub const WINDOW_UPDATE: u8 = 8;
    pub const CONTINUATION: u8 = 9;
}

const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY_FLAG: u8 = 0x20;

pub use netsieve_wire::http2::{ERROR_CODES, FRAME_TYPES, SETTINGS, number_of};

/// What one frame said, as its transaction keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub detail: Detail,
}

/// The part of a frame's payload rules and logs read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Detail {
    None,
    /// SETTINGS: (identifier, value) pairs.
    Settings(Vec<(u16, u32)>),
    /// RST_STREAM or GOAWAY: the error code.
    Error(u32),
    /// PRIORITY, or HEADERS with the PRIORITY flag: the weight.
    Priority(u8),
    /// WINDOW_UPDATE: the increment.
    Window(u32),
}

/// A header block's entry, as EVE lists them: a field or a dynamic table size update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    Header(Header),
    SizeUpdate(u64),
}

/// A stream, or one frame on stream 0.
#[derive(Clone, Debug, Default)]
pub struct Tx {
    pub id: u64,
    pub stream_id: u32,
    /// The client's and the server's messages: headers as decoded (pseudo-headers
    /// included, in order), body, and whether the side ended the stream.
    pub msgs: PerDir<Message>,
    /// The header blocks' entries per side, size updates included (EVE's lists).
    pub fields: PerDir<Vec<Field>>,
    /// The frames each side sent on the stream.
    pub frames: PerDir<Vec<Frame>>,
    /// The response body with its content coding removed (`file.data`), once complete.
    pub file_data: Vec<u8>,
    /// A stream-0 frame's transaction: complete at once.
    pub global: bool,
    /// A side's header block arrived.
    pub headers: PerDir<bool>,
    /// DNS over HTTPS (RFC 8484): each side's DNS message, from a GET's `dns`
    /// parameter or an `application/dns-message` body.
    pub dns: PerDir<Option<Box<dns::Tx>>>,
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

impl Tx {
    /// The side's first header named `name` (pseudo-headers by their `:` name). Names
    /// are compared as sent: HTTP/2's are lower case, and Suricata does not find an
    /// upgrade request's `User-Agent` as `user-agent` (measured: http2-keywords2).
    pub fn header(&self, d: Direction, name: &str) -> Option<&[u8]> {
        let h = self.msgs[d]
            .headers
            .iter()
            .find(|h| h.name == name.as_bytes());
        h.map(|h| h.value.as_slice())
    }

    /// The side's headers named `name`, in order.
    pub fn headers_named<'a>(
        &'a self,
        d: Direction,
        name: &'a str,
    ) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.msgs[d]
            .headers
            .iter()
            .filter(move |h| h.name == name.as_bytes())
            .map(|h| h.value.as_slice())
    }

    /// The side's headers without pseudo-headers.
    pub fn regular(&self, d: Direction) -> impl Iterator<Item = &Header> {
        self.msgs[d]
            .headers
            .iter()
            .filter(|h| !h.name.starts_with(b":"))
    }

    /// It carries DNS (DoH2).
    pub fn is_doh(&self) -> bool {
        self.dns.values().any(Option::is_some)
    }

    /// The side carries a file: it sent DATA (even empty: Suricata 8 writes a
    /// `fileinfo` of size 0 for a response of one empty DATA frame) or a body.
    pub fn has_file(&self, d: Direction) -> bool {
        !self.global
            && (self.msgs[d].body_len > 0 || self.frames[d].iter().any(|f| f.kind == kind::DATA))
    }

    /// The side ended its part of the stream.
    pub fn complete(&self, d: Direction) -> bool {
        self.global || self.msgs[d].complete
    }

    /// The request's method, path and the request line Suricata builds from them.
    pub fn method(&self) -> Option<&[u8]> {
        self.header(Direction::ToServer, ":method")
    }

    pub fn path(&self) -> Option<&[u8]> {
        self.header(Direction::ToServer, ":path")
    }

    /// The authority: `:authority`, else a Host header.
    pub fn authority(&self) -> Option<&[u8]> {
        self.header(Direction::ToServer, ":authority")
            .or_else(|| self.header(Direction::ToServer, "host"))
    }

    pub fn status(&self) -> Option<&[u8]> {
        self.header(Direction::ToClient, ":status")
    }
}

/// A header block being received: HEADERS or PUSH_PROMISE, then CONTINUATIONs.
#[derive(Debug)]
struct Block {
    stream: u32,
    end_stream: bool,
    bytes: Vec<u8>,
    /// A PUSH_PROMISE's block: the promised stream's request.
    promised: Option<u32>,
}

/// A frame header.
#[derive(Clone, Copy, Debug)]
struct Head {
    len: usize,
    kind: u8,
    flags: u8,
    stream: u32,
}

/// What a direction reads next.
#[derive(Clone, Copy, Debug)]
enum Read {
    Head,
    /// A padded DATA frame's pad length byte.
    PadLength(Head),
    /// A DATA frame's body bytes (`left` of them), then `pad` bytes of padding.
    Data {
        head: Head,
        left: usize,
        pad: usize,
    },
    /// Another frame's payload, whole.
    Payload(Head),
    Skip(usize),
}

/// One direction's reading state.
struct Side {
    /// Bytes of the client's preface still to come.
    preface: usize,
    /// A frame header, or a payload other than DATA's, being collected.
    buf: Vec<u8>,
    read: Read,
    block: Option<Block>,
    hpack: loona_hpack::Decoder<'static>,
    /// HPACK failed: the table no longer matches; header blocks are not decoded.
    hpack_broken: bool,
    broken: bool,
}

impl std::fmt::Debug for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Side")
            .field("preface", &self.preface)
            .field("buffered", &self.buf.len())
            .field("broken", &self.broken)
            .finish()
    }
}

impl Default for Side {
    fn default() -> Self {
        let mut hpack = loona_hpack::Decoder::new();
        // A peer may not grow the table past what the decoder's side allows; the
        // largest Suricata's default allows is 64 KiB.
        hpack.set_max_allowed_table_size(65536);
        Side {
            preface: 0,
            buf: Vec::new(),
            read: Read::Head,
            block: None,
            hpack,
            hpack_broken: false,
            broken: false,
        }
    }
}

/// A connection's HTTP/2 state.
#[derive(Debug, Default)]
pub struct Http2 {
    pub txs: Txs<Tx, MAX_TXS>,
    sides: PerDir<Side>,
    started: bool,
    pub events: Events<AppEvent>,
    /// The HTTP/1 connection this one was upgraded from (`Upgrade: h2c`), with its
    /// transactions; this one's are numbered after them.
    pub http1: Option<Box<Http>>,
    /// A stream carried DNS: the connection is DNS over HTTPS (DoH2).
    pub doh: bool,
    /// The highest even and odd stream ids begun.
    last_stream: [u32; 2],
}

impl Http2 {
    pub fn new() -> Http2 {
        Http2::default()
    }

    /// The connection HTTP/1 transaction `id` of `http1` switched to HTTP/2 (its
    /// `101` answer came): that request is stream 1's, as Suricata makes it (the
    /// pseudo-headers from its request line and Host header, then its other headers
    /// but `HTTP2-Settings`, whose settings are a stream-0 transaction of their own).
    /// The client's preface comes next; the server's frames come at once.
    pub fn upgraded(http1: Box<Http>, id: u64) -> Http2 {
        let mut h = Http2 {
            txs: Txs::starting_at(http1.tx_count()),
            events: Events::counted(http1.events.raised()),
            started: true,
            ..Http2::default()
        };
        h.sides[Direction::ToServer].preface = PREFACE.len();
        let req = http1.tx(id).and_then(|t| t.request.clone());
        if let Some(req) = req {
            let mut fields = vec![
                Header {
                    name: b":method".to_vec(),
                    value: req.method.clone(),
                },
                Header {
                    name: b":path".to_vec(),
                    value: req.uri.clone(),
                },
            ];
            if let Some(host) = req.msg.header("host") {
                fields.push(Header {
                    name: b":authority".to_vec(),
                    value: host.to_vec(),
                });
            }
            let mut settings = None;
            for hd in &req.msg.headers {
                if hd.name.eq_ignore_ascii_case(b"http2-settings") {
                    settings = Some(base64url(&hd.value));
                } else if !hd.name.eq_ignore_ascii_case(b"host") {
                    fields.push(hd.clone());
                }
            }
            // A new connection's first stream.
            if let Some(t) = h.tx_for(1) {
                let m = &mut t.msgs[Direction::ToServer];
                m.headers = fields.clone();
                m.body = req.msg.body.clone();
                m.body_len = req.msg.body_len;
                m.complete = true;
                t.fields[Direction::ToServer] = fields.into_iter().map(Field::Header).collect();
                t.headers[Direction::ToServer] = true;
            }
            if let Some(p) = settings {
                let list = settings_of(&p);
                if !list.is_empty() {
                    let (dir, s) = (Direction::ToServer, 0);
                    h.frame(dir, s, kind::SETTINGS, 0, Detail::Settings(list));
                }
            }
        }
        h.http1 = Some(http1);
        h
    }

    /// Feeds in-order bytes of one direction. Returns whether a message completed.
    pub fn feed(&mut self, dir: Direction, data: &[u8]) -> bool {
        if !self.started {
            self.started = true;
            self.sides[Direction::ToServer].preface = PREFACE.len();
        }
        let side = &mut self.sides[dir];
        if side.broken {
            return false;
        }
        let mut input = data;
        if side.preface > 0 {
            let at = PREFACE.len() - side.preface;
            let n = side.preface.min(input.len());
            if input[..n] != PREFACE[at..at + n] {
                // Not HTTP/2 after all: this side is not read.
                side.broken = true;
                self.events.raise(AppEvent::Http2InvalidFrameHeader);
                return false;
            }
            side.preface -= n;
            input = &input[n..];
        }
        let mut done = false;
        while !input.is_empty() {
            done |= self.step(dir, &mut input);
        }
        done
    }

    /// Reads what the direction's state asks for from the front of `input`.
    fn step(&mut self, dir: Direction, input: &mut &[u8]) -> bool {
        let side = &mut self.sides[dir];
        let mut take = |want: usize| -> &[u8] {
            let n = want.min(input.len());
            let (a, b) = input.split_at(n);
            *input = b;
            a
        };
        match side.read {
            // The frame header, 9 bytes.
            Read::Head => {
                let chunk = take(9 - side.buf.len());
                side.buf.extend_from_slice(chunk);
                if side.buf.len() < 9 {
                    return false;
                }
                let h = std::mem::take(&mut side.buf);
                let len = (h[0] as usize) << 16 | (h[1] as usize) << 8 | h[2] as usize;
                let head = Head {
                    len,
                    kind: h[3],
                    flags: h[4],
                    stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
                };
                self.head(dir, head, input)
            }
            Read::PadLength(head) => {
                let pad = take(1)[0] as usize;
                let left = head.len - 1;
                if pad > left {
                    self.events.raise(AppEvent::Http2InvalidFrameLength);
                }
                self.sides[dir].read = Read::Data {
                    head,
                    left: left - pad.min(left),
                    pad: pad.min(left),
                };
                self.data_end(dir)
            }
            Read::Data { head, left, pad } => {
                let chunk = take(left);
                let n = chunk.len();
                self.body(dir, head.stream, chunk);
                self.sides[dir].read = Read::Data {
                    head,
                    left: left - n,
                    pad,
                };
                self.data_end(dir)
            }
            Read::Payload(head) => {
                let chunk = take(head.len - side.buf.len());
                side.buf.extend_from_slice(chunk);
                if side.buf.len() < head.len {
                    return false;
                }
                let p = std::mem::take(&mut side.buf);
                side.read = Read::Head;
                self.control(dir, head, &p)
            }
            Read::Skip(n) => {
                let m = take(n).len();
                side.read = if n > m { Read::Skip(n - m) } else { Read::Head };
                false
            }
        }
    }

    /// A frame header was read: how its payload is read.
    fn head(&mut self, dir: Direction, head: Head, input: &mut &[u8]) -> bool {
        let side = &mut self.sides[dir];
        if head.kind == kind::DATA && head.len > MAX_DATA_FRAME {
            // Longer than read: the bytes that came with its header are its data, its
            // flags apply, the rest is skipped (as Suricata reads such a frame).
            self.events.raise(AppEvent::Http2LongFrameData);
            self.frame(dir, head.stream, head.kind, head.flags, Detail::None);
            let n = head.len.min(input.len());
            let (chunk, rest) = input.split_at(n);
            *input = rest;
            self.body(dir, head.stream, chunk);
            self.sides[dir].read = Read::Skip(head.len - n);
            if head.len == n {
                self.sides[dir].read = Read::Head;
            }
            return head.flags & END_STREAM != 0 && self.end_stream(dir, head.stream);
        }
        if head.kind == kind::DATA {
            self.frame(dir, head.stream, head.kind, head.flags, Detail::None);
            if head.flags & PADDED != 0 {
                if head.len == 0 {
                    self.events.raise(AppEvent::Http2InvalidFrameLength);
                    return false;
                }
                self.sides[dir].read = Read::PadLength(head);
                return false;
            }
            self.sides[dir].read = Read::Data {
                head,
                left: head.len,
                pad: 0,
            };
            return self.data_end(dir);
        }
        let limit = if matches!(
            head.kind,
            kind::HEADERS | kind::CONTINUATION | kind::PUSH_PROMISE
        ) {
            MAX_BLOCK
        } else {
            MAX_CONTROL
        };
        if head.len > limit {
            // Not read: a header block past it leaves the stream without headers.
            side.read = Read::Skip(head.len);
            side.block = None;
            self.events.raise(AppEvent::Http2LongFrameData);
            return false;
        }
        side.read = Read::Payload(head);
        if head.len == 0 {
            side.read = Read::Head;
            return self.control(dir, head, &[]);
        }
        false
    }

    /// A DATA payload's body bytes were all read: its padding is skipped and its
    /// END_STREAM applies.
    fn data_end(&mut self, dir: Direction) -> bool {
        let Read::Data { head, left: 0, pad } = self.sides[dir].read else {
            return false;
        };
        self.sides[dir].read = if pad > 0 { Read::Skip(pad) } else { Read::Head };
        head.flags & END_STREAM != 0 && self.end_stream(dir, head.stream)
    }

    /// A frame other than DATA, whole.
    fn control(&mut self, dir: Direction, head: Head, p: &[u8]) -> bool {
        let Head {
            stream,
            kind,
            flags,
            ..
        } = head;
        // A header block must go on with CONTINUATION frames of its stream.
        if self.sides[dir].block.is_some() && kind != kind::CONTINUATION {
            self.events.raise(AppEvent::Http2InvalidHeader);
            self.sides[dir].block = None;
        }
        match kind {
            kind::HEADERS => {
                let mut p = p;
                let mut detail = Detail::None;
                let Some(unpadded) = unpad(p, flags) else {
                    self.events.raise(AppEvent::Http2InvalidFrameLength);
                    return false;
                };
                p = unpadded;
                if flags & PRIORITY_FLAG != 0 {
                    if p.len() < 5 {
                        self.events.raise(AppEvent::Http2InvalidFrameLength);
                        return false;
                    }
                    detail = Detail::Priority(p[4]);
                    p = &p[5..];
                }
                self.frame(dir, stream, kind, flags, detail);
                self.sides[dir].block = Some(Block {
                    stream,
                    end_stream: flags & END_STREAM != 0,
                    bytes: p.to_vec(),
                    promised: None,
                });
                if flags & END_HEADERS != 0 {
                    return self.end_block(dir);
                }
                false
            }
            kind::PUSH_PROMISE => {
                let Some(p) = unpad(p, flags).filter(|p| p.len() >= 4) else {
                    self.events.raise(AppEvent::Http2InvalidFrameLength);
                    return false;
                };
                let promised = u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & 0x7fff_ffff;
                self.frame(dir, stream, kind, flags, Detail::None);
                self.sides[dir].block = Some(Block {
                    stream,
                    end_stream: false,
                    bytes: p[4..].to_vec(),
                    promised: Some(promised),
                });
                if flags & END_HEADERS != 0 {
                    return self.end_block(dir);
                }
                false
            }
            kind::CONTINUATION => {
                self.frame(dir, stream, kind, flags, Detail::None);
                let side = &mut self.sides[dir];
                let Some(b) = side.block.as_mut().filter(|b| b.stream == stream) else {
                    side.block = None;
                    self.events.raise(AppEvent::Http2InvalidHeader);
                    return false;
                };
                if b.bytes.len() + p.len() > MAX_BLOCK {
                    side.block = None;
                    self.events.raise(AppEvent::Http2LongFrameData);
                    return false;
                }
                b.bytes.extend_from_slice(p);
                if flags & END_HEADERS != 0 {
                    return self.end_block(dir);
                }
                false
            }
            kind::PRIORITY => {
                let detail = match p {
                    [_, _, _, _, w] => Detail::Priority(*w),
                    _ => {
                        self.events.raise(AppEvent::Http2InvalidFrameLength);
                        Detail::None
                    }
                };
                self.frame(dir, stream, kind, flags, detail);
                false
            }
            kind::RST_STREAM | kind::GOAWAY => {
                let at = if kind == kind::GOAWAY { 4 } else { 0 };
                let detail = match p.get(at..at + 4) {
                    Some(c) => Detail::Error(u32::from_be_bytes([c[0], c[1], c[2], c[3]])),
                    None => {
                        self.events.raise(AppEvent::Http2InvalidFrameLength);
                        Detail::None
                    }
                };
                self.frame(dir, stream, kind, flags, detail);
                if kind == kind::RST_STREAM && stream != 0 {
                    // A reset ends its sender's side; what the other side had in
                    // flight still comes (measured: dns-over-http2's stream 7, reset by
                    // the client and answered after, alerts on its answer and is logged
                    // once).
                    return self.end_stream(dir, stream);
                }
                false
            }
            kind::SETTINGS => {
                if !p.len().is_multiple_of(6) {
                    self.events.raise(AppEvent::Http2InvalidFrameLength);
                }
                let settings = settings_of(p);
                // The table size the peer's encoder may use: this side's setting
                // bounds the other side's decoder.
                for &(id, v) in &settings {
                    if id == 1 {
                        let other = &mut self.sides[dir.reverse()].hpack;
                        other.set_max_allowed_table_size((v as usize).min(1 << 20));
                    }
                }
                // An empty SETTINGS frame (an acknowledgement, or no changes) is no
                // transaction of Suricata's (measured: http2-errorcode's flows).
                if !settings.is_empty() {
                    self.frame(dir, stream, kind, flags, Detail::Settings(settings));
                }
                false
            }
            kind::WINDOW_UPDATE => {
                let detail = match p {
                    [a, b, c, d] => {
                        Detail::Window(u32::from_be_bytes([*a, *b, *c, *d]) & 0x7fff_ffff)
                    }
                    _ => {
                        self.events.raise(AppEvent::Http2InvalidFrameLength);
                        Detail::None
                    }
                };
                self.frame(dir, stream, kind, flags, detail);
                false
            }
            _ => {
                // PING and unknown types: the frame only.
                self.frame(dir, stream, kind, flags, Detail::None);
                false
            }
        }
    }

    /// The header block being received is whole: decode it into its stream.
    fn end_block(&mut self, dir: Direction) -> bool {
        let Some(block) = self.sides[dir].block.take() else {
            return false;
        };
        let side = &mut self.sides[dir];
        let mut fields = Vec::new();
        if !side.hpack_broken {
            // Size updates open a block; the decoder applies them without saying so.
            let mut at = 0;
            while let Some(&b) = block.bytes.get(at) {
                if b & 0xe0 != 0x20 {
                    break;
                }
                match prefixed_int(&block.bytes[at..], 5) {
                    Some((v, n)) => {
                        fields.push(Field::SizeUpdate(v));
                        at += n;
                    }
                    None => break,
                }
            }
            let r = side.hpack.decode_with_cb(&block.bytes, |name, value| {
                fields.push(Field::Header(Header {
                    name: name.into_owned(),
                    value: value.into_owned(),
                }));
            });
            if r.is_err() {
                side.hpack_broken = true;
                self.events.raise(AppEvent::Http2InvalidHeader);
            }
        }
        // A promise's block is the promised stream's request; its response follows.
        let (stream, d) = match block.promised {
            Some(s) => (s, Direction::ToServer),
            None => (block.stream, dir),
        };
        let Some(t) = self.tx_for(stream) else {
            return false;
        };
        for f in &fields {
            if let Field::Header(h) = f
                && t.msgs[d].headers.len() < 256
            {
                t.msgs[d].headers.push(h.clone());
            }
        }
        t.fields[d].extend(fields);
        t.headers[d] = true;
        let mut done = false;
        if block.promised.is_some() {
            t.msgs[d].complete = true;
            done = true;
        }
        self.check_request(stream, d);
        if block.end_stream {
            done |= self.end_stream(dir, stream);
        }
        done
    }

    /// A DNS message of side `d` of stream `stream` (DoH2), unless too long.
    fn doh_message(&mut self, stream: u32, d: Direction, msg: &[u8]) {
        if msg.len() > MAX_DNS {
            self.events.raise(match d {
                Direction::ToServer => AppEvent::Http2DnsRequestTooLong,
                Direction::ToClient => AppEvent::Http2DnsResponseTooLong,
            });
            return;
        }
        let Some(m) = dns::parse(msg) else { return };
        let Some(t) = self.tx_for(stream) else { return };
        t.dns[d] = Some(Box::new(dns::Tx {
            id: t.id,
            dir: d,
            msg: m,
        }));
        self.doh = true;
    }

    /// Events of a request's headers once decoded, and the DNS query of a GET's `dns`
    /// parameter.
    fn check_request(&mut self, stream: u32, d: Direction) {
        if d != Direction::ToServer {
            return;
        }
        let query = self
            .txs
            .iter()
            .rev()
            .find(|t| t.stream_id == stream)
            .and_then(|t| {
                (t.method() == Some(b"GET")).then_some(())?;
                let path = t.path()?;
                let q = &path[path.iter().position(|&c| c == b'?')? + 1..];
                let v = q
                    .split(|&c| c == b'&')
                    .find_map(|p| p.strip_prefix(b"dns="))?;
                Some(base64url(v))
            });
        if let Some(msg) = query {
            self.doh_message(stream, d, &msg);
        }
        let Some(t) = self.txs.iter().rev().find(|t| t.stream_id == stream) else {
            return;
        };
        let (auth, host) = (t.header(d, ":authority"), t.header(d, "host"));
        let userinfo = auth.is_some_and(|a| a.contains(&b'@'));
        let mismatch = matches!((auth, host), (Some(a), Some(h)) if !a.eq_ignore_ascii_case(h));
        if userinfo {
            self.events.raise(AppEvent::Http2UserinfoInUri);
        }
        if mismatch {
            self.events.raise(AppEvent::Http2AuthorityHostMismatch);
        }
    }

    /// A frame of stream `stream`: a new transaction for stream 0, else the stream's.
    fn frame(&mut self, dir: Direction, stream: u32, kind: u8, flags: u8, detail: Detail) {
        let t = if stream == 0 {
            let t = self.txs.begin(|id| Tx {
                id,
                global: true,
                ..Tx::default()
            });
            t.msgs[Direction::ToServer].complete = true;
            t.msgs[Direction::ToClient].complete = true;
            t
        } else {
            match self.tx_for(stream) {
                Some(t) => t,
                None => return,
            }
        };
        if t.frames[dir].len() < 256 {
            t.frames[dir].push(Frame {
                kind,
                flags,
                detail,
            });
        }
    }

    /// The transaction of stream `stream` (begun on its first frame), or none for a
    /// stream that was done with and dropped (a frame after a reset, measured:
    /// dns-over-http2's stream 7 is logged once).
    fn tx_for(&mut self, stream: u32) -> Option<&mut Tx> {
        let i = self
            .txs
            .iter()
            .rposition(|t| t.stream_id == stream && !t.global && stream != 0);
        if let Some(i) = i {
            return self.txs.iter_mut().nth(i);
        }
        // Stream ids grow, the client's odd and the server's (pushed) even ones apart.
        let last = &mut self.last_stream[(stream % 2) as usize];
        if stream <= *last {
            return None;
        }
        *last = stream;
        Some(self.txs.begin(|id| Tx {
            id,
            stream_id: stream,
            ..Tx::default()
        }))
    }

    /// DATA bytes of stream `stream`.
    fn body(&mut self, dir: Direction, stream: u32, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        let Some(t) = self.tx_for(stream) else { return };
        let m = &mut t.msgs[dir];
        m.body_len += chunk.len() as u64;
        let room = MAX_BODY.saturating_sub(m.body.len());
        m.body.extend_from_slice(&chunk[..room.min(chunk.len())]);
    }

    /// Side `dir` of stream `stream` ended. Returns whether that completed it.
    fn end_stream(&mut self, dir: Direction, stream: u32) -> bool {
        if stream == 0 {
            return false;
        }
        let Some(t) = self.tx_for(stream) else {
            return false;
        };
        if t.msgs[dir].complete {
            return false;
        }
        t.msgs[dir].complete = true;
        let dns_body = t.header(dir, "content-type").is_some_and(|c| {
            c.trim_ascii()
                .eq_ignore_ascii_case(b"application/dns-message")
        });
        if dns_body {
            let body = t.msgs[dir].body.clone();
            self.doh_message(stream, dir, &body);
        }
        let Some(t) = self.tx_for(stream) else {
            return true;
        };
        if dir == Direction::ToClient {
            let m = &t.msgs[dir];
            t.file_data = match t.header(dir, "content-encoding") {
                // Brotli, which Suricata's HTTP/2 parser undoes too.
                Some(c) if c.trim_ascii().eq_ignore_ascii_case(b"br") => unbrotli(&m.body),
                coding => crate::http::decode_body(&m.body, coding, MAX_BODY, 2).0,
            };
        }
        true
    }

    /// Drops the transactions before number `keep`, the HTTP/1 ones included.
    pub fn prune(&mut self, keep: u64) {
        self.txs.prune(keep);
        if let Some(h) = &mut self.http1 {
            h.prune(keep);
        }
    }

    /// The flow ended: every stream counts as complete.
    pub fn finish(&mut self) {
        let ids: Vec<u32> = self
            .txs
            .iter()
            .filter(|t| !t.global)
            .map(|t| t.stream_id)
            .collect();
        for s in ids {
            self.end_stream(Direction::ToServer, s);
            self.end_stream(Direction::ToClient, s);
        }
    }
}

/// Base64url (RFC 4648 section 5, padding optional) decoded up to the first byte
/// outside its alphabet.
fn base64url(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for &c in text.iter().take(MAX_DNS * 4 / 3 + 4) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// A Brotli body decoded, up to [`MAX_BODY`] bytes (what decodes before damage).
fn unbrotli(body: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    let r = brotli_decompressor::Decompressor::new(body, 4096);
    let _ = r.take(MAX_BODY as u64).read_to_end(&mut out);
    out
}

/// A SETTINGS payload's (identifier, value) pairs, six bytes each (a shorter rest is
/// not one).
fn settings_of(p: &[u8]) -> Vec<(u16, u32)> {
    p.chunks_exact(6)
        .map(|c| {
            (
                u16::from_be_bytes([c[0], c[1]]),
                u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
            )
        })
        .collect()
}

/// A payload without its padding (PADDED flag: a length byte first, padding last).
fn unpad(p: &[u8], flags: u8) -> Option<&[u8]> {
    if flags & PADDED == 0 {
        return Some(p);
    }
    let (&pad, rest) = p.split_first()?;
    rest.len().checked_sub(pad as usize).map(|n| &rest[..n])
}

/// An HPACK integer with an `n`-bit prefix: its value and the bytes it took.
fn prefixed_int(b: &[u8], n: u8) -> Option<(u64, usize)> {
    let max = (1u64 << n) - 1;
    let mut v = u64::from(*b.first()?) & max;
    if v < max {
        return Some((v, 1));
    }
    let mut shift = 0;
    for (i, &c) in b[1..].iter().enumerate() {
        if shift > 56 {
            return None;
        }
        v += u64::from(c & 0x7f) << shift;
        shift += 7;
        if c & 0x80 == 0 {
            return Some((v, i + 2));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const C: Direction = Direction::ToServer;
    const S: Direction = Direction::ToClient;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    fn block(enc: &mut loona_hpack::Encoder<'_>, headers: &[(&str, &str)]) -> Vec<u8> {
        enc.encode(headers.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())))
    }

    /// A client's preface, SETTINGS and a GET with a body-less request; the server's
    /// SETTINGS, an empty SETTINGS (its acknowledgement), and a response in a padded
    /// DATA frame.
    fn exchange() -> (Vec<u8>, Vec<u8>) {
        let (mut ce, mut se) = (loona_hpack::Encoder::new(), loona_hpack::Encoder::new());
        let mut client = PREFACE.to_vec();
        client.extend(frame(kind::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100]));
        let req = block(
            &mut ce,
            &[
                (":method", "GET"),
                (":path", "/a?b"),
                (":authority", "Example.com:8080"),
                ("user-agent", "t/1"),
            ],
        );
        client.extend(frame(kind::HEADERS, END_HEADERS | END_STREAM, 1, &req));
        let mut server = frame(kind::SETTINGS, 0, 0, &[0, 1, 0, 0, 0x20, 0]);
        server.extend(frame(kind::SETTINGS, 1, 0, &[]));
        let resp = block(&mut se, &[(":status", "200"), ("server", "x")]);
        // The response's block split over HEADERS and CONTINUATION.
        server.extend(frame(kind::HEADERS, 0, 1, &resp[..2]));
        server.extend(frame(kind::CONTINUATION, END_HEADERS, 1, &resp[2..]));
        let mut data = vec![3];
        data.extend_from_slice(b"hello");
        data.extend_from_slice(&[0, 0, 0]);
        server.extend(frame(kind::DATA, PADDED | END_STREAM, 1, &data));
        (client, server)
    }

    fn parse(client: &[u8], server: &[u8], step: usize) -> Http2 {
        let mut h = Http2::new();
        for c in client.chunks(step.max(1)) {
            h.feed(C, c);
        }
        for c in server.chunks(step.max(1)) {
            h.feed(S, c);
        }
        h
    }

    #[test]
    fn a_stream_is_a_transaction_and_stream_zero_frames_their_own() {
        let (client, server) = exchange();
        let h = parse(&client, &server, usize::MAX);
        // Client SETTINGS, stream 1, server SETTINGS; the empty SETTINGS makes none.
        assert_eq!(h.txs.len(), 3);
        let t = &h.txs[1];
        assert_eq!((t.stream_id, t.global), (1, false));
        assert_eq!(t.method(), Some(&b"GET"[..]));
        assert_eq!(t.path(), Some(&b"/a?b"[..]));
        assert_eq!(t.authority(), Some(&b"Example.com:8080"[..]));
        assert_eq!(t.status(), Some(&b"200"[..]));
        assert!(t.complete(C) && t.complete(S));
        assert_eq!(t.msgs[S].body, b"hello");
        assert_eq!(t.file_data, b"hello");
        assert_eq!(t.regular(C).count(), 1);
        let kinds: Vec<u8> = t.frames[S].iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [kind::HEADERS, kind::CONTINUATION, kind::DATA]);
        assert!(h.txs[0].global);
        assert_eq!(
            h.txs[0].frames[C][0].detail,
            Detail::Settings(vec![(3, 100)])
        );
        assert_eq!(
            h.txs[2].frames[S][0].detail,
            Detail::Settings(vec![(1, 0x2000)])
        );
        assert_eq!(h.events.raised(), 0);
    }

    #[test]
    fn bytes_one_at_a_time_read_as_one_feed() {
        let (client, server) = exchange();
        let whole = parse(&client, &server, usize::MAX);
        let bytes = parse(&client, &server, 1);
        assert_eq!(format!("{:?}", whole.txs), format!("{:?}", bytes.txs));
    }

    #[test]
    fn a_side_without_the_preface_is_not_read() {
        let mut h = Http2::new();
        h.feed(C, b"GET / HTTP/1.1\r\n\r\n");
        assert_eq!(h.txs.len(), 0);
        assert_eq!(h.events.raised(), 1);
    }

    #[test]
    fn a_long_data_frame_keeps_what_came_with_its_header() {
        let mut h = Http2::new();
        h.feed(C, PREFACE);
        let mut f = frame(kind::DATA, END_STREAM, 1, &[]);
        let len = MAX_DATA_FRAME + 10;
        f[..3].copy_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8]);
        f.extend_from_slice(b"abc");
        h.feed(S, &f);
        h.feed(S, &vec![b'x'; len - 3]);
        h.feed(S, &frame(kind::PING, 0, 0, &[0; 8]));
        let t = &h.txs[0];
        assert_eq!(t.msgs[S].body, b"abc");
        assert!(t.complete(S));
        // The skipped bytes were skipped, and the PING after them read.
        assert_eq!(h.txs.len(), 2);
        assert_eq!(
            h.events.since(0).collect::<Vec<_>>(),
            [AppEvent::Http2LongFrameData]
        );
    }

    #[test]
    fn an_authority_and_host_that_differ_raise_an_event() {
        let mut enc = loona_hpack::Encoder::new();
        let mut h = Http2::new();
        h.feed(C, PREFACE);
        let b = block(&mut enc, &[(":authority", "u:p@a.com"), ("host", "b.com")]);
        h.feed(C, &frame(kind::HEADERS, END_HEADERS, 1, &b));
        let events: Vec<AppEvent> = h.events.since(0).collect();
        assert_eq!(
            events,
            [
                AppEvent::Http2UserinfoInUri,
                AppEvent::Http2AuthorityHostMismatch
            ]
        );
    }

    /// DNS over HTTP/2: a GET's `dns` parameter (base64url) is the query, an
    /// `application/dns-message` body the answer; a message over 65,535 bytes raises
    /// an event and is not read.
    #[test]
    fn dns_over_http2_messages_are_read() {
        // A query for `a.b` (type A), id 0, as RFC 8484's example encodes them.
        let query =
            b"\x00\x00\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01a\x01b\x00\x00\x01\x00\x01";
        let b64: String = {
            const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
            let mut out = String::new();
            for c in query.chunks(3) {
                let n = c.iter().fold(0u32, |n, &b| n << 8 | b as u32) << (8 * (3 - c.len()));
                for i in 0..=c.len() {
                    out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
                }
            }
            out
        };
        let (mut ce, mut se) = (loona_hpack::Encoder::new(), loona_hpack::Encoder::new());
        let mut h = Http2::new();
        h.feed(C, PREFACE);
        let path = format!("/dns-query?dns={b64}");
        let req = block(&mut ce, &[(":method", "GET"), (":path", &path)]);
        h.feed(C, &frame(kind::HEADERS, END_HEADERS | END_STREAM, 1, &req));
        let mut answer = query.to_vec();
        answer[2] |= 0x80;
        let resp = block(
            &mut se,
            &[
                (":status", "200"),
                ("content-type", "application/dns-message"),
            ],
        );
        h.feed(S, &frame(kind::HEADERS, END_HEADERS, 1, &resp));
        h.feed(S, &frame(kind::DATA, END_STREAM, 1, &answer));
        let t = &h.txs[0];
        assert!(h.doh && t.is_doh());
        let q = t.dns[C].as_ref().expect("the query");
        assert_eq!(q.msg.questions[0].name, b"a.b");
        assert!(!q.msg.response);
        assert!(t.dns[S].as_ref().expect("the answer").msg.response);
        // Too long for DNS: an event, no message.
        let resp = block(
            &mut se,
            &[
                (":status", "200"),
                ("content-type", "application/dns-message"),
            ],
        );
        let req = block(&mut ce, &[(":method", "POST"), (":path", "/dns-query")]);
        h.feed(C, &frame(kind::HEADERS, END_HEADERS | END_STREAM, 3, &req));
        h.feed(S, &frame(kind::HEADERS, END_HEADERS, 3, &resp));
        let big = vec![0u8; MAX_DNS + 1];
        for c in big.chunks(16000) {
            h.feed(S, &frame(kind::DATA, 0, 3, c));
        }
        h.feed(S, &frame(kind::DATA, END_STREAM, 3, &[]));
        assert!(h.txs[1].dns[S].is_none());
        assert!(
            h.events
                .since(0)
                .any(|e| e == AppEvent::Http2DnsResponseTooLong)
        );
    }

    proptest! {
        #[test]
        fn any_bytes_any_split_are_read_without_panic(
            client in proptest::collection::vec(any::<u8>(), 0..600),
            server in proptest::collection::vec(any::<u8>(), 0..600),
            step in 1usize..40,
        ) {
            let mut c = PREFACE.to_vec();
            c.extend_from_slice(&client);
            let h = parse(&c, &server, step);
            prop_assert!(h.txs.len() <= MAX_TXS);
            // The same bytes in one feed give the same transactions (but for a DATA
            // frame too long to read, whose kept bytes are those that came with it).
            let whole = parse(&c, &server, usize::MAX);
            let long = |h: &Http2| h.events.since(0).any(|e| e == AppEvent::Http2LongFrameData);
            if !long(&whole) && !long(&h) {
                prop_assert_eq!(format!("{:?}", whole.txs), format!("{:?}", h.txs));
            }
        }
    }
}
