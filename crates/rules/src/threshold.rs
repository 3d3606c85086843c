//! threshold.config: thresholds, suppressions and rate filters kept outside the rules.
//!
//! One entry per line (a trailing `\` continues it), `#` starts a comment:
//!
//! ```text
//! threshold gen_id 1, sig_id 2002087, type limit, track by_src, count 1, seconds 60
//! event_filter gen_id 1, sig_id 0, type threshold, track by_dst, count 10, seconds 10
//! suppress gen_id 1, sig_id 2009557
//! suppress gen_id 1, sig_id 2009557, track by_either, ip [10.0.0.0/8,$DMZ]
//! rate_filter gen_id 1, sig_id 1000, track by_rule, count 100, seconds 60, new_action alert, timeout 30
//! ```
//!
//! `sig_id 0` means every rule of that generator, and `gen_id 0, sig_id 0` every rule.
//! A bad line is reported with its line number and skipped.

use crate::parse::threshold_fields;
use crate::{Action, AddrExpr, Threshold, Track, Vars};

/// Which address of an alert a suppression looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuppressTrack {
    BySrc,
    ByDst,
    ByEither,
}

#[derive(Clone, Debug, PartialEq)]
pub enum GlobalKind {
    /// No alerts for the rule, or none for the given addresses.
    Suppress(Option<(SuppressTrack, AddrExpr)>),
    /// Replaces the rule's own `threshold` (`threshold` and `event_filter` lines).
    Threshold(Threshold),
    /// After `count` matches within `seconds` (per tracked key), the rule's action
    /// becomes `new_action` for `timeout` seconds.
    RateFilter {
        track: Track,
        count: u64,
        seconds: u64,
        new_action: Action,
        timeout: u64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct GlobalEntry {
    pub gid: u32,
    /// 0: every rule of `gid` (or of every generator when `gid` is 0 too).
    pub sid: u32,
    pub kind: GlobalKind,
}

impl GlobalEntry {
    /// Whether the entry applies to the rule `gid:sid`.
    pub fn applies(&self, gid: u32, sid: u32) -> bool {
        (self.gid == 0 && self.sid == 0) || (self.gid == gid && (self.sid == 0 || self.sid == sid))
    }
}

/// A parsed threshold.config.
#[derive(Clone, Debug, Default)]
pub struct ThresholdConfig {
    pub entries: Vec<GlobalEntry>,
    /// `line: reason` for every line skipped.
    pub errors: Vec<String>,
}

impl ThresholdConfig {
    pub fn parse(text: &str, vars: &Vars) -> ThresholdConfig {
        let mut out = ThresholdConfig::default();
        let mut pending = String::new();
        let mut first_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if pending.is_empty() {
                first_line = i + 1;
            }
            if let Some(cont) = line.strip_suffix('\\') {
                pending.push_str(cont);
                pending.push(' ');
                continue;
            }
            pending.push_str(line);
            let entry = std::mem::take(&mut pending);
            if entry.trim().is_empty() {
                continue;
            }
            match parse_entry(entry.trim(), vars) {
                Ok(e) => out.entries.push(e),
                Err(m) => out.errors.push(format!("{first_line}: {m}")),
            }
        }
        out
    }
}

/// Splits at commas outside brackets.
fn fields(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

fn parse_entry(line: &str, vars: &Vars) -> Result<GlobalEntry, String> {
    let (word, rest) = line
        .split_once(char::is_whitespace)
        .ok_or("expected 'threshold', 'event_filter', 'suppress' or 'rate_filter'")?;
    let mut gid = None;
    let mut sid = None;
    let mut others: Vec<(&str, &str)> = Vec::new();
    for f in fields(rest) {
        let (k, v) = f
            .split_once(char::is_whitespace)
            .ok_or_else(|| format!("expected 'name value', got '{f}'"))?;
        let v = v.trim();
        match k {
            "gen_id" => gid = Some(v.parse::<u32>().map_err(|_| "bad gen_id")?),
            "sig_id" => sid = Some(v.parse::<u32>().map_err(|_| "bad sig_id")?),
            _ => others.push((k, v)),
        }
    }
    let (Some(gid), Some(sid)) = (gid, sid) else {
        return Err("needs gen_id and sig_id".into());
    };
    let get = |name: &str| others.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let kind = match word {
        "threshold" | "event_filter" => {
            let text: Vec<String> = others.iter().map(|(k, v)| format!("{k} {v}")).collect();
            GlobalKind::Threshold(threshold_fields(&text.join(","), false)?)
        }
        "suppress" => match (get("track"), get("ip")) {
            (None, None) => GlobalKind::Suppress(None),
            (Some(t), Some(ip)) => {
                let track = match t {
                    "by_src" => SuppressTrack::BySrc,
                    "by_dst" => SuppressTrack::ByDst,
                    "by_either" => SuppressTrack::ByEither,
                    _ => return Err(format!("suppress: unknown track '{t}'")),
                };
                let addr = vars.address(ip).map_err(|e| format!("suppress: ip: {e}"))?;
                GlobalKind::Suppress(Some((track, addr)))
            }
            _ => return Err("suppress: track and ip go together".into()),
        },
        "rate_filter" => {
            let need = |n: &str| get(n).ok_or_else(|| format!("rate_filter: needs {n}"));
            let num = |n: &str| -> Result<u64, String> {
                need(n)?
                    .parse()
                    .map_err(|_| format!("rate_filter: bad {n}"))
            };
            let track = match need("track")? {
                "by_src" => Track::BySrc,
                "by_dst" => Track::ByDst,
                "by_rule" => Track::ByRule,
                "by_both" => Track::ByBoth,
                t => return Err(format!("rate_filter: unknown track '{t}'")),
            };
            let new_action = match need("new_action")? {
                "alert" => Action::Alert,
                "drop" => Action::Drop,
                "reject" => Action::Reject,
                "pass" => Action::Pass,
                a => return Err(format!("rate_filter: unknown new_action '{a}'")),
            };
            GlobalKind::RateFilter {
                track,
                count: num("count")?,
                seconds: num("seconds")?,
                new_action,
                timeout: num("timeout")?,
            }
        }
        w => return Err(format!("unknown entry '{w}'")),
    };
    Ok(GlobalEntry { gid, sid, kind })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ThresholdKind;

    #[test]
    fn parses_every_kind_and_reports_bad_lines() {
        let mut vars = Vars::default();
        vars.set_address("S", "[10.0.0.0/8,20.0.0.0/16]");
        let c = ThresholdConfig::parse(
            "# comment\n\
             threshold gen_id 1, sig_id 5, type limit, track by_flow, count 1, seconds 60\n\
             suppress gen_id 1, sig_id 6\n\
             suppress gen_id 1, sig_id 7, track by_either, ip $S\n\
             suppress gen_id 1, sig_id 8, track by_src, ip [1.2.3.4,5.6.7.0/24]\n\
             rate_filter gen_id 1, sig_id 9, track by_dst, count 1, seconds 60, \\\n  new_action alert, timeout 1000\n\
             suppress gen_id 1, sig_id 10, track by_src\n\
             bogus gen_id 1, sig_id 1\n",
            &vars,
        );
        assert_eq!(c.entries.len(), 5, "{:?}", c.errors);
        assert!(matches!(
            c.entries[0].kind,
            GlobalKind::Threshold(Threshold {
                kind: ThresholdKind::Limit,
                track: Track::ByFlow,
                count: 1,
                ..
            })
        ));
        assert_eq!(c.entries[1].kind, GlobalKind::Suppress(None));
        let GlobalKind::Suppress(Some((SuppressTrack::ByEither, a))) = &c.entries[2].kind else {
            panic!("{:?}", c.entries[2])
        };
        assert!(a.matches("20.0.1.1".parse().unwrap()));
        assert!(!a.matches("20.1.0.1".parse().unwrap()));
        let GlobalKind::Suppress(Some((SuppressTrack::BySrc, a))) = &c.entries[3].kind else {
            panic!()
        };
        assert!(a.matches("5.6.7.9".parse().unwrap()));
        assert!(matches!(
            c.entries[4].kind,
            GlobalKind::RateFilter {
                new_action: Action::Alert,
                timeout: 1000,
                ..
            }
        ));
        assert_eq!(c.errors.len(), 2, "{:?}", c.errors);
        assert!(c.errors[0].starts_with("8: "), "{:?}", c.errors);
        assert!(c.errors[1].starts_with("9: "), "{:?}", c.errors);
        assert!(c.entries[1].applies(1, 6) && !c.entries[1].applies(1, 7));
    }
}
