//! Loading rule files: lines, continuations, errors per rule, a summary by reason.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use rayon::prelude::*;

use crate::parse::{ParseError, parse_rule};
use crate::rule::Rule;
use crate::vars::Vars;

/// A rule that did not load: where it is and why.
#[derive(Clone, Debug)]
pub struct RuleError {
    pub file: String,
    pub line: usize,
    pub error: ParseError,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file,
            self.line,
            self.error.column(),
            self.error.message()
        )
    }
}

impl std::error::Error for RuleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Rules loaded from one or more files, and the ones that failed.
#[derive(Debug, Default)]
pub struct Loaded {
    pub rules: Vec<Rule>,
    pub errors: Vec<RuleError>,
    /// Rule texts not to parse, by [`text_hash`]: their (gid, sid).
    known: HashMap<u64, (u32, u32)>,
    /// Each rule keeps its text ([`Rule::text`]).
    keep_texts: bool,
}

impl Loaded {
    /// A loader that does not parse the rules whose texts are `known` (by
    /// [`text_hash`], with their gid and sid): each comes out as a stand-in
    /// ([`Rule::known`](Rule#structfield.known)) for whoever knew it, a reload that keeps what it compiled.
    pub fn knowing(known: HashMap<u64, (u32, u32)>) -> Loaded {
        Loaded {
            known,
            ..Loaded::default()
        }
    }

    /// Each rule read from now on keeps its text ([`Rule::text`], for alerts' `rule`).
    pub fn keep_texts(&mut self) {
        self.keep_texts = true;
    }

    /// Failures counted by reason, most frequent first.
    pub fn error_summary(&self) -> Vec<(String, usize)> {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for e in &self.errors {
            *m.entry(e.error.category()).or_default() += 1;
        }
        let mut v: Vec<(String, usize)> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// Parses rules from `text` (named `file` in errors). Lines ending in `\` continue
    /// on the next; `#` starts a comment line (a commented-out rule is not loaded). The
    /// rules are parsed on rayon's threads (one per core), and come out in file order.
    pub fn add_text(&mut self, file: &str, text: &str, vars: &Vars) {
        let texts = rule_texts(text);
        let (known, keep) = (&self.known, self.keep_texts);
        let start = self.rules.len();
        let failed = std::sync::Mutex::new(Vec::new());
        // Each rule is parsed straight into its place in `rules`, on rayon's threads: no
        // rule is moved or held twice (parsing into a vector of results first doubled
        // the peak memory of loading, then cost a serial pass to move them). A rule that
        // does not parse leaves a stand-in, removed below.
        self.rules
            .par_extend(texts.par_iter().enumerate().map(|(i, (line, t))| {
                let h = text_hash(t);
                let parsed = match known.get(&h) {
                    Some(&(gid, sid)) => Ok(Rule::stand_in(h, gid, sid)),
                    None => parse_rule(t, vars).map(|r| Rule {
                        text_hash: h,
                        text: keep.then(|| t.trim_end().into()),
                        ..r
                    }),
                };
                match parsed {
                    Ok(r) => Rule {
                        file: file.to_string(),
                        line: *line,
                        ..r
                    },
                    Err(error) => {
                        let e = RuleError {
                            file: file.to_string(),
                            line: *line,
                            error,
                        };
                        failed.lock().expect("not poisoned").push((start + i, e));
                        Rule::stand_in(0, 0, 0)
                    }
                }
            }));
        let mut failed = failed.into_inner().expect("not poisoned");
        failed.sort_unstable_by_key(|(i, _)| *i);
        let at: Vec<usize> = failed.iter().map(|(i, _)| *i).collect();
        remove_at(&mut self.rules, &at);
        self.errors.extend(failed.into_iter().map(|(_, e)| e));
    }

    /// Reads and parses a rule file. An unreadable file is an `Err`; bad rules in it are
    /// recorded in `errors`.
    pub fn add_file(&mut self, path: &Path, vars: &Vars) -> Result<(), String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // Checked as UTF-8 first: much faster than the lossy reading, which only a file
        // with bad bytes needs.
        let text = match std::str::from_utf8(&bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(&bytes),
        };
        self.add_text(&path.display().to_string(), &text, vars);
        Ok(())
    }

    /// Keeps one rule per (gid, sid), as Suricata does: the first, unless a later one
    /// has a higher `rev`, which replaces it. Each rule dropped is reported as an error.
    ///
    /// In place: a set without duplicates (the usual case) moves no rule.
    pub fn dedup(&mut self) {
        use std::collections::hash_map::Entry;
        let rules = &mut self.rules;
        let mut at: HashMap<(u32, u32), usize, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(rules.len(), Default::default());
        let mut dropped: Vec<usize> = Vec::new();
        for i in 0..rules.len() {
            let first = match at.entry((rules[i].gid, rules[i].sid)) {
                Entry::Vacant(e) => {
                    e.insert(i);
                    continue;
                }
                Entry::Occupied(e) => *e.get(),
            };
            // The replacement takes the first's place; the rule it replaces is dropped.
            if rules[i].rev > rules[first].rev {
                rules.swap(first, i);
            }
            let r = &rules[i];
            self.errors.push(RuleError {
                file: r.file.clone(),
                line: r.line,
                error: ParseError::duplicate_sid(r.gid, r.sid),
            });
            dropped.push(i);
        }
        remove_at(rules, &dropped);
    }
}

/// The hash [`Rule::text_hash`] holds: of the text as written, trailing space aside.
pub fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.trim_end().hash(&mut h);
    h.finish()
}

/// Removes the rules at indices `at` (ascending), keeping the others in order; moves
/// nothing when `at` is empty.
fn remove_at(rules: &mut Vec<Rule>, at: &[usize]) {
    if at.is_empty() {
        return;
    }
    let mut i = 0;
    let mut next = at.iter().peekable();
    rules.retain(|_| {
        let keep = next.peek() != Some(&&i);
        if !keep {
            next.next();
        }
        i += 1;
        keep
    });
}

/// The rule texts of a file with their first line numbers: blank and comment lines
/// skipped, lines ending in `\` joined to the next. A rule on one line (nearly all) is
/// borrowed from `text`, not copied.
fn rule_texts(text: &str) -> Vec<(usize, Cow<'_, str>)> {
    let mut texts = Vec::new();
    let mut pending = String::new();
    let mut start_line = 0;
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let t = line.trim();
        if pending.is_empty() {
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            start_line = line_no;
        }
        if let Some(cont) = t.strip_suffix('\\') {
            pending.push_str(cont);
            continue;
        }
        if pending.is_empty() {
            texts.push((start_line, Cow::Borrowed(t)));
        } else {
            pending.push_str(t);
            texts.push((start_line, Cow::Owned(std::mem::take(&mut pending))));
        }
    }
    if !pending.is_empty() {
        texts.push((start_line, Cow::Owned(pending)));
    }
    texts
}

/// A classtype: its description and default priority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Classtype {
    pub description: String,
    pub priority: u8,
}

/// `classification.config`: classtype name to description and priority.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Classifications(pub HashMap<String, Classtype>);

/// The classification table bundled with netsieve (from Emerging Threats Open; see
/// `data/NOTICE.md`).
pub const DEFAULT_CLASSIFICATION: &str = include_str!("../data/classification.config");

impl Classifications {
    /// Parses `config classification: name,description,priority` lines; other lines
    /// are ignored.
    pub fn parse(text: &str) -> Classifications {
        let mut m = HashMap::new();
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix("config classification:") else {
                continue;
            };
            let parts: Vec<&str> = rest.split(',').map(str::trim).collect();
            if parts.len() < 3 {
                continue;
            }
            let Ok(priority) = parts[parts.len() - 1].parse() else {
                continue;
            };
            let description = parts[1..parts.len() - 1].join(",");
            m.insert(
                parts[0].to_string(),
                Classtype {
                    description,
                    priority,
                },
            );
        }
        Classifications(m)
    }

    pub fn bundled() -> Classifications {
        Classifications::parse(DEFAULT_CLASSIFICATION)
    }
}

/// `reference.config`: a reference system's name (`reference:cve,2014-0160;`) to the URL
/// its identifiers follow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct References(HashMap<String, String>);

/// The reference systems netsieve knows without a `reference.config`: the common ones,
/// with the URLs their identifiers are published under.
const DEFAULT_REFERENCES: &str = "\
config reference: bugtraq https://www.securityfocus.com/bid/
config reference: bid https://www.securityfocus.com/bid/
config reference: cve https://cve.mitre.org/cgi-bin/cvename.cgi?name=
config reference: et https://doc.emergingthreats.net/
config reference: etpro https://doc.emergingthreatspro.com/
config reference: exploitdb https://www.exploit-db.com/exploits/
config reference: md5 https://www.threatexpert.com/report.aspx?md5=
config reference: msft https://technet.microsoft.com/security/bulletin/
config reference: nessus https://www.tenable.com/plugins/nessus/
config reference: url https://
";

impl References {
    /// Parses `config reference: name url` lines; other lines are ignored.
    pub fn parse(text: &str) -> References {
        let mut m = HashMap::new();
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix("config reference:") else {
                continue;
            };
            let mut parts = rest.split_whitespace();
            if let (Some(name), Some(url)) = (parts.next(), parts.next()) {
                m.insert(name.to_ascii_lowercase(), url.to_string());
            }
        }
        References(m)
    }

    pub fn bundled() -> References {
        References::parse(DEFAULT_REFERENCES)
    }

    /// A rule's reference (`system,id`) as a URL: the system's URL and the id; an id
    /// that is a URL already stands as it is. `None` for a system not in the table.
    pub fn url(&self, reference: &str) -> Option<String> {
        let (system, id) = reference.split_once(',')?;
        let id = id.trim();
        if id.contains("://") {
            return Some(id.to_string());
        }
        let base = self.0.get(&system.trim().to_ascii_lowercase())?;
        Some(format!("{base}{id}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The first way `dedup` was written, moving every rule into a new vector: the
    /// reference the in-place one is held to. Returns the kept rules' lines and the
    /// dropped ones', in the order reported.
    fn dedup_reference(rules: Vec<Rule>) -> (Vec<usize>, Vec<usize>) {
        let mut at: HashMap<(u32, u32), usize> = HashMap::new();
        let mut keep: Vec<Rule> = Vec::new();
        let mut dropped_lines = Vec::new();
        for r in rules {
            let dropped = match at.get(&(r.gid, r.sid)) {
                None => {
                    at.insert((r.gid, r.sid), keep.len());
                    keep.push(r);
                    continue;
                }
                Some(&i) if r.rev > keep[i].rev => std::mem::replace(&mut keep[i], r),
                Some(_) => r,
            };
            dropped_lines.push(dropped.line);
        }
        (keep.iter().map(|r| r.line).collect(), dropped_lines)
    }

    #[test]
    fn rules_and_errors_come_out_in_file_order() {
        // Enough rules for rayon to split them between threads, every seventh bad.
        let text: String = (1..=2000)
            .map(|i| match i % 7 {
                0 => format!("alert tcp any any => any any (sid:{i};)\n"),
                _ => format!("alert tcp any any -> any any (sid:{i};)\n"),
            })
            .collect();
        let mut l = Loaded::default();
        l.add_text("t.rules", &text, &Vars::default());
        let good: Vec<usize> = (1..=2000).filter(|i| i % 7 != 0).collect();
        let bad: Vec<usize> = (1..=2000).filter(|i| i % 7 == 0).collect();
        let lines: Vec<usize> = l.rules.iter().map(|r| r.line).collect();
        let sids: Vec<usize> = l.rules.iter().map(|r| r.sid as usize).collect();
        assert_eq!((&lines, &sids), (&good, &good));
        assert!(l.rules.iter().all(|r| r.file == "t.rules"));
        let err_lines: Vec<usize> = l.errors.iter().map(|e| e.line).collect();
        assert_eq!(err_lines, bad);
    }

    proptest! {
        #[test]
        fn dedup_keeps_and_drops_what_the_reference_does(
            ids in proptest::collection::vec((1u32..3, 1u32..6, 0u32..4), 0..40)
        ) {
            let text: String = ids
                .iter()
                .map(|(gid, sid, rev)| {
                    format!("alert tcp any any -> any any (gid:{gid}; sid:{sid}; rev:{rev};)\n")
                })
                .collect();
            let mut l = Loaded::default();
            l.add_text("t.rules", &text, &Vars::default());
            prop_assert_eq!(l.rules.len(), ids.len());
            let want = dedup_reference(l.rules.clone());
            l.dedup();
            let kept: Vec<usize> = l.rules.iter().map(|r| r.line).collect();
            let dropped: Vec<usize> = l.errors.iter().map(|e| e.line).collect();
            prop_assert_eq!((kept, dropped), want);
        }
    }
}
