//! The matchers under comparison, behind one interface.
//!
//! Every engine searches each payload separately (packet mode, as an IDS does) and
//! reports, per payload, the number of matches and an order-independent checksum of their
//! `(pattern id, end)` pairs, so engines are checked to agree on *which* matches they find,
//! not only how many. All report every occurrence, overlapping ones included.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

/// A compiled pattern set.
pub trait Searcher {
    /// Searches one haystack; returns `(matches, checksum)`, or why the engine gave up.
    fn search(&mut self, haystack: &[u8]) -> Result<(u64, u64), String>;
    /// Every match as `(pattern id, end)`, sorted: to explain a disagreement.
    fn matches(&mut self, haystack: &[u8]) -> Vec<(u32, u64)>;
    /// Heap memory in bytes, as the engine reports it.
    fn heap_bytes(&self) -> usize;
}

/// A way of compiling pattern sets.
pub trait Engine {
    fn name(&self) -> String;
    /// Compiles `(bytes, nocase)` patterns, ids being their indices; `Err` says why the
    /// engine cannot take this set (for instance case-insensitive patterns).
    fn build(&self, patterns: &[(Vec<u8>, bool)]) -> Result<Box<dyn Searcher>, String>;
}

/// Mixes one match into a checksum; summing makes the order irrelevant.
#[inline(always)]
pub fn mix(id: u64, end: u64) -> u64 {
    (id + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ end.wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
}

/// This crate's DFC, with a chosen initial filter.
pub struct Dfc(pub dfc::DirectFilter);

impl Engine for Dfc {
    fn name(&self) -> String {
        match self.0 {
            dfc::DirectFilter::Auto => "dfc".into(),
            dfc::DirectFilter::OneByte => "dfc 1B DF".into(),
            dfc::DirectFilter::TwoByte => "dfc 2B DF".into(),
            dfc::DirectFilter::ThreeByte => "dfc 3B DF".into(),
        }
    }

    fn build(&self, patterns: &[(Vec<u8>, bool)]) -> Result<Box<dyn Searcher>, String> {
        let mut b = dfc::Builder::new();
        b.direct_filter(self.0);
        for (id, (p, nocase)) in patterns.iter().enumerate() {
            b.add(id as u32, p, *nocase);
        }
        Ok(Box::new(b.build().map_err(|e| e.to_string())?))
    }
}

impl Searcher for dfc::Matcher {
    fn search(&mut self, haystack: &[u8]) -> Result<(u64, u64), String> {
        let (mut n, mut sum) = (0u64, 0u64);
        self.for_each_match(haystack, |m| {
            n += 1;
            sum = sum.wrapping_add(mix(m.pattern as u64, m.end as u64));
        });
        Ok((n, sum))
    }

    fn matches(&mut self, haystack: &[u8]) -> Vec<(u32, u64)> {
        let mut v: Vec<(u32, u64)> = self
            .find_iter(haystack)
            .map(|m| (m.pattern, m.end as u64))
            .collect();
        v.sort_unstable();
        v
    }

    fn heap_bytes(&self) -> usize {
        dfc::Matcher::heap_bytes(self)
    }
}

/// The `aho-corasick` crate. It has no per-pattern case flag, so a mixed set becomes two
/// automata (case-sensitive, and ASCII-case-insensitive) searched one after the other:
/// what a user of the crate would do.
pub struct AhoCorasickCrate {
    /// `None` lets the crate choose (its default); `Some(DFA)` forces the DFA.
    pub kind: Option<AhoCorasickKind>,
}

struct AcSearcher {
    parts: Vec<(AhoCorasick, Vec<u32>)>,
}

impl Engine for AhoCorasickCrate {
    fn name(&self) -> String {
        match self.kind {
            None => "aho-corasick".into(),
            Some(k) => format!("aho-corasick {k:?}"),
        }
    }

    fn build(&self, patterns: &[(Vec<u8>, bool)]) -> Result<Box<dyn Searcher>, String> {
        let mut parts = Vec::new();
        for nocase in [false, true] {
            let ids: Vec<u32> = (0..patterns.len() as u32)
                .filter(|&i| patterns[i as usize].1 == nocase)
                .collect();
            if ids.is_empty() {
                continue;
            }
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .ascii_case_insensitive(nocase)
                .kind(self.kind)
                .build(ids.iter().map(|&i| &patterns[i as usize].0))
                .map_err(|e| e.to_string())?;
            parts.push((ac, ids));
        }
        Ok(Box::new(AcSearcher { parts }))
    }
}

impl Searcher for AcSearcher {
    fn search(&mut self, haystack: &[u8]) -> Result<(u64, u64), String> {
        let (mut n, mut sum) = (0u64, 0u64);
        for (ac, ids) in &self.parts {
            for m in ac.find_overlapping_iter(haystack) {
                n += 1;
                sum = sum.wrapping_add(mix(ids[m.pattern().as_usize()] as u64, m.end() as u64));
            }
        }
        Ok((n, sum))
    }

    fn matches(&mut self, haystack: &[u8]) -> Vec<(u32, u64)> {
        let mut v = Vec::new();
        for (ac, ids) in &self.parts {
            v.extend(
                ac.find_overlapping_iter(haystack)
                    .map(|m| (ids[m.pattern().as_usize()], m.end() as u64)),
            );
        }
        v.sort_unstable();
        v
    }

    fn heap_bytes(&self) -> usize {
        self.parts
            .iter()
            .map(|(ac, ids)| ac.memory_usage() + ids.len() * 4)
            .sum()
    }
}

/// The `daachorse` crate (double-array Aho-Corasick). Case-sensitive sets only; it rejects
/// duplicates, so equal patterns are merged and each reports all its ids.
pub struct Daachorse;

struct DaachorseSearcher {
    pma: daachorse::DoubleArrayAhoCorasick<u32>,
    /// For each distinct pattern, the ids it stands for.
    ids: Vec<Vec<u32>>,
}

impl Engine for Daachorse {
    fn name(&self) -> String {
        "daachorse".into()
    }

    fn build(&self, patterns: &[(Vec<u8>, bool)]) -> Result<Box<dyn Searcher>, String> {
        if patterns.iter().any(|p| p.1) {
            return Err("case-insensitive patterns are not supported".into());
        }
        let mut index: std::collections::HashMap<&[u8], u32> = std::collections::HashMap::new();
        let mut ids: Vec<Vec<u32>> = Vec::new();
        let mut distinct: Vec<(&[u8], u32)> = Vec::new();
        for (id, (p, _)) in patterns.iter().enumerate() {
            let k = *index.entry(p.as_slice()).or_insert_with(|| {
                ids.push(Vec::new());
                distinct.push((p.as_slice(), (ids.len() - 1) as u32));
                (ids.len() - 1) as u32
            });
            ids[k as usize].push(id as u32);
        }
        let pma =
            daachorse::DoubleArrayAhoCorasick::with_values(distinct).map_err(|e| e.to_string())?;
        Ok(Box::new(DaachorseSearcher { pma, ids }))
    }
}

impl Searcher for DaachorseSearcher {
    fn search(&mut self, haystack: &[u8]) -> Result<(u64, u64), String> {
        let (mut n, mut sum) = (0u64, 0u64);
        for m in self.pma.find_overlapping_iter(haystack) {
            for &id in &self.ids[m.value() as usize] {
                n += 1;
                sum = sum.wrapping_add(mix(id as u64, m.end() as u64));
            }
        }
        Ok((n, sum))
    }

    fn matches(&mut self, haystack: &[u8]) -> Vec<(u32, u64)> {
        let mut v = Vec::new();
        for m in self.pma.find_overlapping_iter(haystack) {
            v.extend(
                self.ids[m.value() as usize]
                    .iter()
                    .map(|&id| (id, m.end() as u64)),
            );
        }
        v.sort_unstable();
        v
    }

    fn heap_bytes(&self) -> usize {
        self.pma.heap_bytes()
            + self
                .ids
                .iter()
                .map(|v| 24 + v.capacity() * 4)
                .sum::<usize>()
    }
}

/// Every engine available in this build, DFC first.
pub fn all() -> Vec<Box<dyn Engine>> {
    #[allow(unused_mut)]
    let mut v: Vec<Box<dyn Engine>> = vec![
        Box::new(Dfc(dfc::DirectFilter::Auto)),
        Box::new(AhoCorasickCrate { kind: None }),
        Box::new(AhoCorasickCrate {
            kind: Some(AhoCorasickKind::DFA),
        }),
        Box::new(Daachorse),
    ];
    #[cfg(feature = "hyperscan")]
    v.push(Box::new(crate::hs::Hyperscan));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every engine agrees with the naive reference on a small mixed set.
    #[test]
    fn engines_agree_with_the_reference() {
        let patterns: Vec<(Vec<u8>, bool)> = vec![
            (b"he".to_vec(), false),
            (b"she".to_vec(), true),
            (b"his".to_vec(), false),
            (b"hers".to_vec(), false),
            (b"a".to_vec(), false),
            (b"\0\x01".to_vec(), false),
            (b"he".to_vec(), false),
        ];
        let hay = b"ushers SHE said a \0\x01 his hers HE".as_slice();
        let mut naive = dfc::naive::Naive::new();
        for (id, (p, nc)) in patterns.iter().enumerate() {
            naive.add(id as u32, p, *nc);
        }
        let want = naive.find_all(hay);
        let want_sum = want.iter().fold(0u64, |s, m| {
            s.wrapping_add(mix(m.pattern as u64, m.end as u64))
        });
        let cs: Vec<(Vec<u8>, bool)> = patterns.iter().map(|(p, _)| (p.clone(), false)).collect();
        let mut naive_cs = dfc::naive::Naive::new();
        for (id, (p, _)) in cs.iter().enumerate() {
            naive_cs.add(id as u32, p, false);
        }
        let want_cs = naive_cs.find_all(hay).len() as u64;
        for e in all() {
            match e.build(&patterns) {
                Ok(mut s) => assert_eq!(
                    s.search(hay),
                    Ok((want.len() as u64, want_sum)),
                    "{}",
                    e.name()
                ),
                Err(_) => {
                    let mut s = e.build(&cs).expect("case-sensitive set builds");
                    assert_eq!(s.search(hay).unwrap().0, want_cs, "{}", e.name());
                }
            }
        }
    }
}
