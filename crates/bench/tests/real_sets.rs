//! DFC against the naive reference on the real pattern sets (ET Open 2019 and 2024, Snort 3
//! community) over real payloads from the nDPI captures: identical match lists, per payload
//! and as one stream cut into uneven chunks.
//!
//! The corpora live outside the repository (`../shared/data`, or `$NETSIEVE_DATA`). When
//! they are missing the test says so and passes, unless `NETSIEVE_REQUIRE_DATA=1` (as in
//! `.ci/run` when the data is present), in which case it fails.

use dfc::naive::{Naive, sort_matches};
use dfc::{Builder, Match};
use netsieve_bench::data::{self, Payloads, Rng};

fn corpus() -> Option<std::path::PathBuf> {
    match data::data_dir(None) {
        Ok(d) => Some(d),
        Err(e) if std::env::var_os("NETSIEVE_REQUIRE_DATA").is_some_and(|v| v == "1") => {
            panic!("NETSIEVE_REQUIRE_DATA=1 but {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            None
        }
    }
}

/// Every 4th payload: about a quarter of the corpus, from every capture.
fn sample(all: &Payloads) -> Payloads {
    let mut out = Payloads::default();
    for (k, p) in all.iter().enumerate() {
        if k % 4 == 0 {
            out.push(p);
        }
    }
    out
}

fn check_set(file: &str, payloads: &Payloads) {
    let dir = corpus().unwrap();
    let set = data::load_tsv(&dir, file, file).unwrap();
    let mut b = Builder::new();
    let mut naive = Naive::new();
    for (id, (p, nocase)) in set.patterns.iter().enumerate() {
        b.add(id as u32, p, *nocase);
        naive.add(id as u32, p, *nocase);
    }
    let m = b.build().unwrap();
    let mut total = 0usize;
    let mut joined = Vec::new();
    for (k, p) in payloads.iter().enumerate() {
        let want = naive.find_all(p);
        let mut got = Vec::new();
        m.for_each_match(p, |x| got.push(x));
        sort_matches(&mut got);
        if got != want {
            let missing = want
                .iter()
                .filter(|x| !got.contains(x))
                .take(3)
                .collect::<Vec<_>>();
            let extra = got
                .iter()
                .filter(|x| !want.contains(x))
                .take(3)
                .collect::<Vec<_>>();
            panic!(
                "{file}, payload {k}: {} matches, reference {}; missing {missing:?}, extra {extra:?}",
                got.len(),
                want.len()
            );
        }
        total += want.len();
        joined.extend_from_slice(p);
    }
    assert!(
        total > 10_000,
        "{file}: only {total} matches, the sample is too small to mean much"
    );

    // The same bytes as one stream, cut into chunks of 1 to 3000 bytes.
    let want = naive.find_all(&joined);
    let mut s = m.stream();
    let mut rng = Rng::new(file.len() as u64);
    let mut got: Vec<Match> = Vec::new();
    let mut at = 0;
    while at < joined.len() {
        let n = (1 + rng.below(3000)).min(joined.len() - at);
        s.feed(&joined[at..at + n], |x| got.push(x));
        at += n;
    }
    sort_matches(&mut got);
    assert!(
        got == want,
        "{file}: stream has {} matches, reference {}",
        got.len(),
        want.len()
    );
    eprintln!(
        "{file}: {} patterns, {} payloads, {} bytes, {total} matches, identical to the reference",
        set.patterns.len(),
        payloads.len(),
        payloads.bytes()
    );
}

#[test]
fn real_sets_match_the_reference_on_real_payloads() {
    let Some(dir) = corpus() else { return };
    let payloads = sample(&data::load_ndpi_payloads(&dir).unwrap());
    for file in [
        "et-open-2019.tsv",
        "et-open-2024.tsv",
        "snort3-community.tsv",
    ] {
        check_set(file, &payloads);
    }
}
