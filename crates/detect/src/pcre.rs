//! Rule pcres: the `regex` crate for what it accepts (linear time), PCRE2 with JIT and a
//! match limit for the rest (lookaround, backreferences, possessive quantifiers).

use std::sync::{Arc, OnceLock};

use netsieve_rules::Pcre;

use crate::once::OnceEach;

/// The pcres a build has read, by pattern and flags: a rule set repeats many (ET Open
/// 2024: 7,679 pcres, 3,658 distinct), and reading one is costly. The rules that write
/// the same one share it, and so its compiled form. Filled by the threads that compile
/// the rules; lives as long as the build.
#[derive(Default)]
pub struct Regexes(OnceEach<String, Result<Arc<Regex>, String>>);

impl Regexes {
    /// [`Regex::new`] of `p`, read once per pattern and flags.
    pub fn get(&self, p: &Pcre) -> Result<Arc<Regex>, String> {
        // Flags are letters (the parser refuses others): the first `/` ends them.
        let key = format!("{}/{}", p.flags, p.pattern);
        self.0.get(key.as_str(), || Regex::new(p).map(Arc::new))
    }
}

/// A rule pcre. Which engine runs it is decided at load (and a pattern neither accepts
/// is an error then); the `regex` crate's compilation, most of the load time of a large
/// rule set, waits for the first packet that evaluates the pcre, so the many pcres of
/// rules that never get that far cost nothing.
pub struct Regex {
    /// For the `regex` crate: its form of the pattern, and the pcre (for PCRE2, should
    /// the `regex` crate refuse it when compiling).
    linear: Option<Box<(String, Pcre)>>,
    compiled: OnceLock<Compiled>,
}

enum Compiled {
    Linear(regex::bytes::Regex),
    Pcre2(pcre2::bytes::Regex),
    /// Accepted by the `regex` crate's parser but over its size limits when compiled,
    /// and refused by PCRE2: never matches.
    Never,
}

impl std::fmt::Debug for Regex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.linear, self.compiled.get()) {
            (Some(l), _) => write!(f, "Linear({})", l.0),
            (None, Some(Compiled::Pcre2(r))) => write!(f, "Pcre2({})", r.as_str()),
            _ => write!(f, "Never"),
        }
    }
}

/// The inline flags for the pattern's modifier letters.
fn inline_flags(p: &Pcre) -> String {
    let mut f = String::new();
    for (c, g) in [('i', 'i'), ('s', 's'), ('m', 'm'), ('x', 'x'), ('G', 'U')] {
        if p.has(c) {
            f.push(g);
        }
    }
    f
}

impl Regex {
    /// Reads `p`: the `regex` crate runs it if its parser accepts the pattern (compiled
    /// on first use), else PCRE2 (compiled now, so that an error is reported at load).
    pub fn new(p: &Pcre) -> Result<Regex, String> {
        let flags = inline_flags(p);
        let anchor = if p.has('A') { "^" } else { "" };
        // Byte-oriented, as PCRE without UTF mode: \xNN is a byte, \w is ASCII.
        // Flags to set, then `-u` (flags after the dash are cleared).
        let linear = format!("(?{flags}-u){anchor}(?:{})", p.pattern);
        if (!p.has('E') || !p.pattern.contains('$'))
            && regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(&linear)
                .is_ok()
        {
            return Ok(Regex {
                linear: Some(Box::new((linear, p.clone()))),
                compiled: OnceLock::new(),
            });
        }
        let compiled = OnceLock::new();
        let _ = compiled.set(Compiled::Pcre2(pcre2_regex(p)?));
        Ok(Regex {
            linear: None,
            compiled,
        })
    }

    pub fn is_linear(&self) -> bool {
        self.linear.is_some()
    }

    /// The compiled form, compiling it on first use.
    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            let Some(l) = self.linear.as_deref() else {
                return Compiled::Never;
            };
            match regex::bytes::RegexBuilder::new(&l.0)
                .size_limit(4 << 20)
                .dfa_size_limit(2 << 20)
                .build()
            {
                Ok(r) => Compiled::Linear(r),
                Err(_) => pcre2_regex(&l.1).map_or(Compiled::Never, Compiled::Pcre2),
            }
        })
    }

    /// The first match in `hay` starting at or after `start`: (start, end). A PCRE2
    /// error (match limit hit) counts as no match.
    pub fn find_at(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        if start > hay.len() {
            return None;
        }
        match self.compiled() {
            Compiled::Linear(r) => r
                .find(&hay[start..])
                .map(|m| (start + m.start(), start + m.end())),
            Compiled::Pcre2(r) => match r.find(&hay[start..]) {
                Ok(Some(m)) => Some((start + m.start(), start + m.end())),
                _ => None,
            },
            Compiled::Never => None,
        }
    }

    /// As [`Regex::find_at`], with every group's span (group 0 the whole match).
    pub fn captures_at(&self, hay: &[u8], start: usize) -> Option<Vec<Option<(usize, usize)>>> {
        let rest = hay.get(start..)?;
        let at = |m: Option<(usize, usize)>| m.map(|(s, e)| (start + s, start + e));
        match self.compiled() {
            Compiled::Linear(r) => {
                let c = r.captures(rest)?;
                Some(
                    (0..c.len())
                        .map(|i| at(c.get(i).map(|m| (m.start(), m.end()))))
                        .collect(),
                )
            }
            Compiled::Pcre2(r) => {
                let c = r.captures(rest).ok()??;
                Some(
                    (0..c.len())
                        .map(|i| at(c.get(i).map(|m| (m.start(), m.end()))))
                        .collect(),
                )
            }
            Compiled::Never => None,
        }
    }

    /// Each group's name, group 0 first (`None` for unnamed ones).
    pub fn group_names(&self) -> Vec<Option<String>> {
        let own = |n: Option<&str>| n.map(str::to_string);
        match self.compiled() {
            Compiled::Linear(r) => r.capture_names().map(own).collect(),
            Compiled::Pcre2(r) => r
                .capture_names()
                .iter()
                .map(|n| own(n.as_deref()))
                .collect(),
            Compiled::Never => Vec::new(),
        }
    }
}

/// `p` compiled by PCRE2, with JIT where available.
fn pcre2_regex(p: &Pcre) -> Result<pcre2::bytes::Regex, String> {
    let anchor = if p.has('A') { "^" } else { "" };
    let mut b = pcre2::bytes::RegexBuilder::new();
    b.caseless(p.has('i'))
        .dotall(p.has('s'))
        .multi_line(p.has('m'))
        .extended(p.has('x'))
        .jit_if_available(true);
    let pat = if p.has('G') {
        format!("(?U){anchor}(?:{})", p.pattern)
    } else {
        format!("{anchor}(?:{})", p.pattern)
    };
    let pat = if p.has('E') { format!("{pat}\\z") } else { pat };
    b.build(&pat)
        .map_err(|e| format!("pcre '{}': {e}", p.pattern))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pc(pattern: &str, flags: &str) -> Pcre {
        Pcre {
            pattern: pattern.into(),
            flags: flags.into(),
            negated: false,
            relative: flags.contains('R'),
            column: 0,
            captures: Vec::new(),
        }
    }

    #[test]
    fn linear_and_fallback_agree_on_simple_patterns() {
        let r = Regex::new(&pc(r"a\x00b.c", "s")).unwrap();
        assert!(r.is_linear());
        assert_eq!(r.find_at(b"xxa\x00b\nc", 0), Some((2, 7)));
        let r = Regex::new(&pc(r"(a)\1", "")).unwrap();
        assert!(!r.is_linear());
        assert_eq!(r.find_at(b"xaa", 0), Some((1, 3)));
        let r = Regex::new(&pc(r"foo(?!bar)", "i")).unwrap();
        assert!(!r.is_linear());
        assert_eq!(r.find_at(b"FOObar FOOx", 0), Some((7, 10)));
    }

    #[test]
    fn compiled_on_first_use_and_pcre2_when_over_the_size_limit() {
        let r = Regex::new(&pc("a+b", "")).unwrap();
        assert!(r.compiled.get().is_none(), "not compiled at load");
        assert_eq!(r.find_at(b"xaab", 0), Some((1, 4)));
        assert!(matches!(r.compiled.get(), Some(Compiled::Linear(_))));
        // The regex crate's parser accepts it, its compiler refuses it (size limit):
        // PCRE2 runs it.
        let r = Regex::new(&pc("[a-z]{60000}", "")).unwrap();
        assert!(r.is_linear());
        assert_eq!(r.find_at(&[b'a'; 60001], 1), Some((1, 60001)));
        assert!(matches!(r.compiled.get(), Some(Compiled::Pcre2(_))));
        // Neither engine accepts it: an error at load.
        assert!(Regex::new(&pc("a(", "")).is_err());
    }

    #[test]
    fn anchored_starts_at_the_start_offset() {
        let r = Regex::new(&pc("ab", "A")).unwrap();
        assert_eq!(r.find_at(b"xab", 0), None);
        assert_eq!(r.find_at(b"xab", 1), Some((1, 3)));
    }

    #[test]
    fn non_utf8_bytes() {
        let r = Regex::new(&pc(r"\xff\xfe[^\x00]+", "")).unwrap();
        assert_eq!(r.find_at(b"\x00\xff\xfeAB\x00", 0), Some((1, 5)));
    }

    #[test]
    fn rules_with_the_same_pcre_share_one() {
        let rx = Regexes::default();
        let a = rx.get(&pc("ab+c", "i")).unwrap();
        let b = rx.get(&pc("ab+c", "i")).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        // Other flags are another pcre.
        let c = rx.get(&pc("ab+c", "")).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(a.find_at(b"xABBC", 0), Some((1, 5)));
        assert_eq!(c.find_at(b"xABBC", 0), None);
        // An error is the same error each time.
        let e = rx.get(&pc("a(", "")).unwrap_err();
        assert_eq!(rx.get(&pc("a(", "")).unwrap_err(), e);
    }
}
