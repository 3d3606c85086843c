//! HTTP/1.0 and 1.1 over the two reassembled streams of a flow.
//!
//! Each direction is a small state machine fed in-order bytes in any split: a *head*
//! (request or status line, then header lines up to an empty line), then a *body*
//! framed by `Transfer-Encoding: chunked`, `Content-Length`, or (responses only) the end
//! of the connection. Requests open transactions in order; each response closes the
//! oldest transaction without one (HTTP/1.1 pipelining keeps that order), and interim
//! `1xx` responses are skipped. Header lines may be folded (a line starting with a space
//! or tab continues the previous one) and may end in CRLF or a bare LF.
//!
//! Limits ([`Limits`]) bound everything kept: the head, the header count, the body bytes
//! kept per message (the rest is counted, not kept), the decoded size of a compressed
//! response body, and the transactions held. Whatever cannot be parsed ends that
//! direction's parsing with an [`Event`]; bytes after it are ignored.

use std::collections::VecDeque;
use std::io::Read;

/// Which way bytes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    ToServer,
    ToClient,
}

/// Bounds on what a flow's HTTP state keeps (defaults as Suricata's libhtp settings).
#[derive(Clone, Debug)]
pub struct Limits {
    /// Bytes of a message head (start line and headers).
    pub head_bytes: usize,
    /// Header lines per message.
    pub headers: usize,
    /// Request body bytes kept for inspection (`request-body-limit`, 100 KiB).
    pub request_body: usize,
    /// Response body bytes kept, and decoded bytes of a compressed one
    /// (`response-body-limit`, 100 KiB).
    pub response_body: usize,
    /// Transactions held at once (requests waiting for their response).
    pub open_txs: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            head_bytes: 64 << 10,
            headers: 256,
            request_body: 100 << 10,
            response_body: 100 << 10,
            open_txs: 512,
        }
    }
}

/// Something wrong with the traffic (Suricata's `http.*` anomaly events, roughly).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head grew past [`Limits::head_bytes`] without ending.
    HeadTooLong,
    /// More header lines than [`Limits::headers`].
    TooManyHeaders,
    /// A request line that is not `METHOD SP TARGET [SP VERSION]`.
    InvalidRequestLine,
    /// A status line that is not `HTTP/x.y SP CODE ...`.
    InvalidStatusLine,
    /// A header line without a colon, or an invalid header name.
    InvalidHeader,
    /// A `Content-Length` that is not a number.
    InvalidContentLength,
    /// A chunk size line that is not hexadecimal, or too long.
    InvalidChunk,
    /// A compressed body that does not decode (what decoded is kept).
    DecompressionFailed,
    /// More open transactions than [`Limits::open_txs`]: the oldest are dropped.
    TooManyTransactions,
    /// A response without a request.
    UnsolicitedResponse,
}

/// One header line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: Vec<u8>,
    pub value: Vec<u8>,
}

/// What requests and responses share: the start line, headers and body.
#[derive(Clone, Debug, Default)]
pub struct Message {
    /// The start line without its line ending.
    pub line: Vec<u8>,
    /// Header lines as sent (folded lines joined), in order.
    pub headers: Vec<Header>,
    /// The header lines as received, line endings included, up to the empty line.
    pub raw_headers: Vec<u8>,
    /// Body bytes kept (transfer coding removed), at most the body limit.
    pub body: Vec<u8>,
    /// Body bytes seen in all.
    pub body_len: u64,
    /// The message ended (its body is complete).
    pub complete: bool,
}

impl Message {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name.as_bytes()))
            .map(|h| h.value.as_slice())
    }
}

#[derive(Clone, Debug, Default)]
pub struct Request {
    pub msg: Message,
    pub method: Vec<u8>,
    /// The request target as sent (`http.uri.raw`).
    pub uri: Vec<u8>,
    /// `HTTP/1.1`, or empty for an HTTP/0.9 request line.
    pub protocol: Vec<u8>,
}

#[derive(Clone, Debug, Default)]
pub struct Response {
    pub msg: Message,
    pub protocol: Vec<u8>,
    /// The status code as sent (`http.stat_code`).
    pub status: Vec<u8>,
    /// The reason phrase (`http.stat_msg`).
    pub reason: Vec<u8>,
    /// The body with its content coding (gzip, deflate) removed: `file.data`. Empty
    /// until the body is complete.
    pub file_data: Vec<u8>,
}

impl Response {
    /// The status code as a number.
    pub fn code(&self) -> Option<u16> {
        std::str::from_utf8(&self.status).ok()?.parse().ok()
    }
}

/// A request and the response to it.
#[derive(Clone, Debug, Default)]
pub struct Tx {
    /// Transactions are numbered from 0 in the order requests arrive.
    pub id: u64,
    pub request: Option<Request>,
    pub response: Option<Response>,
}

/// What a feed completed, for the caller to inspect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// The request head of this transaction was parsed.
    RequestHead(u64),
    /// Its request body is complete.
    RequestDone(u64),
    ResponseHead(u64),
    ResponseDone(u64),
}

#[derive(Clone, Debug)]
enum Framing {
    Head,
    Length(u64),
    Chunked(Chunk),
    UntilClose,
    Broken,
}

#[derive(Clone, Copy, Debug)]
enum Chunk {
    Size,
    Data(u64),
    DataEnd,
    Trailer,
}

/// The longest chunk-size line accepted.
const MAX_CHUNK_LINE: usize = 1024;

#[derive(Clone, Debug)]
struct Side {
    buf: Vec<u8>,
    framing: Framing,
    /// The transaction whose body is being read.
    tx: u64,
}

impl Default for Side {
    fn default() -> Self {
        Side {
            buf: Vec::new(),
            framing: Framing::Head,
            tx: 0,
        }
    }
}

/// A flow's HTTP state.
#[derive(Clone, Debug, Default)]
pub struct Http {
    pub limits: Limits,
    /// Transactions still held, oldest first.
    pub txs: VecDeque<Tx>,
    next_id: u64,
    /// Requests whose response has not begun, oldest first (ids).
    waiting: VecDeque<u64>,
    /// The last request was HEAD, per waiting id (its response has no body).
    head_requests: Vec<u64>,
    sides: [Side; 2],
    pub events: Vec<Event>,
}

impl Http {
    pub fn new(limits: Limits) -> Http {
        Http {
            limits,
            ..Http::default()
        }
    }

    /// The transaction with id `id`, if still held.
    pub fn tx(&self, id: u64) -> Option<&Tx> {
        let first = self.txs.front()?.id;
        self.txs.get(id.checked_sub(first)? as usize)
    }

    fn tx_mut(&mut self, id: u64) -> Option<&mut Tx> {
        let first = self.txs.front()?.id;
        self.txs.get_mut(id.checked_sub(first)? as usize)
    }

    /// Drops transactions that are complete both ways and older than `keep_from`.
    pub fn prune(&mut self, keep_from: u64) {
        while let Some(t) = self.txs.front() {
            let done = t.request.as_ref().is_some_and(|r| r.msg.complete)
                && t.response.as_ref().is_some_and(|r| r.msg.complete);
            if t.id < keep_from && done {
                self.txs.pop_front();
            } else {
                break;
            }
        }
    }

    /// Feeds in-order bytes of one direction; returns what they completed, in order.
    pub fn feed(&mut self, dir: Dir, data: &[u8]) -> Vec<Progress> {
        let mut out = Vec::new();
        let s = dir as usize;
        if matches!(self.sides[s].framing, Framing::Broken) {
            return out;
        }
        self.sides[s].buf.extend_from_slice(data);
        let mut at = 0;
        loop {
            let side = &self.sides[s];
            let rest = &side.buf[at..];
            match side.framing.clone() {
                Framing::Broken => break,
                Framing::Head => {
                    // Empty lines between messages are skipped.
                    let blank = rest
                        .iter()
                        .take_while(|&&c| c == b'\r' || c == b'\n')
                        .count();
                    at += blank;
                    let rest = &self.sides[s].buf[at..];
                    let Some(end) = head_end(rest) else {
                        if rest.len() > self.limits.head_bytes {
                            self.fail(s, Event::HeadTooLong);
                        }
                        break;
                    };
                    if end > self.limits.head_bytes {
                        self.fail(s, Event::HeadTooLong);
                        break;
                    }
                    let head = rest[..end].to_vec();
                    at += end;
                    match dir {
                        Dir::ToServer => self.request_head(&head, &mut out),
                        Dir::ToClient => self.response_head(&head, &mut out),
                    }
                }
                Framing::Length(n) => {
                    let take = (rest.len() as u64).min(n);
                    let chunk = rest[..take as usize].to_vec();
                    at += take as usize;
                    self.body(dir, &chunk);
                    if take == n {
                        self.finish(dir, &mut out);
                    } else {
                        self.sides[s].framing = Framing::Length(n - take);
                        break;
                    }
                }
                Framing::UntilClose => {
                    let chunk = rest.to_vec();
                    at += chunk.len();
                    self.body(dir, &chunk);
                    break;
                }
                Framing::Chunked(c) => match c {
                    Chunk::Size | Chunk::Trailer | Chunk::DataEnd => {
                        let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
                            if rest.len() > MAX_CHUNK_LINE {
                                self.fail(s, Event::InvalidChunk);
                            }
                            break;
                        };
                        let line = trim_cr(&rest[..nl]).to_vec();
                        at += nl + 1;
                        match c {
                            Chunk::Size => match chunk_size(&line) {
                                Some(0) => {
                                    self.sides[s].framing = Framing::Chunked(Chunk::Trailer);
                                }
                                Some(n) => {
                                    self.sides[s].framing = Framing::Chunked(Chunk::Data(n));
                                }
                                None => {
                                    self.fail(s, Event::InvalidChunk);
                                    break;
                                }
                            },
                            Chunk::DataEnd => {
                                if !line.is_empty() {
                                    self.fail(s, Event::InvalidChunk);
                                    break;
                                }
                                self.sides[s].framing = Framing::Chunked(Chunk::Size);
                            }
                            _ => {
                                if line.is_empty() {
                                    self.finish(dir, &mut out);
                                }
                            }
                        }
                    }
                    Chunk::Data(n) => {
                        let take = (rest.len() as u64).min(n);
                        let chunk = rest[..take as usize].to_vec();
                        at += take as usize;
                        self.body(dir, &chunk);
                        self.sides[s].framing = Framing::Chunked(if take == n {
                            Chunk::DataEnd
                        } else {
                            Chunk::Data(n - take)
                        });
                        if take < n {
                            break;
                        }
                    }
                },
            }
        }
        let side = &mut self.sides[s];
        let at = at.min(side.buf.len());
        side.buf.drain(..at);
        if matches!(side.framing, Framing::Broken) {
            side.buf = Vec::new();
        }
        out
    }

    /// The direction ended (FIN, RST or the flow's end): a body read until the close is
    /// complete.
    pub fn close(&mut self, dir: Dir) -> Vec<Progress> {
        let mut out = Vec::new();
        let s = dir as usize;
        if matches!(self.sides[s].framing, Framing::UntilClose) {
            self.finish(dir, &mut out);
        }
        out
    }

    /// The flow ended: a message whose body was still being read counts as complete
    /// with what arrived (so its buffers are inspected).
    pub fn finish_all(&mut self) -> Vec<Progress> {
        let mut out = Vec::new();
        for dir in [Dir::ToServer, Dir::ToClient] {
            let s = dir as usize;
            if matches!(
                self.sides[s].framing,
                Framing::Length(_) | Framing::Chunked(_) | Framing::UntilClose
            ) {
                self.finish(dir, &mut out);
            }
            self.sides[s].framing = Framing::Broken;
        }
        out
    }

    fn fail(&mut self, s: usize, e: Event) {
        self.events.push(e);
        self.sides[s].framing = Framing::Broken;
    }

    fn request_head(&mut self, head: &[u8], out: &mut Vec<Progress>) {
        let s = Dir::ToServer as usize;
        let (line, rest) = split_line(head);
        let mut parts = line
            .split(|&c| c == b' ' || c == b'\t')
            .filter(|p| !p.is_empty());
        let (Some(method), Some(uri)) = (parts.next(), parts.next()) else {
            return self.fail(s, Event::InvalidRequestLine);
        };
        let protocol = parts.next().unwrap_or(b"");
        if !method.iter().all(|c| c.is_ascii_graphic())
            || (!protocol.is_empty() && !protocol.starts_with(b"HTTP/"))
        {
            return self.fail(s, Event::InvalidRequestLine);
        }
        let Some(headers) = self.headers(s, rest) else {
            return;
        };
        let id = self.next_id;
        self.next_id += 1;
        let req = Request {
            msg: Message {
                line: line.to_vec(),
                headers,
                raw_headers: rest.to_vec(),
                ..Message::default()
            },
            method: method.to_vec(),
            uri: uri.to_vec(),
            protocol: protocol.to_vec(),
        };
        let framing = match body_framing(&req.msg, false) {
            Ok(Some(f)) => f,
            Ok(None) => Framing::Length(0),
            Err(e) => return self.fail(s, e),
        };
        if req.method.eq_ignore_ascii_case(b"HEAD") {
            self.head_requests.push(id);
        }
        if self.txs.len() >= self.limits.open_txs {
            self.events.push(Event::TooManyTransactions);
            if let Some(old) = self.txs.pop_front() {
                self.waiting.retain(|&w| w != old.id);
                self.head_requests.retain(|&w| w != old.id);
            }
        }
        self.txs.push_back(Tx {
            id,
            request: Some(req),
            response: None,
        });
        self.waiting.push_back(id);
        out.push(Progress::RequestHead(id));
        self.sides[s].tx = id;
        self.sides[s].framing = framing;
        if matches!(self.sides[s].framing, Framing::Length(0)) {
            self.finish(Dir::ToServer, out);
        }
    }

    fn response_head(&mut self, head: &[u8], out: &mut Vec<Progress>) {
        let s = Dir::ToClient as usize;
        let (line, rest) = split_line(head);
        let mut parts = line.splitn(3, |&c| c == b' ');
        let protocol = parts.next().unwrap_or(b"");
        let status = parts.next().unwrap_or(b"");
        let reason = parts.next().unwrap_or(b"");
        if !protocol.starts_with(b"HTTP/")
            || status.len() != 3
            || !status.iter().all(u8::is_ascii_digit)
        {
            return self.fail(s, Event::InvalidStatusLine);
        }
        let Some(headers) = self.headers(s, rest) else {
            return;
        };
        let resp = Response {
            msg: Message {
                line: line.to_vec(),
                headers,
                raw_headers: rest.to_vec(),
                ..Message::default()
            },
            protocol: protocol.to_vec(),
            status: status.to_vec(),
            reason: trim_cr(reason).to_vec(),
            file_data: Vec::new(),
        };
        let code = resp.code().unwrap_or(0);
        if (100..200).contains(&code) {
            // An interim response: the final one follows.
            return;
        }
        let id = match self.waiting.pop_front() {
            Some(id) => id,
            None => {
                self.events.push(Event::UnsolicitedResponse);
                let id = self.next_id;
                self.next_id += 1;
                self.txs.push_back(Tx {
                    id,
                    request: None,
                    response: None,
                });
                id
            }
        };
        let head_req = if let Some(i) = self.head_requests.iter().position(|&h| h == id) {
            self.head_requests.swap_remove(i);
            true
        } else {
            false
        };
        let no_body = head_req || code == 204 || code == 304;
        let framing = if no_body {
            Framing::Length(0)
        } else {
            match body_framing(&resp.msg, true) {
                Ok(Some(f)) => f,
                Ok(None) => Framing::UntilClose,
                Err(e) => return self.fail(s, e),
            }
        };
        if let Some(t) = self.tx_mut(id) {
            t.response = Some(resp);
        }
        out.push(Progress::ResponseHead(id));
        self.sides[s].tx = id;
        self.sides[s].framing = framing;
        if matches!(self.sides[s].framing, Framing::Length(0)) {
            self.finish(Dir::ToClient, out);
        }
    }

    /// Parses header lines (folded lines joined); `None` after a failure.
    fn headers(&mut self, s: usize, block: &[u8]) -> Option<Vec<Header>> {
        let mut out: Vec<Header> = Vec::new();
        for raw in block.split(|&c| c == b'\n') {
            let line = trim_cr(raw);
            if line.is_empty() {
                continue;
            }
            if matches!(line[0], b' ' | b'\t') {
                // A folded continuation of the previous header.
                match out.last_mut() {
                    Some(h) => {
                        h.value.push(b' ');
                        h.value.extend_from_slice(trim(line));
                        continue;
                    }
                    None => {
                        self.fail(s, Event::InvalidHeader);
                        return None;
                    }
                }
            }
            if out.len() >= self.limits.headers {
                self.fail(s, Event::TooManyHeaders);
                return None;
            }
            // httparse checks the name's characters; the value is taken as sent.
            let Some(colon) = line.iter().position(|&c| c == b':') else {
                self.fail(s, Event::InvalidHeader);
                return None;
            };
            let name = trim(&line[..colon]);
            let mut probe = [httparse::EMPTY_HEADER; 1];
            let mut one = name.to_vec();
            one.extend_from_slice(b": x\r\n\r\n");
            if name.is_empty()
                || !matches!(
                    httparse::parse_headers(&one, &mut probe),
                    Ok(httparse::Status::Complete(_))
                )
            {
                self.fail(s, Event::InvalidHeader);
                return None;
            }
            out.push(Header {
                name: name.to_vec(),
                value: trim(&line[colon + 1..]).to_vec(),
            });
        }
        Some(out)
    }

    fn body(&mut self, dir: Dir, chunk: &[u8]) {
        let s = dir as usize;
        let id = self.sides[s].tx;
        let limit = match dir {
            Dir::ToServer => self.limits.request_body,
            Dir::ToClient => self.limits.response_body,
        };
        if let Some(m) = self.message_mut(dir, id) {
            m.body_len += chunk.len() as u64;
            let room = limit.saturating_sub(m.body.len());
            m.body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
    }

    fn message_mut(&mut self, dir: Dir, id: u64) -> Option<&mut Message> {
        let t = self.tx_mut(id)?;
        match dir {
            Dir::ToServer => t.request.as_mut().map(|r| &mut r.msg),
            Dir::ToClient => t.response.as_mut().map(|r| &mut r.msg),
        }
    }

    fn finish(&mut self, dir: Dir, out: &mut Vec<Progress>) {
        let s = dir as usize;
        let id = self.sides[s].tx;
        self.sides[s].framing = Framing::Head;
        let limit = self.limits.response_body;
        let mut failed = false;
        if let Some(t) = self.tx_mut(id) {
            match dir {
                Dir::ToServer => {
                    if let Some(r) = t.request.as_mut() {
                        r.msg.complete = true;
                    }
                }
                Dir::ToClient => {
                    if let Some(r) = t.response.as_mut() {
                        r.msg.complete = true;
                        let coding = r.msg.header("content-encoding").map(<[u8]>::to_vec);
                        let (data, ok) = decode_body(&r.msg.body, coding.as_deref(), limit);
                        r.file_data = data;
                        failed = !ok;
                    }
                }
            }
        }
        if failed {
            self.events.push(Event::DecompressionFailed);
        }
        out.push(match dir {
            Dir::ToServer => Progress::RequestDone(id),
            Dir::ToClient => Progress::ResponseDone(id),
        });
    }
}

/// Where a head ends: just past its empty line (CRLF CRLF or LF LF, mixed allowed).
fn head_end(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(p) = b[i..].iter().position(|&c| c == b'\n') {
        let nl = i + p;
        let next = &b[nl + 1..];
        if next.starts_with(b"\n") {
            return Some(nl + 2);
        }
        if next.starts_with(b"\r\n") {
            return Some(nl + 3);
        }
        i = nl + 1;
    }
    None
}

/// The first line (without its ending) and the rest.
fn split_line(b: &[u8]) -> (&[u8], &[u8]) {
    match b.iter().position(|&c| c == b'\n') {
        Some(i) => (trim_cr(&b[..i]), &b[i + 1..]),
        None => (trim_cr(b), &b[b.len()..]),
    }
}

fn trim_cr(b: &[u8]) -> &[u8] {
    b.strip_suffix(b"\r").unwrap_or(b)
}

fn trim(b: &[u8]) -> &[u8] {
    let s = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let e = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(s, |e| e + 1);
    &b[s..e.max(s)]
}

/// A chunk-size line: hexadecimal digits, then optional `;extensions`.
fn chunk_size(line: &[u8]) -> Option<u64> {
    let digits = trim(line.split(|&c| c == b';').next()?);
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// How a message's body is framed: chunked wins over a length; `None` if neither is
/// given.
fn body_framing(m: &Message, _response: bool) -> Result<Option<Framing>, Event> {
    let chunked = m.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case(b"transfer-encoding")
            && h.value
                .split(|&c| c == b',')
                .any(|v| trim(v).eq_ignore_ascii_case(b"chunked"))
    });
    if chunked {
        return Ok(Some(Framing::Chunked(Chunk::Size)));
    }
    match m.header("content-length") {
        Some(v) => {
            let n = std::str::from_utf8(trim(v))
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or(Event::InvalidContentLength)?;
            Ok(Some(Framing::Length(n)))
        }
        None => Ok(None),
    }
}

/// Removes a content coding (gzip, deflate in its zlib or raw form), producing at most
/// `limit` bytes; a body in no coding it knows is returned as it is. Also says whether
/// decoding went through without error (what decoded before an error is kept).
pub fn decode_body(body: &[u8], coding: Option<&[u8]>, limit: usize) -> (Vec<u8>, bool) {
    let coding = coding.map(trim).unwrap_or(b"");
    let read = |r: &mut dyn Read| -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        let ok = r.take(limit as u64).read_to_end(&mut out).is_ok();
        (out, ok)
    };
    if coding.eq_ignore_ascii_case(b"gzip") || coding.eq_ignore_ascii_case(b"x-gzip") {
        read(&mut flate2::read::MultiGzDecoder::new(body))
    } else if coding.eq_ignore_ascii_case(b"deflate") {
        let (out, ok) = read(&mut flate2::read::ZlibDecoder::new(body));
        if ok {
            (out, ok)
        } else {
            read(&mut flate2::read::DeflateDecoder::new(body))
        }
    } else {
        (body[..body.len().min(limit)].to_vec(), true)
    }
}
