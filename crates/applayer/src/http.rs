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

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::Read;

use crate::frames::Marks;
use crate::lines::Lines;
use crate::mime;
use crate::txs::Events;
use netsieve_wire::{AppEvent, Direction, FrameType, PerDir};

/// Bounds on what a flow's HTTP state keeps (defaults as Suricata's libhtp settings).
#[derive(Clone, Copy, Debug)]
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
    /// Content codings removed at most, outermost first
    /// (`response-body-decompress-layer-limit`, 2).
    pub decompress_layers: usize,
    /// HTTP/2 is parsed (`app-layer.protocols.http2.enabled`): a connection may switch
    /// to it (`Upgrade: h2c`), and its preface names it.
    pub http2: bool,
    /// FTP commands waiting for their replies at most (`app-layer.protocols.ftp.max-tx`,
    /// 1,024); past that, FTP's transactions are kept to 256 anyway.
    pub ftp_open_txs: usize,
    /// Bytes of a message's file kept in all, past the body limits, for file-store
    /// (0: none past them).
    pub file_bytes: usize,
    /// Body bytes a request must have before it is inspected while still arriving
    /// (`request-body-minimal-inspect-size`, 32 KiB); a shorter one waits for its end.
    pub request_inspect_min: usize,
    /// The same for responses (`response-body-minimal-inspect-size`, 40 KiB).
    pub response_inspect_min: usize,
    /// A request body inspected again as it grows is inspected from this many bytes
    /// before its new ones (`request-body-inspect-window`, 4 KiB; read by detection).
    pub request_inspect_window: usize,
    /// The same for responses (`response-body-inspect-window`, 16 KiB).
    pub response_inspect_window: usize,
}

impl Limits {
    /// The inspect window of direction `d`'s bodies ([`Limits::request_inspect_window`]).
    pub fn inspect_window(&self, d: Direction) -> usize {
        match d {
            Direction::ToServer => self.request_inspect_window,
            Direction::ToClient => self.response_inspect_window,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            head_bytes: 64 << 10,
            headers: 256,
            request_body: 100 << 10,
            response_body: 100 << 10,
            open_txs: 512,
            decompress_layers: 2,
            http2: true,
            ftp_open_txs: 1024,
            file_bytes: 0,
            request_inspect_min: 32 << 10,
            response_inspect_min: 40 << 10,
            request_inspect_window: 4 << 10,
            response_inspect_window: 16 << 10,
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
    /// A request's `Transfer-Encoding` other than `chunked`.
    InvalidTransferEncodingRequest,
    /// A request with more than one `Content-Length` header.
    DuplicateContentLengthRequest,
    /// A request's chunk size line carries an extension.
    RequestChunkExtension,
    /// A request line without a protocol.
    RequestLineMissingProtocol,
    /// An `Authorization` scheme libhtp does not parse.
    RequestAuthUnrecognized,
    /// A request path with `%25` followed by two hex digits.
    DoubleEncodedUri,
    /// A response with more content codings than [`Limits::decompress_layers`].
    TooManyEncodingLayers,
    /// After a complete request, a line whose first word is no method libhtp knows:
    /// it is read as more of that request's body.
    RequestBodyUnexpected,
}

impl Event {
    /// The event as rules name it (`app-layer-event:http.…`), if they do.
    pub fn app_event(self) -> Option<AppEvent> {
        match self {
            Event::InvalidTransferEncodingRequest => {
                Some(AppEvent::HttpInvalidTransferEncodingValueInRequest)
            }
            Event::DuplicateContentLengthRequest => {
                Some(AppEvent::HttpDuplicateContentLengthFieldInRequest)
            }
            Event::RequestChunkExtension => Some(AppEvent::HttpRequestChunkExtension),
            Event::RequestLineMissingProtocol => Some(AppEvent::HttpRequestLineMissingProtocol),
            Event::RequestAuthUnrecognized => Some(AppEvent::HttpRequestAuthUnrecognized),
            Event::DoubleEncodedUri => Some(AppEvent::HttpDoubleEncodedUri),
            Event::TooManyEncodingLayers => Some(AppEvent::HttpTooManyEncodingLayers),
            Event::RequestBodyUnexpected => Some(AppEvent::HttpRequestBodyUnexpected),
            _ => None,
        }
    }
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
    /// Chunk framing bytes: size lines and the line ends after each chunk's data.
    pub framing_len: u64,
    /// The message ended (its body is complete).
    pub complete: bool,
    /// Enough of the body arrived to inspect it before its end: the minimal inspect
    /// size ([`Limits::request_inspect_min`]), or the body limit if that is lower (never
    /// for a `multipart/form-data` request, whose files are inspected once complete).
    pub body_inspectable: bool,
    /// With [`Limits::file_bytes`] above the body limit (file-store): the body's bytes
    /// past the body limit, until the message ends (boxed: most messages have none).
    #[expect(
        clippy::box_collection,
        reason = "one word in every message; the bytes only in those past the limit"
    )]
    file_rest: Option<Box<Vec<u8>>>,
    /// With [`Limits::file_bytes`] above the body limit (file-store), once the message
    /// ended: its whole file (a response's with its content coding removed), when it
    /// was past the body limit and all of it was kept (`body` and a response's
    /// `file_data` stop at the limit).
    pub file: Option<Box<[u8]>>,
}

impl Message {
    /// The body's length as sent, chunk framing included up to the last chunk's size
    /// line (libhtp's message length, EVE's `http.length`).
    pub fn sent_len(&self) -> u64 {
        self.body_len + self.framing_len
    }

    /// The body as far as it has come, when it can be inspected before its end: enough
    /// of it arrived ([`Message::body_inspectable`]) and it has no content coding (a
    /// compressed body is decoded, and inspected, once complete).
    pub fn partial_body(&self) -> Option<&[u8]> {
        (!self.complete && self.body_grows()).then_some(&self.body[..])
    }

    /// The body is inspected as it grows: enough of it arrived before its end, and it
    /// has no content coding.
    pub fn body_grows(&self) -> bool {
        self.body_inspectable
            && self
                .header("content-encoding")
                .is_none_or(|c| c.trim_ascii().eq_ignore_ascii_case(b"identity"))
    }

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
    /// Only the request line has arrived: `msg` has no headers yet. The URI, method and
    /// protocol can be inspected now, as libhtp's request-line progress allows.
    pub line_only: bool,
    /// A `multipart/form-data` body, whose files are its parts named as files; `None`
    /// for any other body, which is one file itself.
    pub form: Option<Box<Form>>,
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

/// A `multipart/form-data` body being read, by the MIME decoder: its parts named with
/// a `filename` are files (as libhtp reads a form; parts without one are fields).
#[derive(Clone, Debug, Default)]
pub struct Form {
    mime: mime::Mime,
    lines: Lines,
}

impl Form {
    /// A form, when `msg`'s headers say its body is one.
    fn of(msg: &Message) -> Option<Box<Form>> {
        const FORM: &[u8] = b"multipart/form-data";
        let ctype = msg.header("content-type")?.trim_ascii_start();
        if !ctype.get(..FORM.len())?.eq_ignore_ascii_case(FORM) {
            return None;
        }
        let mut mime = mime::Mime::new();
        mime.line(&[b"Content-Type: ", ctype, b"\r\n"].concat());
        mime.line(b"\r\n");
        Some(Box::new(Form {
            mime,
            lines: Lines::default(),
        }))
    }

    /// More of the body.
    fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(piece) = self.lines.next_piece(&mut bytes, FORM_LINE) {
            self.piece(piece);
        }
    }

    /// The body ended.
    fn finish(&mut self) {
        if let Some(piece) = self.lines.rest() {
            self.piece(piece);
        }
        self.mime.finish();
    }

    fn piece(&mut self, (piece, continues): (Vec<u8>, bool)) {
        match continues {
            true => self.mime.continued(&piece),
            false => self.mime.line(&piece),
        }
    }

    /// The files so far: each with the bytes kept of it and its size.
    pub fn files(&self) -> &[mime::File] {
        &self.mime.files
    }
}

/// A form's line is read in pieces of at most this many bytes.
const FORM_LINE: usize = 8 * 1024;

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

/// The protocol a connection asked to switch to (`Upgrade:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// `h2c`: HTTP/2 without TLS.
    Http2,
    WebSocket,
}

/// What a feed completed, for the caller to inspect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// The request line of this transaction was parsed; its headers have not all
    /// arrived.
    RequestLine(u64),
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
    /// The rest of a head past [`Limits::head_bytes`], skipped up to its empty line
    /// (the state of [`skip_step`]); then the framing the kept part of the head set.
    SkipHead(u8, Box<Framing>),
    /// The connection is switching protocols (`Upgrade: h2c` or `websocket`): bytes
    /// are kept for the next one, not read.
    Handover,
    Broken,
}

#[derive(Clone, Copy, Debug)]
enum Chunk {
    Size,
    Data(u64),
    DataEnd,
    Trailer,
}

/// What the client's next bytes are while the request before them is being finalized
/// ([`Http`]'s `finalizing`: it ended in this feed, or an unfinished line followed it).
enum AfterRequest {
    /// The line is not whole yet: it waits, as a request line would.
    Waiting,
    /// The line opens a request: the request before it is over.
    Request,
    /// The line's `n` bytes (its LF included) are more of the request's body.
    Body(usize),
}

/// How libhtp reads a client's line right after a request: a line (whole, up to its LF)
/// that opens with a word that is no method libhtp knows, case included, is more of
/// that request's body. Measured on Suricata 8 with captures built for it: `FOO /b`,
/// `get /b` and `junk=1` in the request's own packet are body, with an event each;
/// `junk=1` in a later packet is a request line (the request was over when its packet
/// ran out).
fn after_request(rest: &[u8]) -> AfterRequest {
    match rest.iter().position(|&c| c == b'\n') {
        None => AfterRequest::Waiting,
        Some(nl) if opens_request(&rest[..nl]) => AfterRequest::Request,
        Some(nl) => AfterRequest::Body(nl + 1),
    }
}

/// Whether a client's line opens a request: its first word (after blanks) is a method
/// libhtp knows. A blank line opens none.
fn opens_request(line: &[u8]) -> bool {
    let Some(start) = line.iter().position(|c| !matches!(c, b' ' | b'\t')) else {
        return false;
    };
    let word = line[start..]
        .split(|c| matches!(c, b' ' | b'\t' | b'\r'))
        .next()
        .unwrap_or_default();
    METHODS.contains(&word) || VERSIONING_METHODS.contains(&word)
}

/// Request methods that open an HTTP/1.x request: RFC 9110's and WebDAV's common ones
/// (protocol detection knows these, [`crate::probe`]).
pub(crate) const METHODS: &[&[u8]] = &[
    b"GET",
    b"POST",
    b"HEAD",
    b"PUT",
    b"DELETE",
    b"OPTIONS",
    b"CONNECT",
    b"TRACE",
    b"PATCH",
    b"PROPFIND",
    b"PROPPATCH",
    b"MKCOL",
    b"COPY",
    b"MOVE",
    b"LOCK",
    b"UNLOCK",
];

/// The other methods libhtp knows (versioning, RFC 3253): with [`METHODS`], what a
/// line after a request must open with not to be more of its body (`get` included).
const VERSIONING_METHODS: &[&[u8]] = &[
    b"VERSION-CONTROL",
    b"CHECKOUT",
    b"UNCHECKOUT",
    b"CHECKIN",
    b"UPDATE",
    b"LABEL",
    b"REPORT",
    b"MKWORKSPACE",
    b"MKACTIVITY",
    b"BASELINE-CONTROL",
    b"MERGE",
];

/// The longest chunk-size line accepted.
const MAX_CHUNK_LINE: usize = 1024;

#[derive(Clone, Debug)]
struct Side {
    buf: Vec<u8>,
    /// Where the lines of the head being received end (relative to its first byte).
    scan: HeadScan,
    framing: Framing,
    /// The transaction whose body is being read.
    tx: u64,
    /// The transaction made from a request line whose head is still incomplete.
    line_tx: Option<u64>,
    /// Bytes received: the stream offset after them, and before the latest feed.
    seen: u64,
    feed_start: u64,
    /// Stream offset where the message being read began, once its head was read.
    msg: Option<u64>,
}

impl Default for Side {
    fn default() -> Self {
        Side {
            buf: Vec::new(),
            scan: HeadScan::default(),
            framing: Framing::Head,
            tx: 0,
            line_tx: None,
            seen: 0,
            feed_start: 0,
            msg: None,
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
    sides: PerDir<Side>,
    /// The events raised.
    pub events: Events<Event>,
    /// The messages of the latest feed, as frames (see [`crate::frames`]).
    pub marks: Marks,
    /// The request that asked to switch protocols (`Upgrade: h2c` or `websocket`),
    /// and to which, until answered.
    switch: Option<(u64, Switch)>,
    /// The switch a `101` answered, until the session takes the connection over.
    upgraded: Option<(u64, Switch)>,
    /// The client's last request ended in the latest feed, and the feed went on past
    /// it, or an unfinished line followed it: lines read before the feed runs out may
    /// still be more of its body ([`after_request`]).
    finalizing: bool,
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

    /// Transactions begun since the flow began.
    pub fn tx_count(&self) -> u64 {
        self.next_id
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
    pub fn feed(&mut self, dir: Direction, data: &[u8]) -> Vec<Progress> {
        let mut out = Vec::new();
        let s = dir;
        if matches!(self.sides[s].framing, Framing::Broken) {
            return out;
        }
        let side = &mut self.sides[s];
        side.feed_start = side.seen;
        // The stream offset of `buf[0]`.
        let base = side.seen - side.buf.len() as u64;
        side.seen += data.len() as u64;
        side.buf.extend_from_slice(data);
        let mut at = 0;
        loop {
            self.message_end(s, base + at as u64);
            let side = &self.sides[s];
            let rest = &side.buf[at..];
            match side.framing.clone() {
                Framing::Broken | Framing::Handover => break,
                Framing::Head => {
                    // Blank lines between messages are skipped.
                    let blank = rest
                        .iter()
                        .take_while(|c| matches!(c, b'\r' | b'\n' | b' ' | b'\t'))
                        .count();
                    let blank = rest[..blank]
                        .iter()
                        .rposition(|&c| c == b'\n' || c == b'\r')
                        .map_or(0, |i| i + 1);
                    at += blank;
                    let rest = &self.sides[s].buf[at..];
                    if dir == Direction::ToClient {
                        // A response that does not start with a status line: a junk
                        // line before one is skipped; otherwise it is an HTTP/0.9
                        // response, all body until the close.
                        match looks_like_status(rest) {
                            None => break,
                            Some(true) => {}
                            Some(false) => {
                                let Some(nl) = rest.iter().position(|&c| c == b'\n') else {
                                    break;
                                };
                                match looks_like_status(&rest[nl + 1..]) {
                                    Some(true) => {
                                        at += nl + 1;
                                        self.sides[s].scan = HeadScan::default();
                                        continue;
                                    }
                                    None => break,
                                    Some(false) => {
                                        self.response_09(&mut out);
                                        continue;
                                    }
                                }
                            }
                        }
                    }
                    // After a request, a line that does not open one is more of its
                    // body (as libhtp reads it).
                    if dir == Direction::ToServer && self.finalizing {
                        match after_request(rest) {
                            AfterRequest::Waiting => {}
                            AfterRequest::Request => self.finalizing = false,
                            AfterRequest::Body(n) => {
                                let line = rest[..n].to_vec();
                                at += n;
                                self.sides[s].scan = HeadScan::default();
                                self.late_body(&line);
                                continue;
                            }
                        }
                    }
                    // What the head's lines say, with the borrow of the buffer ended.
                    let limit = self.limits.head_bytes;
                    let Side { buf, scan, .. } = &mut self.sides[s];
                    if blank > 0 {
                        *scan = HeadScan::default();
                    }
                    let rest = &buf[at..];
                    let end = scan.end(rest);
                    let step = if end.is_none_or(|e| e > limit) && rest.len() > limit {
                        // A head past the limit: the lines that fit are inspected as the
                        // head, with an event, and the rest is skipped (as libhtp does:
                        // it keeps the headers up to its limits).
                        match scan.lines_within(limit) {
                            Some(cut) => HeadStep::Truncated(rest[..cut].to_vec()),
                            // Not even the start line fits.
                            None => HeadStep::Unreadable,
                        }
                    } else {
                        match end {
                            Some(end) => HeadStep::Whole(rest[..end].to_vec()),
                            None => HeadStep::Waiting(
                                scan.first_newline()
                                    .map(|nl| split_line(&rest[..=nl]).0.to_vec()),
                            ),
                        }
                    };
                    match step {
                        HeadStep::Unreadable => {
                            self.fail(s, Event::HeadTooLong);
                            break;
                        }
                        HeadStep::Waiting(line) => {
                            if let Some(line) = line
                                && dir == Direction::ToServer
                                && self.sides[s].line_tx.is_none()
                            {
                                self.request_line(&line, &mut out);
                            }
                            break;
                        }
                        HeadStep::Whole(head) => {
                            self.sides[s].msg = Some(base + at as u64);
                            at += head.len();
                            self.sides[s].scan = HeadScan::default();
                            self.head(dir, &head, &mut out);
                        }
                        HeadStep::Truncated(head) => {
                            self.events.raise(Event::HeadTooLong);
                            self.sides[s].msg = Some(base + at as u64);
                            at += head.len();
                            self.sides[s].scan = HeadScan::default();
                            self.head(dir, &head, &mut out);
                            let side = &mut self.sides[s];
                            if !matches!(side.framing, Framing::Broken) {
                                let then = std::mem::replace(&mut side.framing, Framing::Head);
                                side.framing = Framing::SkipHead(SKIP_AFTER_LF, Box::new(then));
                            }
                        }
                    }
                }
                Framing::SkipHead(state, then) => {
                    let mut state = state;
                    let found = rest.iter().position(|&c| {
                        state = skip_step(state, c);
                        state == SKIP_DONE
                    });
                    match found {
                        Some(k) => {
                            at += k + 1;
                            self.sides[s].framing = *then;
                        }
                        None => {
                            at += rest.len();
                            self.sides[s].framing = Framing::SkipHead(state, then);
                            break;
                        }
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
                            // A size line that cannot become one: the response is not
                            // chunked after all (see below).
                            let first = rest.iter().find(|c| !space(c));
                            if matches!(c, Chunk::Size)
                                && dir == Direction::ToClient
                                && first.is_some_and(|c| !c.is_ascii_hexdigit())
                            {
                                self.events.raise(Event::InvalidChunk);
                                self.sides[s].framing = Framing::UntilClose;
                                continue;
                            }
                            if rest.len() > MAX_CHUNK_LINE {
                                self.fail(s, Event::InvalidChunk);
                            }
                            break;
                        };
                        let line = trim_cr(&rest[..nl]).to_vec();
                        let line_at = at;
                        at += nl + 1;
                        // Size lines and the line ends after data are part of the
                        // message as sent; the trailer is not.
                        if !matches!(c, Chunk::Trailer) {
                            self.framing(dir, nl as u64 + 1);
                        }
                        match c {
                            // Empty lines before a size line are skipped.
                            Chunk::Size if trim(&line).is_empty() => {}
                            Chunk::Size => match chunk_size(&line) {
                                Some(n) if dir == Direction::ToServer && line.contains(&b';') => {
                                    self.events.raise(Event::RequestChunkExtension);
                                    self.sides[s].framing = if n == 0 {
                                        Framing::Chunked(Chunk::Trailer)
                                    } else {
                                        Framing::Chunked(Chunk::Data(n))
                                    };
                                }
                                Some(0) => {
                                    self.sides[s].framing = Framing::Chunked(Chunk::Trailer);
                                }
                                Some(n) => {
                                    self.sides[s].framing = Framing::Chunked(Chunk::Data(n));
                                }
                                None if dir == Direction::ToClient => {
                                    // Not chunked after all: the rest of the response,
                                    // from this line on, is its body (as libhtp does).
                                    self.events.raise(Event::InvalidChunk);
                                    at = line_at;
                                    self.unframing(dir, nl as u64 + 1);
                                    self.sides[s].framing = Framing::UntilClose;
                                }
                                None => {
                                    self.fail(s, Event::InvalidChunk);
                                    break;
                                }
                            },
                            Chunk::DataEnd => {
                                if !line.is_empty() {
                                    // Data ran into the next size line.
                                    self.events.raise(Event::InvalidChunk);
                                    at = line_at;
                                    self.unframing(dir, nl as u64 + 1);
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
        self.message_end(s, base + at as u64);
        let side = &mut self.sides[s];
        let at = at.min(side.buf.len());
        side.buf.drain(..at);
        if dir == Direction::ToServer && side.buf.is_empty() {
            // The feed ran out with no line begun: later bytes start a request.
            self.finalizing = false;
        }
        if matches!(side.framing, Framing::Broken) {
            side.buf = Vec::new();
        }
        out
    }

    /// The message of direction `s` being read ended at stream offset `end`, if it
    /// did (its side waits for the next head): its frame is marked.
    fn message_end(&mut self, s: Direction, end: u64) {
        let side = &mut self.sides[s];
        if !matches!(side.framing, Framing::Head) {
            return;
        }
        let Some(start) = side.msg.take() else { return };
        let ty = match s {
            Direction::ToServer => FrameType::Http1Request,
            Direction::ToClient => FrameType::Http1Response,
        };
        let rel = start as i64 - side.feed_start as i64;
        let len = end.saturating_sub(start) as usize;
        self.marks.add(ty, rel, len, Some(side.tx));
    }

    /// A line taken as more of the previous request's body ([`after_request`]), with an
    /// event.
    fn late_body(&mut self, line: &[u8]) {
        self.events.raise(Event::RequestBodyUnexpected);
        self.grow_body(line);
    }

    /// More of the last request's body after it ended; inspected again, whole.
    fn grow_body(&mut self, bytes: &[u8]) {
        let limit = self.limits.request_body;
        let id = self.sides[Direction::ToServer].tx;
        if let Some(m) = self.message_mut(Direction::ToServer, id) {
            m.body_len += bytes.len() as u64;
            let room = limit.saturating_sub(m.body.len());
            m.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
            m.body_inspectable = true;
        }
    }

    /// The direction ended (FIN, RST or the flow's end): a body read until the close is
    /// complete.
    pub fn close(&mut self, dir: Direction) -> Vec<Progress> {
        let mut out = Vec::new();
        let s = dir;
        self.sides[s].feed_start = self.sides[s].seen;
        if dir == Direction::ToClient
            && matches!(self.sides[s].framing, Framing::Head)
            && looks_like_status(&self.sides[s].buf) == Some(false)
        {
            // Bytes that never became a status line: an HTTP/0.9 response.
            let rest = std::mem::take(&mut self.sides[s].buf);
            self.response_09(&mut out);
            self.body(dir, &rest);
            self.finish(dir, &mut out);
        } else if dir == Direction::ToClient && matches!(self.sides[s].framing, Framing::Chunked(_))
        {
            // What is left of a chunked response that never ended is its body.
            let rest = std::mem::take(&mut self.sides[s].buf);
            self.body(dir, &rest);
            self.finish(dir, &mut out);
        } else if dir == Direction::ToClient
            && matches!(self.sides[s].framing, Framing::Head)
            && looks_like_status(&self.sides[s].buf) == Some(true)
        {
            // A response head the connection's end cut short: its lines so far are the
            // whole head (as libhtp reads it), and what follows is read as at any end.
            let mut end = Vec::new();
            if !self.sides[s].buf.ends_with(b"\n") {
                end.extend_from_slice(b"\r\n");
            }
            end.extend_from_slice(b"\r\n");
            out.extend(self.feed(dir, &end));
            if !matches!(self.sides[s].framing, Framing::Head) {
                out.extend(self.close(dir));
            }
        } else if dir == Direction::ToServer
            && matches!(self.sides[s].framing, Framing::Head)
            && self.finalizing
            && !trim(&self.sides[s].buf).is_empty()
            && !opens_request(&self.sides[s].buf)
        {
            // A line the client never ended, after a request: more of its body, as
            // libhtp takes it at the close (with no event).
            let rest = std::mem::take(&mut self.sides[s].buf);
            self.grow_body(&rest);
        } else if matches!(self.sides[s].framing, Framing::UntilClose) {
            self.finish(dir, &mut out);
        }
        let end = self.sides[s].seen;
        self.message_end(s, end);
        out
    }

    /// How a message's body is framed: chunked if a `Transfer-Encoding` mentions
    /// `chunked` anywhere (as libhtp reads it), else by a `Content-Length` of digits
    /// only; `None` if neither (a malformed length counts as none, with an event).
    fn body_framing(&mut self, m: &Message) -> Option<Framing> {
        let chunked = m.headers.iter().any(|h| {
            h.name.eq_ignore_ascii_case(b"transfer-encoding")
                && h.value
                    .to_ascii_lowercase()
                    .windows(7)
                    .any(|w| w == b"chunked")
        });
        if chunked {
            return Some(Framing::Chunked(Chunk::Size));
        }
        let v = trim(m.header("content-length")?);
        if v.is_empty() || v.len() > 18 || !v.iter().all(u8::is_ascii_digit) {
            self.events.raise(Event::InvalidContentLength);
            return None;
        }
        std::str::from_utf8(v)
            .ok()?
            .parse()
            .ok()
            .map(Framing::Length)
    }

    /// The flow ended: a message whose body was still being read counts as complete
    /// with what arrived (so its buffers are inspected).
    pub fn finish_all(&mut self) -> Vec<Progress> {
        let mut out = Vec::new();
        for dir in [Direction::ToServer, Direction::ToClient] {
            let s = dir;
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

    /// A message head: a request's or a response's, by direction.
    fn head(&mut self, dir: Direction, head: &[u8], out: &mut Vec<Progress>) {
        match dir {
            Direction::ToServer => self.request_head(head, out),
            Direction::ToClient => self.response_head(head, out),
        }
    }

    fn fail(&mut self, s: Direction, e: Event) {
        self.events.raise(e);
        self.sides[s].framing = Framing::Broken;
    }

    /// A request's transaction from its request line, before its headers are complete
    /// (`None` for a line that is not `METHOD SP TARGET [SP HTTP/x]`: the head will be
    /// rejected when it is complete).
    fn request_line(&mut self, line: &[u8], out: &mut Vec<Progress>) {
        let Some((method, uri, protocol)) = request_line(line) else {
            return;
        };
        let req = Request {
            msg: Message {
                line: line.to_vec(),
                ..Message::default()
            },
            method: method.to_vec(),
            uri: uri.to_vec(),
            protocol: protocol.to_vec(),
            line_only: true,
            form: None,
        };
        let id = self.new_tx(req);
        self.sides[Direction::ToServer].line_tx = Some(id);
        out.push(Progress::RequestLine(id));
    }

    /// Opens a transaction for a request (the oldest goes when too many are open).
    fn new_tx(&mut self, req: Request) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        if req.method.eq_ignore_ascii_case(b"HEAD") {
            self.head_requests.push(id);
        }
        if self.txs.len() >= self.limits.open_txs {
            self.events.raise(Event::TooManyTransactions);
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
        id
    }

    fn request_head(&mut self, head: &[u8], out: &mut Vec<Progress>) {
        let s = Direction::ToServer;
        let (line, rest) = split_line(head);
        let Some((method, uri, protocol)) = request_line(line) else {
            return self.fail(s, Event::InvalidRequestLine);
        };
        let headers = self.headers(rest);
        let mut req = Request {
            msg: Message {
                line: line.to_vec(),
                headers,
                raw_headers: rest.to_vec(),
                ..Message::default()
            },
            method: method.to_vec(),
            uri: uri.to_vec(),
            protocol: protocol.to_vec(),
            line_only: false,
            form: None,
        };
        req.form = Form::of(&req.msg);
        for e in request_anomalies(&req) {
            self.events.raise(e);
        }
        let framing = self.body_framing(&req.msg).unwrap_or(Framing::Length(0));
        // The transaction its request line opened, if it is still held.
        let opened = self.sides[s].line_tx.take();
        let id = match opened.and_then(|id| self.tx_mut(id)) {
            Some(tx) => {
                tx.request = Some(req);
                tx.id
            }
            None => self.new_tx(req),
        };
        out.push(Progress::RequestHead(id));
        let upgrade = self
            .tx(id)
            .and_then(|t| t.request.as_ref()?.msg.header("upgrade"));
        let asks = |name: &[u8]| {
            upgrade.is_some_and(|u| {
                u.split(|&c| c == b',')
                    .any(|p| p.trim_ascii().eq_ignore_ascii_case(name))
            })
        };
        if asks(b"h2c") && self.limits.http2 {
            self.switch = Some((id, Switch::Http2));
        } else if asks(b"websocket") {
            self.switch = Some((id, Switch::WebSocket));
        }
        self.sides[s].tx = id;
        self.sides[s].framing = framing;
        if matches!(self.sides[s].framing, Framing::Length(0)) {
            self.finish(Direction::ToServer, out);
        }
    }

    fn response_head(&mut self, head: &[u8], out: &mut Vec<Progress>) {
        let s = Direction::ToClient;
        let (line, rest) = split_line(head);
        let line = trim(line);
        let mut parts = line
            .splitn(3, |&c| c == b' ' || c == b'\t')
            .filter(|p| !p.is_empty());
        let protocol = parts.next().unwrap_or(b"");
        let status = parts.next().unwrap_or(b"");
        let reason = parts.next().unwrap_or(b"");
        if !protocol.to_ascii_uppercase().starts_with(b"HTTP") {
            return self.fail(s, Event::InvalidStatusLine);
        }
        let status = if status.len() == 3 && status.iter().all(u8::is_ascii_digit) {
            status
        } else {
            self.events.raise(Event::InvalidStatusLine);
            b""
        };
        let headers = self.headers(rest);
        let resp = Response {
            msg: Message {
                line: line.to_vec(),
                headers,
                raw_headers: rest.to_vec(),
                ..Message::default()
            },
            protocol: protocol.to_vec(),
            status: status.to_vec(),
            reason: trim(reason).to_vec(),
            file_data: Vec::new(),
        };
        let code = resp.code().unwrap_or(0);
        let framed = self.body_framing(&resp.msg);
        if (100..200).contains(&code) && code != 101 && framed.is_none() {
            // An interim response: the final one follows.
            return;
        }
        let id = self.response_tx();
        let head_req = if let Some(i) = self.head_requests.iter().position(|&h| h == id) {
            self.head_requests.swap_remove(i);
            true
        } else {
            false
        };
        // HEAD responses have no body; 1xx, 204 and 304 ones none unless their
        // headers frame one (which clients then read, as libhtp does).
        let framing = match framed {
            _ if head_req => Framing::Length(0),
            Some(f) => f,
            None if (100..200).contains(&code) || code == 204 || code == 304 => Framing::Length(0),
            None => Framing::UntilClose,
        };
        // More content codings than are undone (libhtp's decompress layer limit).
        let layers: usize = (resp.msg.headers.iter())
            .filter(|h| h.name.eq_ignore_ascii_case(b"content-encoding"))
            .map(|h| codings(&h.value).len())
            .sum();
        if layers > self.limits.decompress_layers {
            self.events.raise(Event::TooManyEncodingLayers);
        }
        if let Some(t) = self.tx_mut(id) {
            t.response = Some(resp);
        }
        out.push(Progress::ResponseHead(id));
        self.sides[s].tx = id;
        self.sides[s].framing = framing;
        if matches!(self.sides[s].framing, Framing::Length(0)) {
            self.finish(Direction::ToClient, out);
        }
        // The answer to an upgrade: `101` switches the connection, anything else leaves
        // it HTTP/1 (the client's bytes held meanwhile are read).
        if let Some((asked, to)) = self.switch.filter(|(asked, _)| *asked == id) {
            self.switch = None;
            if code == 101 {
                self.upgraded = Some((asked, to));
                self.sides[s].framing = Framing::Handover;
            } else if matches!(self.sides[Direction::ToServer].framing, Framing::Handover) {
                self.sides[Direction::ToServer].framing = Framing::Head;
            }
        }
    }

    /// The connection switched protocols: the transaction that asked for it, to
    /// which, and the bytes of each direction that follow the switch (once; then this
    /// parser reads nothing more).
    pub fn take_handover(&mut self) -> Option<(u64, Switch, PerDir<Vec<u8>>)> {
        let (id, to) = self.upgraded.take()?;
        let mut rest = PerDir::<Vec<u8>>::default();
        for (d, r) in rest.iter_mut() {
            *r = std::mem::take(&mut self.sides[d].buf);
            self.sides[d].framing = Framing::Broken;
        }
        Some((id, to, rest))
    }

    /// The transaction a response starts: the oldest request waiting for one, else a
    /// new transaction without a request.
    fn response_tx(&mut self) -> u64 {
        if let Some(id) = self.waiting.pop_front() {
            return id;
        }
        self.events.raise(Event::UnsolicitedResponse);
        let id = self.next_id;
        self.next_id += 1;
        self.txs.push_back(Tx {
            id,
            request: None,
            response: None,
        });
        id
    }

    /// Starts an HTTP/0.9-style response: no status line, no headers, body until the
    /// close.
    fn response_09(&mut self, out: &mut Vec<Progress>) {
        let s = Direction::ToClient;
        self.events.raise(Event::InvalidStatusLine);
        let id = self.response_tx();
        if let Some(t) = self.tx_mut(id) {
            t.response = Some(Response::default());
        }
        out.push(Progress::ResponseHead(id));
        self.sides[s].tx = id;
        self.sides[s].framing = Framing::UntilClose;
    }

    /// Parses header lines leniently, as servers and clients that accept sloppy
    /// traffic do (and as an evasion-aware IDS must): lines end at LF, CRLF or a lone
    /// CR; a line that starts with whitespace, or has no colon, continues the previous
    /// header unless it is itself `name: value`; NUL bytes are dropped; names may hold
    /// any byte (httparse's verdict on a name only raises [`Event::InvalidHeader`]).
    /// Past [`Limits::headers`], further headers are ignored (with an event).
    fn headers(&mut self, block: &[u8]) -> Vec<Header> {
        // Physical lines to logical lines: a line that starts with whitespace and is
        // not itself `name: value` continues the one before it.
        let mut logical: Vec<Cow<[u8]>> = Vec::new();
        for raw in physical_lines(block) {
            let line: Cow<[u8]> = if raw.contains(&0) {
                Cow::Owned(raw.iter().copied().filter(|&c| c != 0).collect())
            } else {
                Cow::Borrowed(raw)
            };
            if trim(&line).is_empty() {
                continue;
            }
            let folded = matches!(line[0], b' ' | b'\t');
            let named = line.iter().position(|&c| c == b':').is_some_and(|c| {
                let n = trim(&line[..c]);
                !n.is_empty() && !n.iter().any(|b| b.is_ascii_whitespace())
            });
            match logical.last_mut() {
                Some(prev) if folded && !named => {
                    let prev = prev.to_mut();
                    prev.push(b' ');
                    prev.extend_from_slice(trim(&line));
                }
                _ => logical.push(line),
            }
        }
        let mut out: Vec<Header> = Vec::new();
        let mut odd = false;
        // One header at a time for httparse's verdict on its name, in one buffer.
        let mut probe_text = Vec::new();
        for line in logical {
            let Some(colon) = line.iter().position(|&c| c == b':') else {
                // No colon: more of the previous header's value.
                odd = true;
                if let Some(h) = out.last_mut() {
                    if !h.value.is_empty() {
                        h.value.push(b' ');
                    }
                    h.value.extend_from_slice(trim(&line));
                }
                continue;
            };
            let name = trim(&line[..colon]);
            if name.is_empty() {
                odd = true;
                continue;
            }
            if out.len() >= self.limits.headers {
                // Past the limit, headers are ignored with an event (as libhtp does);
                // the message goes on with those kept.
                self.events.raise(Event::TooManyHeaders);
                break;
            }
            let mut probe = [httparse::EMPTY_HEADER; 1];
            probe_text.clear();
            probe_text.extend_from_slice(name);
            probe_text.extend_from_slice(b": x\r\n\r\n");
            if !matches!(
                httparse::parse_headers(&probe_text, &mut probe),
                Ok(httparse::Status::Complete(_))
            ) {
                odd = true;
            }
            out.push(Header {
                name: name.to_vec(),
                value: trim(&line[colon + 1..]).to_vec(),
            });
        }
        if odd {
            self.events.raise(Event::InvalidHeader);
        }
        out
    }

    fn body(&mut self, dir: Direction, chunk: &[u8]) {
        let s = dir;
        let id = self.sides[s].tx;
        let (limit, inspect_min) = match dir {
            Direction::ToServer => (self.limits.request_body, self.limits.request_inspect_min),
            Direction::ToClient => (self.limits.response_body, self.limits.response_inspect_min),
        };
        let file_limit = self.limits.file_bytes;
        let Some(t) = self.tx_mut(id) else { return };
        // The message, and a request's form, found once.
        let (m, form) = match dir {
            Direction::ToServer => match t.request.as_mut() {
                Some(r) => (&mut r.msg, r.form.as_deref_mut()),
                None => return,
            },
            Direction::ToClient => match t.response.as_mut() {
                Some(r) => (&mut r.msg, None),
                None => return,
            },
        };
        m.body_len += chunk.len() as u64;
        let room = limit.saturating_sub(m.body.len());
        let (kept, past) = chunk.split_at(chunk.len().min(room));
        m.body.extend_from_slice(kept);
        // A form's files are inspected once the request is complete: the window of a
        // body inspected as it grows would not line up with a part's data.
        m.body_inspectable |=
            form.is_none() && !m.body.is_empty() && m.body.len() >= inspect_min.min(limit);
        // A file to store is kept on past the limit, up to its own.
        if !past.is_empty() && file_limit > m.body.len() {
            let rest = m.file_rest.get_or_insert_default();
            let room = file_limit.saturating_sub(m.body.len() + rest.len());
            rest.extend_from_slice(&past[..past.len().min(room)]);
        }
        if let Some(f) = form {
            f.feed(chunk);
        }
    }

    /// Chunk framing bytes of the message being read in `dir` (counted in
    /// [`Message::sent_len`]), and their taking back when a line is read again.
    fn framing(&mut self, dir: Direction, n: u64) {
        let id = self.sides[dir].tx;
        if let Some(m) = self.message_mut(dir, id) {
            m.framing_len += n;
        }
    }

    fn unframing(&mut self, dir: Direction, n: u64) {
        let id = self.sides[dir].tx;
        if let Some(m) = self.message_mut(dir, id) {
            m.framing_len = m.framing_len.saturating_sub(n);
        }
    }

    fn message_mut(&mut self, dir: Direction, id: u64) -> Option<&mut Message> {
        let t = self.tx_mut(id)?;
        match dir {
            Direction::ToServer => t.request.as_mut().map(|r| &mut r.msg),
            Direction::ToClient => t.response.as_mut().map(|r| &mut r.msg),
        }
    }

    fn finish(&mut self, dir: Direction, out: &mut Vec<Progress>) {
        let s = dir;
        let id = self.sides[s].tx;
        // After a request to switch to HTTP/2, the client's bytes wait for the answer.
        let switching = self.switch.is_some_and(|(asked, _)| asked == id);
        self.sides[s].framing = if dir == Direction::ToServer && switching {
            Framing::Handover
        } else {
            Framing::Head
        };
        let limit = self.limits.response_body;
        let file_limit = self.limits.file_bytes;
        let layers = self.limits.decompress_layers;
        let mut failed = false;
        let mut finalizing = false;
        if let Some(t) = self.tx_mut(id) {
            match dir {
                Direction::ToServer => {
                    if let Some(r) = t.request.as_mut() {
                        // After a CONNECT come a tunnel's bytes, not HTTP.
                        finalizing = !switching && r.method != b"CONNECT";
                        r.msg.complete = true;
                        r.msg.file = whole_file(&mut r.msg).map(|(body, _)| body.into());
                        if let Some(f) = r.form.as_mut() {
                            f.finish();
                        }
                    }
                }
                Direction::ToClient => {
                    if let Some(r) = t.response.as_mut() {
                        r.msg.complete = true;
                        // Several Content-Encoding headers list the codings in order.
                        let coding: Vec<u8> = r
                            .msg
                            .headers
                            .iter()
                            .filter(|h| h.name.eq_ignore_ascii_case(b"content-encoding"))
                            .flat_map(|h| h.value.iter().copied().chain([b',']))
                            .collect();
                        let (data, ok) = decode_body(&r.msg.body, Some(&coding), limit, layers);
                        r.file_data = data;
                        failed = !ok;
                        r.msg.file = whole_file(&mut r.msg).map(|(body, coded)| match coded {
                            true => decode_body(&body, Some(&coding), file_limit, layers)
                                .0
                                .into(),
                            false => body.into(),
                        });
                    }
                }
            }
        }
        if dir == Direction::ToServer {
            self.finalizing = finalizing;
        }
        if failed {
            self.events.raise(Event::DecompressionFailed);
        }
        out.push(match dir {
            Direction::ToServer => Progress::RequestDone(id),
            Direction::ToClient => Progress::ResponseDone(id),
        });
    }
}

/// The whole body of message `m`, just ended, when it went past the body limit and was
/// all kept for its file ([`Limits::file_bytes`]); whether it has a content coding.
fn whole_file(m: &mut Message) -> Option<(Vec<u8>, bool)> {
    let rest = m.file_rest.take()?;
    if rest.is_empty() || (m.body.len() + rest.len()) as u64 != m.body_len {
        return None;
    }
    let coded = m.header("content-encoding").is_some();
    Some(([&m.body[..], &rest[..]].concat(), coded))
}

/// Where a head ends: just past its empty line (CRLF CRLF or LF LF, mixed allowed).
/// The lines of a head as its bytes arrive: each byte is examined once, so a head that
/// comes a byte at a time costs no more than one that comes whole.
#[derive(Clone, Debug, Default)]
struct HeadScan {
    /// Bytes examined.
    scanned: usize,
    /// Where the line feeds are.
    newlines: Vec<usize>,
    /// Line feeds before this index were ruled out as the one before the end.
    checked: usize,
}

impl HeadScan {
    /// Where the head `b` (the same bytes as before, and maybe more) ends, just after
    /// its empty line, once that has arrived.
    fn end(&mut self, b: &[u8]) -> Option<usize> {
        let from = self.scanned;
        self.newlines.extend(
            b[from..]
                .iter()
                .enumerate()
                .filter(|(_, c)| **c == b'\n')
                .map(|(k, _)| from + k),
        );
        self.scanned = b.len();
        let ws = |l: &[u8]| l.iter().all(|c| matches!(c, b' ' | b'\t' | b'\r'));
        while self.checked + 1 < self.newlines.len() {
            let (nl, q) = (self.newlines[self.checked], self.newlines[self.checked + 1]);
            let next = &b[nl + 1..q];
            if next.is_empty() || next == b"\r" {
                return Some(q + 1);
            }
            // A line of only spaces, tabs and CRs after a bare LF also ends the head,
            // unless an empty line follows it (as observed of libhtp on http-evader's
            // `end-lf SP lf` and `end-lf CR CR LF` cases); after CRLF it is folding.
            let bare_lf = nl == 0 || b[nl - 1] != b'\r';
            if bare_lf && ws(next) {
                let after = &b[q + 1..];
                if after.is_empty() || after == b"\r" {
                    return None;
                }
                if !(after.starts_with(b"\n") || after.starts_with(b"\r\n")) {
                    return Some(q + 1);
                }
            }
            self.checked += 1;
        }
        None
    }

    /// The end of the first line, once it has arrived.
    fn first_newline(&self) -> Option<usize> {
        self.newlines.first().copied()
    }

    /// The length of the whole lines within the first `limit` bytes.
    fn lines_within(&self, limit: usize) -> Option<usize> {
        let k = self.newlines.partition_point(|&nl| nl < limit);
        k.checked_sub(1).map(|k| self.newlines[k] + 1)
    }
}

/// What the lines of a head received so far allow.
enum HeadStep {
    /// The whole head.
    Whole(Vec<u8>),
    /// The lines that fit the limit of a head past it.
    Truncated(Vec<u8>),
    /// More is needed; the request line, if it has arrived.
    Waiting(Option<Vec<u8>>),
    /// Past the limit without a whole first line.
    Unreadable,
}

/// [`skip_step`]'s states: within a line, just after a line feed, after a line feed and a
/// carriage return, and past the empty line that ends a head.
const SKIP_IN_LINE: u8 = 0;
const SKIP_AFTER_LF: u8 = 1;
const SKIP_AFTER_LF_CR: u8 = 2;
const SKIP_DONE: u8 = 3;

/// One byte of a head being skipped: the head ends at an empty line (LF LF, or LF CR LF).
fn skip_step(state: u8, c: u8) -> u8 {
    match (state, c) {
        (SKIP_AFTER_LF | SKIP_AFTER_LF_CR, b'\n') => SKIP_DONE,
        (_, b'\n') => SKIP_AFTER_LF,
        (SKIP_AFTER_LF, b'\r') => SKIP_AFTER_LF_CR,
        _ => SKIP_IN_LINE,
    }
}

/// Whether `b` (leading whitespace skipped) starts like a status line: `HTTP`, any
/// case. `None` while too short to tell.
fn looks_like_status(b: &[u8]) -> Option<bool> {
    let t = &b[b
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | 0))
        .unwrap_or(b.len())..];
    if t.len() < 4 {
        return (!t.is_empty() && !b"HTTP"[..t.len()].eq_ignore_ascii_case(t)).then_some(false);
    }
    Some(t[..4].eq_ignore_ascii_case(b"HTTP"))
}

/// Lines ending at LF, CRLF or a lone CR, without their endings.
fn physical_lines(b: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                out.push(&b[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&b[start..i]);
                if b.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < b.len() {
        out.push(&b[start..]);
    }
    out
}

/// A request line's method, target and protocol (empty for HTTP/0.9); `None` unless
/// it is `METHOD SP TARGET [SP HTTP/x]`. As libhtp reads it, a target may hold spaces
/// when the line ends in a protocol: `GET /a b HTTP/1.1` asks for `/a b`.
fn request_line(line: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    // The words of the line, as (start, end) offsets.
    let ws = |c: u8| c == b' ' || c == b'\t';
    let mut words = Vec::new();
    let mut at = 0;
    while at < line.len() {
        if ws(line[at]) {
            at += 1;
            continue;
        }
        let end = line[at..]
            .iter()
            .position(|&c| ws(c))
            .map_or(line.len(), |n| at + n);
        words.push((at, end));
        at = end;
    }
    let method = &line[words.first()?.0..words.first()?.1];
    let (uri, protocol) = match words[1..] {
        [] => return None,
        [(s, e)] => (&line[s..e], &b""[..]),
        [(s, e), (ps, pe)] => (&line[s..e], &line[ps..pe]),
        // More words: the last is the protocol (checked below), and the target runs
        // from the first word after the method to the last before it.
        [(s, _), .., (_, e), (ps, pe)] => (&line[s..e], &line[ps..pe]),
    };
    (method.iter().all(|c| c.is_ascii_graphic())
        && (protocol.is_empty() || protocol.starts_with(b"HTTP/")))
    .then_some((method, uri, protocol))
}

/// The first line (without its ending) and the rest: the line ends at LF, CRLF or a
/// lone CR.
fn split_line(b: &[u8]) -> (&[u8], &[u8]) {
    match b.iter().position(|&c| c == b'\n' || c == b'\r') {
        Some(i) if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') => (&b[..i], &b[i + 2..]),
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &b[b.len()..]),
    }
}

fn trim_cr(b: &[u8]) -> &[u8] {
    b.strip_suffix(b"\r").unwrap_or(b)
}

/// Whitespace as lenient parsers skip it (vertical tab and NUL included).
fn space(c: &u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, 0 | 0x0b)
}

fn trim(b: &[u8]) -> &[u8] {
    let s = b.iter().position(|c| !space(c)).unwrap_or(b.len());
    let e = b.iter().rposition(|c| !space(c)).map_or(s, |e| e + 1);
    &b[s..e.max(s)]
}

/// A chunk-size line, read as leniently as libhtp: leading whitespace skipped, then
/// hexadecimal digits up to the first other byte (`fx` is 15, `0x` is 0); leading
/// zeros are free. `None` without a digit or past 2^60.
/// What libhtp finds odd in a request's head, as events.
fn request_anomalies(req: &Request) -> Vec<Event> {
    let mut out = Vec::new();
    let named = |name: &'static str| {
        req.msg
            .headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name.as_bytes()))
            .map(|h| trim(&h.value))
    };
    // A request's Transfer-Encoding is `chunked` or invalid.
    if named("transfer-encoding").any(|v| !v.eq_ignore_ascii_case(b"chunked")) {
        out.push(Event::InvalidTransferEncodingRequest);
    }
    if named("content-length").count() > 1 {
        out.push(Event::DuplicateContentLengthRequest);
    }
    if req.protocol.is_empty() {
        out.push(Event::RequestLineMissingProtocol);
    }
    let known = |scheme: &[u8]| {
        [&b"basic"[..], b"digest", b"bearer"]
            .iter()
            .any(|k| scheme.eq_ignore_ascii_case(k))
    };
    if named("authorization").any(|v| !known(v.split(|&c| c == b' ').next().unwrap_or_default())) {
        out.push(Event::RequestAuthUnrecognized);
    }
    let path = req.uri.split(|&c| c == b'?').next().unwrap_or_default();
    let double = path.windows(5).any(|w| {
        w[..3].eq_ignore_ascii_case(b"%25") && w[3].is_ascii_hexdigit() && w[4].is_ascii_hexdigit()
    });
    if double {
        out.push(Event::DoubleEncodedUri);
    }
    out
}

fn chunk_size(line: &[u8]) -> Option<u64> {
    let t = trim(line);
    let digits = t.iter().take_while(|c| c.is_ascii_hexdigit()).count();
    if digits == 0 {
        return None;
    }
    let d = &t[..digits];
    let d = &d[d
        .iter()
        .take_while(|&&c| c == b'0')
        .count()
        .min(d.len() - 1)..];
    if d.len() > 15 {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(d).ok()?, 16).ok()
}

/// A content coding netsieve removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Coding {
    Gzip,
    Deflate,
}

/// The codings of a `Content-Encoding` value in the order applied. Tokens are split at
/// commas and whitespace and stripped of stray bytes (`gz\0ip`, `deflate;`); unknown
/// ones and `identity` are skipped.
fn codings(v: &[u8]) -> Vec<Coding> {
    v.split(|&c| c == b',' || c.is_ascii_whitespace())
        .filter_map(|t| {
            let t: Vec<u8> = t
                .iter()
                .filter(|c| c.is_ascii_alphanumeric() || **c == b'-')
                .map(u8::to_ascii_lowercase)
                .collect();
            match &t[..] {
                b"gzip" | b"x-gzip" => Some(Coding::Gzip),
                b"deflate" | b"x-deflate" => Some(Coding::Deflate),
                _ => None,
            }
        })
        .collect()
}

/// Removes the content codings of `coding` (one or more, in the order applied; at most
/// `layers` of them), producing at most `limit` bytes. A layer that does not decode at
/// all passes its input through as it is (as libhtp does); one that fails midway keeps
/// what decoded. Also says whether every layer decoded without error.
pub fn decode_body(
    body: &[u8],
    coding: Option<&[u8]>,
    limit: usize,
    layers: usize,
) -> (Vec<u8>, bool) {
    // No body: nothing to decode (and no decoding to fail).
    if body.is_empty() {
        return (Vec::new(), true);
    }
    let list = coding.map(codings).unwrap_or_default();
    let mut data = body[..body
        .len()
        .min(if list.is_empty() { limit } else { body.len() })]
        .to_vec();
    let mut ok = true;
    for c in list.iter().rev().take(layers) {
        let (out, fine) = match c {
            Coding::Gzip => gunzip(&data, limit),
            Coding::Deflate => inflate(&data, limit),
        };
        ok &= fine;
        if !out.is_empty() {
            data = out;
        }
    }
    data.truncate(limit);
    (data, ok)
}

fn read_limited(r: &mut dyn Read, limit: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let ok = r.take(limit as u64).read_to_end(&mut out).is_ok();
    (out, ok)
}

/// zlib-wrapped deflate, else raw deflate.
fn inflate(b: &[u8], limit: usize) -> (Vec<u8>, bool) {
    let (out, ok) = read_limited(&mut flate2::read::ZlibDecoder::new(b), limit);
    if ok && !out.is_empty() {
        return (out, ok);
    }
    let (raw, rok) = read_limited(&mut flate2::read::DeflateDecoder::new(b), limit);
    if raw.len() >= out.len() {
        (raw, rok)
    } else {
        (out, ok)
    }
}

/// gzip with a lenient header: reserved flag bits are ignored, optional fields
/// skipped as the flags say, the trailer not checked. Data without the gzip magic is
/// tried as deflate.
fn gunzip(b: &[u8], limit: usize) -> (Vec<u8>, bool) {
    if b.len() < 10 || b[0] != 0x1f || b[1] != 0x8b {
        return inflate(b, limit);
    }
    let flags = b[3];
    let mut at = 10;
    if flags & 4 != 0 {
        let Some(x) = b.get(at..at + 2) else {
            return (Vec::new(), false);
        };
        at += 2 + u16::from_le_bytes([x[0], x[1]]) as usize;
    }
    for bit in [8, 16] {
        if flags & bit != 0 {
            match b.get(at..).and_then(|r| r.iter().position(|&c| c == 0)) {
                Some(z) => at += z + 1,
                None => return (Vec::new(), false),
            }
        }
    }
    if flags & 2 != 0 {
        at += 2;
    }
    match b.get(at..) {
        Some(rest) => read_limited(&mut flate2::read::DeflateDecoder::new(rest), limit),
        None => (Vec::new(), false),
    }
}
