//! The rule-set parsers (iptables-save, nftables dumps, a single iptables rule,
//! ClassBench rules and traces) on arbitrary text, then the hybrid classifier with each strategy against the
//! linear reference on headers drawn from the input, one packet at a time and in batches.
//! No panic, bounded work, and every verdict equal to linear first-match.
//!
//! Building the classifiers dominates the cost of an input, so each input checks one of
//! its three parses (IPv4, IPv6, ClassBench), picked by its length.

#![no_main]

use libfuzzer_sys::fuzz_target;
use netsieve_classify::iptables::{self, Family};
use netsieve_classify::rule::{Key, Packet, RuleSet};
use netsieve_classify::{Hybrid, Linear, Strategy, classbench};

fn keys(set: &RuleSet, data: &[u8]) -> Vec<Key> {
    let mut out = Vec::new();
    for r in set.rules.iter().take(32) {
        for h in r.header.iter().take(2) {
            out.push(Key {
                src: h.src.addr,
                dst: h.dst.addr,
                sport: h.sport.lo,
                dport: h.dport.hi,
                proto: h.proto.lo as u8,
                flags: h.flags,
            });
        }
    }
    for c in data.chunks(16).take(32) {
        let mut b = [0u8; 16];
        b[..c.len()].copy_from_slice(c);
        out.push(Key {
            src: 0xffff_0000_0000 | u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u128,
            dst: 0xffff_0000_0000 | u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as u128,
            sport: u16::from_le_bytes([b[8], b[9]]),
            dport: u16::from_le_bytes([b[10], b[11]]),
            proto: b[12],
            flags: u16::from_le_bytes([b[13], b[14]]),
        });
    }
    out
}

fn check(set: &RuleSet, data: &[u8]) {
    if set.rules.len() > 3000 {
        return;
    }
    let keys = keys(set, data);
    for s in [Strategy::Full, Strategy::Cut, Strategy::Interval] {
        let mut lin = Linear::new(set);
        let mut hy = Hybrid::new(set, s);
        let (first, second) = keys.split_at(keys.len() / 2);
        for k in first {
            let p = Packet::header_only(*k);
            assert_eq!(hy.classify(&p), lin.classify(&p), "{s:?} {k:?}");
        }
        if !set.rules.is_empty() {
            let r = set.rules[0].clone();
            lin.insert(lin.len() / 2, r.clone());
            hy.insert(hy.len() / 2, r);
        }
        let ps: Vec<Packet<'_>> = second.iter().map(|k| Packet::header_only(*k)).collect();
        let mut got = Vec::new();
        hy.classify_batch(&ps, &mut got);
        for ((p, k), (v, _)) in ps.iter().zip(second).zip(got) {
            assert_eq!(v, lin.classify(p), "{s:?} batch {k:?}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // nftables dumps are read as the iptables-save dump they stand for: the conversion
    // names lines and columns, and its output goes through the same parser.
    for fam in [Family::V4, Family::V6] {
        let (dump, errors) = netsieve_classify::nft::to_iptables(text, fam);
        for e in &errors {
            assert!(e.line() >= 1 && e.column() >= 1, "{e}");
        }
        if let Ok(p) = iptables::parse(&dump, fam, "INPUT", "fuzz") {
            for e in &p.errors {
                assert!(e.line() >= 1 && e.column() >= 1, "{e}");
            }
        }
    }
    let pick = data.len() % 3;
    for (i, fam) in [Family::V4, Family::V6].into_iter().enumerate() {
        let p = match iptables::parse(text, fam, "INPUT", "fuzz") {
            Ok(p) => p,
            Err(e) => {
                assert!(e.line() >= 1 && e.column() >= 1, "{e}");
                continue;
            }
        };
        for e in &p.errors {
            assert!(e.line() >= 1 && e.column() >= 1, "{e}");
        }
        if pick == i {
            check(&p.set, data);
        }
        let _ = iptables::parse_one(text, fam, "fuzz");
    }
    let (set, errors) = classbench::parse(text, "fuzz");
    assert!(errors.iter().all(|e| e.line() >= 1 && e.column() >= 1));
    if pick == 2 {
        check(&set, data);
    }
    let _ = classbench::parse_trace(text);
    for line in text.lines().take(4) {
        let _ = classbench::parse_one(line, "fuzz");
    }
});
