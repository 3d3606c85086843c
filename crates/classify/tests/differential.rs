//! The fast path and the hybrid classifier against the linear reference.

use netsieve_classify::fast::{Algorithm, FastPath, NONE};
use netsieve_classify::hybrid::{Hybrid, Strategy, Trace};
use netsieve_classify::linear::{Linear, Verdict};
use netsieve_classify::rule::*;
use netsieve_classify::{classbench, iptables};
use std::path::PathBuf;

fn data_dir() -> Option<PathBuf> {
    let d = std::env::var_os("NETSIEVE_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    if d.join("classbench/acl1_1k").exists() {
        Some(d)
    } else if std::env::var_os("NETSIEVE_REQUIRE_DATA").is_some() {
        panic!("ClassBench data not found under {}", d.display());
    } else {
        eprintln!("ClassBench data not found under {}; skipped", d.display());
        None
    }
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn in_range(&mut self, r: Range) -> u16 {
        r.lo + self.below(r.hi as u64 - r.lo as u64 + 1) as u16
    }
    fn in_prefix(&mut self, p: Prefix) -> u128 {
        let free = !mask(p.len);
        let r = (self.next() as u128) << 64 | self.next() as u128;
        p.addr | (r & free)
    }
}

/// A header inside rule `h` most of the time, or with one field pushed out of it, so the
/// first match lands on many different rules and on none.
fn key_near(h: &Header, rng: &mut Rng) -> Key {
    let mut k = Key {
        src: rng.in_prefix(h.src),
        dst: rng.in_prefix(h.dst),
        sport: rng.in_range(h.sport),
        dport: rng.in_range(h.dport),
        proto: rng.in_range(h.proto) as u8,
        flags: (rng.next() as u16 & !h.flags_mask) | h.flags,
    };
    match rng.below(8) {
        0 => k.src = v4(rng.next() as u32),
        1 => k.dport = rng.next() as u16,
        2 => k.proto = [1, 6, 17, 47][rng.below(4) as usize],
        3 => k.flags = rng.next() as u16,
        _ => {}
    }
    k
}

/// Both fast-path algorithms (the bit vectors where they apply) against linear.
fn check_set(name: &str, set: &RuleSet, keys: &[Key]) -> usize {
    let entries: Vec<(u32, Header)> = set
        .rules
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.header.iter().map(move |h| (i as u32, *h)))
        .collect();
    let lin = Linear::new(set);
    let want: Vec<Option<usize>> = keys.iter().map(|k| lin.classify_key(k)).collect();
    let matched = want.iter().filter(|w| w.is_some()).count();
    assert!(matched > 0);
    let mut algorithms = 0;
    for algorithm in Algorithm::ALL {
        let Some(fast) = FastPath::build_with(entries.iter().copied(), algorithm) else {
            continue;
        };
        algorithms += 1;
        for (k, w) in keys.iter().zip(&want) {
            let got = fast.lookup(k);
            let got = (got != NONE).then_some(got as usize);
            assert_eq!(got, *w, "{name} ({}): {k:?}", fast.stats().algorithm);
        }
        let mut batch = vec![0u32; keys.len()];
        fast.lookup_batch(keys, &mut batch);
        for ((k, w), got) in keys.iter().zip(&want).zip(&batch) {
            let got = (*got != NONE).then_some(*got as usize);
            assert_eq!(got, *w, "{name} ({}, batch): {k:?}", fast.stats().algorithm);
        }
        // Small sets take the plain loop in `lookup_batch`; the grouped one is checked
        // here on every set.
        if let FastPath::TupleSpace(t) = &fast {
            let mut grouped = vec![0u32; keys.len()];
            t.lookup_grouped(keys, &mut grouped);
            assert_eq!(grouped, batch, "{name} (tuple space, grouped)");
        }
        let s = fast.stats();
        eprintln!(
            "{name} {}: {} rules, {} tables, {} KiB, {} keys, {matched} matched",
            s.algorithm,
            set.rules.len(),
            s.tables,
            s.heap_bytes / 1024,
            keys.len()
        );
    }
    assert!(algorithms > 0);
    algorithms
}

#[test]
fn fast_path_equals_linear_on_classbench() {
    let Some(d) = data_dir() else { return };
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for name in [
        "acl1_1k", "fw1_1k", "ipc1_1k", "acl2_1k", "fw3_1k", "ipc2_1k",
    ] {
        let text = std::fs::read_to_string(d.join("classbench").join(name)).unwrap();
        let (set, errors) = classbench::parse(&text, name);
        assert!(errors.is_empty(), "{name}: {errors:?}");
        let keys: Vec<Key> = (0..20_000)
            .map(|_| {
                let r = &set.rules[rng.below(set.rules.len() as u64) as usize];
                key_near(&r.header[0], &mut rng)
            })
            .collect();
        check_set(name, &set, &keys);
    }
    for name in ["acl1_10k", "fw1_10k", "ipc1_10k"] {
        let text = std::fs::read_to_string(d.join("classbench").join(name)).unwrap();
        let (set, errors) = classbench::parse(&text, name);
        assert!(errors.is_empty(), "{name}: {errors:?}");
        let trace =
            std::fs::read_to_string(d.join("classbench").join(format!("{name}_trace"))).unwrap();
        let (trace, errors) = classbench::parse_trace(&trace);
        assert!(errors.is_empty());
        let keys: Vec<Key> = trace.iter().step_by(20).map(|t| t.key).collect();
        check_set(name, &set, &keys);
    }
}

/// Random rule sets with deliberately awkward shapes: many equal tuples (full buckets),
/// wide and narrow ranges, IPv6 and IPv4 mixed.
#[test]
fn fast_path_equals_linear_on_random_sets() {
    let mut rng = Rng(0xfeed_beef_0000_0042);
    for round in 0..30 {
        let n = [1, 2, 10, 100, 600][round % 5];
        let mut rules: Vec<Rule> = (0..n).map(|_| random_rule(&mut rng, false)).collect();
        // Every other round IPv4 only, so the bit vectors apply (one IPv6 header anywhere
        // sends the whole set to tuple space).
        if round % 2 == 1 {
            for h in rules.iter_mut().flat_map(|r| r.header.iter_mut()) {
                for p in [&mut h.src, &mut h.dst] {
                    if p.len < 96 || p.addr >> 32 != 0xffff {
                        *p = Prefix::new(v4(0x0a00_0000 | rng.below(4) as u32), 96 + 24);
                    }
                }
            }
        }
        let set = RuleSet {
            rules,
            policy: Action::Drop,
        };
        let keys: Vec<Key> = (0..3000)
            .map(|_| {
                let r = &set.rules[rng.below(n as u64) as usize];
                let h = r.header[rng.below(r.header.len() as u64) as usize];
                key_near(&h, &mut rng)
            })
            .collect();
        let algorithms = check_set(&format!("random {round}"), &set, &keys);
        if round % 2 == 1 {
            assert_eq!(
                algorithms, 3,
                "round {round}: the bit vectors and RFC should apply"
            );
        }
    }
}

fn random_header(rng: &mut Rng) -> Header {
    // Few distinct values, so prefixes nest and buckets fill.
    let a = |rng: &mut Rng| v4(0x0a00_0000 | (rng.below(4) as u32) << 8 | rng.below(4) as u32);
    let plen = |rng: &mut Rng| [0u8, 8, 16, 24, 30, 32][rng.below(6) as usize];
    let range = |rng: &mut Rng| match rng.below(4) {
        0 => ANY_PORT,
        1 => Range::exact(rng.below(4) as u16 + 80),
        2 => Range::new(1024, 65535),
        _ => {
            let lo = rng.below(100) as u16;
            Range::new(lo, lo + rng.below(50) as u16)
        }
    };
    let v6 = rng.below(10) == 0;
    let (src, dst) = if v6 {
        let p = |rng: &mut Rng| {
            Prefix::new(
                0x2001_0db8u128 << 96 | rng.below(4) as u128,
                [0u8, 32, 64, 126, 128][rng.below(5) as usize],
            )
        };
        (p(rng), p(rng))
    } else {
        let s = Prefix::new(a(rng), 96 + plen(rng));
        let d = Prefix::new(a(rng), 96 + plen(rng));
        (s, d)
    };
    let (flags, flags_mask) = if rng.below(5) == 0 {
        (0x02, 0x12)
    } else {
        (0, 0)
    };
    Header {
        src,
        dst,
        sport: range(rng),
        dport: range(rng),
        proto: match rng.below(7) {
            0 | 1 => ANY_PROTO,
            2 | 3 => Range::exact(6),
            4 | 5 => Range::exact(17),
            _ => {
                let lo = rng.below(20) as u16;
                Range::new(lo, lo + rng.below(30) as u16)
            }
        },
        flags,
        flags_mask,
    }
}

fn random_complex(rng: &mut Rng, stateful: bool) -> Complex {
    match rng.below(if stateful { 7 } else { 4 }) {
        0 => Complex::String(StringMatch::new(
            [b"GET".as_slice(), b"evil", b"\x00\x01"][rng.below(3) as usize].to_vec(),
            rng.below(30) as usize,
            [65535, 40, 60][rng.below(3) as usize],
            rng.below(2) == 0,
            rng.below(5) == 0,
        )),
        1 => Complex::Length {
            range: Range::new(40, 40 + rng.below(60) as u16),
            negate: rng.below(3) == 0,
        },
        2 => Complex::Ttl {
            op: [TtlOp::Eq, TtlOp::Lt, TtlOp::Gt][rng.below(3) as usize],
            value: 60 + rng.below(8) as u8,
        },
        3 => Complex::State {
            bits: 1 + rng.below(15) as u8,
            negate: rng.below(4) == 0,
        },
        4 => Complex::Nth {
            every: 1 + rng.below(4) as u32,
            packet: 0,
        },
        5 => Complex::Limit {
            per_sec: 0.5 + rng.below(4) as f64,
            burst: 1 + rng.below(3) as u32,
        },
        _ => Complex::Random { probability: 0.5 },
    }
}

fn random_rule(rng: &mut Rng, complex: bool) -> Rule {
    let alts = if rng.below(6) == 0 { 2 } else { 1 };
    Rule {
        header: (0..alts).map(|_| random_header(rng)).collect(),
        complex: if complex {
            (0..1 + rng.below(2))
                .map(|_| random_complex(rng, true))
                .collect()
        } else {
            Vec::new()
        },
        action: [Action::Accept, Action::Drop, Action::Reject][rng.below(3) as usize],
        origin: String::new(),
        text: String::new(),
        chain: Vec::new(),
        top: 0,
    }
}

struct Pkt {
    key: Key,
    bytes: Vec<u8>,
    ttl: u8,
    state: CtState,
    time: f64,
}

fn random_packet(rules: &[Rule], rng: &mut Rng, i: usize) -> Pkt {
    let r = &rules[rng.below(rules.len() as u64) as usize];
    let h = r.header[rng.below(r.header.len() as u64) as usize];
    let mut bytes = vec![0u8; 20 + rng.below(80) as usize];
    for b in bytes.iter_mut() {
        *b = rng.next() as u8;
    }
    if rng.below(2) == 0 {
        let at = rng.below(bytes.len() as u64 - 4) as usize;
        let w: &[u8] = [b"GET".as_slice(), b"EvIl", b"\x00\x01"][rng.below(3) as usize];
        bytes[at..at + w.len()].copy_from_slice(w);
    }
    Pkt {
        key: key_near(&h, rng),
        bytes,
        ttl: 58 + rng.below(12) as u8,
        state: [
            CtState::New,
            CtState::Established,
            CtState::Related,
            CtState::Invalid,
        ][rng.below(4) as usize],
        time: i as f64 * 0.3,
    }
}

fn view(p: &Pkt) -> Packet<'_> {
    Packet {
        key: p.key,
        ip: &p.bytes,
        len: p.bytes.len() as u16,
        ttl: p.ttl,
        icmp_type: None,
        state: p.state,
        time: p.time,
        iif: "",
        oif: "",
    }
}

/// Complex rules (stateful ones included) at random positions, random inserts and
/// deletes between packets, foreground and background rebuilds: every strategy gives
/// every packet the linear verdict.
#[test]
fn hybrid_equals_linear_across_updates() {
    for strategy in [Strategy::Full, Strategy::Cut, Strategy::Interval] {
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        let mut shunted = 0u64;
        let mut fast = 0u64;
        for round in 0..12 {
            let n = [5, 40, 300][round % 3];
            let rules: Vec<Rule> = (0..n)
                .map(|_| {
                    let complex = rng.below(20) == 0;
                    random_rule(&mut rng, complex)
                })
                .collect();
            let set = RuleSet {
                rules,
                policy: Action::Drop,
            };
            let mut lin = Linear::new(&set);
            let mut hy = Hybrid::new(&set, strategy);
            let mut pool = set.rules.clone();
            let mut batch = Vec::new();
            for i in 0..4000 {
                match rng.below(60) {
                    0 | 1 => {
                        let complex = rng.below(3) == 0;
                        let r = random_rule(&mut rng, complex);
                        let pos = rng.below(lin.len() as u64 + 1) as usize;
                        lin.insert(pos, r.clone());
                        hy.insert(pos, r.clone());
                        pool.push(r);
                    }
                    2 if !lin.is_empty() => {
                        let pos = rng.below(lin.len() as u64) as usize;
                        lin.delete(pos);
                        assert!(hy.delete(pos));
                    }
                    3 => hy.rebuild_now(),
                    4 => hy.start_rebuild(),
                    5 => {
                        hy.finish_rebuild();
                    }
                    _ => {}
                }
                hy.poll();
                assert_eq!(hy.len(), lin.len());
                // One packet in most steps; a batch of up to 40 in some.
                let n = if rng.below(8) == 0 {
                    1 + rng.below(40) as usize
                } else {
                    1
                };
                let ps: Vec<Pkt> = (0..n)
                    .map(|j| random_packet(&pool, &mut rng, i * 64 + j))
                    .collect();
                let got: Vec<(Verdict, Trace)> = if n == 1 {
                    vec![hy.classify_traced(&view(&ps[0]))]
                } else {
                    let views: Vec<Packet<'_>> = ps.iter().map(view).collect();
                    hy.classify_batch(&views, &mut batch);
                    batch.clone()
                };
                assert_eq!(got.len(), n);
                for (j, (p, (got, tr))) in ps.iter().zip(got).enumerate() {
                    let want = lin.classify(&view(p));
                    assert_eq!(
                        got,
                        want,
                        "{strategy:?} round {round} packet {i}.{j} of {n}: validID {}",
                        hy.valid_id()
                    );
                    if tr.shunted {
                        shunted += 1;
                    } else {
                        fast += 1;
                    }
                }
            }
        }
        eprintln!("{strategy:?}: {fast} decided by the fast path, {shunted} shunted");
        assert!(fast > 1000 && shunted > 1000);
    }
}

/// Thousands of updates and no rebuild asked for: the classifier folds them into its
/// fast path by itself past `AUTO_REBUILD` waiting updates, so a shunted packet's work
/// stays bounded (it grew with every update: 20,000 inserts cost 76 s on 200,000
/// packets), and every verdict still equals linear first-match.
#[test]
fn updates_are_folded_in_by_themselves() {
    for strategy in [Strategy::Cut, Strategy::Interval] {
        let mut rng = Rng(0xfeed_0042);
        let rules: Vec<Rule> = (0..200).map(|_| random_rule(&mut rng, false)).collect();
        let set = RuleSet {
            rules,
            policy: Action::Drop,
        };
        let mut lin = Linear::new(&set);
        let mut hy = Hybrid::new(&set, strategy);
        let mut pool = set.rules.clone();
        for burst in 0..6 {
            for _ in 0..1000 {
                let r = random_rule(&mut rng, false);
                let pos = rng.below(lin.len() as u64 + 1) as usize;
                lin.insert(pos, r.clone());
                hy.insert(pos, r.clone());
                pool.push(r);
            }
            // A rebuild started by itself; wait for it (and any it starts after it).
            while hy.finish_rebuild() {}
            assert!(
                hy.pending_updates() <= netsieve_classify::hybrid::AUTO_REBUILD,
                "{strategy:?} burst {burst}: {} updates wait",
                hy.pending_updates()
            );
            let mut traversed = 0u64;
            for i in 0..2000 {
                let p = random_packet(&pool, &mut rng, burst * 10_000 + i);
                let (got, tr) = hy.classify_traced(&view(&p));
                assert_eq!(
                    got,
                    lin.classify(&view(&p)),
                    "{strategy:?} burst {burst} packet {i}"
                );
                traversed += u64::from(tr.traversed);
            }
            // With the updates folded in, shunted packets walk few rules.
            assert!(
                traversed < 2000 * 300,
                "{strategy:?}: {traversed} rules traversed"
            );
        }
    }
}

/// The interval strategy tests only the complex rules before the fast path's answer.
#[test]
fn interval_traverses_only_rules_above_the_match() {
    let mut rules = Vec::new();
    for i in 0..100u16 {
        let mut h = Header::any_v4();
        h.dport = Range::exact(i);
        rules.push(Rule {
            header: vec![h],
            complex: Vec::new(),
            action: Action::Accept,
            origin: String::new(),
            text: String::new(),
            chain: Vec::new(),
            top: 0,
        });
    }
    let mut complex = Header::any_v4();
    complex.dport = Range::exact(1000);
    let crule = Rule {
        header: vec![complex],
        complex: vec![Complex::Ttl {
            op: TtlOp::Eq,
            value: 1,
        }],
        action: Action::Drop,
        origin: String::new(),
        text: String::new(),
        chain: Vec::new(),
        top: 0,
    };
    rules.insert(50, crule.clone());
    rules.insert(80, crule);
    let set = RuleSet {
        rules,
        policy: Action::Drop,
    };
    let key = |port| Key {
        src: v4(1),
        dst: v4(2),
        sport: 1,
        dport: port,
        proto: 6,
        flags: 0,
    };
    for (strategy, port, want_traversed) in [
        (Strategy::Interval, 10, 0),
        (Strategy::Interval, 60, 1),
        (Strategy::Interval, 90, 2),
        (Strategy::Cut, 90, 43),
        (Strategy::Full, 90, 93),
    ] {
        let mut hy = Hybrid::new(&set, strategy);
        let (v, tr) = hy.classify_traced(&Packet::header_only(key(port)));
        assert_eq!(tr.traversed, want_traversed, "{strategy:?} port {port}");
        assert_eq!(v.action, Action::Accept);
    }
}

#[test]
fn iptables_dumps_parse() {
    let Some(d) = data_dir() else { return };
    let mut total = 0;
    for e in std::fs::read_dir(d.join("iptables")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "xml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let fam = if p.to_string_lossy().contains("ip6") {
            iptables::Family::V6
        } else {
            iptables::Family::V4
        };
        for chain in ["INPUT", "FORWARD", "OUTPUT"] {
            let Ok(r) = iptables::parse(&text, fam, chain, "dump") else {
                continue;
            };
            total += r.set.rules.len();
            for e in &r.errors {
                assert!(e.line() > 0 && e.column() > 0, "{}: {e}", p.display());
            }
        }
    }
    assert!(total > 100, "{total} rules");
}

/// ClassBench sets with complex rules interleaved at random positions, their headers and
/// the 10k traces, with inserts, deletes and rebuilds: every strategy equals linear.
#[test]
fn hybrid_equals_linear_on_classbench_with_complex_rules() {
    let Some(d) = data_dir() else { return };
    let mut rng = Rng(0xc1a5_5be4_c400_0001);
    let (mut shunted, mut total) = (0, 0);
    for name in ["acl1_1k", "fw1_1k", "ipc1_1k", "acl1_10k"] {
        let text = std::fs::read_to_string(d.join("classbench").join(name)).unwrap();
        let (mut set, _) = classbench::parse(&text, name);
        let n = set.rules.len();
        // Complex rules at random positions in the second half, so the fast path still
        // decides part of the traffic (one near the top would shunt nearly everything).
        for _ in 0..n / 20 {
            let len = set.rules.len() as u64;
            let at = (len / 2 + rng.below(len / 2)) as usize;
            let mut r = set.rules[rng.below(n as u64) as usize].clone();
            r.complex = vec![random_complex(&mut rng, true)];
            r.action = Action::Reject;
            set.rules.insert(at, r);
        }
        let trace: Vec<Key> = if name.ends_with("10k") {
            let t = std::fs::read_to_string(d.join("classbench").join(format!("{name}_trace")))
                .unwrap();
            classbench::parse_trace(&t)
                .0
                .iter()
                .step_by(50)
                .map(|e| e.key)
                .collect()
        } else {
            (0..2000)
                .map(|_| {
                    let r = &set.rules[rng.below(set.rules.len() as u64) as usize];
                    key_near(&r.header[0], &mut rng)
                })
                .collect()
        };
        for strategy in [Strategy::Full, Strategy::Cut, Strategy::Interval] {
            let mut lin = Linear::new(&set);
            let mut hy = Hybrid::new(&set, strategy);
            for (i, k) in trace.iter().enumerate() {
                match rng.below(400) {
                    0 => {
                        let mut r = set.rules[rng.below(n as u64) as usize].clone();
                        if rng.below(2) == 0 {
                            r.complex = vec![random_complex(&mut rng, false)];
                        }
                        let pos = rng.below(lin.len() as u64 + 1) as usize;
                        lin.insert(pos, r.clone());
                        hy.insert(pos, r);
                    }
                    1 => {
                        let pos = rng.below(lin.len() as u64) as usize;
                        lin.delete(pos);
                        hy.delete(pos);
                    }
                    2 => hy.start_rebuild(),
                    _ => {}
                }
                hy.poll();
                let p = Pkt {
                    key: *k,
                    bytes: (0..40 + i % 60).map(|j| (j * 7 + i) as u8).collect(),
                    ttl: 60 + (i % 8) as u8,
                    state: [CtState::New, CtState::Established][i % 2],
                    time: i as f64 * 0.1,
                };
                let want = lin.classify(&view(&p));
                let (got, tr) = hy.classify_traced(&view(&p));
                assert_eq!(got, want, "{name} {strategy:?} packet {i}");
                shunted += tr.shunted as usize;
                total += 1;
            }
        }
    }
    eprintln!("{shunted} of {total} packets shunted");
    assert!(shunted > total / 10 && shunted < total * 9 / 10);
}
