//! `netsieve bench`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use netsieve_bench::mpm;

#[derive(Subcommand)]
pub enum Bench {
    /// Multi-pattern matching: DFC against aho-corasick, daachorse and Hyperscan.
    Mpm {
        /// The shared data directory (default: $NETSIEVE_DATA or ../shared/data).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Measured runs per engine and workload; the median is reported.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// A short run: two sample sizes, 2 MB of payloads.
        #[arg(long)]
        quick: bool,
        /// Write mpm.md, mpm.tsv and mpm-throughput.svg to this directory.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Only run engines whose name contains this (repeatable; dfc always runs).
        #[arg(long = "engine")]
        engines: Vec<String>,
    },
    /// Firewall classification, the HyPaFilter paper's experiments: the fast path against
    /// linear first-match on ClassBench, then the update cycle of its section 6.3.
    Firewall {
        /// The shared data directory (default: $NETSIEVE_DATA or ../shared/data).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Measured runs; the median is reported.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Rule-set sizes for the throughput table.
        #[arg(long, default_value = "1k,10k,100k")]
        sizes: String,
        /// ClassBench families, comma-separated (of acl1, fw1, ipc1).
        #[arg(long, default_value = "acl1,fw1,ipc1")]
        sets: String,
        /// Packets per step of the update cycle.
        #[arg(long, default_value_t = 100_000)]
        packets: usize,
        /// Only the throughput table.
        #[arg(long)]
        skip_updates: bool,
    },
    /// Packet filters, the software-pipelining paper's Table 3: libpcap's interpreter
    /// (with the `libpcap` feature) against netsieve's interpreter, JIT and batched JIT.
    Bpf {
        /// The shared data directory (default: $NETSIEVE_DATA or ../shared/data).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Measured runs per engine and filter; the median is reported.
        #[arg(long, default_value_t = 7)]
        runs: usize,
        /// Use only the first N packets.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// `netsieve scan` against a peer Suricata on the same capture and rules, rounds
    /// interleaved: scan time and ratio, load, peak RSS, alerts and their agreement.
    Scan {
        /// The peer: Suricata's binary, or the reference's `run` wrapper.
        #[arg(long, default_value = "../shared/ref/suricata-8.0.6/run")]
        suricata: PathBuf,
        /// Suricata's configuration (default: etc/suricata-alerts-only.yaml beside it).
        #[arg(long)]
        suricata_config: Option<PathBuf>,
        /// The capture both read (for example `../shared/tools/ndpi-stream OUT --copies 10`).
        #[arg(short = 'r', long)]
        input: PathBuf,
        /// A rule set, NAME=PATH: a rule file or a directory of them (repeatable; default:
        /// ET Open 2024 and 2019 from the shared data).
        #[arg(long = "rules")]
        rules: Vec<String>,
        /// The shared data directory (default: $NETSIEVE_DATA or ../shared/data).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Rounds; medians are reported.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// netsieve's --threads (Suricata runs single for 1, autofp else).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Where the outputs go.
        #[arg(long, default_value = "/tmp/netsieve-bench-scan")]
        work: PathBuf,
    },
    /// Rule changes as the control socket makes them, without traffic: a full reload with
    /// and without keeping what the set in force compiled, one rule added and removed;
    /// time and peak RSS of each.
    Reload {
        /// Rule files (default: ET Open 2024 from the shared data).
        #[arg(short = 'S', long = "rules")]
        rules: Vec<PathBuf>,
        /// Rounds, each step interleaved; medians are reported.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
}

pub fn run(b: Bench) -> ExitCode {
    match b {
        Bench::Reload { rules, rounds } => {
            let files = match netsieve_bench::data::data_dir(None) {
                Ok(d) if rules.is_empty() => rule_files(d.join("rules/et-open-2024")),
                Err(e) if rules.is_empty() => Err(e),
                _ => rules
                    .into_iter()
                    .map(rule_files)
                    .collect::<Result<Vec<_>, _>>()
                    .map(|v| v.concat()),
            };
            match files.and_then(|f| crate::scan::bench_reload(&f, rounds)) {
                Ok(table) => {
                    crate::print_out(&table);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Bench::Scan {
            suricata,
            suricata_config,
            input,
            rules,
            data,
            rounds,
            threads,
            work,
        } => {
            let opts = match scan_options(
                suricata,
                suricata_config,
                input,
                &rules,
                data.as_deref(),
                (rounds, threads, work),
            ) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            match netsieve_bench::scan::run(&opts, &mut |line| eprintln!("{line}")) {
                Ok(rows) => {
                    crate::print_out(&netsieve_bench::scan::markdown(&opts, &rows));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Bench::Firewall {
            data,
            runs,
            sizes,
            sets,
            packets,
            skip_updates,
        } => {
            let sizes: Vec<&str> = sizes.split(',').map(str::trim).collect();
            let sets: Vec<&str> = sets.split(',').map(str::trim).collect();
            let t =
                netsieve_bench::firewall::throughput(data.as_deref(), runs.max(1), &sizes, &sets);
            match t {
                Ok(rows) => crate::print_out(&netsieve_bench::firewall::throughput_markdown(&rows)),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            }
            if skip_updates {
                return ExitCode::SUCCESS;
            }
            crate::print_out("\n");
            match netsieve_bench::firewall::update_cycle(data.as_deref(), runs.max(1), packets) {
                Ok(steps) => {
                    crate::print_out(&netsieve_bench::firewall::update_markdown(&steps));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Bench::Bpf { data, runs, limit } => {
            match netsieve_bench::bpf::run_table(data.as_deref(), runs.max(1), limit) {
                Ok((rows, n, note)) => {
                    crate::print_out(&netsieve_bench::bpf::markdown(&rows, n, &note));
                    crate::print_out("\n");
                    crate::print_out(&netsieve_bench::bpf::markdown_resident(&rows));
                    if let Some(ghz) = netsieve_bench::bpf::clock_ghz() {
                        crate::print_out("\n");
                        crate::print_out(&netsieve_bench::bpf::markdown_cycles(&rows, ghz));
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Bench::Mpm {
            data,
            runs,
            quick,
            out,
            engines,
        } => {
            let opts = mpm::Options {
                data,
                runs: runs.max(1),
                quick,
                out,
                engines,
                command: std::env::args().collect::<Vec<_>>().join(" "),
            };
            match mpm::run(&opts, &mut |line| eprintln!("{line}")) {
                Ok(report) => {
                    crate::print_out(&mpm::markdown(&opts, &report));
                    if report.disagreements.is_empty() {
                        ExitCode::SUCCESS
                    } else {
                        eprintln!(
                            "error: engines disagreed on {} measurements",
                            report.disagreements.len()
                        );
                        ExitCode::FAILURE
                    }
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

/// `bench scan`'s arguments made into its options: rule sets resolved to their files.
/// The `.rules` files of a directory, in name order, or the one file given.
fn rule_files(path: PathBuf) -> Result<Vec<PathBuf>, String> {
    if !path.is_dir() {
        return Ok(vec![path]);
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .collect();
    v.sort();
    Ok(v)
}

fn scan_options(
    suricata: PathBuf,
    config: Option<PathBuf>,
    input: PathBuf,
    rules: &[String],
    data: Option<&std::path::Path>,
    (rounds, threads, work): (usize, usize, PathBuf),
) -> Result<netsieve_bench::scan::Options, String> {
    let named: Vec<(String, PathBuf)> = if rules.is_empty() {
        let d = netsieve_bench::data::data_dir(data)?.join("rules");
        ["et-open-2024", "et-open-2019"]
            .iter()
            .map(|n| (n.to_string(), d.join(n)))
            .collect()
    } else {
        rules
            .iter()
            .map(|r| match r.split_once('=') {
                Some((n, p)) => Ok((n.to_string(), PathBuf::from(p))),
                None => Err(format!("--rules {r}: expected NAME=PATH")),
            })
            .collect::<Result<_, _>>()?
    };
    let mut rule_sets = Vec::new();
    for (name, path) in named {
        rule_sets.push((name, rule_files(path)?));
    }
    let suricata_config = config.unwrap_or_else(|| {
        let dir = suricata.parent().unwrap_or(std::path::Path::new("."));
        dir.join("etc/suricata-alerts-only.yaml")
    });
    // The defaults are relative to the repository root: say so before any run fails.
    for (flag, path) in [
        ("--suricata", &suricata),
        ("--suricata-config", &suricata_config),
    ] {
        if !path.exists() {
            return Err(format!(
                "{}: not found (the default is relative to the repository root; give {flag})",
                path.display()
            ));
        }
    }
    Ok(netsieve_bench::scan::Options {
        netsieve: std::env::current_exe().map_err(|e| format!("own binary: {e}"))?,
        suricata,
        suricata_config,
        input,
        rule_sets,
        rounds,
        threads,
        work,
    })
}
