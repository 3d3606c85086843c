//! Where DFC's time goes, by pattern set shape: the 1K sample of ET Open 2019, the same
//! without one-byte patterns, only its patterns of 8+ bytes, and a set nothing passes
//! (the bare filter loop), each on real payloads and random bytes, against Hyperscan when
//! built with `--features hyperscan`. Best of 5 passes.
//!
//! ```sh
//! cargo run --release -p netsieve-bench --features hyperscan --example cost_split
//! ```

use netsieve_bench::data::{self, Payloads};
use netsieve_bench::engines::{self, Searcher};
use netsieve_bench::workload;

fn best_rate(s: &mut Box<dyn Searcher>, w: &Payloads) -> f64 {
    let mut best = 0.0f64;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        for p in w.iter() {
            let _ = s.search(p);
        }
        best = best.max(w.bytes() as f64 / t.elapsed().as_secs_f64() / 1e9);
    }
    best
}

fn main() {
    let dir = data::data_dir(None).unwrap_or_else(|e| panic!("{e}"));
    let et = data::load_tsv(&dir, "et-open-2019.tsv", "ET Open 2019").unwrap();
    let real = data::load_ndpi_payloads(&dir).unwrap();
    let random = workload::random(&real, 1).payloads;
    let k1 = et.sample(1000, 7).patterns;
    let no_one: Vec<(Vec<u8>, bool)> = k1.iter().filter(|p| p.0.len() > 1).cloned().collect();
    let long: Vec<(Vec<u8>, bool)> = k1.iter().filter(|p| p.0.len() >= 8).cloned().collect();
    // 100 patterns starting with bytes 0xfe 0xfd: almost no window passes the filter.
    let none: Vec<(Vec<u8>, bool)> = (0..100u8)
        .map(|i| (vec![0xfe, 0xfd, i, i, i, i, i, i, i], false))
        .collect();
    println!("| set | patterns | engine | real GB/s | random GB/s |");
    println!("|---|---:|---|---:|---:|");
    for (name, set) in [
        ("ET 2019 1K sample", &k1),
        ("same, without 1-byte patterns", &no_one),
        ("same, 8+ bytes only", &long),
        ("nothing passes the filter", &none),
    ] {
        for e in engines::all()
            .iter()
            .filter(|e| e.name() == "dfc" || e.name() == "hyperscan")
        {
            let mut s = e.build(set).unwrap();
            let (r, x) = (best_rate(&mut s, &real), best_rate(&mut s, &random));
            println!(
                "| {name} | {} | {} | {r:.3} | {x:.3} |",
                set.len(),
                e.name()
            );
        }
    }
}
