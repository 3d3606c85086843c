//! The reference matcher: obviously correct, slow.
//!
//! Every fast path in this crate is tested against [`Naive`]: at each position of the
//! haystack it compares every pattern whose first byte could match. It has no filters, no
//! hashing and no streaming state, so there is little room for it to be wrong. It is public
//! so that the fuzz target, the benchmark harness and users can cross-check [`Matcher`]
//! against it; do not use it for real work.
//!
//! [`Matcher`]: crate::Matcher

use crate::Match;

/// A naive multi-pattern matcher with the same semantics as [`crate::Matcher`].
#[derive(Clone, Debug, Default)]
pub struct Naive {
    /// `(id, bytes, nocase)` in insertion order.
    patterns: Vec<(u32, Vec<u8>, bool)>,
    /// Patterns indexed by first byte (both cases for a case-insensitive letter).
    by_first: Vec<Vec<usize>>,
}

impl Naive {
    /// An empty reference matcher.
    pub fn new() -> Naive {
        Naive {
            patterns: Vec::new(),
            by_first: vec![Vec::new(); 256],
        }
    }

    /// Adds a pattern. Empty patterns never match.
    pub fn add(&mut self, id: u32, pattern: &[u8], nocase: bool) {
        let index = self.patterns.len();
        self.patterns.push((id, pattern.to_vec(), nocase));
        if let Some(&first) = pattern.first() {
            if nocase && first.is_ascii_alphabetic() {
                self.by_first[first.to_ascii_lowercase() as usize].push(index);
                self.by_first[first.to_ascii_uppercase() as usize].push(index);
            } else {
                self.by_first[first as usize].push(index);
            }
        }
    }

    /// Every occurrence of every pattern, sorted by `(end, pattern, start)`.
    pub fn find_all(&self, haystack: &[u8]) -> Vec<Match> {
        let mut out = Vec::new();
        for start in 0..haystack.len() {
            for &index in &self.by_first[haystack[start] as usize] {
                let (id, pattern, nocase) = &self.patterns[index];
                let Some(text) = haystack.get(start..start + pattern.len()) else {
                    continue;
                };
                let equal = if *nocase {
                    text.eq_ignore_ascii_case(pattern)
                } else {
                    text == pattern.as_slice()
                };
                if equal {
                    out.push(Match {
                        pattern: *id,
                        start,
                        end: start + pattern.len(),
                    });
                }
            }
        }
        sort_matches(&mut out);
        out
    }
}

/// Sorts matches into the canonical order `(end, pattern, start)` used to compare the
/// output of different matchers.
pub fn sort_matches(matches: &mut [Match]) {
    matches.sort_unstable_by_key(|m| (m.end, m.pattern, m.start));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_overlapping_and_case_insensitive() {
        let mut n = Naive::new();
        n.add(0, b"aa", false);
        n.add(1, b"A", true);
        n.add(2, b"", false);
        let got: Vec<(u32, usize, usize)> = n
            .find_all(b"aAa")
            .iter()
            .map(|m| (m.pattern, m.start, m.end))
            .collect();
        assert_eq!(got, vec![(1, 0, 1), (1, 1, 2), (1, 2, 3)]);
        let got = n.find_all(b"aa");
        assert_eq!(got.len(), 3);
        assert_eq!(
            (got[1].pattern, got[1].start, got[1].end),
            (0, 0, 2),
            "aa is found with end 2"
        );
    }
}
