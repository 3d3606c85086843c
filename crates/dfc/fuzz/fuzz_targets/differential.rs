//! DFC against the naive reference on fuzzer-chosen patterns, haystacks, configurations
//! and chunk splits. Any difference, panic or hang is a finding.
//!
//! Input layout: `[config] [n] n x ([len] [flags] len bytes) [ncuts] ncuts x [cut] haystack`.
#![no_main]

use dfc::naive::{Naive, sort_matches};
use dfc::{Builder, DirectFilter, Match};
use libfuzzer_sys::fuzz_target;

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
}

fuzz_target!(|data: &[u8]| {
    let mut r = Reader(data);
    let Some(config) = r.byte() else { return };
    let Some(n) = r.byte() else { return };
    let classes: &[usize] = match config & 3 {
        0 => &[1, 2, 4, 8],
        1 => &[1],
        2 => &[1, 3, 6],
        _ => &[1, 2, 3, 5, 9, 17],
    };
    let filter = match config >> 2 & 3 {
        0 => DirectFilter::Auto,
        1 => DirectFilter::OneByte,
        2 => DirectFilter::TwoByte,
        _ => DirectFilter::ThreeByte,
    };
    let mut b = Builder::new();
    b.length_classes(classes).direct_filter(filter).vectorized(config & 16 == 0);
    let mut naive = Naive::new();
    for id in 0..n as u32 % 64 {
        let Some(len) = r.byte() else { return };
        let Some(flags) = r.byte() else { return };
        // Long patterns repeat their bytes, so they can still match.
        let len = 1 + len as usize * if flags & 2 != 0 { 9 } else { 1 };
        let Some(seed) = r.take(len.min(1 + (flags >> 2) as usize)) else { return };
        let pattern: Vec<u8> = seed.iter().cycle().take(len).copied().collect();
        b.add(id, &pattern, flags & 1 == 1);
        naive.add(id, &pattern, flags & 1 == 1);
    }
    let Some(ncuts) = r.byte() else { return };
    let Some(raw_cuts) = r.take(ncuts as usize % 8) else { return };
    let hay = r.0;
    let m = b.build().expect("non-empty patterns always build");

    let want = naive.find_all(hay);
    let mut got = Vec::new();
    m.for_each_match(hay, |x| got.push(x));
    sort_matches(&mut got);
    assert_eq!(got, want, "block search");
    let mut it: Vec<Match> = m.find_iter(hay).collect();
    sort_matches(&mut it);
    assert_eq!(it, want, "iterator");

    let mut cuts: Vec<usize> = raw_cuts.iter().map(|&c| c as usize * hay.len() / 255).collect();
    cuts.sort_unstable();
    cuts.push(hay.len());
    let mut s = m.stream();
    let mut streamed = Vec::new();
    let mut start = 0;
    for &cut in &cuts {
        let chunk = &hay[start..cut];
        s.feed(chunk, |x| {
            assert!(x.end > start && x.end <= cut, "{x:?} reported by chunk {start}..{cut}");
            streamed.push(x);
        });
        start = cut;
    }
    sort_matches(&mut streamed);
    assert_eq!(streamed, want, "stream cut at {cuts:?}");
});
