//! Rule metadata and alert control: `msg`, `sid`, `rev`, `gid`, `classtype`,
//! `priority`, `reference`, `metadata`, `target`, `service`, `noalert`, `threshold`,
//! `detection_filter`.

use super::{Builder, Opt, ParseError, unquote};
use crate::buffer::AppNeed;
use crate::rule::{Target, Threshold, ThresholdKind, Track};

pub(super) fn msg(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.msg = unescape_msg(unquote(o.need()?));
    Ok(())
}

pub(super) fn sid(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.sid = o.number("not a number")?;
    b.sid_seen = true;
    Ok(())
}

pub(super) fn rev(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.rev = o.number("not a number")?;
    Ok(())
}

pub(super) fn gid(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.gid = o.number("not a number")?;
    Ok(())
}

pub(super) fn classtype(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.classtype = Some(o.need()?.to_string());
    Ok(())
}

pub(super) fn priority(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.priority = Some(o.number("not a number 0-255")?);
    Ok(())
}

pub(super) fn reference(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.references.push(o.need()?);
    Ok(())
}

pub(super) fn metadata(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?;
    b.rule.metadata.reserve(v.len() + 1);
    for item in v.split(',') {
        b.rule.metadata.push(item.trim());
    }
    Ok(())
}

pub(super) fn target(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.target = Some(match o.need()? {
        "src_ip" => Target::SrcIp,
        "dest_ip" => Target::DestIp,
        _ => return Err(o.bad("expected src_ip or dest_ip")),
    });
    Ok(())
}

/// Snort 3's `service:http,dns`.
pub(super) fn service(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    for s in o.need()?.split(',') {
        let s = s.trim().to_string();
        b.note_app(AppNeed::Protocol(s.clone()));
        b.rule.services.push(s);
    }
    Ok(())
}

pub(super) fn noalert(b: &mut Builder, _: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.noalert = true;
    Ok(())
}

pub(super) fn bypass(b: &mut Builder, _: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.bypass = true;
    Ok(())
}

/// `filestore[:DIRECTION[,SCOPE]]` (Suricata's directions `request`/`to_server`,
/// `response`/`to_client`, `both`; scopes `file`, `tx`, `ssn`/`flow`).
pub(super) fn filestore(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    use crate::rule::{FileStore, FileStoreDir, FileStoreScope};
    let mut fs = FileStore::default();
    let mut parts = o.value.unwrap_or("").split(',').map(str::trim);
    fs.dir = match parts.next().unwrap_or("") {
        "" => None,
        "request" | "to_server" => Some(FileStoreDir::ToServer),
        "response" | "to_client" => Some(FileStoreDir::ToClient),
        "both" => Some(FileStoreDir::Both),
        d => return Err(o.bad(&format!("unknown direction '{d}'"))),
    };
    fs.scope = match parts.next().unwrap_or("") {
        "" => FileStoreScope::Tx,
        _ if fs.dir.is_none() => return Err(o.bad("a scope needs a direction before it")),
        "file" | "tx" => FileStoreScope::Tx,
        "ssn" | "flow" => FileStoreScope::Flow,
        s => return Err(o.bad(&format!("unknown scope '{s}'"))),
    };
    if let Some(extra) = parts.next() {
        return Err(o.bad(&format!("unexpected '{extra}'")));
    }
    b.rule.filestore = Some(fs);
    Ok(())
}

/// `tag:session|host[,COUNT,packets|bytes|seconds[,src|dst]]`; a direction only for
/// `host`, and only after a count and metric (as Suricata reads it).
pub(super) fn tag(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    use crate::rule::{Tag, TagHost, TagMetric, TagScope};
    let parts: Vec<&str> = o.need()?.split(',').map(str::trim).collect();
    let mut scope = match parts[0] {
        "session" => TagScope::Session,
        "host" => TagScope::Host(TagHost::Dst),
        s => return Err(o.bad(&format!("unknown scope '{s}': session or host"))),
    };
    let (count, metric) = match &parts[1..] {
        [] => (Tag::DEFAULT_PACKETS, TagMetric::Packets),
        [n, m, rest @ ..] => {
            let count = n
                .parse()
                .map_err(|_| o.bad(&format!("'{n}' is not a count")))?;
            let metric = TagMetric::by_name(m).ok_or_else(|| {
                o.bad(&format!("unknown metric '{m}': packets, bytes or seconds"))
            })?;
            match (rest, scope) {
                ([], _) => {}
                ([d], TagScope::Host(_)) => {
                    let host = TagHost::by_name(d)
                        .ok_or_else(|| o.bad(&format!("unknown direction '{d}': src or dst")))?;
                    scope = TagScope::Host(host);
                }
                ([_], TagScope::Session) => {
                    return Err(o.bad("a direction is for host tags only"));
                }
                _ => return Err(o.bad("too many values")),
            }
            (count, metric)
        }
        [_] => return Err(o.bad("a count needs a metric after it")),
    };
    b.rule.tags.push(Tag {
        scope,
        count,
        metric,
    });
    Ok(())
}

/// The Suricata version whose rules netsieve reads, for `requires: version ...`.
const SURICATA_VERSION: [u32; 3] = [8, 0, 6];

/// `requires: feature ja4, version >= 8 < 9, keyword ...`: a rule whose requirements
/// netsieve does not meet is left uninspected (as Suricata skips it), not refused.
pub(super) fn requires(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    if !requirements_met(o.need()?) {
        b.rule.unsupported.push(crate::rule::RawOption {
            name: o.name.to_string(),
            value: o.value.map(str::to_string),
        });
    }
    Ok(())
}

/// Whether netsieve meets a `requires` value's every item.
pub(super) fn requirements_met(v: &str) -> bool {
    v.split(',').all(|item| {
        let words: Vec<&str> = item.split_whitespace().collect();
        match words.as_slice() {
            ["feature", f] => matches!(*f, "ja3" | "ja4"),
            ["keyword", k] => super::keywords::lookup(k)
                .is_some_and(|k| !matches!(k, super::keywords::Kind::Unsupported)),
            ["version", rest @ ..] => version_ok(rest),
            _ => false,
        }
    })
}

/// `>= 8 < 9`, `>= 8.0.5`: every comparison holds for [`SURICATA_VERSION`].
fn version_ok(words: &[&str]) -> bool {
    let parse = |v: &str| -> Option<[u32; 3]> {
        let mut out = [0; 3];
        for (i, p) in v.split('.').enumerate() {
            *out.get_mut(i)? = p.parse().ok()?;
        }
        Some(out)
    };
    words.chunks(2).all(|c| match c {
        [op, v] => parse(v).is_some_and(|v| {
            let have = SURICATA_VERSION;
            match *op {
                ">=" => have >= v,
                ">" => have > v,
                "<=" => have <= v,
                "<" => have < v,
                "=" | "==" => have == v,
                _ => false,
            }
        }),
        _ => false,
    })
}

/// `alert`: a pass rule alerts as well (Suricata 7's).
pub(super) fn alert(b: &mut Builder, _: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.pass_alert = true;
    Ok(())
}

/// `config: logging disable, type tx, scope tx` (the only `config` Suricata 8 has).
pub(super) fn config(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let words: Vec<String> = o
        .need()?
        .split(',')
        .map(|w| w.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    if words != ["logging disable", "type tx", "scope tx"] {
        return Err(o.bad("expected: logging disable, type tx, scope tx"));
    }
    b.rule.quiet_tx = true;
    Ok(())
}

pub(super) fn threshold(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.threshold = Some(threshold_fields(o.need()?, false).map_err(|m| o.bad(&m))?);
    Ok(())
}

pub(super) fn detection_filter(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.detection_filter = Some(threshold_fields(o.need()?, true).map_err(|m| o.bad(&m))?);
    Ok(())
}

/// `msg` text: a backslash keeps the character after it.
fn unescape_msg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            if let Some(n) = it.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The `name value, ...` fields of `threshold` (or, with `filter`, `detection_filter`),
/// as written in rules and in threshold.config.
pub fn threshold_fields(text: &str, filter: bool) -> Result<Threshold, String> {
    let mut kind = if filter {
        Some(ThresholdKind::DetectionFilter)
    } else {
        None
    };
    let mut track = None;
    let mut count = None;
    let mut seconds = None;
    let mut multiplier = None;
    for part in text.split(',') {
        let mut w = part.split_whitespace();
        let (Some(k), Some(v)) = (w.next(), w.next()) else {
            return Err("expected 'name value' pairs".into());
        };
        match k {
            "type" if !filter => {
                kind = Some(
                    ThresholdKind::by_name(v)
                        .ok_or("type must be limit, threshold, both or backoff")?,
                )
            }
            "track" => track = Some(Track::by_name(v).ok_or("unknown track")?),
            "count" => count = Some(v.parse().map_err(|_| "bad count")?),
            "seconds" => seconds = Some(v.parse().map_err(|_| "bad seconds")?),
            "multiplier" => multiplier = Some(v.parse().map_err(|_| "bad multiplier")?),
            _ => return Err(format!("unknown field '{k}'")),
        }
    }
    match (kind, track, count, seconds, multiplier) {
        (Some(ThresholdKind::Backoff), Some(track), Some(count), None, Some(m))
            if count > 0 && m > 1 =>
        {
            Ok(Threshold {
                kind: ThresholdKind::Backoff,
                track,
                count,
                seconds: 0,
                multiplier: m,
            })
        }
        (Some(ThresholdKind::Backoff), ..) => {
            Err("backoff needs track, count (> 0) and multiplier (> 1), no seconds".into())
        }
        (Some(kind), Some(track), Some(count), Some(seconds), None) => Ok(Threshold {
            kind,
            track,
            count,
            seconds,
            multiplier: 0,
        }),
        _ => Err("needs type, track, count and seconds".into()),
    }
}
