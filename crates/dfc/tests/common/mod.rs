//! Shared helpers: build DFC and the naive reference from one pattern list and compare.
#![allow(dead_code)]

use dfc::naive::{Naive, sort_matches};
use dfc::{Builder, DirectFilter, Match, Matcher};

/// A matcher configuration to test under.
#[derive(Clone, Debug)]
pub struct Config {
    pub classes: Vec<usize>,
    pub filter: DirectFilter,
    /// Whether the SIMD filter loop may be used (it is where the CPU has AVX2).
    pub vectorized: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            classes: dfc::DEFAULT_LENGTH_CLASSES.to_vec(),
            filter: DirectFilter::Auto,
            vectorized: true,
        }
    }
}

/// Configurations that exercise different class splits, filter widths, and the SIMD and
/// scalar filter loops.
pub fn configs() -> Vec<Config> {
    let mut out = Vec::new();
    for classes in [
        vec![1, 2, 4, 8],
        // Four classes of 2+ bytes: 4-bit cells without one-byte patterns, 8-bit with.
        vec![1, 2, 3, 4, 8],
        vec![1],
        vec![1, 3],
        vec![1, 2, 3, 5, 9, 17],
        vec![1, 2, 3, 4, 5, 6, 7, 8],
    ] {
        for filter in [
            DirectFilter::Auto,
            DirectFilter::OneByte,
            DirectFilter::TwoByte,
            DirectFilter::ThreeByte,
        ] {
            for vectorized in [true, false] {
                out.push(Config {
                    classes: classes.clone(),
                    filter,
                    vectorized,
                });
            }
        }
    }
    out
}

pub fn build(patterns: &[(Vec<u8>, bool)], config: &Config) -> (Matcher, Naive) {
    let mut b = Builder::new();
    b.length_classes(&config.classes)
        .direct_filter(config.filter);
    let mut naive = Naive::new();
    for (id, (bytes, nocase)) in patterns.iter().enumerate() {
        b.add(id as u32, bytes, *nocase);
        naive.add(id as u32, bytes, *nocase);
    }
    (b.build().expect("build"), naive)
}

pub fn block_matches(m: &Matcher, hay: &[u8]) -> Vec<Match> {
    let mut got = Vec::new();
    m.for_each_match(hay, |x| got.push(x));
    sort_matches(&mut got);
    got
}

/// Searches `hay` in chunks ending at each of `cuts` (sorted, inside the haystack) and
/// checks that every match is reported by the feed that delivers its last byte.
pub fn stream_matches(m: &Matcher, hay: &[u8], cuts: &[usize]) -> Vec<Match> {
    let mut s = m.stream();
    let mut got = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&hay.len())) {
        let chunk = &hay[start..cut];
        s.feed(chunk, |x| {
            if !chunk.is_empty() {
                assert!(
                    x.end > start && x.end <= cut,
                    "match {x:?} reported by chunk {start}..{cut}"
                );
            }
            got.push(x)
        });
        start = cut;
    }
    assert_eq!(s.offset(), hay.len());
    sort_matches(&mut got);
    got
}

/// Asserts two sorted match lists are equal, describing the first difference briefly
/// (a full dump of a large list would take gigabytes while proptest shrinks).
pub fn assert_same(got: &[Match], want: &[Match], what: &str) {
    if got == want {
        return;
    }
    let first = got
        .iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    let missing: Vec<&Match> = want
        .iter()
        .filter(|m| {
            got.binary_search_by_key(&(m.end, m.pattern, m.start), |g| {
                (g.end, g.pattern, g.start)
            })
            .is_err()
        })
        .take(5)
        .collect();
    let extra: Vec<&Match> = got
        .iter()
        .filter(|m| {
            want.binary_search_by_key(&(m.end, m.pattern, m.start), |g| {
                (g.end, g.pattern, g.start)
            })
            .is_err()
        })
        .take(5)
        .collect();
    panic!(
        "{what}: {} matches, reference {}; first difference at index {first}: got {:?}, want {:?}; missing (first 5) {missing:?}; extra (first 5) {extra:?}",
        got.len(),
        want.len(),
        got.get(first),
        want.get(first),
    );
}

/// Checks the block search, the iterator, the count and a stream split at `cuts`.
pub fn check(m: &Matcher, naive: &Naive, hay: &[u8], cuts: &[usize]) {
    let want = naive.find_all(hay);
    let got = block_matches(m, hay);
    assert_same(&got, &want, "block search");
    let mut iter: Vec<Match> = m.find_iter(hay).collect();
    sort_matches(&mut iter);
    assert_same(&iter, &want, "iterator");
    assert_eq!(m.count(hay), want.len());
    assert_eq!(m.is_match(hay), !want.is_empty());
    let streamed = stream_matches(m, hay, cuts);
    let what = format!(
        "stream cut at {} points (first {:?})",
        cuts.len(),
        &cuts[..cuts.len().min(8)]
    );
    assert_same(&streamed, &want, &what);
}

/// A small deterministic generator (xorshift) for tests that need volume, not shrinking.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Between `lo` and `hi` (inclusive) bytes from `alphabet`.
    pub fn some_bytes(&mut self, lo: usize, hi: usize, alphabet: &[u8]) -> Vec<u8> {
        let n = lo + self.below(hi - lo + 1);
        self.bytes(n, alphabet)
    }
    pub fn bytes(&mut self, n: usize, alphabet: &[u8]) -> Vec<u8> {
        (0..n)
            .map(|_| alphabet[self.below(alphabet.len())])
            .collect()
    }
}
