//! Conformance with libpcap's own filter test suite (`../shared/data/libpcap/`, BSD
//! licence, read in place; set NETSIEVE_DATA to the data directory elsewhere).
//!
//! * accept blocks: our program for each expression against libpcap's expected program
//!   (run by our interpreter) on real packets and mutated copies; and the JIT's batches
//!   of both programs against the same verdicts;
//! * apply blocks: per-packet results on libpcap's savefiles;
//! * reject tests: expressions libpcap refuses must be refused.

use netsieve_bpf::{Filter, LinkType, Options, Packet, Program, compile_with, interp, text};
use netsieve_packet::capture::{Capture, Frame};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn data_dir() -> Option<PathBuf> {
    let d = std::env::var_os("NETSIEVE_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    if d.join("libpcap/filter_accept_blocks.jsonl").exists() {
        Some(d)
    } else {
        eprintln!("libpcap test data not found under {}; skipped", d.display());
        None
    }
}

fn jsonl(path: PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn link(dlt: &str) -> Option<LinkType> {
    match dlt {
        "EN10MB" => Some(LinkType::Ethernet),
        "RAW" => Some(LinkType::Raw),
        "LINUX_SLL" => Some(LinkType::LinuxSll),
        _ => None,
    }
}

fn frames(files: &[PathBuf]) -> Vec<Frame> {
    let mut out = Vec::new();
    for f in files {
        let Ok(mut c) = Capture::open(std::slice::from_ref(f)) else {
            continue;
        };
        let mut fr = Frame::default();
        while let Ok(true) = c.next(&mut fr) {
            out.push(fr.clone());
        }
    }
    out
}

/// A small deterministic generator for the mutations.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Packets per link type: Ethernet frames from the captures; the same frames' network
/// layer as raw IP; and as Linux cooked frames. Each with mutated copies: truncated, one
/// header byte changed, both.
fn corpus(data: &std::path::Path) -> BTreeMap<&'static str, Vec<(Vec<u8>, u32)>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data.join("libpcap/pcaps"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let mut ndpi: Vec<PathBuf> = std::fs::read_dir(data.join("pcaps/ndpi"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    ndpi.sort();
    files.sort();
    files.extend(ndpi.into_iter().step_by(6));
    let mut eth: Vec<Vec<u8>> = Vec::new();
    let mut raw: Vec<Vec<u8>> = Vec::new();
    let mut per_file = BTreeMap::new();
    for f in &files {
        for fr in frames(std::slice::from_ref(f)) {
            let n = per_file.entry(f.clone()).or_insert(0);
            *n += 1;
            if *n > 40 {
                break;
            }
            match fr.linktype {
                1 => {
                    if fr.data.len() > 14 {
                        raw.push(fr.data[14..].to_vec());
                    }
                    eth.push(fr.data);
                }
                101 | 12 | 14 => raw.push(fr.data),
                _ => eth.push(fr.data),
            }
        }
    }
    let sll: Vec<Vec<u8>> = eth
        .iter()
        .enumerate()
        .filter(|(_, e)| e.len() >= 14)
        .map(|(n, e)| {
            let mut s = vec![0, [0u8, 4, 1][n % 3], 0, 1, 0, 6];
            s.extend_from_slice(&e[6..12]);
            s.extend_from_slice(&[0, 0]);
            s.extend_from_slice(&e[12..]);
            s
        })
        .collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut mutate = |v: Vec<Vec<u8>>| {
        let mut out = Vec::new();
        for p in v {
            let len = p.len() as u32;
            let mut t = p.clone();
            t.truncate(rng.below(p.len() + 1));
            let mut m = p.clone();
            if !m.is_empty() {
                let at = rng.below(m.len().min(64));
                m[at] = rng.next() as u8;
            }
            let mut mt = m.clone();
            mt.truncate(rng.below(m.len() + 1));
            out.push((p, len));
            out.push((t, len));
            out.push((m, len));
            out.push((mt, len));
        }
        out
    };
    let mut c = BTreeMap::new();
    c.insert("EN10MB", mutate(eth));
    c.insert("RAW", mutate(raw));
    c.insert("LINUX_SLL", mutate(sll));
    c
}

#[derive(Default, Debug)]
struct Tally {
    expressions: usize,
    supported: usize,
    agree: usize,
    /// Against libpcap's optimised listing, where there is one: how many of ours are
    /// the same program, and how many are no longer.
    optimised: usize,
    identical: usize,
    no_longer: usize,
}

#[test]
fn accept_blocks_agree_with_libpcap_programs() {
    let Some(data) = data_dir() else { return };
    let corpus = corpus(&data);
    let mut by_dlt: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_cat: BTreeMap<String, Tally> = BTreeMap::new();
    let mut disagreements = Vec::new();
    let mut jit_disagreements: Vec<String> = Vec::new();
    let mut unsupported = Vec::new();
    for b in jsonl(data.join("libpcap/filter_accept_blocks.jsonl")) {
        let dlt = b["DLT"].as_str().unwrap();
        let Some(lt) = link(dlt) else { continue };
        if b.get("skip").is_some() || b.get("linuxext").is_some() {
            continue;
        }
        let name = b["name"].as_str().unwrap();
        let (which, expected) = ["opt", "optunopt", "unopt"]
            .iter()
            .find_map(|k| b.get(*k).and_then(Value::as_str).map(|v| (*k, v)))
            .unwrap();
        let expected = text::parse_image(expected).unwrap_or_else(|e| panic!("{name}: {e}"));
        netsieve_bpf::validate(&expected).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut opts = Options::new(lt);
        opts.refuse_never = false;
        if let Some(s) = b.get("snaplen").and_then(Value::as_str) {
            opts.snaplen = s.parse().unwrap();
        }
        if let Some(m) = b.get("netmask").and_then(Value::as_str) {
            let a: std::net::Ipv4Addr = m.parse().unwrap();
            opts.netmask = Some(a.into());
        }
        let cat = name.split('_').next().unwrap().to_string();
        for alias in b["aliases"].as_array().unwrap() {
            let expr = alias.as_str().unwrap();
            if expr.starts_with('_') {
                continue; // a listing-only case (bpf_image)
            }
            let d = by_dlt.entry(dlt.to_string()).or_default();
            let c = by_cat.entry(format!("{dlt} {cat}")).or_default();
            d.expressions += 1;
            c.expressions += 1;
            let prog = match compile_with(expr, &opts) {
                Ok(p) => p,
                Err(e) => {
                    unsupported.push(format!("{dlt} {name}: `{expr}`: {e}"));
                    continue;
                }
            };
            d.supported += 1;
            c.supported += 1;
            if which != "unopt" {
                d.optimised += 1;
                d.identical += (prog.insns() == expected.as_slice()) as usize;
                d.no_longer += (prog.len() <= expected.len()) as usize;
            }
            let pkts = &corpus[dlt];
            let want: Vec<u32> = pkts
                .iter()
                .map(|(p, wl)| interp::run_insns(&expected, p, *wl))
                .collect();
            // Native code, in batches, for our program and for libpcap's.
            let batch: Vec<Packet> = pkts.iter().map(|(p, wl)| Packet::new(p, *wl)).collect();
            let theirs = Program::new(expected.clone()).unwrap();
            for (who, f) in [
                ("ours", Filter::new(&prog)),
                ("libpcap's", Filter::new(&theirs)),
            ] {
                let mut out = vec![u32::MAX; batch.len()];
                f.run_batch(&batch, &mut out);
                if let Some(n) = (0..out.len()).find(|&n| out[n] != want[n]) {
                    jit_disagreements.push(format!(
                        "{dlt} {name}: `{expr}`: JIT on {who} program {} interpreter on libpcap's {} on {:02x?}",
                        out[n],
                        want[n],
                        &pkts[n].0[..pkts[n].0.len().min(64)]
                    ));
                }
            }
            let bad = pkts
                .iter()
                .zip(&want)
                .find(|((p, wl), w)| interp::run(&prog, p, *wl) != **w)
                .map(|(p, _)| p);
            match bad {
                None => {
                    d.agree += 1;
                    c.agree += 1;
                }
                Some((p, wl)) => disagreements.push(format!(
                    "{dlt} {name}: `{expr}`: ours {} libpcap {} on {:02x?}\n{}",
                    interp::run(&prog, p, *wl),
                    interp::run_insns(&expected, p, *wl),
                    &p[..p.len().min(64)],
                    text::dump(prog.insns())
                )),
            }
        }
    }
    for (k, t) in &by_cat {
        eprintln!(
            "{k:<28} {:>3} expressions {:>3} supported {:>3} agree",
            t.expressions, t.supported, t.agree
        );
    }
    for (k, t) in &by_dlt {
        eprintln!(
            "TOTAL {k:<10} {:>4} expressions {:>4} supported {:>4} agree; of {} with an optimised listing, {} identical to libpcap's and {} no longer",
            t.expressions, t.supported, t.agree, t.optimised, t.identical, t.no_longer
        );
    }
    for u in &unsupported {
        eprintln!("unsupported: {u}");
    }
    for d in disagreements.iter().chain(&jit_disagreements) {
        eprintln!("DISAGREE: {d}");
    }
    let packets: usize = corpus.values().map(Vec::len).sum();
    eprintln!("{packets} packets");
    assert!(
        disagreements.is_empty(),
        "{} expressions disagree",
        disagreements.len()
    );
    assert!(
        jit_disagreements.is_empty(),
        "{} JIT runs disagree with the interpreter",
        jit_disagreements.len()
    );
    let en = &by_dlt["EN10MB"];
    assert!(en.agree * 10 >= en.expressions * 9, "EN10MB: {en:?}");
    // The optimiser makes 248 of 351 the very program libpcap's makes (151 without it).
    assert!(en.identical * 10 >= en.optimised * 7, "EN10MB: {en:?}");
}

fn snaplen(path: &std::path::Path) -> u32 {
    let b = std::fs::read(path).unwrap();
    match &b[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => {
            u32::from_le_bytes(b[16..20].try_into().unwrap())
        }
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => {
            u32::from_be_bytes(b[16..20].try_into().unwrap())
        }
        _ => {
            // pcapng: the first Interface Description Block's snap length.
            let mut at = 0;
            while at + 12 <= b.len() {
                let t = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
                let len = u32::from_le_bytes(b[at + 4..at + 8].try_into().unwrap()) as usize;
                if t == 1 {
                    return u32::from_le_bytes(b[at + 12..at + 16].try_into().unwrap());
                }
                if len < 12 {
                    break;
                }
                at += len;
            }
            262_144
        }
    }
}

/// Apply cases where netsieve's result differs from libpcap's on purpose, and why. The test
/// fails if one of them starts to agree, so the list cannot go stale.
const APPLY_DIVERGES: &[(&str, &str)] = &[(
    "ip6_protochain_17_deepstack",
    "UDP behind 100 IPv6 extension headers: libpcap's protochain loops with a backward \
     jump, which classic BPF does not allow; netsieve unrolls the walk to PROTOCHAIN_HOPS",
)];

#[test]
fn apply_blocks_match_libpcap_results() {
    let Some(data) = data_dir() else { return };
    let (mut cases, mut supported, mut pass) = (0, 0, 0);
    let mut fails = Vec::new();
    for c in jsonl(data.join("libpcap/filter_apply_blocks.jsonl")) {
        let file = data
            .join("libpcap/pcaps")
            .join(c["savefile"].as_str().unwrap());
        let expr = c["expr"].as_str().unwrap();
        let fr = frames(std::slice::from_ref(&file));
        let Some(lt) = fr.first().and_then(|f| LinkType::from_linktype(f.linktype)) else {
            continue;
        };
        cases += 1;
        let mut opts = Options::new(lt);
        opts.refuse_never = false;
        opts.snaplen = snaplen(&file);
        if let Some(m) = c.get("netmask").and_then(Value::as_str) {
            let a: std::net::Ipv4Addr = m.parse().unwrap();
            opts.netmask = Some(a.into());
        }
        let Ok(prog) = compile_with(expr, &opts) else {
            eprintln!("unsupported: {} `{expr}`", c["name"]);
            continue;
        };
        supported += 1;
        let got: Vec<String> = fr
            .iter()
            .map(|f| interp::run(&prog, &f.data, f.orig_len).to_string())
            .collect();
        let want: Vec<String> = c["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let diverges = APPLY_DIVERGES.iter().find(|d| d.0 == c["name"]);
        if let Some((name, why)) = diverges {
            if got == want {
                fails.push(format!("{name} agrees now; remove it from APPLY_DIVERGES"));
            } else {
                eprintln!("known divergence {name}: {why}");
            }
        } else if got == want {
            pass += 1;
        } else {
            fails.push(format!("{} `{expr}`: got {got:?} want {want:?}", c["name"]));
        }
    }
    eprintln!("apply: {cases} cases on supported link types, {supported} compiled, {pass} match");
    for f in &fails {
        eprintln!("FAIL {f}");
    }
    assert!(fails.is_empty());
    assert!(supported > 0);
}

#[test]
fn reject_tests_are_rejected() {
    let Some(data) = data_dir() else { return };
    let (mut n, mut accepted) = (0, Vec::new());
    for c in jsonl(data.join("libpcap/filter_reject_tests.jsonl")) {
        let Some(lt) = c.get("DLT").and_then(Value::as_str).and_then(link) else {
            continue;
        };
        // Only for libpcap built without protochain; netsieve has it.
        if c.get("skip").and_then(Value::as_str) == Some("skip_config_not_def1 ('NO_PROTOCHAIN')") {
            continue;
        }
        let expr = c["expr"].as_str().unwrap();
        n += 1;
        let mut opts = Options::new(lt);
        if let Some(m) = c.get("netmask").and_then(Value::as_str) {
            opts.netmask = m.parse::<std::net::Ipv4Addr>().ok().map(u32::from);
        }
        if let Ok(p) = compile_with(expr, &opts) {
            accepted.push(format!(
                "{} `{expr}` (libpcap: {})\n{}",
                c["name"],
                c["errstr"],
                text::dump(p.insns())
            ));
        }
    }
    eprintln!(
        "reject: {n} expressions on supported link types, {} accepted",
        accepted.len()
    );
    for a in &accepted {
        eprintln!("ACCEPTED {a}");
    }
    assert!(accepted.is_empty());
}
