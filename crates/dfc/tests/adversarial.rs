//! Adversarial pattern sets: the shapes that break hash tables, filters and stream
//! boundaries. Each is checked against the naive reference, as a block, as an iterator and
//! as streams cut in several ways.

mod common;

use common::{Config, Rng, build, check, configs};

/// Streams cut every byte, every 7 bytes, every 100 bytes and at one odd place.
fn cut_sets(len: usize) -> Vec<Vec<usize>> {
    let every = |n: usize| {
        (1..)
            .map(move |k| k * n)
            .take_while(|&c| c < len)
            .collect::<Vec<_>>()
    };
    vec![vec![], every(1), every(7), every(100), vec![len / 3]]
}

/// `patterns`, each case-insensitive.
fn nocase(patterns: &[&[u8]]) -> Vec<(Vec<u8>, bool)> {
    patterns.iter().map(|p| (p.to_vec(), true)).collect()
}

fn check_all(patterns: &[(Vec<u8>, bool)], hay: &[u8]) {
    for config in configs() {
        let (m, naive) = build(patterns, &config);
        for cuts in cut_sets(hay.len()) {
            check(&m, &naive, hay, &cuts);
        }
    }
}

#[test]
fn hundreds_of_patterns_sharing_a_prefix() {
    // ET Open has hundreds of "User-Agent: ..." and "HOST" patterns: one hash key.
    let mut rng = Rng(11);
    let mut patterns = Vec::new();
    for k in 0..600 {
        let mut p = b"HOST".to_vec();
        if k % 5 == 0 {
            p.extend_from_slice(b": ");
        }
        p.extend(rng.bytes(k % 23, b"abcXYZ\0.-"));
        patterns.push((p, k % 2 == 0));
    }
    for k in 0..300 {
        let mut p = b"User-Agent: Mozilla/".to_vec();
        p.extend(rng.bytes(k % 40, b"0123456789. ()\0"));
        patterns.push((p, k % 3 == 0));
    }
    let mut hay = Vec::new();
    for k in 0..400 {
        let (p, _) = &patterns[(k * 13) % patterns.len()];
        hay.extend_from_slice(p);
        if k % 3 == 0 {
            hay.extend_from_slice(b"host");
        }
        hay.extend(rng.bytes(k % 4, b"abcXYZ\0"));
    }
    let (m, _) = build(&patterns, &Config::default());
    assert!(
        m.info().nested_nodes > 0,
        "shared prefixes must use the second stage"
    );
    check_all(&patterns, &hay);
}

#[test]
fn second_stage_suffixes_of_every_byte() {
    // More than a bucket's worth of patterns per shared key, whose next byte (the one the
    // second stage filters on) takes every value, NUL and 0xff included.
    let mut patterns = Vec::new();
    for prefix in [&b"\0\0\0\0\0\0\0\0"[..], b"GET /ind", b"ab"] {
        for b in 0..=255u8 {
            let mut p = prefix.to_vec();
            p.push(b);
            if b % 3 == 0 {
                p.push(b.wrapping_mul(7));
            }
            patterns.push((p, b % 2 == 1));
        }
    }
    let mut hay = Vec::new();
    for (k, (p, _)) in patterns.iter().enumerate() {
        if k % 5 != 0 {
            hay.extend_from_slice(p);
        }
    }
    hay.extend_from_slice(&[0; 40]);
    let (m, _) = build(&patterns, &Config::default());
    // The NUL and "GET /ind" prefixes share an 8-byte key; "ab" + byte does not.
    assert_eq!(m.info().nested_nodes, 2);
    check_all(&patterns, &hay);
}

#[test]
fn many_one_byte_patterns() {
    let mut patterns: Vec<(Vec<u8>, bool)> = (0..=255u8).map(|b| (vec![b], b % 2 == 0)).collect();
    patterns.push((b"ab".to_vec(), false));
    patterns.push((b"a".to_vec(), true));
    let hay: Vec<u8> = (0..=255u8)
        .chain(b"aAbB".iter().copied())
        .chain(0..=255u8)
        .collect();
    check_all(&patterns, &hay);
}

#[test]
fn patterns_of_only_nul_bytes() {
    let patterns: Vec<(Vec<u8>, bool)> = (1..=70).map(|n| (vec![0u8; n], n % 2 == 0)).collect();
    let mut hay = vec![0u8; 150];
    hay.push(1);
    hay.extend_from_slice(&[0u8; 30]);
    check_all(&patterns, &hay);
}

#[test]
fn patterns_cut_off_by_the_end_of_the_data() {
    // Patterns whose tails are zero bytes must not match a haystack that ends where their
    // zeros would begin: a search that read past the end as zeros (a padded copy, a
    // zeroed key) would find them there.
    let patterns = nocase(&[
        &b"q\0"[..],
        b"ab\0",
        b"abc\0\0\0\0\0",
        b"xyz\0\0\0\0\0\0\0",
        b"\x01\0\0\0",
        b"Zz\0\0",
        b"0123456789\0",
    ]);
    let mut rng = Rng(29);
    for len in 0..160 {
        let mut hay = rng.bytes(len, b"abcqxyzZ0123456789\0\x01");
        for end in [
            &b"q"[..],
            b"ab",
            b"abc\0\0",
            b"xyz\0",
            b"\x01",
            b"Zz\0",
            b"0123456789",
        ] {
            hay.truncate(len);
            hay.extend_from_slice(end);
            check_all(&patterns, &hay);
        }
    }
}

#[test]
fn nocase_with_non_letters() {
    // Letters fold; the bytes that differ from a letter by the case bit do not.
    let patterns = nocase(&[
        &b"@"[..],
        b"`",
        b"[",
        b"{",
        b"a@b",
        b"A`B",
        b"x[y]z",
        b"X{Y}Z",
        b"\xc1\xe1",
        b"^~",
        b"@@@@@@@@@",
    ]);
    let hay = b"@`[{a@bA`Ba`bx[y]zX{Y}Zx{y}z\xc1\xe1\xe1\xc1^~~^@@@@@@@@@@````````````".to_vec();
    check_all(&patterns, &hay);
    let (m, naive) = build(&patterns, &Config::default());
    assert_eq!(m.count(b"`"), 1);
    assert_eq!(m.count(b"{"), 1);
    assert_eq!(
        naive.find_all(b"\xe1\xc1").len(),
        0,
        "only ASCII letters fold"
    );
    assert_eq!(m.count(b"\xe1\xc1"), 0);
}

#[test]
fn case_variants_of_one_word_as_separate_patterns() {
    // 256 case-sensitive spellings of one 8-letter word share a single folded key.
    let word = b"abcdefgh";
    let patterns: Vec<(Vec<u8>, bool)> = (0..256u32)
        .map(|v| {
            let p: Vec<u8> = word
                .iter()
                .enumerate()
                .map(|(k, &b)| {
                    if v >> k & 1 == 1 {
                        b.to_ascii_uppercase()
                    } else {
                        b
                    }
                })
                .collect();
            (p, false)
        })
        .chain(std::iter::once((word.to_vec(), true)))
        .collect();
    let hay = b"xxABCDEFGHabcdefghAbCdEfGhabcdefgABCDEFGH".to_vec();
    check_all(&patterns, &hay);
}

#[test]
fn patterns_longer_than_a_chunk() {
    let mut rng = Rng(5);
    let long: Vec<u8> = rng.bytes(5000, b"abcd");
    let huge: Vec<u8> = rng.bytes(70_000, b"ab\0");
    let patterns = vec![
        (long.clone(), false),
        (long[..4999].to_vec(), true),
        (long[1..].to_vec(), false),
        (huge.clone(), false),
        (b"ab".to_vec(), false),
    ];
    let mut hay = rng.bytes(100, b"abcd");
    hay.extend_from_slice(&long);
    hay.extend_from_slice(&huge);
    hay.extend_from_slice(&long[..4999]);
    hay.extend_from_slice(&huge[..huge.len() - 1]);
    let (m, naive) = build(&patterns, &Config::default());
    assert_eq!(m.max_pattern_len(), 70_000);
    let want = naive.find_all(&hay);
    for size in [1usize, 99, 1000, 4096, 65_536] {
        let cuts: Vec<usize> = (1..)
            .map(|k| k * size)
            .take_while(|&c| c < hay.len())
            .collect();
        check(&m, &naive, &hay, &cuts);
    }
    assert!(
        want.iter().any(|x| x.pattern == 3),
        "the 70 KB pattern is found"
    );
}

#[test]
fn stream_state_does_not_grow_with_the_data() {
    // A long run keeps a long pattern partially matched at every position: the stream
    // holds one pending comparison per open start (bounded by the pattern length), and no
    // copy of the data, however much is fed.
    let patterns = vec![(vec![b'a'; 3000], false), (b"aaaa".to_vec(), true)];
    let (m, naive) = build(&patterns, &Config::default());
    let hay = vec![b'a'; 200_000];
    let mut s = m.stream();
    let mut n = 0;
    let mut steady = 0;
    for (k, chunk) in hay.chunks(1000).enumerate() {
        s.feed(chunk, |_| n += 1);
        if k == 5 {
            steady = s.held_bytes();
        } else if k > 5 {
            assert!(
                s.held_bytes() <= 2 * steady,
                "held {} after {k} chunks, {steady} at 5",
                s.held_bytes()
            );
        }
    }
    assert!(steady > 0 && steady < 3000 * 100, "held {steady}");
    assert_eq!(n, naive.find_all(&hay).len());
}

#[test]
fn duplicate_patterns_report_every_id() {
    let mut b = dfc::Builder::new();
    b.add(5, "dup", false)
        .add(9, "dup", false)
        .add(2, "DUP", true)
        .add(3, "dUp", true);
    let m = b.build().unwrap();
    assert_eq!(m.distinct_patterns(), 2);
    let mut ids: Vec<u32> = m.find_iter(b"xdupx").map(|x| x.pattern).collect();
    ids.sort();
    assert_eq!(ids, vec![2, 3, 5, 9]);
}

#[test]
fn empty_pattern_and_bad_classes_are_errors() {
    let mut b = dfc::Builder::new();
    b.add(4, "", false);
    assert_eq!(
        b.build().unwrap_err(),
        dfc::BuildError::EmptyPattern { id: 4 }
    );
    for bad in [
        &[][..],
        &[2, 4],
        &[1, 4, 4],
        &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        &[1, 3, 4, 5, 6, 7, 8, 9],
    ] {
        let mut b = dfc::Builder::new();
        b.add(0, "x", false).length_classes(bad);
        assert!(
            matches!(b.build(), Err(dfc::BuildError::InvalidLengthClasses(_))),
            "{bad:?}"
        );
    }
}

#[test]
fn empty_set_and_empty_haystack() {
    let m = dfc::Builder::new().build().unwrap();
    assert_eq!(m.count(b"anything"), 0);
    let mut b = dfc::Builder::new();
    b.add(0, "a", false);
    let m = b.build().unwrap();
    assert_eq!(m.count(b""), 0);
    let mut s = m.stream();
    s.feed(b"", |_| panic!());
    s.feed(b"a", |x| assert_eq!((x.start, x.end), (0, 1)));
}

#[test]
fn auto_filter_choice_switches_to_three_bytes_on_large_long_sets() {
    // 60,000 random patterns of 8 to 40 bytes fill most of the 2-byte filter and little of
    // the 3-byte one, so `DirectFilter::Auto` must choose (and then use) the 3-byte filter.
    let mut rng = Rng(60_000);
    let all: Vec<u8> = (0..=255).collect();
    let patterns: Vec<(Vec<u8>, bool)> = (0..60_000)
        .map(|k| (rng.some_bytes(8, 40, &all), k % 4 == 0))
        .collect();
    let mut hay = rng.bytes(20_000, &all);
    for k in 0..300 {
        hay.extend_from_slice(&patterns[(k * 197) % patterns.len()].0);
        hay.extend(rng.some_bytes(0, 9, &all));
    }
    for vectorized in [true, false] {
        let config = Config {
            vectorized,
            ..Config::default()
        };
        let (m, naive) = build(&patterns, &config);
        assert_eq!(
            m.info().direct_filter_bytes,
            3,
            "Auto keeps the 2-byte filter: {:?}",
            m.info()
        );
        let want = naive.find_all(&hay);
        assert!(want.len() >= 300);
        check(&m, &naive, &hay, &[1, 777, 5000, 5001, hay.len() / 2]);
    }
}

#[test]
fn profile_counts_are_consistent() {
    // Stage counts shrink stage by stage (no second-stage nodes here), and the profile's
    // match count is the search's, on the batched middle and the per-window edges alike.
    let mut rng = Rng(42);
    let patterns: Vec<(Vec<u8>, bool)> = (0..400)
        .map(|_| (rng.some_bytes(2, 12, b"abcdef"), false))
        .collect();
    let (m, _) = build(&patterns, &Config::default());
    assert_eq!(m.info().nested_nodes, 0);
    for len in [10, 100, 5000] {
        let hay = rng.bytes(len, b"abcdefgh");
        let p = m.profile(&hay);
        assert_eq!(p.windows, hay.len());
        assert_eq!(p.matches, m.count(&hay));
        assert!(p.passed_initial <= p.windows, "{p:?}");
        assert!(p.lookups <= p.class_checks, "{p:?}");
        assert!(
            p.class_checks <= p.passed_initial * m.info().classes.len(),
            "{p:?}"
        );
    }
}

/// Long patterns (past the head the verifier compares, 64 bytes) that keep themselves
/// almost matched: runs of one byte, periodic words, nocase variants, a pattern that is
/// a prefix of another, each over texts made of the same material.
#[test]
fn long_periodic_patterns() {
    let a = |n: usize| vec![b'a'; n];
    let mut patterns = vec![
        ([a(65), b"b".to_vec()].concat(), false),
        ([a(100), b"b".to_vec()].concat(), true),
        (a(64), false),
        (a(65), false),
        (a(200), false),
        (b"ab".repeat(50), false),
        ([b"ab".repeat(40), b"aab".to_vec()].concat(), false),
        (b"abcabcabd".repeat(10), true),
        (b"aa".to_vec(), false),
    ];
    patterns.push(([a(130), b"ba".to_vec()].concat(), false));
    let hays: Vec<Vec<u8>> = vec![
        a(1000),
        [a(99), b"b".to_vec()].concat().repeat(8),
        [a(100), b"B".to_vec(), a(200)].concat(),
        b"ab".repeat(300),
        [b"ab".repeat(45), b"aab".to_vec(), b"ab".repeat(45)].concat(),
        b"AbCaBcAbD".repeat(25),
        [
            a(64),
            b"x".to_vec(),
            a(66),
            b"b".to_vec(),
            a(140),
            b"ba".to_vec(),
        ]
        .concat(),
    ];
    for hay in &hays {
        check_all(&patterns, hay);
    }
}

/// The work of a search stays linear in the text when a long pattern is almost matched
/// everywhere: `a` x 100,000 then `b`, over 2 MiB of `a` (22 s before runs, as n x m
/// comparisons), as a block and as a stream; and found when it is there.
#[test]
fn long_patterns_cost_linear_work() {
    let pat = [vec![b'a'; 100_000], b"b".to_vec()].concat();
    let patterns = vec![(pat.clone(), false), (b"zz".to_vec(), false)];
    let (m, _) = build(&patterns, &Config::default());
    let hay = vec![b'a'; 2 << 20];
    let p = m.profile(&hay);
    assert_eq!(p.matches, 0);
    assert!(
        p.compared_bytes <= 4 * hay.len() + 64 * p.candidates,
        "{p:?}"
    );
    assert!(p.compared_bytes <= 200 * hay.len(), "{p:?}");
    let mut with = hay.clone();
    with.extend_from_slice(b"b");
    with.extend_from_slice(&pat);
    let found: Vec<_> = m.find_iter(&with).map(|x| (x.start, x.end)).collect();
    assert_eq!(
        found,
        [
            (with.len() - 2 * pat.len(), with.len() - pat.len()),
            (with.len() - pat.len(), with.len())
        ]
    );
    // In 1 MiB chunks the stream holds no copy of the text, only its bounded state.
    let mut s = m.stream();
    let mut n = 0;
    for chunk in with.chunks(1 << 20) {
        s.feed(chunk, |_| n += 1);
        assert!(s.held_bytes() < 64 << 10, "held {}", s.held_bytes());
    }
    assert_eq!(n, 2);
}
