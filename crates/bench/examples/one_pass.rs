//! One search pass of one engine over one workload, for instruction and cache profiling
//! under valgrind, where wall-clock loops would take too long:
//!
//! ```sh
//! cargo build --release -p netsieve-bench --features hyperscan --example one_pass
//! valgrind --tool=cachegrind --cache-sim=yes target/release/examples/one_pass dfc et2019 real 2000000
//! ```
//!
//! Arguments: ENGINE (as in the benchmark tables), SET (`et2019`, `et2019-1k`, `et2019-5k`,
//! `et2019-20k`), WORKLOAD (`real` or `random`), BYTES of payload to search. Builds first,
//! then prints the matches; subtract a run with BYTES = 0 to remove the build's cost.

use netsieve_bench::data::{self, Payloads};
use netsieve_bench::{engines, workload};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: one_pass ENGINE SET WORKLOAD BYTES");
        std::process::exit(2);
    }
    let dir = data::data_dir(None).unwrap_or_else(|e| panic!("{e}"));
    let et = data::load_tsv(&dir, "et-open-2019.tsv", "ET Open 2019").unwrap();
    let set = match args[2].as_str() {
        "et2019" => et,
        "et2019-1k" => et.sample(1000, 7),
        "et2019-5k" => et.sample(5000, 7),
        "et2019-20k" => et.sample(20_000, 7),
        other => panic!("unknown set {other}"),
    };
    let real = data::load_ndpi_payloads(&dir).unwrap();
    let w = match args[3].as_str() {
        "real" => workload::real(&real),
        "random" => workload::random(&real, 1),
        other => panic!("unknown workload {other}"),
    };
    let limit: usize = args[4].parse().expect("BYTES is a number");
    let mut payloads = Payloads::default();
    for p in w.payloads.iter() {
        if payloads.bytes() + p.len() > limit {
            break;
        }
        payloads.push(p);
    }
    let engine = engines::all()
        .into_iter()
        .find(|e| e.name() == args[1])
        .unwrap_or_else(|| panic!("unknown engine {}", args[1]));
    let mut s = engine.build(&set.patterns).unwrap();
    let mut matches = 0;
    for p in payloads.iter() {
        matches += s.search(p).map(|r| r.0).unwrap_or(0);
    }
    println!(
        "{} {} {}: {} bytes, {matches} matches",
        args[1],
        args[2],
        args[3],
        payloads.bytes()
    );
}
