//! Rule pcres: the `regex` crate for what it accepts (linear time), PCRE2 with JIT and a
//! match limit for the rest (lookaround, backreferences, possessive quantifiers).

use netsieve_rules::Pcre;

/// A compiled rule pcre.
pub enum Regex {
    Linear(regex::bytes::Regex),
    Pcre2(pcre2::bytes::Regex),
}

impl std::fmt::Debug for Regex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Regex::Linear(r) => write!(f, "Linear({})", r.as_str()),
            Regex::Pcre2(r) => write!(f, "Pcre2({})", r.as_str()),
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
    /// Compiles `p`: with the `regex` crate if it accepts the pattern, else PCRE2.
    pub fn new(p: &Pcre) -> Result<Regex, String> {
        let flags = inline_flags(p);
        let anchor = if p.has('A') { "^" } else { "" };
        // Byte-oriented, as PCRE without UTF mode: \xNN is a byte, \w is ASCII.
        // Flags to set, then `-u` (flags after the dash are cleared).
        let linear = format!("(?{flags}-u){anchor}(?:{})", p.pattern);
        if (!p.has('E') || !p.pattern.contains('$'))
            && let Ok(r) = regex::bytes::RegexBuilder::new(&linear)
                .size_limit(4 << 20)
                .dfa_size_limit(2 << 20)
                .build()
        {
            return Ok(Regex::Linear(r));
        }
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
            .map(Regex::Pcre2)
            .map_err(|e| format!("pcre '{}': {e}", p.pattern))
    }

    pub fn is_linear(&self) -> bool {
        matches!(self, Regex::Linear(_))
    }

    /// The first match in `hay` starting at or after `start`: (start, end). A PCRE2
    /// error (match limit hit) counts as no match.
    pub fn find_at(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        if start > hay.len() {
            return None;
        }
        match self {
            Regex::Linear(r) => r
                .find(&hay[start..])
                .map(|m| (start + m.start(), start + m.end())),
            Regex::Pcre2(r) => match r.find(&hay[start..]) {
                Ok(Some(m)) => Some((start + m.start(), start + m.end())),
                _ => None,
            },
        }
    }
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
}
