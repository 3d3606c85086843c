//! `netsieve bench mpm`: DFC against its peers, the paper's section 5 redone on this
//! machine.
//!
//! For each pattern set and workload, every engine is built (timed, median of 3 builds),
//! then searches every payload of the workload once to warm up and `runs` more times; the
//! throughput reported is the median. All engines must report the same matches (count and
//! checksum of `(id, end)` pairs); a disagreement fails the run.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::data::{self, PatternSet, Payloads, Rng, short_count};
use crate::engines::{self, Dfc, Engine, Searcher};
use crate::svg::{Panel, Series, line_chart};
use crate::workload::{self, Workload};

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The shared data directory (`None`: found by [`data::data_dir`]).
    pub data: Option<PathBuf>,
    /// Measured runs per (engine, workload); the median is reported.
    pub runs: usize,
    /// A reduced run (fewer sets, 2 MB of payloads) for a quick look or CI.
    pub quick: bool,
    /// Where to write `mpm.md`, `mpm.tsv` and `mpm-throughput.svg`.
    pub out: Option<PathBuf>,
    /// Only engines whose name contains one of these (DFC always runs).
    pub engines: Vec<String>,
    /// The command line, recorded in the report.
    pub command: String,
}

/// One measurement.
#[derive(Clone, Debug)]
pub struct Row {
    pub table: &'static str,
    pub set: String,
    pub patterns: usize,
    pub workload: String,
    pub engine: String,
    pub build_ms: f64,
    pub heap_bytes: usize,
    pub gbps: f64,
    pub gbps_min: f64,
    pub gbps_max: f64,
    pub matches: u64,
    pub checksum: u64,
    /// Payloads on which the engine aborted (its throughput is then not comparable).
    pub failed: usize,
    pub failure: Option<String>,
}

/// The results of a run.
#[derive(Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    pub profiles: Vec<(String, String, dfc::Profile, dfc::Info)>,
    pub disagreements: Vec<String>,
    pub payload_bytes: usize,
    pub payload_count: usize,
    /// Build scaling: (engine, patterns, pattern bytes, build ms).
    pub scaling: Vec<(String, usize, usize, f64)>,
}

fn selected(opts: &Options) -> Vec<Box<dyn Engine>> {
    engines::all()
        .into_iter()
        .filter(|e| {
            let n = e.name();
            n == "dfc"
                || opts.engines.is_empty()
                || opts.engines.iter().any(|want| n.contains(want.as_str()))
        })
        .collect()
}

/// Searches every payload once; also returns how many payloads the engine gave up on,
/// and its first reason.
fn pass(s: &mut dyn Searcher, w: &Payloads) -> ((u64, u64), usize, Option<String>) {
    let (mut n, mut sum) = (0u64, 0u64);
    let (mut failed, mut why) = (0, None);
    for p in w.iter() {
        match s.search(p) {
            Ok((a, b)) => {
                n += a;
                sum = sum.wrapping_add(b);
            }
            Err(e) => {
                failed += 1;
                why.get_or_insert(e);
            }
        }
    }
    ((n, sum), failed, why)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Measures one engine on one set over several workloads; `None` if it cannot build.
fn measure(
    table: &'static str,
    engine: &dyn Engine,
    set: &PatternSet,
    workloads: &[&Workload],
    runs: usize,
    log: &mut dyn FnMut(&str),
) -> Option<Vec<Row>> {
    let mut builds = Vec::new();
    let mut searcher = None;
    for _ in 0..3 {
        let t = Instant::now();
        match engine.build(&set.patterns) {
            Ok(s) => searcher = Some(s),
            Err(e) => {
                log(&format!(
                    "  {:<22} skipped on {}: {e}",
                    engine.name(),
                    set.name
                ));
                return None;
            }
        }
        builds.push(t.elapsed().as_secs_f64() * 1e3);
        if builds.iter().sum::<f64>() > 3000.0 {
            break;
        }
    }
    let mut s = searcher?;
    let build_ms = median(&mut builds);
    let heap_bytes = s.heap_bytes();
    let mut rows = Vec::new();
    for w in workloads {
        let ((matches, checksum), failed, failure) = pass(s.as_mut(), &w.payloads);
        if let Some(why) = &failure {
            log(&format!(
                "  {:<22} {:<26} {:<14} FAILED on {failed} of {} payloads: {why}",
                engine.name(),
                set.name,
                w.name,
                w.payloads.len()
            ));
        }
        let mut rates = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t = Instant::now();
            let (r, _, _) = pass(s.as_mut(), &w.payloads);
            let secs = t.elapsed().as_secs_f64();
            assert_eq!(
                r,
                (matches, checksum),
                "{} is not deterministic",
                engine.name()
            );
            rates.push(w.payloads.bytes() as f64 / secs / 1e9);
        }
        let gbps = median(&mut rates);
        log(&format!(
            "  {:<22} {:<26} {:<14} {:>8.3} GB/s  build {:>9.1} ms  heap {:>8.1} MB  {} matches",
            engine.name(),
            set.name,
            w.name,
            gbps,
            build_ms,
            heap_bytes as f64 / 1e6,
            matches
        ));
        rows.push(Row {
            table,
            set: set.name.clone(),
            patterns: set.patterns.len(),
            workload: w.name.clone(),
            engine: engine.name(),
            build_ms,
            heap_bytes,
            gbps,
            gbps_min: rates[0],
            gbps_max: *rates.last().unwrap(),
            matches,
            checksum,
            failed,
            failure,
        });
    }
    Some(rows)
}

/// Checks that every engine that completed found the same matches on each (set,
/// workload). Engines that aborted are reported in [`failures`] instead.
fn agree(rows: &[Row], out: &mut Vec<String>) {
    for r in rows.iter().filter(|r| r.failed == 0) {
        let first = rows
            .iter()
            .find(|x| {
                x.set == r.set && x.workload == r.workload && x.table == r.table && x.failed == 0
            })
            .unwrap();
        if (r.matches, r.checksum) != (first.matches, first.checksum) {
            out.push(format!(
                "{} / {}: {} reports {} matches (checksum {:x}), {} reports {} (checksum {:x})",
                r.set,
                r.workload,
                r.engine,
                r.matches,
                r.checksum,
                first.engine,
                first.matches,
                first.checksum
            ));
        }
    }
}

/// A set of long random-byte patterns, standing in for the ClamAV signatures of the
/// paper's table 7 (not redistributable).
fn long_random_set(n: usize, seed: u64) -> PatternSet {
    let mut rng = Rng::new(seed);
    let patterns = (0..n)
        .map(|_| {
            let len = 16 + rng.below(49);
            ((0..len).map(|_| rng.next_u64() as u8).collect(), false)
        })
        .collect();
    PatternSet {
        name: format!("random long {}", short_count(n)),
        patterns,
    }
}

/// Runs the benchmark, logging progress to `log`.
pub fn run(opts: &Options, log: &mut dyn FnMut(&str)) -> Result<Report, String> {
    let dir = data::data_dir(opts.data.as_deref())?;
    log(&format!("data: {}", dir.display()));
    let mut real = data::load_ndpi_payloads(&dir)?;
    if opts.quick {
        let keep = real
            .ends
            .iter()
            .position(|&e| e > 2_000_000)
            .unwrap_or(real.len());
        real.ends.truncate(keep);
        real.data.truncate(real.ends.last().copied().unwrap_or(0));
    }
    let mut report = Report {
        payload_bytes: real.bytes(),
        payload_count: real.len(),
        ..Report::default()
    };
    log(&format!(
        "payloads: {} packets, {} bytes",
        real.len(),
        real.bytes()
    ));
    let synthetic_total = if opts.quick { 1_000_000 } else { 8_000_000 };
    let w_real = workload::real(&real);
    let w_random = workload::random(&real, 1);
    let engines = selected(opts);

    let et19 = data::load_tsv(&dir, "et-open-2019.tsv", "ET Open 2019")?;
    let mut full_sets = vec![et19.clone()];
    if !opts.quick {
        full_sets.push(data::load_tsv(&dir, "et-open-2024.tsv", "ET Open 2024")?);
        full_sets.push(data::load_tsv(
            &dir,
            "snort3-community.tsv",
            "Snort 3 community",
        )?);
        full_sets.push(data::load_crs(&dir)?);
        full_sets.push(data::load_ndpi_domains(&dir)?);
    }
    let sizes: &[usize] = if opts.quick {
        &[1000, 5000]
    } else {
        &[1000, 5000, 10_000, 20_000]
    };
    let samples: Vec<PatternSet> = sizes.iter().map(|&n| et19.sample(n, 7)).collect();

    // 1. Throughput on real payloads and random bytes, every set and engine.
    log("== sets x {real, random}");
    for set in full_sets.iter().chain(&samples) {
        for e in &engines {
            let rows = measure(
                "main",
                e.as_ref(),
                set,
                &[&w_real, &w_random],
                opts.runs,
                log,
            );
            report.rows.extend(rows.into_iter().flatten());
        }
    }

    // 2. Malicious, pathological and near-miss inputs on the full ET Open 2019 set.
    log("== ET Open 2019 adversarial workloads");
    let et_matcher = build_dfc(&et19, dfc::DirectFilter::Auto)?;
    let windows = et_matcher.initial_filter_windows();
    let mut adversarial: Vec<Workload> = [25, 50, 100]
        .iter()
        .map(|&pc| workload::malicious(&real, &et19, pc, 3))
        .collect();
    adversarial.push(workload::pathological(&windows, synthetic_total, 4));
    adversarial.push(workload::near_miss(&et19, synthetic_total, 5));
    adversarial.push(workload::all_matches(&et19, synthetic_total, 6));
    let adv_refs: Vec<&Workload> = adversarial.iter().collect();
    for e in &engines {
        let rows = measure("adversarial", e.as_ref(), &et19, &adv_refs, opts.runs, log);
        report.rows.extend(rows.into_iter().flatten());
    }

    // 3. Case-sensitive samples, where daachorse can take part.
    log("== case-sensitive samples x real");
    for set in &samples {
        let cs = set.case_sensitive();
        for e in &engines {
            let rows = measure(
                "case-sensitive",
                e.as_ref(),
                &cs,
                &[&w_real],
                opts.runs,
                log,
            );
            report.rows.extend(rows.into_iter().flatten());
        }
    }

    // 4. Direct filter size (paper tables 6 and 7).
    log("== direct filter size");
    let mut df_sets: Vec<PatternSet> = samples.clone();
    if !opts.quick {
        df_sets.push(full_sets[4].clone());
        for n in [50_000, 200_000, 1_000_000] {
            df_sets.push(long_random_set(n, 9));
        }
    } else {
        df_sets.push(long_random_set(100_000, 9));
    }
    let df_engines = [
        Dfc(dfc::DirectFilter::OneByte),
        Dfc(dfc::DirectFilter::TwoByte),
        Dfc(dfc::DirectFilter::ThreeByte),
        Dfc(dfc::DirectFilter::Auto),
    ];
    for set in &df_sets {
        for e in &df_engines {
            let rows = measure("df-size", e, set, &[&w_real], opts.runs, log);
            report.rows.extend(rows.into_iter().flatten());
        }
    }

    // 5. Build time against set size: random patterns of 4 to 64 bytes, a third nocase.
    log("== build scaling");
    let counts: &[usize] = if opts.quick {
        &[10_000, 40_000]
    } else {
        &[10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000]
    };
    for &n in counts {
        let mut rng = Rng::new(n as u64);
        let patterns: Vec<(Vec<u8>, bool)> = (0..n)
            .map(|_| {
                let len = 4 + rng.below(61);
                (
                    (0..len).map(|_| b'a' + rng.below(26) as u8).collect(),
                    rng.below(3) == 0,
                )
            })
            .collect();
        let bytes: usize = patterns.iter().map(|p| p.0.len()).sum();
        for e in &engines {
            // The DFA and daachorse (no nocase) are left out; Hyperscan beyond 160K takes minutes.
            let name = e.name();
            if name.contains("DFA") || name == "daachorse" || (name == "hyperscan" && n > 160_000) {
                continue;
            }
            let t = Instant::now();
            if e.build(&patterns).is_ok() {
                let ms = t.elapsed().as_secs_f64() * 1e3;
                log(&format!(
                    "  {name:<22} {n:>8} patterns {:>6.1} MB  build {ms:>9.1} ms",
                    bytes as f64 / 1e6
                ));
                report.scaling.push((name, n, bytes, ms));
            }
        }
    }

    // 6. Where DFC's windows stop, per stage.
    for set in full_sets.iter().take(if opts.quick { 1 } else { 3 }) {
        let m = build_dfc(set, dfc::DirectFilter::Auto)?;
        for w in [&w_real, &w_random, &adversarial[3]] {
            let mut total = dfc::Profile::default();
            for p in w.payloads.iter() {
                let x = m.profile(p);
                total.windows += x.windows;
                total.passed_initial += x.passed_initial;
                total.class_checks += x.class_checks;
                total.lookups += x.lookups;
                total.candidates += x.candidates;
                total.matches += x.matches;
            }
            report
                .profiles
                .push((set.name.clone(), w.name.clone(), total, m.info()));
        }
    }

    for table in ["main", "adversarial", "case-sensitive", "df-size"] {
        let rows: Vec<Row> = report
            .rows
            .iter()
            .filter(|r| r.table == table)
            .cloned()
            .collect();
        agree(&rows, &mut report.disagreements);
    }
    if let Some(out) = &opts.out {
        write_outputs(opts, &report, out)?;
        log(&format!(
            "wrote {}/mpm.md, mpm.tsv, mpm-throughput.svg",
            out.display()
        ));
    }
    Ok(report)
}

fn build_dfc(set: &PatternSet, filter: dfc::DirectFilter) -> Result<dfc::Matcher, String> {
    let mut b = dfc::Builder::new();
    b.direct_filter(filter);
    for (id, (p, nc)) in set.patterns.iter().enumerate() {
        b.add(id as u32, p, *nc);
    }
    b.build().map_err(|e| e.to_string())
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// A throughput cell: the median, or why there is none.
fn gbps_cell(r: Option<&Row>) -> String {
    match r {
        None => String::new(),
        Some(r) if r.failed > 0 => format!("aborted on {} payloads", r.failed),
        Some(r) => format!("{:.3}", r.gbps),
    }
}

/// Lines describing every engine that aborted scans.
pub fn failures(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.failed > 0)
        .map(|r| {
            format!(
                "{} on {} / {}: gave up on {} payloads ({}); its matches and throughput are left out",
                r.engine,
                r.set,
                r.workload,
                r.failed,
                r.failure.as_deref().unwrap_or("")
            )
        })
        .collect()
}

fn find<'a>(
    rows: &'a [Row],
    table: &str,
    set: &str,
    workload: &str,
    engine: &str,
) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.table == table && r.set == set && r.workload == workload && r.engine == engine)
}

fn engine_names(rows: &[Row], table: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.table == table) {
        if !v.contains(&r.engine) {
            v.push(r.engine.clone());
        }
    }
    v
}

fn set_names(rows: &[Row], table: &str) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.table == table) {
        if !v.iter().any(|x| x.0 == r.set) {
            v.push((r.set.clone(), r.patterns));
        }
    }
    v
}

/// The markdown report.
pub fn markdown(opts: &Options, report: &Report) -> String {
    let rows = &report.rows;
    let mut s = String::new();
    let _ = writeln!(s, "# Multi-pattern matching: DFC and its peers\n");
    let _ = writeln!(
        s,
        "Machine: {} ({} threads available; one used). Command: `{}`. Throughput is the median of {} runs \
         after one warm-up, in GB/s of payload searched; each payload is searched separately (packet mode). \
         Payloads: {} TCP/UDP payloads, {:.1} MB, from `pcaps/ndpi`.\n",
        cpu_model(),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        opts.command,
        opts.runs,
        report.payload_count,
        report.payload_bytes as f64 / 1e6
    );
    if report.disagreements.is_empty() {
        let _ = writeln!(
            s,
            "All engines that completed a scan reported identical matches (count and checksum of every `(pattern, end)`) on every set and workload.\n"
        );
    } else {
        let _ = writeln!(s, "**Engines disagreed:**\n");
        for d in &report.disagreements {
            let _ = writeln!(s, "- {d}");
        }
        s.push('\n');
    }

    let failed = failures(rows);
    if !failed.is_empty() {
        let _ = writeln!(s, "Scans that an engine aborted:\n");
        for f in &failed {
            let _ = writeln!(s, "- {f}");
        }
        s.push('\n');
    }

    let _ = writeln!(s, "## Throughput, build time and memory\n");
    let _ = writeln!(
        s,
        "| set | patterns | engine | real GB/s | random GB/s | dfc speed-up (real) | build ms | heap MB | matches (real) |"
    );
    let _ = writeln!(s, "|---|---:|---|---:|---:|---:|---:|---:|---:|");
    for (set, n) in set_names(rows, "main") {
        let dfc_real = find(rows, "main", &set, "real", "dfc").map(|r| r.gbps);
        for e in engine_names(rows, "main") {
            let (Some(r), Some(x)) = (
                find(rows, "main", &set, "real", &e),
                find(rows, "main", &set, "random", &e),
            ) else {
                continue;
            };
            let speedup = dfc_real
                .map(|d| format!("{:.2}x", d / r.gbps))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "| {set} | {n} | {e} | {} | {} | {speedup} | {:.1} | {:.2} | {} |",
                gbps_cell(Some(r)),
                gbps_cell(Some(x)),
                r.build_ms,
                r.heap_bytes as f64 / 1e6,
                r.matches
            );
        }
    }

    let _ = writeln!(s, "\n## Adversarial inputs, ET Open 2019 (GB/s)\n");
    let wl: Vec<String> = {
        let mut v: Vec<String> = vec!["real".into()];
        for r in rows.iter().filter(|r| r.table == "adversarial") {
            if !v.contains(&r.workload) {
                v.push(r.workload.clone());
            }
        }
        v
    };
    let _ = writeln!(s, "| engine | {} |", wl.join(" | "));
    let _ = writeln!(s, "|---|{}", "---:|".repeat(wl.len()));
    for e in engine_names(rows, "adversarial") {
        let cells: Vec<String> = wl
            .iter()
            .map(|w| {
                let table = if w == "real" { "main" } else { "adversarial" };
                gbps_cell(find(rows, table, "ET Open 2019", w, &e))
            })
            .collect();
        let _ = writeln!(s, "| {e} | {} |", cells.join(" | "));
    }

    let _ = writeln!(
        s,
        "\n## Case-sensitive samples of ET Open 2019, real payloads (GB/s)\n"
    );
    let sets = set_names(rows, "case-sensitive");
    let _ = writeln!(
        s,
        "| engine | {} |",
        sets.iter()
            .map(|x| short_count(x.1))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(s, "|---|{}", "---:|".repeat(sets.len()));
    for e in engine_names(rows, "case-sensitive") {
        let cells: Vec<String> = sets
            .iter()
            .map(|(set, _)| gbps_cell(find(rows, "case-sensitive", set, "real", &e)))
            .collect();
        let _ = writeln!(s, "| {e} | {} |", cells.join(" | "));
    }

    let _ = writeln!(
        s,
        "\n## Direct filter size (paper tables 6 and 7), real payloads (GB/s)\n"
    );
    let _ = writeln!(
        s,
        "| set | patterns | 1B DF | 2B DF | 3B DF | auto | heap MB (2B / 3B) |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|");
    for (set, n) in set_names(rows, "df-size") {
        let g = |e: &str| find(rows, "df-size", &set, "real", e);
        let cell = |e: &str| gbps_cell(g(e));
        let heap = |e: &str| {
            g(e).map(|r| format!("{:.1}", r.heap_bytes as f64 / 1e6))
                .unwrap_or_default()
        };
        let _ = writeln!(
            s,
            "| {set} | {n} | {} | {} | {} | {} | {} / {} |",
            cell("dfc 1B DF"),
            cell("dfc 2B DF"),
            cell("dfc 3B DF"),
            cell("dfc"),
            heap("dfc 2B DF"),
            heap("dfc 3B DF")
        );
    }

    let _ = writeln!(s, "\n## Build time against set size\n");
    let _ = writeln!(
        s,
        "Random patterns of 4 to 64 letters, a third case-insensitive; one build each. Linear build time shows as a \
         constant ms per MB.\n"
    );
    let mut names: Vec<&str> = Vec::new();
    for (e, ..) in &report.scaling {
        if !names.contains(&e.as_str()) {
            names.push(e);
        }
    }
    let _ = writeln!(
        s,
        "| patterns | MB | {} |",
        names
            .iter()
            .map(|n| format!("{n} ms (ms/MB)"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(s, "|---:|---:|{}", "---:|".repeat(names.len()));
    let mut counts: Vec<(usize, usize)> = report.scaling.iter().map(|x| (x.1, x.2)).collect();
    counts.dedup();
    for (n, bytes) in counts {
        let cells: Vec<String> = names
            .iter()
            .map(|e| {
                report
                    .scaling
                    .iter()
                    .find(|x| x.0 == *e && x.1 == n)
                    .map(|x| format!("{:.1} ({:.1})", x.3, x.3 / (x.2 as f64 / 1e6)))
                    .unwrap_or_else(|| "-".into())
            })
            .collect();
        let _ = writeln!(
            s,
            "| {n} | {:.1} | {} |",
            bytes as f64 / 1e6,
            cells.join(" | ")
        );
    }

    let _ = writeln!(s, "\n## Where DFC's windows stop\n");
    let _ = writeln!(
        s,
        "Share of windows (text positions) reaching each stage. `class checks` counts (window, class) pairs.\n"
    );
    let _ = writeln!(
        s,
        "| set | workload | DF fill | pass initial DF | class checks | table lookups | patterns compared | matches |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|");
    for (set, w, p, info) in &report.profiles {
        let pct = |x: usize| format!("{:.2}%", 100.0 * x as f64 / p.windows.max(1) as f64);
        let _ = writeln!(
            s,
            "| {set} | {w} | {:.1}% | {} | {} | {} | {} | {} |",
            100.0 * info.direct_filter_fill,
            pct(p.passed_initial),
            pct(p.class_checks),
            pct(p.lookups),
            pct(p.candidates),
            pct(p.matches)
        );
    }
    s
}

fn tsv(report: &Report) -> String {
    let mut s = String::from(
        "table\tset\tpatterns\tworkload\tengine\tgbps_median\tgbps_min\tgbps_max\tbuild_ms\theap_bytes\tmatches\tchecksum\tfailed_payloads\n",
    );
    for r in &report.rows {
        let _ = writeln!(
            s,
            "{}\t{}\t{}\t{}\t{}\t{:.4}\t{:.4}\t{:.4}\t{:.2}\t{}\t{}\t{:x}\t{}",
            r.table,
            r.set,
            r.patterns,
            r.workload,
            r.engine,
            r.gbps,
            r.gbps_min,
            r.gbps_max,
            r.build_ms,
            r.heap_bytes,
            r.matches,
            r.checksum,
            r.failed
        );
    }
    s
}

/// Throughput against pattern count on the ET Open 2019 samples.
pub fn plot(report: &Report) -> String {
    let rows = &report.rows;
    let samples: Vec<(String, usize)> = set_names(rows, "main")
        .into_iter()
        .filter(|s| s.0.contains("sample"))
        .collect();
    let panels: Vec<Panel> = ["real", "random"]
        .iter()
        .map(|w| Panel {
            title: format!("ET Open 2019 samples, {w} payloads"),
            series: engine_names(rows, "main")
                .into_iter()
                .map(|e| Series {
                    points: samples
                        .iter()
                        .filter_map(|(set, n)| {
                            find(rows, "main", set, w, &e)
                                .filter(|r| r.failed == 0)
                                .map(|r| (*n as f64, r.gbps))
                        })
                        .collect(),
                    name: e,
                })
                .filter(|s| !s.points.is_empty())
                .collect(),
        })
        .collect();
    let ticks: Vec<(f64, String)> = samples
        .iter()
        .map(|(_, n)| (*n as f64, short_count(*n)))
        .collect();
    line_chart(
        "Throughput against pattern count",
        &panels,
        &ticks,
        "patterns",
        "GB/s",
    )
}

fn write_outputs(opts: &Options, report: &Report, out: &Path) -> Result<(), String> {
    fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let w = |name: &str, text: String| {
        fs::write(out.join(name), text).map_err(|e| format!("{}: {e}", out.join(name).display()))
    };
    w("mpm.md", markdown(opts, report))?;
    w("mpm.tsv", tsv(report))?;
    w("mpm-throughput.svg", plot(report))?;
    Ok(())
}
