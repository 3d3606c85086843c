//! ClassBench rule sets and traces.
//!
//! A rule line: `@sip/len<TAB>dip/len<TAB>sp_lo : sp_hi<TAB>dp_lo : dp_hi<TAB>0xPP/0xMM`
//! optionally followed by `<TAB>0xFFFF/0xMMMM` (TCP flags and mask). Rules are ordered and
//! the first match wins; ClassBench has no actions, so every rule accepts and the policy
//! drops. A trace line: `sip dip sport dport proto flags filter#` in decimal; the last
//! column names the rule that generated the header, not necessarily its first match.

use crate::iptables::ParseError;
use crate::rule::*;

fn field_err(line: usize, col: usize, msg: impl Into<String>) -> ParseError {
    ParseError::line_error(line, col, msg)
}

fn prefix(s: &str) -> Option<Prefix> {
    let (a, l) = s.split_once('/')?;
    let a: std::net::Ipv4Addr = a.trim().parse().ok()?;
    let l: u8 = l.trim().parse().ok().filter(|l| *l <= 32)?;
    Some(Prefix::v4(a.into(), l))
}

fn range(s: &str) -> Option<Range> {
    let (a, b) = s.split_once(':')?;
    let lo: u16 = a.trim().parse().ok()?;
    let hi: u16 = b.trim().parse().ok()?;
    (lo <= hi).then_some(Range::new(lo, hi))
}

fn value_mask(s: &str) -> Option<(u32, u32)> {
    let (v, m) = s.split_once('/')?;
    let p = |x: &str| u32::from_str_radix(x.trim().trim_start_matches("0x"), 16).ok();
    Some((p(v)?, p(m)?))
}

/// Parses a rule set; a bad line is reported and skipped.
pub fn parse(text: &str, origin: &str) -> (RuleSet, Vec<ParseError>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let ln = n + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        match parse_line(line, ln) {
            Ok(h) => rules.push(Rule {
                header: vec![h],
                complex: Vec::new(),
                action: Action::Accept,
                origin: format!("{origin}:{ln}"),
                text: t.to_string(),
                chain: Vec::new(),
                top: 0,
            }),
            Err(e) => errors.push(e),
        }
    }
    (
        RuleSet {
            rules,
            policy: Action::Drop,
        },
        errors,
    )
}

/// One rule given on its own (an update).
pub fn parse_one(line: &str, origin: &str) -> Result<Rule, ParseError> {
    Ok(Rule {
        header: vec![parse_line(line, 1)?],
        complex: Vec::new(),
        action: Action::Accept,
        origin: origin.to_string(),
        text: line.trim().to_string(),
        chain: Vec::new(),
        top: 0,
    })
}

fn parse_line(line: &str, ln: usize) -> Result<Header, ParseError> {
    let body = line
        .trim_start()
        .strip_prefix('@')
        .ok_or_else(|| field_err(ln, 1, "a ClassBench rule starts with `@`"))?;
    let offset = line.len() - body.len();
    let mut cols = Vec::new();
    let mut at = offset;
    for f in body.split('\t') {
        cols.push((f, at + 1));
        at += f.len() + 1;
    }
    let cols: Vec<(&str, usize)> = cols
        .into_iter()
        .filter(|(f, _)| !f.trim().is_empty())
        .collect();
    if cols.len() < 5 {
        return Err(field_err(ln, 1, "expected 5 or 6 tab-separated fields"));
    }
    let src = prefix(cols[0].0).ok_or_else(|| field_err(ln, cols[0].1, "invalid source prefix"))?;
    let dst =
        prefix(cols[1].0).ok_or_else(|| field_err(ln, cols[1].1, "invalid destination prefix"))?;
    let sport =
        range(cols[2].0).ok_or_else(|| field_err(ln, cols[2].1, "invalid source port range"))?;
    let dport = range(cols[3].0)
        .ok_or_else(|| field_err(ln, cols[3].1, "invalid destination port range"))?;
    let (pv, pm) = value_mask(cols[4].0)
        .filter(|(v, m)| *v <= 255 && (*m == 0 || *m == 0xff))
        .ok_or_else(|| field_err(ln, cols[4].1, "invalid protocol (0xPP/0xFF or 0x00/0x00)"))?;
    let proto = if pm == 0 {
        ANY_PROTO
    } else {
        Range::exact(pv as u16)
    };
    let (flags, flags_mask) = match cols.get(5) {
        Some((f, col)) => {
            let (v, m) = value_mask(f)
                .filter(|(v, m)| *v <= 0xffff && *m <= 0xffff)
                .ok_or_else(|| field_err(ln, *col, "invalid flags (0xFFFF/0xMMMM)"))?;
            ((v & m) as u16, m as u16)
        }
        None => (0, 0),
    };
    Ok(Header {
        src,
        dst,
        sport,
        dport,
        proto,
        flags,
        flags_mask,
    })
}

/// One trace header and the rule number that generated it, as the trace writes it.
#[derive(Clone, Copy, Debug)]
pub struct TraceEntry {
    pub key: Key,
    pub generator: Option<usize>,
}

/// Parses a trace; a bad line is reported and skipped.
pub fn parse_trace(text: &str) -> (Vec<TraceEntry>, Vec<ParseError>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok());
        let (Some(s), Some(d), Some(sp), Some(dp), Some(p)) =
            (num(0), num(1), num(2), num(3), num(4))
        else {
            errors.push(field_err(
                n + 1,
                1,
                "expected `sip dip sport dport proto [flags] [rule]`",
            ));
            continue;
        };
        if s > u32::MAX as u64 || d > u32::MAX as u64 || sp > 65535 || dp > 65535 || p > 255 {
            errors.push(field_err(n + 1, 1, "field out of range"));
            continue;
        }
        let flags = num(5).unwrap_or(0) as u32 as u16;
        out.push(TraceEntry {
            key: Key {
                src: v4(s as u32),
                dst: v4(d as u32),
                sport: sp as u16,
                dport: dp as u16,
                proto: p as u8,
                flags,
            },
            generator: num(6).map(|g| g as usize),
        });
    }
    (out, errors)
}
