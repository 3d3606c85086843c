//! Throughput of one engine on one pattern set and workload, for A/B comparisons of a
//! change: build the example before and after, copy both binaries, and run them in
//! alternation so that drift of a shared machine falls on both.
//!
//! ```sh
//! cargo build --release -p netsieve-bench --example throughput && cp target/release/examples/throughput /tmp/A
//! # ... change, rebuild, copy to /tmp/B, then:
//! for i in 1 2 3 4 5; do /tmp/A dfc et2019 real 2; /tmp/B dfc et2019 real 2; done
//! ```
//!
//! Arguments: ENGINE, SET (`et2019`, `et2019-1k`, `et2019-5k`, `et2019-20k`, `crs`,
//! `ndpi`), WORKLOAD (`real` or `random`), SECONDS to loop. Prints GB/s.

use netsieve_bench::{data, engines, workload};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: throughput ENGINE SET WORKLOAD SECONDS");
        std::process::exit(2);
    }
    let dir = data::data_dir(None).unwrap_or_else(|e| panic!("{e}"));
    let et = || data::load_tsv(&dir, "et-open-2019.tsv", "ET Open 2019").unwrap();
    let set = match args[2].as_str() {
        "et2019" => et(),
        "et2019-1k" => et().sample(1000, 7),
        "et2019-5k" => et().sample(5000, 7),
        "et2019-20k" => et().sample(20_000, 7),
        "crs" => data::load_crs(&dir).unwrap(),
        "ndpi" => data::load_ndpi_domains(&dir).unwrap(),
        other => panic!("unknown set {other}"),
    };
    let real = data::load_ndpi_payloads(&dir).unwrap();
    let w = match args[3].as_str() {
        "real" => workload::real(&real),
        "random" => workload::random(&real, 1),
        other => panic!("unknown workload {other}"),
    };
    let seconds: f64 = args[4].parse().expect("SECONDS is a number");
    let engine = engines::all()
        .into_iter()
        .find(|e| e.name() == args[1])
        .unwrap_or_else(|| panic!("unknown engine {}", args[1]));
    let mut s = engine.build(&set.patterns).unwrap();
    let t = std::time::Instant::now();
    let mut bytes = 0usize;
    while t.elapsed().as_secs_f64() < seconds {
        for p in w.payloads.iter() {
            let _ = s.search(p);
        }
        bytes += w.payloads.bytes();
    }
    println!("{:.4}", bytes as f64 / t.elapsed().as_secs_f64() / 1e9);
}
