//! A streaming MIME decoder (RFC 2045/2046) for mail messages: the message's headers,
//! its multipart tree, and the attachments, decoded from base64 or quoted-printable.
//!
//! The message arrives line by line ([`Mime::line`], each line with its end). Each
//! entity (the message, then each part) is *headers, an empty line, a body*. A
//! `multipart/*` entity's body is split by its boundary lines (`--b`, closed by
//! `--b--`) into parts, which may nest. A part named as a file (`Content-Disposition`'s
//! `filename`, or `Content-Type`'s `name`) is an attachment: its body is decoded into a
//! [`File`].
//!
//! Memory is bounded: headers per entity, header bytes, boundaries, files, and the
//! bytes kept of each file (its size counts all of them).

/// Headers kept per entity.
const MAX_HEADERS: usize = 256;
/// Bytes of one header kept (folded lines included).
const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Nested multiparts followed.
const MAX_DEPTH: usize = 16;
/// Files kept per message.
const MAX_FILES: usize = 64;
/// Bytes kept of each file (for `file.data`); its size counts every byte.
pub const FILE_KEEP: usize = 1 << 20;
/// URLs kept per message, and bytes kept of each.
const MAX_URLS: usize = 64;
const MAX_URL_BYTES: usize = 2048;
/// The scheme whose URLs a text part gives (Suricata's default `extract-urls-schemes`),
/// kept without it (its default `log-url-scheme: no`).
const URL_SCHEME: &[u8] = b"http://";

/// A header: name as sent, value with folded lines joined.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub name: Vec<u8>,
    pub value: Vec<u8>,
}

/// An attachment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct File {
    pub name: Vec<u8>,
    /// The decoded bytes, up to [`FILE_KEEP`].
    pub data: Vec<u8>,
    /// Decoded bytes in all.
    pub size: u64,
    /// Its part ended.
    pub closed: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Encoding {
    #[default]
    Plain,
    Base64,
    QuotedPrintable,
}

/// Where the decoder is in the current entity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum At {
    #[default]
    Headers,
    Body,
    /// A multipart's preamble or epilogue, or a part past the depth: skipped.
    Skip,
}

/// The entity being read.
#[derive(Clone, Debug, Default)]
struct Entity {
    headers: Vec<Header>,
    encoding: Encoding,
    /// The attachment its body goes to (index into `files`).
    file: Option<usize>,
    /// A text part (`text/*`, or no type): its URLs are extracted.
    text: bool,
    /// Base64 characters waiting for a group of four.
    b64: Vec<u8>,
}

/// A message being decoded.
#[derive(Clone, Debug, Default)]
pub struct Mime {
    /// The message's own headers.
    pub headers: Vec<Header>,
    pub files: Vec<File>,
    /// The `http://` URLs of its text parts, without the scheme, latest first (as
    /// measured on Suricata 8: `email.url` lists a body's links in reverse).
    pub urls: Vec<Vec<u8>>,
    /// The open multiparts' boundaries, innermost last.
    boundaries: Vec<Vec<u8>>,
    cur: Entity,
    at: At,
    /// The entity being read is the message itself.
    top: bool,
    /// The message ended ([`Mime::finish`]).
    pub done: bool,
    /// A boundary longer than [`MAX_BOUNDARY`] was read since the SMTP parser last
    /// looked (it raises `smtp.mime_long_boundary`); the boundary is used all the same.
    pub long_boundary: bool,
}

/// The longest MIME boundary Suricata takes without an event (measured).
pub const MAX_BOUNDARY: usize = 254;

impl Mime {
    pub fn new() -> Mime {
        Mime {
            top: true,
            ..Mime::default()
        }
    }

    /// The value of the message's header `name` (case-insensitive), the first one.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name.as_bytes()))
            .map(|h| h.value.as_slice())
    }

    /// Every value of the message's header `name`.
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name.as_bytes()))
            .map(|h| h.value.as_slice())
    }

    /// One line of the message, with its line end (the last may lack one).
    pub fn line(&mut self, line: &[u8]) {
        if self.done {
            return;
        }
        let text = trim_eol(line);
        if let Some(b) = self.boundary(text) {
            self.close_part();
            if b.closing {
                self.boundaries.truncate(b.level);
                self.at = At::Skip;
            } else {
                self.boundaries.truncate(b.level + 1);
                self.cur = Entity::default();
                self.at = At::Headers;
            }
            return;
        }
        match self.at {
            At::Headers => self.header_line(text),
            At::Body => self.body_line(line),
            At::Skip => {}
        }
    }

    /// More of the line before, past the line limit: body bytes where a body is being
    /// read (a boundary or header starts a line, never continues one).
    pub fn continued(&mut self, piece: &[u8]) {
        if !self.done && matches!(self.at, At::Body) {
            self.body_line(piece);
        }
    }

    /// The message ended: an open attachment closes.
    pub fn finish(&mut self) {
        self.close_part();
        self.done = true;
    }

    fn header_line(&mut self, text: &[u8]) {
        if text.is_empty() {
            self.end_headers();
            return;
        }
        let hs = &mut self.cur.headers;
        if matches!(text[0], b' ' | b'\t') {
            // A folded line continues the header before it.
            if let Some(h) = hs.last_mut()
                && h.value.len() + text.len() <= MAX_HEADER_BYTES
            {
                h.value.extend_from_slice(text);
            }
            return;
        }
        let Some(colon) = text.iter().position(|&c| c == b':') else {
            return;
        };
        if hs.len() < MAX_HEADERS {
            let value = &text[colon + 1..];
            hs.push(Header {
                name: text[..colon].trim_ascii().to_vec(),
                value: value[..value.len().min(MAX_HEADER_BYTES)]
                    .trim_ascii()
                    .to_vec(),
            });
        }
    }

    /// The entity's headers are read: what its body is.
    fn end_headers(&mut self) {
        let hs = &self.cur.headers;
        let get = |name: &str| {
            hs.iter()
                .find(|h| h.name.eq_ignore_ascii_case(name.as_bytes()))
                .map(|h| h.value.as_slice())
        };
        let ctype = get("content-type").unwrap_or_default();
        let disposition = get("content-disposition").unwrap_or_default();
        self.cur.encoding = match get("content-transfer-encoding").map(<[u8]>::trim_ascii) {
            Some(e) if e.eq_ignore_ascii_case(b"base64") => Encoding::Base64,
            Some(e) if e.eq_ignore_ascii_case(b"quoted-printable") => Encoding::QuotedPrintable,
            _ => Encoding::Plain,
        };
        let multipart = ctype.len() >= 10 && ctype[..10].eq_ignore_ascii_case(b"multipart/");
        let text =
            ctype.is_empty() || ctype.len() >= 5 && ctype[..5].eq_ignore_ascii_case(b"text/");
        let name = param(disposition, "filename").or_else(|| param(ctype, "name"));
        let boundary = param(ctype, "boundary");
        if self.top {
            self.headers = std::mem::take(&mut self.cur.headers);
            self.top = false;
        }
        if multipart && let Some(b) = boundary {
            self.long_boundary |= b.len() > MAX_BOUNDARY;
            if self.boundaries.len() < MAX_DEPTH && !b.is_empty() {
                self.boundaries.push(b);
            }
            self.at = At::Skip;
            return;
        }
        if let Some(name) = name
            && self.files.len() < MAX_FILES
        {
            self.files.push(File {
                name,
                ..File::default()
            });
            self.cur.file = Some(self.files.len() - 1);
        }
        self.cur.text = text && self.cur.file.is_none();
        self.at = At::Body;
    }

    fn body_line(&mut self, line: &[u8]) {
        if self.cur.file.is_none() && !self.cur.text {
            return;
        }
        let mut out = Vec::new();
        match self.cur.encoding {
            Encoding::Plain => out.extend_from_slice(line),
            Encoding::Base64 => base64_line(&mut self.cur.b64, line, &mut out),
            Encoding::QuotedPrintable => qp_line(line, &mut out),
        }
        let Some(i) = self.cur.file else {
            self.extract_urls(&out);
            return;
        };
        let f = &mut self.files[i];
        f.size += out.len() as u64;
        let room = FILE_KEEP.saturating_sub(f.data.len());
        f.data.extend_from_slice(&out[..out.len().min(room)]);
    }

    /// The URLs of a decoded line of a text part: each `http://` (any case) to the next
    /// white space, quote or angle bracket (as measured on Suricata 8: an HTML link's
    /// `href="http://x">` gives `x`), without the scheme.
    fn extract_urls(&mut self, text: &[u8]) {
        let n = URL_SCHEME.len();
        let mut at = 0;
        while let Some(k) = text.get(at..).and_then(|t| {
            t.windows(n)
                .position(|w| w.eq_ignore_ascii_case(URL_SCHEME))
        }) {
            let start = at + k + n;
            let len = text[start..]
                .iter()
                .position(|c| c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'<' | b'>'))
                .unwrap_or(text.len() - start);
            if len > 0 && self.urls.len() < MAX_URLS {
                let url = &text[start..start + len.min(MAX_URL_BYTES)];
                self.urls.insert(0, url.to_vec());
            }
            at = start + len;
        }
    }

    fn close_part(&mut self) {
        if let Some(i) = self.cur.file.take() {
            if self.cur.encoding != Encoding::Base64 {
                // The line end before a boundary belongs to the boundary (RFC 2046).
                let f = &mut self.files[i];
                let cut = if f.data.ends_with(b"\r\n") {
                    2
                } else {
                    usize::from(f.data.ends_with(b"\n"))
                };
                f.data.truncate(f.data.len() - cut);
                f.size -= cut as u64;
            }
            self.files[i].closed = true;
        }
        self.cur.b64.clear();
    }

    /// Whether `text` is a boundary line of an open multipart: its level and whether
    /// it closes it.
    fn boundary(&self, text: &[u8]) -> Option<BoundaryLine> {
        let rest = text.strip_prefix(b"--")?;
        self.boundaries
            .iter()
            .enumerate()
            .rev()
            .find_map(|(level, b)| {
                let after = rest.strip_prefix(b.as_slice())?;
                let after = after.trim_ascii_end();
                match after {
                    b"" => Some(BoundaryLine {
                        level,
                        closing: false,
                    }),
                    b"--" => Some(BoundaryLine {
                        level,
                        closing: true,
                    }),
                    _ => None,
                }
            })
    }
}

struct BoundaryLine {
    level: usize,
    closing: bool,
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Parameter `name` of a header value (`attachment; filename="a.txt"`), unquoted.
pub fn param(value: &[u8], name: &str) -> Option<Vec<u8>> {
    let mut rest = value;
    while let Some(semi) = rest.iter().position(|&c| c == b';') {
        rest = &rest[semi + 1..];
        let item = rest.trim_ascii_start();
        let Some(eq) = item.iter().position(|&c| c == b'=') else {
            continue;
        };
        if !item[..eq]
            .trim_ascii()
            .eq_ignore_ascii_case(name.as_bytes())
        {
            continue;
        }
        let v = item[eq + 1..].trim_ascii_start();
        return Some(match v.strip_prefix(b"\"") {
            Some(q) => q[..q.iter().position(|&c| c == b'"').unwrap_or(q.len())].to_vec(),
            None => {
                let end = v.iter().position(|&c| c == b';').unwrap_or(v.len());
                v[..end].trim_ascii().to_vec()
            }
        });
    }
    None
}

/// The value of a character of base64's alphabet (RFC 4648's, `+` and `/`).
pub fn base64_value(c: u8) -> Option<u8> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    })
}

/// Decodes the base64 characters of `line` (others are skipped), carrying an
/// incomplete group in `pending`.
fn base64_line(pending: &mut Vec<u8>, line: &[u8], out: &mut Vec<u8>) {
    for &c in line {
        let v = match (c, base64_value(c)) {
            (_, Some(v)) => v,
            (b'=', None) => 64,
            _ => continue,
        };
        pending.push(v);
        if pending.len() == 4 {
            let g = [pending[0], pending[1], pending[2], pending[3]];
            pending.clear();
            let n = g.iter().take_while(|&&v| v != 64).count();
            if n < 2 {
                continue;
            }
            let bits = g
                .iter()
                .map(|&v| u32::from(if v == 64 { 0 } else { v }))
                .fold(0u32, |a, v| a << 6 | v);
            let bytes = [(bits >> 16) as u8, (bits >> 8) as u8, bits as u8];
            out.extend_from_slice(&bytes[..n - 1]);
        }
    }
}

/// Decodes one quoted-printable line: `=XX` escapes, and a trailing `=` joins the line
/// to the next (no line end is written for it).
fn qp_line(line: &[u8], out: &mut Vec<u8>) {
    let body = trim_eol(line);
    let eol = &line[body.len()..];
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut i = 0;
    while i < body.len() {
        if body[i] == b'=' {
            if i + 1 == body.len() {
                return; // soft line break
            }
            if let (Some(&a), Some(&b)) = (body.get(i + 1), body.get(i + 2))
                && let (Some(h), Some(l)) = (hex(a), hex(b))
            {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(body[i]);
        i += 1;
    }
    out.extend_from_slice(eol);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(msg: &str) -> Mime {
        let mut m = Mime::new();
        for line in msg.split_inclusive('\n') {
            m.line(line.as_bytes());
        }
        m.finish();
        m
    }

    #[test]
    fn headers_and_folding() {
        let m = decode("From: a <a@x>\r\nSubject: one\r\n two\r\nTo: b@x, c@x\r\n\r\nbody\r\n");
        assert_eq!(m.header("from"), Some(&b"a <a@x>"[..]));
        assert_eq!(m.header("SUBJECT"), Some(&b"one two"[..]));
        assert!(m.files.is_empty());
    }

    #[test]
    fn multipart_attachments_decoded() {
        let msg = "Content-Type: multipart/mixed; boundary=\"XX\"\r\n\r\npreamble\r\n\
                   --XX\r\nContent-Type: text/plain\r\n\r\nhello\r\n\
                   --XX\r\nContent-Type: text/plain; name=\"a.txt\"\r\n\
                   Content-Transfer-Encoding: base64\r\n\r\naGVsbG8g\r\nd29ybGQ=\r\n\
                   --XX\r\nContent-Disposition: attachment; filename=b.txt\r\n\
                   Content-Transfer-Encoding: quoted-printable\r\n\r\na=3Db=\r\nc\r\n\
                   --XX\r\nContent-Disposition: attachment; filename=c.txt\r\n\r\nplain\r\n\
                   --XX--\r\nepilogue\r\n";
        let m = decode(msg);
        let names: Vec<_> = m.files.iter().map(|f| f.name.as_slice()).collect();
        assert_eq!(names, [&b"a.txt"[..], b"b.txt", b"c.txt"]);
        assert_eq!(m.files[0].data, b"hello world");
        assert_eq!(m.files[1].data, b"a=bc");
        assert_eq!(m.files[2].data, b"plain");
        assert_eq!(m.files[2].size, 5);
        assert!(m.files.iter().all(|f| f.closed));
    }

    /// `http://` URLs of text parts (any case, decoded first), latest first, without
    /// the scheme; none from attachments, other schemes or other types.
    #[test]
    fn urls_of_text_parts() {
        let msg = "Content-Type: multipart/mixed; boundary=XX\r\n\r\n\
                   --XX\r\nContent-Type: text/plain\r\n\r\n\
                   See http://a.example/x and HTTP://B.example but not https://c.example.\r\n\
                   --XX\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n\
                   c2VlIGh0dHA6Ly9kLmV4YW1wbGUgbm93\r\n\
                   --XX\r\nContent-Type: application/octet-stream\r\n\r\nhttp://e.example\r\n\
                   --XX\r\nContent-Disposition: attachment; filename=f.txt\r\n\r\n\
                   http://f.example\r\n--XX--\r\n";
        let m = decode(msg);
        let urls: Vec<&[u8]> = m.urls.iter().map(Vec::as_slice).collect();
        assert_eq!(urls, [&b"d.example"[..], b"B.example", b"a.example/x"]);
        // A scheme alone is no URL; an HTML link's ends at its quote (nDPI's smtp.pcap).
        assert!(decode("\r\nonly http:// here\r\n").urls.is_empty());
        let html = decode("\r\n<a href=\"http://www.2080.cl\">www.2080.cl</a>\r\n");
        assert_eq!(html.urls, [b"www.2080.cl"]);
    }

    #[test]
    fn nested_multiparts() {
        let msg = "Content-Type: multipart/mixed; boundary=A\r\n\r\n--A\r\n\
                   Content-Type: multipart/alternative; boundary=B\r\n\r\n--B\r\n\
                   Content-Type: text/plain\r\n\r\nx\r\n--B--\r\n--A\r\n\
                   Content-Disposition: attachment; filename=\"z.bin\"\r\n\r\nzz\r\n--A--\r\n";
        let m = decode(msg);
        assert_eq!(m.files.len(), 1);
        assert_eq!(m.files[0].data, b"zz");
    }

    #[test]
    fn parameters() {
        assert_eq!(
            param(b"attachment; FILENAME=\"a b.txt\"; size=3", "filename"),
            Some(b"a b.txt".to_vec())
        );
        assert_eq!(
            param(b"text/plain; name=x.txt", "name"),
            Some(b"x.txt".to_vec())
        );
        assert_eq!(param(b"inline", "filename"), None);
    }

    #[test]
    fn hostile_input_is_bounded() {
        let mut m = Mime::new();
        m.line(b"Content-Type: multipart/mixed; boundary=\"\"\r\n");
        for _ in 0..10_000 {
            m.line(b"X: y\r\n");
        }
        m.line(b"\r\n");
        assert!(m.headers.len() <= MAX_HEADERS);
        assert!(m.boundaries.is_empty());
    }
}
