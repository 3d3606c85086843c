//! Contents, pcre and their modifiers, and the checks of a whole buffer: `content`,
//! `uricontent`, `nocase`, `rawbytes`, `startswith`, `endswith`, `offset`, `depth`,
//! `distance`, `within`, `fast_pattern`, `pcre`, `isdataat`, `bsize`.

use super::{Builder, Opt, ParseError, parse_cmp, parse_val, unquote};
use crate::buffer::{AppBuffer, AppNeed};
use crate::rule::{
    Asn1, Buffer, Cmp, Content, DataFormat, DataType, Datarep, Dataset, DatasetCmd, Match, Pcre,
    Val,
};

pub(super) fn content(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let (c, mods) = pattern(o)?;
    b.push(Match::Content(c));
    after_pattern(b, o, mods)
}

/// Snort 2's `uricontent`: a content in the URI, whatever the current buffer.
pub(super) fn uricontent(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let (c, mods) = pattern(o)?;
    let uri = Buffer::App(AppBuffer::HttpUri);
    b.note_app(AppNeed::Buffer(AppBuffer::HttpUri));
    let l = match b.rule.lists.iter().rposition(|x| x.buffer == uri) {
        Some(l) => l,
        None => b.list_for(uri),
    };
    b.push_to(l, Match::Content(c));
    after_pattern(b, o, mods)
}

/// The legacy TLS keywords (`tls.subject:"CN=x"`, `tls.issuerdn:`, `tls.fingerprint:`,
/// each may be negated with `!`): a content in the certificate's buffer, case-blind for
/// the fingerprint, which is written in lower case.
pub(super) fn tls_legacy(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let buf = match o.name {
        "tls.subject" => AppBuffer::TlsCertSubject,
        "tls.issuerdn" => AppBuffer::TlsCertIssuer,
        _ => AppBuffer::TlsCertFingerprint,
    };
    let (mut c, mods) = pattern(o)?;
    if !mods.trim().is_empty() {
        return Err(o.bad("unexpected text after the quoted value"));
    }
    c.nocase = buf == AppBuffer::TlsCertFingerprint;
    b.note_app(AppNeed::Buffer(buf));
    let l = b.list_for(Buffer::App(buf));
    b.push_to(l, Match::Content(c));
    Ok(())
}

/// The legacy file keywords (`filename:"x"`, `fileext:"pdf"`, each may be negated with
/// `!`): a content in the file's name, case-blind, anywhere for `filename` and at its
/// end after a dot for `fileext` (as measured on Suricata 8: `filename:"emp.tx"` and
/// `"TEMP.txt"` hold for `temp.txt`, `fileext:"xt"` does not).
pub(super) fn file_legacy(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let (mut c, mods) = pattern(o)?;
    if !mods.trim().is_empty() {
        return Err(o.bad("unexpected text after the quoted value"));
    }
    c.nocase = true;
    if o.name == "fileext" {
        c.pattern.insert(0, b'.');
        c.endswith = true;
    }
    b.note_app(AppNeed::Buffer(AppBuffer::FileName));
    let l = b.list_for(Buffer::App(AppBuffer::FileName));
    b.push_to(l, Match::Content(c));
    Ok(())
}

/// The content of a `content` value, and what follows its closing quote.
fn pattern<'a>(o: &Opt<'a>) -> Result<(Content, &'a str), ParseError> {
    let v = o.need()?;
    let (negated, rest) = match v.strip_prefix('!') {
        Some(r) => (true, r.trim_start()),
        None => (false, v),
    };
    if !rest.starts_with('"') {
        return Err(o.bad("the pattern must be in double quotes"));
    }
    let close = closing_quote(rest).ok_or_else(|| o.bad("no closing quote"))?;
    let pattern = decode_content(&rest[1..close]).map_err(|e| o.bad(&e))?;
    if pattern.is_empty() {
        return Err(o.bad("empty pattern"));
    }
    let c = Content {
        pattern,
        negated,
        ..Content::default()
    };
    Ok((c, rest[close + 1..].trim()))
}

/// Snort 3 modifiers after the pattern; then a legacy modifier may follow.
fn after_pattern(b: &mut Builder, o: &Opt<'_>, mods: &str) -> Result<(), ParseError> {
    if let Some(mods) = mods.strip_prefix(',') {
        snort3_modifiers(b, o, mods)?;
    } else if !mods.is_empty() {
        return Err(o.bad("text after the closing quote"));
    }
    b.prev_was_content = true;
    Ok(())
}

pub(super) fn nocase(c: &mut Content, _: &Opt<'_>) -> Result<(), ParseError> {
    c.nocase = true;
    Ok(())
}

pub(super) fn rawbytes(c: &mut Content, _: &Opt<'_>) -> Result<(), ParseError> {
    c.rawbytes = true;
    Ok(())
}

pub(super) fn startswith(c: &mut Content, _: &Opt<'_>) -> Result<(), ParseError> {
    c.startswith = true;
    Ok(())
}

pub(super) fn endswith(c: &mut Content, _: &Opt<'_>) -> Result<(), ParseError> {
    c.endswith = true;
    Ok(())
}

pub(super) fn offset(c: &mut Content, o: &Opt<'_>) -> Result<(), ParseError> {
    position(c, o, Position::Offset)
}

pub(super) fn depth(c: &mut Content, o: &Opt<'_>) -> Result<(), ParseError> {
    position(c, o, Position::Depth)
}

pub(super) fn distance(c: &mut Content, o: &Opt<'_>) -> Result<(), ParseError> {
    position(c, o, Position::Distance)
}

pub(super) fn within(c: &mut Content, o: &Opt<'_>) -> Result<(), ParseError> {
    position(c, o, Position::Within)
}

/// `fast_pattern`, `fast_pattern:only` or `fast_pattern:offset,length`.
pub(super) fn fast_pattern(c: &mut Content, o: &Opt<'_>) -> Result<(), ParseError> {
    c.fast_pattern = true;
    match o.value.map(str::trim) {
        None | Some("") => {}
        Some("only") => c.fast_pattern_only = true,
        Some(x) => {
            let (a, l) = x
                .split_once(',')
                .ok_or_else(|| o.bad("expected 'only' or offset,length"))?;
            let a: u16 = a.trim().parse().map_err(|_| o.bad("bad offset"))?;
            let l: u16 = l.trim().parse().map_err(|_| o.bad("bad length"))?;
            c.fast_pattern_chop = Some((a, l));
        }
    }
    Ok(())
}

/// The four places a content is anchored by.
#[derive(Clone, Copy)]
enum Position {
    Offset,
    Depth,
    Distance,
    Within,
}

impl Position {
    fn by_name(name: &str) -> Option<Position> {
        Some(match name {
            "offset" => Position::Offset,
            "depth" => Position::Depth,
            "distance" => Position::Distance,
            "within" => Position::Within,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Position::Offset => "offset",
            Position::Depth => "depth",
            Position::Distance => "distance",
            Position::Within => "within",
        }
    }

    fn field(self, c: &mut Content) -> &mut Option<Val> {
        match self {
            Position::Offset => &mut c.offset,
            Position::Depth => &mut c.depth,
            Position::Distance => &mut c.distance,
            Position::Within => &mut c.within,
        }
    }

    /// Refuses what Suricata refuses: an `offset` or `depth` outside 0 to 65535, a
    /// `distance` or `within` outside a 32-bit signed number, and a `depth` or `within`
    /// shorter than the content (it could never match). Variables are checked when used.
    fn check(self, c: &Content, v: &Val) -> Result<(), String> {
        let Val::Num(n) = *v else {
            return Ok(());
        };
        let name = self.name();
        let (lo, hi) = match self {
            Position::Offset | Position::Depth => (0, 65_535),
            Position::Distance | Position::Within => (i64::from(i32::MIN), i64::from(i32::MAX)),
        };
        if !(lo..=hi).contains(&n) {
            return Err(format!("{name} must be between {lo} and {hi}, not {n}"));
        }
        let len = c.pattern.len() as i64;
        if matches!(self, Position::Depth | Position::Within) && n < len {
            return Err(format!(
                "{name}:{n} is shorter than the content ({len} bytes): it could never match"
            ));
        }
        Ok(())
    }
}

fn position(c: &mut Content, o: &Opt<'_>, at: Position) -> Result<(), ParseError> {
    let v = parse_val(o.need()?).ok_or_else(|| o.bad("not a number or variable"))?;
    set_position(c, o, at, v)
}

fn set_position(c: &mut Content, o: &Opt<'_>, at: Position, v: Val) -> Result<(), ParseError> {
    at.check(c, &v).map_err(|e| o.bad(&e))?;
    *at.field(c) = Some(v);
    Ok(())
}

/// Snort 3 content modifiers after the pattern: `,depth 4,nocase,fast_pattern`.
fn snort3_modifiers(b: &mut Builder, o: &Opt<'_>, mods: &str) -> Result<(), ParseError> {
    for m in mods.split(',') {
        let m = m.trim();
        if m.is_empty() {
            continue;
        }
        let (k, v) = match m.split_once(char::is_whitespace) {
            Some((k, v)) => (k, Some(v.trim())),
            None => (m, None),
        };
        let c = b.last_content(o)?;
        match (k, v) {
            ("nocase", None) => c.nocase = true,
            ("fast_pattern", None) => c.fast_pattern = true,
            ("rawbytes", None) => c.rawbytes = true,
            ("fast_pattern_offset", Some(v)) => {
                let n: u16 = v.parse().map_err(|_| o.bad("bad fast_pattern_offset"))?;
                c.fast_pattern = true;
                let len = c.fast_pattern_chop.map_or(u16::MAX, |x| x.1);
                c.fast_pattern_chop = Some((n, len));
            }
            ("fast_pattern_length", Some(v)) => {
                let n: u16 = v.parse().map_err(|_| o.bad("bad fast_pattern_length"))?;
                c.fast_pattern = true;
                let off = c.fast_pattern_chop.map_or(0, |x| x.0);
                c.fast_pattern_chop = Some((off, n));
            }
            (k, v) => {
                let (Some(at), Some(v)) = (Position::by_name(k), v) else {
                    return Err(o.bad(&format!("unknown content modifier '{m}'")));
                };
                let val = parse_val(v).ok_or_else(|| o.bad("not a number or variable"))?;
                set_position(c, o, at, val)?;
            }
        }
    }
    Ok(())
}

/// Where the closing quote of a quoted string starting at byte 0 is.
fn closing_quote(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Decodes a content string: `|41 42|` hex runs and `\"`, `\;`, `\\`, `\:` escapes.
pub fn decode_content(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'|' => {
                i += 1;
                let mut hi: Option<u8> = None;
                loop {
                    let Some(&c) = b.get(i) else {
                        return Err("unterminated |hex| run".into());
                    };
                    i += 1;
                    if c == b'|' {
                        if hi.is_some() {
                            return Err("odd number of hex digits".into());
                        }
                        break;
                    }
                    if c.is_ascii_whitespace() {
                        continue;
                    }
                    let d = (c as char)
                        .to_digit(16)
                        .ok_or_else(|| format!("'{}' is not a hex digit", c as char))?
                        as u8;
                    match hi.take() {
                        None => hi = Some(d),
                        Some(h) => out.push(h << 4 | d),
                    }
                }
            }
            b'\\' => {
                let Some(&c) = b.get(i + 1) else {
                    return Err("string ends with '\\'".into());
                };
                out.push(c);
                i += 2;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// `pcre:"/expr/flags"`: in the buffer its flags select, or the current list. A buffer
/// flag acts as a legacy modifier does: the pcre joins that buffer's list, after the
/// matches modifiers put there (so that `R` goes on from them, as in Suricata).
pub(super) fn pcre(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let mut p = parse_pcre(o.need()?).map_err(|e| o.bad(&e))?;
    p.column = o.column;
    match p.buffer() {
        Some(buf) => {
            b.note_app(AppNeed::Buffer(buf));
            let want = Buffer::App(buf);
            let l = match b.rule.lists.iter().rposition(|x| x.buffer == want) {
                Some(l) => l,
                None => b.list_for(want),
            };
            b.push_to(l, Match::Pcre(p));
        }
        None => b.push(Match::Pcre(p)),
    }
    Ok(())
}

/// `/expr/flags` (with an optional leading `!` and quotes).
fn parse_pcre(v: &str) -> Result<Pcre, String> {
    let v = v.trim();
    let (negated, v) = match v.strip_prefix('!') {
        Some(r) => (true, r.trim_start()),
        None => (false, v),
    };
    let v = unquote(v);
    // Snort 3 may add ",relative" etc. after the closing quote: not here (unquoted).
    // What comes before the first '/' is ignored, as Suricata 8 reads it (measured:
    // `pcre:"^/GET (.*)$/G"` is the expression `GET (.*)$`).
    let body = v.split_once('/').ok_or("no opening '/'")?.1;
    let end = body.rfind('/').ok_or("no closing '/'")?;
    let pattern = body[..end].to_string();
    // Capture targets follow the flags: `/(x)/i,flow:name,pkt:other`.
    let (flags, captures) = match body[end + 1..].split_once(',') {
        Some((f, c)) => (
            f.to_string(),
            c.split(',').map(|c| c.trim().to_string()).collect(),
        ),
        None => (body[end + 1..].to_string(), Vec::new()),
    };
    let captures = captures
        .iter()
        .map(|c| {
            let (scope, name) = c.split_once(':').unwrap_or_default();
            match crate::rule::VarScope::by_name(scope.trim()) {
                Some(scope) if !name.trim().is_empty() => Ok(crate::rule::Capture {
                    scope,
                    name: name.trim().to_string(),
                }),
                _ => Err(format!("bad capture '{c}'")),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    for f in flags.chars() {
        if !"ismxAEGRUIPHDMCKSYBVWQOL".contains(f) {
            return Err(format!("unknown flag '{f}'"));
        }
    }
    Ok(Pcre {
        relative: flags.contains('R'),
        pattern,
        flags,
        negated,
        column: 0,
        captures,
    })
}

/// `isdataat:[!]N[,relative]`.
pub(super) fn isdataat(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?;
    let mut parts = v.split(',').map(str::trim);
    let first = parts.next().unwrap_or("");
    let (negated, first) = match first.strip_prefix('!') {
        Some(r) => (true, r.trim()),
        None => (false, first),
    };
    let offset = parse_val(first).ok_or_else(|| o.bad("not a number"))?;
    let mut relative = false;
    for p in parts {
        match p {
            "relative" => relative = true,
            "rawbytes" => {}
            x => return Err(o.bad(&format!("unknown option '{x}'"))),
        }
    }
    b.push(Match::IsDataAt {
        offset,
        relative,
        negated,
    });
    Ok(())
}

/// `asn1:bitstring_overflow, double_overflow, oversize_length N, absolute_offset N,
/// relative_offset N` (any of them, at least one check; one offset at most).
pub(super) fn asn1(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let mut a = Asn1::default();
    for item in o.need()?.split(',').map(str::trim) {
        let (name, value) = match item.split_once(char::is_whitespace) {
            Some((n, v)) => (n, Some(v.trim())),
            None => (item, None),
        };
        let number = || value.and_then(|v| v.parse().ok());
        match (name, value) {
            ("bitstring_overflow", None) => a.bitstring_overflow = true,
            ("double_overflow", None) => a.double_overflow = true,
            ("oversize_length", Some(_)) => {
                a.oversize_length = Some(number().ok_or_else(|| o.bad("bad length"))?)
            }
            ("absolute_offset", Some(_)) => {
                a.absolute_offset = Some(number().ok_or_else(|| o.bad("bad offset"))?)
            }
            ("relative_offset", Some(_)) => {
                let n = value.and_then(|v| v.parse().ok());
                a.relative_offset = Some(n.ok_or_else(|| o.bad("bad offset"))?);
            }
            _ => return Err(o.bad(&format!("unknown option '{item}'"))),
        }
    }
    let checks = a.bitstring_overflow || a.double_overflow || a.oversize_length.is_some();
    if !checks || (a.absolute_offset.is_some() && a.relative_offset.is_some()) {
        return Err(o.bad("needs a check, and at most one offset"));
    }
    b.push(Match::Asn1(a));
    Ok(())
}

/// `dataset:<cmd>,<name>[,type T][,load F][,save F][,state F][,format F][,context_key K]
/// [,value_key V][,array_key A][,remove_key]` (`memcap` and `hashsize` are read and left).
pub(super) fn dataset(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let mut parts = o.need()?.split(',').map(str::trim);
    let cmd = match parts.next().unwrap_or("") {
        "isset" => DatasetCmd::IsSet,
        "isnotset" => DatasetCmd::IsNotSet,
        "set" => DatasetCmd::Set,
        "unset" => DatasetCmd::Unset,
        c => return Err(o.bad(&format!("unknown command '{c}'"))),
    };
    let name = data_name(parts.next(), o)?;
    let mut d = Dataset::new(cmd, name, DataType::String);
    for item in parts {
        let (k, v) = match item.split_once(char::is_whitespace) {
            Some((k, v)) => (k, Some(v.trim().to_string())),
            None => (item, None),
        };
        match (k, v) {
            ("type", Some(t)) => d.kind = data_type(&t, o)?,
            ("load", f @ Some(_)) => d.load = f,
            ("save", f @ Some(_)) => d.save = f,
            ("state", Some(f)) => {
                d.load = Some(f.clone());
                d.save = Some(f);
            }
            ("format", Some(f)) => {
                d.format = match f.as_str() {
                    "csv" => DataFormat::Csv,
                    "json" => DataFormat::Json,
                    "ndjson" => DataFormat::Ndjson,
                    _ => return Err(o.bad(&format!("unknown format '{f}'"))),
                }
            }
            ("context_key", v @ Some(_)) => d.context_key = v,
            ("value_key", v @ Some(_)) => d.value_key = v,
            ("array_key", v @ Some(_)) => d.array_key = v,
            ("remove_key", None) => d.remove_key = true,
            ("memcap" | "hashsize", Some(_)) => {}
            _ => return Err(o.bad(&format!("unknown option '{item}'"))),
        }
    }
    if d.format != DataFormat::Csv && d.value_key.is_none() {
        return Err(o.bad("a JSON set needs value_key"));
    }
    b.push(Match::Dataset(Box::new(d)));
    Ok(())
}

/// `datarep:<name>,<op>,<value>[,type T][,load F]` (`memcap`, `hashsize` left).
pub(super) fn datarep(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let mut parts = o.need()?.split(',').map(str::trim);
    let name = data_name(parts.next(), o)?;
    let op = parts.next().unwrap_or("");
    let value: i64 = parts
        .next()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| o.bad("bad value"))?;
    let cmp = match op {
        "<" => Cmp::Lt(value),
        "<=" => Cmp::Le(value),
        ">" => Cmp::Gt(value),
        ">=" => Cmp::Ge(value),
        "==" => Cmp::Eq(value),
        _ => return Err(o.bad(&format!("unknown operator '{op}'"))),
    };
    let mut d = Datarep {
        name,
        cmp,
        kind: DataType::String,
        load: None,
    };
    for item in parts {
        match item.split_once(char::is_whitespace) {
            Some(("type", t)) => d.kind = data_type(t.trim(), o)?,
            Some(("load", f)) => d.load = Some(f.trim().to_string()),
            Some(("memcap" | "hashsize", _)) => {}
            _ => return Err(o.bad(&format!("unknown option '{item}'"))),
        }
    }
    b.push(Match::Datarep(Box::new(d)));
    Ok(())
}

fn data_name(name: Option<&str>, o: &Opt<'_>) -> Result<String, ParseError> {
    match name {
        Some(n) if !n.is_empty() && n.len() <= 63 => Ok(n.to_string()),
        _ => Err(o.bad("bad set name")),
    }
}

fn data_type(t: &str, o: &Opt<'_>) -> Result<DataType, ParseError> {
    Ok(match t {
        "string" => DataType::String,
        "md5" => DataType::Md5,
        "sha256" => DataType::Sha256,
        "ipv4" => DataType::Ipv4,
        "ip" | "ipv6" => DataType::Ip,
        _ => return Err(o.bad(&format!("unknown type '{t}'"))),
    })
}

/// `base64_decode[:bytes N][, offset N][, relative]`.
pub(super) fn base64_decode(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let (mut bytes, mut offset, mut relative) = (None, 0, false);
    for (k, v) in o.items()? {
        match (k, v) {
            ("relative", None) => relative = true,
            ("bytes", Some(n)) => bytes = Some(o.item_number(k, n)?),
            ("offset", Some(n)) => offset = o.item_number(k, n)?,
            _ => return Err(o.bad(&format!("unknown option '{k}'"))),
        }
    }
    b.push(Match::Base64Decode {
        bytes,
        offset,
        relative,
    });
    Ok(())
}

/// `entropy: [bytes N,] [offset N,] value CMP` (Suricata 8): CMP is `<`, `<=`, `>`,
/// `>=`, `=`, `!=` or nothing before a number of bits per byte, or a range `a-b`
/// (exclusive, as Suricata's number ranges), `!a-b` outside it.
pub(super) fn entropy(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let (mut offset, mut bytes, mut value) = (0, None, None);
    for part in o.need()?.split(',').map(str::trim) {
        let (k, v) = part.split_once(char::is_whitespace).unwrap_or((part, ""));
        // The value's comparison may have spaces in it (`value > 4.14`).
        let v: String = v.split_whitespace().collect();
        match (k, v.as_str()) {
            (_, "") => return Err(o.bad(&format!("'{k}' needs a value"))),
            ("bytes", n) => bytes = Some(o.item_number(k, n)?),
            ("offset", n) => offset = o.item_number(k, n)?,
            ("value", _) => value = Some(v),
            _ => return Err(o.bad(&format!("unknown option '{k}'"))),
        }
    }
    let v = value.ok_or_else(|| o.bad("no value"))?;
    let v = v.as_str();
    let (negated, cmp) = entropy_cmp(v).ok_or_else(|| o.bad(&format!("bad value '{v}'")))?;
    let l = b.cur();
    let key = match b.rule.lists[l].buffer {
        Buffer::App(a) => a.name().replace('.', "_"),
        Buffer::Header(h) => h.name().replace('.', "_"),
        Buffer::Frame(f) => f.name().replace('.', "_"),
        Buffer::Payload => "content".to_string(),
    };
    b.push_to(
        l,
        Match::Entropy(crate::rule::Entropy {
            offset,
            bytes,
            negated,
            cmp,
            key: key.into(),
        }),
    );
    Ok(())
}

/// An entropy comparison, its numbers in millionths of a bit.
fn entropy_cmp(v: &str) -> Option<(bool, Cmp)> {
    let bits = |s: &str| {
        let x: f64 = s.trim().parse().ok()?;
        (x.is_finite() && (0.0..=8.0).contains(&x)).then(|| (x * 1e6).round() as i64)
    };
    for (p, f) in [
        ("<=", Cmp::Le as fn(i64) -> Cmp),
        (">=", Cmp::Ge),
        ("!=", Cmp::Ne),
        ("<", Cmp::Lt),
        (">", Cmp::Gt),
        ("=", Cmp::Eq),
    ] {
        if let Some(r) = v.strip_prefix(p) {
            return Some((false, f(bits(r)?)));
        }
    }
    let (negated, v) = match v.strip_prefix('!') {
        Some(r) => (true, r),
        None => (false, v),
    };
    match v.split_once('-') {
        Some((a, b)) => Some((negated, Cmp::Between(bits(a)?, bits(b)?))),
        None if !negated => Some((false, Cmp::Eq(bits(v)?))),
        None => Some((false, Cmp::Ne(bits(v)?))),
    }
}

/// `bsize` (and Snort's `bufferlen`): the buffer's length.
pub(super) fn bsize(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let c = parse_cmp(o.need()?).ok_or_else(|| o.bad("bad size"))?;
    b.push(Match::Bsize(c));
    Ok(())
}
