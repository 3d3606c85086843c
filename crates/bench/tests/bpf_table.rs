//! `netsieve bench bpf` end to end on the first packets of the nDPI captures: every engine
//! (interpreter, JIT, JIT batches, the hand-written filters, and libpcap with the
//! `libpcap` feature) must accept the same packets for each of the paper's 13 filters,
//! or `run_table` fails. Times are printed by the benchmark, never asserted here.
//!
//! Skips like `real_sets.rs` when the shared corpora are missing.

use netsieve_bench::{bpf, data};

#[test]
fn every_engine_accepts_the_same_packets() {
    let dir = match data::data_dir(None) {
        Ok(d) => d,
        Err(e) if std::env::var_os("NETSIEVE_REQUIRE_DATA").is_some_and(|v| v == "1") => {
            panic!("NETSIEVE_REQUIRE_DATA=1 but {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    let (rows, n, _) = bpf::run_table(Some(&dir), 1, Some(3000)).unwrap();
    assert_eq!(n, 3000);
    assert_eq!(rows.len(), 13);
    // The sample holds IPv4 TCP and UDP: the first filters accept something, and `ip
    // and tcp` never accepts more than `ip`.
    assert!(rows[0].matched > 0 && rows[1].matched > 0 && rows[3].matched > 0);
    assert!(rows[1].matched <= rows[0].matched && rows[2].matched >= rows[1].matched);
    for r in &rows {
        assert!(r.matched <= n, "{}", r.filter);
        assert!(
            r.resident.iter().skip(1).all(Option::is_some),
            "{}",
            r.filter
        );
    }
}
