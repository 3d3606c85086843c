//! Differential property tests: DFC against the naive reference.
//!
//! Small alphabets make matches, overlaps and case collisions common; every configuration
//! of length classes and direct-filter width is exercised; streams are cut at random
//! points and, for short haystacks, at every possible set of points.

mod common;

use common::{Config, Rng, build, check, configs, stream_matches};
use dfc::DirectFilter;
use dfc::naive::Naive;
use proptest::prelude::*;

/// Bytes chosen to collide: letters in both cases, the non-letters that differ from a
/// letter pair by the case bit (`@`/`` ` ``, `[`/`{`), NUL and space (which differ by it
/// too, and share a table key), and 0xff.
const TRICKY: &[u8] = b"aAbB@`[{\0 \xff";

fn pattern(alphabet: &'static [u8], max_len: usize) -> impl Strategy<Value = (Vec<u8>, bool)> {
    (
        prop::collection::vec(prop::sample::select(alphabet), 1..=max_len),
        any::<bool>(),
    )
}

/// A haystack made of pattern copies (some with letter cases flipped), pattern prefixes
/// and noise, so that matches are dense.
fn dense_haystack(
    patterns: &[(Vec<u8>, bool)],
    picks: &[(usize, u8, u8)],
    alphabet: &[u8],
) -> Vec<u8> {
    let mut hay = Vec::new();
    for &(k, how, noise) in picks {
        let (p, _) = &patterns[k % patterns.len()];
        match how % 4 {
            0 => hay.extend_from_slice(p),
            1 => hay.extend(p.iter().map(|b| {
                if b.is_ascii_alphabetic() {
                    b ^ 0x20
                } else {
                    *b
                }
            })),
            2 => hay.extend_from_slice(&p[..p.len() - 1]),
            _ => hay.push(alphabet[noise as usize % alphabet.len()]),
        }
    }
    hay
}

fn cuts_from(len: usize, raw: &[usize]) -> Vec<usize> {
    let mut cuts: Vec<usize> = raw.iter().map(|c| c % (len + 1)).collect();
    cuts.sort_unstable();
    cuts
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Few short patterns over a tiny alphabet, every configuration.
    #[test]
    fn small_sets_tricky_bytes(
        patterns in prop::collection::vec(pattern(TRICKY, 10), 1..40),
        picks in prop::collection::vec((0usize..1000, 0u8..4, any::<u8>()), 0..60),
        raw_cuts in prop::collection::vec(0usize..1000, 0..6),
        config in prop::sample::select(configs()),
    ) {
        let (m, naive) = build(&patterns, &config);
        let hay = dense_haystack(&patterns, &picks, TRICKY);
        let cuts = cuts_from(hay.len(), &raw_cuts);
        check(&m, &naive, &hay, &cuts);
    }

    /// Random bytes, longer patterns, the default configuration.
    #[test]
    fn random_bytes(
        patterns in prop::collection::vec((prop::collection::vec(any::<u8>(), 1..40), any::<bool>()), 1..200),
        noise in prop::collection::vec(any::<u8>(), 0..2000),
        picks in prop::collection::vec((0usize..1000, 0u8..3, any::<u8>()), 0..30),
        raw_cuts in prop::collection::vec(0usize..5000, 0..10),
    ) {
        let (m, naive) = build(&patterns, &Config::default());
        let mut hay = noise.clone();
        hay.extend(dense_haystack(&patterns, &picks, &noise.iter().copied().chain([0]).collect::<Vec<_>>()));
        hay.extend_from_slice(&noise[..noise.len() / 2]);
        let cuts = cuts_from(hay.len(), &raw_cuts);
        check(&m, &naive, &hay, &cuts);
    }

    /// Long patterns (past the 64-byte head, verified by runs) over a two-letter
    /// alphabet, so that they overlap, repeat and almost match everywhere.
    #[test]
    fn long_patterns_two_letters(
        patterns in prop::collection::vec(pattern(b"aA", 160), 1..12),
        picks in prop::collection::vec((0usize..1000, 0u8..4, any::<u8>()), 0..30),
        raw_cuts in prop::collection::vec(0usize..5000, 0..8),
        config in prop::sample::select(configs()),
    ) {
        let (m, naive) = build(&patterns, &config);
        let hay = dense_haystack(&patterns, &picks, b"aA");
        let cuts = cuts_from(hay.len(), &raw_cuts);
        check(&m, &naive, &hay, &cuts);
    }

    /// The search never looks outside the slice it is given: a haystack cut out of a larger
    /// buffer full of pattern bytes finds only what lies inside it.
    #[test]
    fn subslice_is_all_it_sees(
        patterns in prop::collection::vec(pattern(b"abAB", 8), 1..20),
        picks in prop::collection::vec((0usize..1000, 0u8..2, any::<u8>()), 1..40),
        lo in 0usize..200,
        len in 0usize..200,
        config in prop::sample::select(configs()),
    ) {
        let (m, naive) = build(&patterns, &config);
        let buffer = dense_haystack(&patterns, &picks, b"abAB");
        let lo = lo.min(buffer.len());
        let hi = (lo + len).min(buffer.len());
        check(&m, &naive, &buffer[lo..hi], &[]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Large random sets, 1 to 50,000 patterns of 1 to 300 bytes (log-uniform count),
    /// against random and pattern-dense text.
    #[test]
    fn large_sets(
        log_count in 0.0f64..=(50_000f64).ln(),
        seed in any::<u64>(),
        alphabet_size in prop::sample::select(vec![4usize, 16, 256]),
        nocase_share in 0u64..=100,
    ) {
        let count = log_count.exp().round().clamp(1.0, 50_000.0) as usize;
        let alphabet: Vec<u8> = if alphabet_size == 256 {
            (0..=255).collect()
        } else {
            b"aBcD\0\xff@`[{xYz09-"[..alphabet_size].to_vec()
        };
        let mut rng = Rng(seed | 1);
        let patterns: Vec<(Vec<u8>, bool)> = (0..count)
            .map(|_| {
                // Mostly short, sometimes up to 300 bytes, as in real rule sets.
                let len = match rng.below(10) {
                    0..=5 => 1 + rng.below(12),
                    6..=8 => 1 + rng.below(40),
                    _ => 1 + rng.below(300),
                };
                (rng.bytes(len, &alphabet), rng.below(100) < nocase_share as usize)
            })
            .collect();
        let (m, naive) = build(&patterns, &Config::default());
        let mut hay = rng.bytes(4000, &alphabet);
        for _ in 0..200 {
            let (p, _) = &patterns[rng.below(count)];
            hay.extend_from_slice(p);
            hay.extend(rng.some_bytes(0, 4, &alphabet));
        }
        let cuts: Vec<usize> = {
            let mut c: Vec<usize> = (0..20).map(|_| rng.below(hay.len() + 1)).collect();
            c.sort_unstable();
            c
        };
        check(&m, &naive, &hay, &cuts);
    }
}

/// Every way of cutting short haystacks into chunks (all 2^(n-1) compositions).
#[test]
fn every_chunk_split_of_short_haystacks() {
    let patterns: Vec<(Vec<u8>, bool)> = vec![
        (b"a".to_vec(), false),
        (b"ab".to_vec(), true),
        (b"aba".to_vec(), false),
        (b"bAbA".to_vec(), true),
        (b"abababab".to_vec(), false),
        (b"babababab".to_vec(), true),
        (b"\0a".to_vec(), false),
        (b"b@".to_vec(), true),
    ];
    let mut rng = Rng(0x5eed);
    for config in configs() {
        let (m, naive) = build(&patterns, &config);
        for n in [0usize, 1, 2, 5, 9, 12] {
            for _ in 0..3 {
                let hay = rng.bytes(n, b"abAB\0@`");
                let want = naive.find_all(&hay);
                for split in 0u32..(1 << n.saturating_sub(1)) {
                    let cuts: Vec<usize> = (1..n).filter(|k| split >> (k - 1) & 1 == 1).collect();
                    common::assert_same(
                        &stream_matches(&m, &hay, &cuts),
                        &want,
                        &format!("{config:?} {hay:?} {cuts:?}"),
                    );
                }
            }
        }
    }
}

/// Every single cut point and every fixed chunk size over a longer, dense haystack.
#[test]
fn every_cut_point_and_chunk_size() {
    let mut rng = Rng(77);
    let patterns: Vec<(Vec<u8>, bool)> = (0..300)
        .map(|k| (rng.bytes(1 + k % 37, b"abcABC"), k % 3 == 0))
        .collect();
    let (m, naive) = build(&patterns, &Config::default());
    let mut hay = Vec::new();
    for k in 0..60 {
        hay.extend_from_slice(&patterns[(k * 7) % 300].0);
    }
    let want = naive.find_all(&hay);
    assert!(!want.is_empty());
    for cut in 0..=hay.len() {
        common::assert_same(
            &stream_matches(&m, &hay, &[cut]),
            &want,
            &format!("cut at {cut}"),
        );
    }
    for size in 1..=70 {
        let cuts: Vec<usize> = (1..)
            .map(|k| k * size)
            .take_while(|&c| c < hay.len())
            .collect();
        common::assert_same(
            &stream_matches(&m, &hay, &cuts),
            &want,
            &format!("chunks of {size}"),
        );
    }
}

/// The naive reference itself agrees with a brute-force check on small inputs. The
/// brute force spells case folding out by hand, independently of the std helpers.
#[test]
#[allow(clippy::manual_ignore_case_cmp)]
fn naive_agrees_with_brute_force() {
    let mut rng = Rng(3);
    for _ in 0..200 {
        let pats: Vec<(Vec<u8>, bool)> = (0..5)
            .map(|_| (rng.some_bytes(1, 3, b"aA@`"), rng.below(2) == 0))
            .collect();
        let hay = rng.some_bytes(0, 29, b"aA@`");
        let mut naive = Naive::new();
        let mut brute = Vec::new();
        for (id, (p, nc)) in pats.iter().enumerate() {
            naive.add(id as u32, p, *nc);
            for s in 0..hay.len() {
                if s + p.len() <= hay.len() {
                    let t = &hay[s..s + p.len()];
                    let eq = t.iter().zip(p).all(|(a, b)| {
                        a == b
                            || (*nc
                                && a.is_ascii_alphabetic()
                                && a.to_ascii_lowercase() == b.to_ascii_lowercase())
                    });
                    if eq {
                        brute.push(dfc::Match {
                            pattern: id as u32,
                            start: s,
                            end: s + p.len(),
                        });
                    }
                }
            }
        }
        dfc::naive::sort_matches(&mut brute);
        assert_eq!(naive.find_all(&hay), brute);
    }
}

#[test]
fn filter_widths_agree_on_large_sets() {
    let mut rng = Rng(99);
    let patterns: Vec<(Vec<u8>, bool)> = (0..3000)
        .map(|_| {
            (
                rng.some_bytes(1, 20, b"abcdefgABCDEFG012"),
                rng.below(2) == 0,
            )
        })
        .collect();
    let hay = rng.bytes(30_000, b"abcdefgABCDEFG012");
    let mut reference = None;
    for filter in [
        DirectFilter::OneByte,
        DirectFilter::TwoByte,
        DirectFilter::ThreeByte,
    ] {
        let config = Config {
            filter,
            ..Config::default()
        };
        let (m, naive) = build(&patterns, &config);
        assert_eq!(m.info().direct_filter_bytes, filter_bytes(filter));
        let got = common::block_matches(&m, &hay);
        let want = reference.get_or_insert_with(|| naive.find_all(&hay));
        common::assert_same(&got, want, &format!("{filter:?}"));
    }
}

fn filter_bytes(f: DirectFilter) -> usize {
    match f {
        DirectFilter::OneByte => 1,
        DirectFilter::ThreeByte => 3,
        _ => 2,
    }
}
