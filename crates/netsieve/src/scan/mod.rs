//! `netsieve scan`: captures and rules in, Suricata-compatible alerts out.
//!
//! A run goes through named phases, each in its own module:
//!
//! 1. **settings** (`settings.rs`): suricata.yaml and `--set`, through one table of keys;
//! 2. **rules**: the rule files, parsed and built into a shared `RuleSet`;
//! 3. **inputs, then outputs**: the captures are opened before eve.json and fast.log are
//!    created, so a mistyped `-r` leaves an earlier run's outputs alone;
//! 4. **the pipeline** (`pipeline.rs`): a reader decodes frames, a pool of workers tracks
//!    flows and runs detection, and the alerts, merged in packet order, go through
//!    thresholds to the sinks (`sink.rs`: `eve/` and `fastlog.rs`);
//! 5. **the summary** (`summary.rs`).

mod capture_filter;
mod control;
mod eve;
mod fastlog;
mod filestore;
mod pipeline;
mod rules;
mod settings;
mod sink;
mod summary;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Args as ClapArgs;
use netsieve_detect::log::StoreFiles;
use netsieve_detect::{DetectOptions, Mpm, Thresholds};
use netsieve_packet::{Capture, Decoder, FrameSource};

use crate::interrupt::Interrupt;
use crate::live::LiveArgs;
use capture_filter::CaptureFilter;
use control::{Control, RunInfo};
use eve::EveLog;
use fastlog::FastLog;
use filestore::FileStore;
use pipeline::{Checksums, Pool, Reader, Records};
#[cfg(feature = "bench")]
pub(crate) use rules::bench_reload;
use rules::{Edits, RuleSource};
use settings::Settings;
use sink::{Emitter, Output, Sink};
use summary::{Periodic, RunFacts, Summary};

#[derive(ClapArgs)]
pub struct Args {
    /// Capture file (pcap or pcapng), a directory of them, or - for standard input.
    /// Repeat to read several files as one stream of time.
    #[arg(short = 'r', required_unless_present_any = ["interface", "inline", "queue", "test_rules", "build_info", "list_keywords", "list_app_layer_protos", "dump_config"], conflicts_with_all = ["interface", "inline", "queue"], num_args = 1..)]
    read: Vec<PathBuf>,
    /// Inspect live traffic on this interface (AF_PACKET, as Suricata's `-i`), until
    /// Ctrl-C or SIGTERM; needs root or CAP_NET_RAW.
    #[arg(
        short = 'i',
        long = "interface",
        value_name = "IFACE",
        conflicts_with = "inline"
    )]
    interface: Option<String>,
    /// Inline IPS between two interfaces (Suricata's AF_PACKET copy mode): every frame
    /// read on one is sent out of the other unless a drop or reject rule blocks it
    /// (alerts say "blocked"). Runs one detection thread.
    #[arg(long, value_name = "IFACE_A:IFACE_B", conflicts_with = "queue")]
    inline: Option<String>,
    /// IPS on a netfilter queue (Suricata's NFQ mode): every packet a firewall rule
    /// queues (`iptables -j NFQUEUE --queue-num N`) is accepted unless a drop or reject rule blocks it.
    /// The queue fails open: when netsieve falls behind, the kernel accepts. Runs one
    /// detection thread.
    #[arg(short = 'q', value_name = "N")]
    queue: Option<u16>,
    /// Rule file; repeat for several.
    #[arg(short = 'S', required_unless_present_any = ["more_rules", "firewall_rules_exclusive", "build_info", "list_keywords", "list_app_layer_protos", "dump_config"], num_args = 1..)]
    rules: Vec<PathBuf>,
    /// A rule file loaded beside those of -S (as Suricata's -s); repeat for several.
    #[arg(short = 's', num_args = 1..)]
    more_rules: Vec<PathBuf>,
    /// A firewall rule file (Suricata 8's firewall mode; see ARCHITECTURE.md): its
    /// rules are evaluated at their hooks, in file order, before the other rules. A rule
    /// file given with -S that has an `accept` rule is read as one too.
    #[arg(long, value_name = "FILE")]
    firewall_rules_exclusive: Vec<PathBuf>,
    /// Test the rules and exit, as Suricata's -T: 0 when every rule loads, 1 when any
    /// fails (each failure is named with its file, line and column).
    #[arg(short = 'T', long = "test-rules")]
    test_rules: bool,
    /// Print what this build of netsieve has (version, matchers, capture, IPS modes)
    /// and exit, as Suricata's --build-info.
    #[arg(long)]
    build_info: bool,
    /// List the rule keywords netsieve knows and whether it inspects rules that use
    /// them, and exit (Suricata's --list-keywords).
    #[arg(long)]
    list_keywords: bool,
    /// List the application-layer protocols netsieve parses, and exit.
    #[arg(long)]
    list_app_layer_protos: bool,
    /// Print every setting netsieve honours with the value in force (defaults, then
    /// -c, then --set) as `key = value` lines, and exit (Suricata's --dump-config).
    #[arg(long)]
    dump_config: bool,
    /// Verbose: name each rule that is not inspected (its sid and the keyword or
    /// protocol it needs), as Suricata's -v says more.
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    verbose: u8,
    /// Any rule that fails to load stops the run before it starts (Suricata's
    /// --init-errors-fatal); by default it is reported and skipped.
    #[arg(long)]
    init_errors_fatal: bool,
    /// Directory for eve.json and fast.log (created if missing).
    #[arg(short = 'l', default_value = ".")]
    log_dir: PathBuf,
    /// A suricata.yaml: vars and the settings netsieve honours.
    #[arg(short = 'c')]
    config: Option<PathBuf>,
    /// Checksum validation: all, none (default: auto, as Suricata for pcap files).
    #[arg(short = 'k')]
    checksums: Option<String>,
    /// A setting as in suricata.yaml, KEY=VALUE (stream.midstream=true, ...).
    #[arg(long = "set")]
    set: Vec<String>,
    /// Act as an IPS: drop and reject rules block (action "blocked") and drop the flow.
    #[arg(long)]
    simulate_ips: bool,
    /// Detection threads (1 to 1024; default: the machine's cores, as Suricata, and 1
    /// inline). Flows are spread over them by a hash of their addresses and ports;
    /// alerts are merged back in packet order, so the output is the same for every value
    /// (except for `xbits`, which flows share across threads, as in Suricata).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=MAX_THREADS as i64))]
    threads: Option<u16>,
    /// Prefilter matcher.
    #[arg(long, default_value = "dfc", value_parser = ["dfc", "ac"])]
    mpm: String,
    /// Write the end-of-run summary as JSON to this file.
    #[arg(long)]
    stats_json: Option<PathBuf>,
    /// Time each stage (decode, flow table and reassembly, application layer,
    /// prefilter, rule evaluation) and print the split; runs on one thread, with some
    /// timer overhead.
    #[arg(long)]
    profile: bool,
    /// A capture filter (tcpdump syntax, as Suricata's BPF filter): packets it rejects
    /// are not inspected or counted.
    #[arg(long, conflicts_with = "filter_words")]
    bpf: Option<String>,
    /// The capture filter as Suricata takes it too: the words after the options
    /// (`netsieve scan -r in.pcap -S r.rules port 80`).
    #[arg(value_name = "BPF")]
    filter_words: Vec<String>,
    /// Listen for commands on this unix socket, in Suricata's protocol (`suricatasc`
    /// works): reload-rules, ruleset-stats, iface-stat, dump-counters, shutdown, and
    /// add-rule / remove-rule. SIGUSR2 reloads the rules too.
    #[arg(long, value_name = "PATH")]
    unix_socket: Option<PathBuf>,
    /// Suricata's run modes: `single` is one detection thread (unless --threads says
    /// otherwise); `autofp` and `workers` leave the count to --threads.
    #[arg(long, value_parser = ["single", "autofp", "workers"])]
    runmode: Option<String>,
    /// Suricata's switch for runs that repeat exactly: netsieve's always do (its flow
    /// ids and hashes take no random seed), so it is taken and changes nothing.
    #[arg(long)]
    no_random: bool,
    /// Where datasets' `save` and `state` files are written (default: beside the rule
    /// file that names them).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

/// The most detection threads `--threads` takes: far more than any machine's cores, and
/// few enough that each keeps a useful share of the flow table and stream memory.
const MAX_THREADS: usize = 1024;

/// Exit codes: 0 when every input was read and every output written, 1 on any error
/// (a damaged capture is reported and the run goes on; every alert found is written),
/// 128 + the signal when Ctrl-C or SIGTERM stopped it (everything read was inspected and
/// written, and the summary printed).
pub fn run(a: Args) -> ExitCode {
    match scan(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("netsieve scan: {e}");
            ExitCode::from(1)
        }
    }
}

fn scan(mut a: Args) -> Result<ExitCode, String> {
    if a.build_info || a.list_keywords || a.list_app_layer_protos {
        let text = if a.build_info {
            build_info()
        } else if a.list_keywords {
            keyword_list()
        } else {
            netsieve_applayer::AppProto::ALL
                .iter()
                .map(|p| format!("{}\n", p.name()))
                .collect()
        };
        crate::print_out(&text);
        return Ok(ExitCode::SUCCESS);
    }
    let t_load = Instant::now();
    if !a.filter_words.is_empty() {
        a.bpf = Some(a.filter_words.join(" "));
    }
    let mut settings = Settings::load(a.config.as_ref(), &a.set)?;
    if a.dump_config {
        let text: String = settings
            .dump()
            .iter()
            .map(|(k, v)| format!("{k} = {v}\n"))
            .collect();
        crate::print_out(&text);
        return Ok(ExitCode::SUCCESS);
    }
    let ips = a.simulate_ips || a.inline.is_some() || a.queue.is_some();
    settings.flow.inline |= ips;
    let inline = a.inline.is_some() || a.queue.is_some();
    if inline && (a.threads.is_some_and(|t| t > 1) || a.bpf.is_some()) {
        return Err("--inline and -q run one detection thread and no --bpf, for now".into());
    }
    let threads = match a.threads {
        Some(t) => usize::from(t),
        None if inline || a.runmode.as_deref() == Some("single") => 1,
        None => std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(MAX_THREADS),
    };
    let checksums = Checksums::parse(a.checksums.as_deref())?;
    if a.mpm == "ac" {
        settings.build.mpm = Mpm::Ac;
    }
    netsieve_detect::dataset::set_data_dir(a.data_dir.clone());
    netsieve_detect::lua::set_config(netsieve_detect::lua::Config {
        clock: crate::clock::lua_time,
        ..settings.lua.clone()
    });
    // IP reputation, before the rules that name its categories.
    if let Some(cats) = &settings.reputation_categories {
        let dir = settings.reputation_dir.clone().unwrap_or_default();
        let files: Vec<PathBuf> = settings
            .reputation_files
            .iter()
            .map(|f| dir.join(f))
            .collect();
        for e in netsieve_detect::iprep::load(cats, &files)? {
            eprintln!("netsieve scan: reputation entry skipped: {e}");
        }
    }
    let files = [&a.rules[..], &a.more_rules[..]].concat();
    let source = RuleSource::new(&files, &settings).with_firewall(&a.firewall_rules_exclusive);
    let rules = source.load(&Edits::default(), None)?;
    for e in &rules.errors {
        eprintln!("netsieve scan: {e}");
    }
    if a.verbose > 0 {
        for (sid, needs) in &rules.set.stats().not_inspected {
            eprintln!("netsieve scan: sid {sid} not inspected: needs {needs}");
        }
    }
    if a.test_rules || (a.init_errors_fatal && !rules.errors.is_empty()) {
        keep_until_exit(&rules.set);
        return Ok(test_verdict(&rules));
    }
    if let Some(e) = RuleSource::none_loaded(&rules) {
        eprintln!("netsieve scan: warning: {e}; inspecting without rules");
    }
    let load_time = t_load.elapsed();

    // Inputs are checked before the outputs are touched.
    let filter = a.bpf.as_deref().map(CaptureFilter::new).transpose()?;
    let mut src = open_source(&a)?;
    std::fs::create_dir_all(&a.log_dir).map_err(|e| format!("{}: {e}", a.log_dir.display()))?;
    let mut sinks: Vec<Box<dyn Sink + Send>> = vec![
        Box::new(EveLog::new(
            Output::create(&a.log_dir.join("eve.json"))?,
            settings.eve,
            settings
                .eve
                .alert_meta
                .reference
                .then(|| settings.references())
                .transpose()?,
        )),
        Box::new(FastLog::new(Output::create(&a.log_dir.join("fast.log"))?)),
    ];
    let fs = &settings.file_store;
    if fs.stores() != StoreFiles::Off {
        let dir = fs.dir(&a.log_dir);
        sinks.push(Box::new(FileStore::new(
            dir,
            fs.write_fileinfo,
            settings.eve,
        )));
    }
    let thresholds = Thresholds::new(&rules.set, rules.thresholds.as_ref(), ips);
    let mut out = Emitter::new(Arc::clone(&rules.set), thresholds, sinks);

    // The pipeline.
    let mut decoder = Decoder::new(checksums != Checksums::None);
    decoder.defrag.max_datagrams = settings.defrag_datagrams;
    decoder.defrag.max_bytes = settings.defrag_bytes;
    let mut reader = Reader::new(decoder, checksums, filter, a.profile);
    if !src.is_live() {
        reader.show_progress(input_bytes(&a.read));
    }
    let det = DetectOptions {
        ips,
        inline: settings.flow.inline,
        keep_bytes: settings.eve.payload || settings.eve.payload_printable || settings.eve.packet,
        midstream: settings.midstream_policy(ips)?,
        app_error: settings.app_error_policy(ips)?,
        chunk: settings.chunk,
        payload_limit: settings.payload_limit,
        http: settings.http_limits(),
        ports: settings.ports,
        alert_max: settings.alert_max,
        log: settings.log_types(),
        midstream_exception: !settings.flow.midstream,
    };
    let mut pool = Pool::new(
        threads,
        &rules.set,
        &settings.flow,
        det,
        Records {
            flow: settings.eve.flow || settings.eve.netflow,
            flow_exception: settings.eve.flow_exception,
            drop: settings.eve.drop && ips,
            decode: settings.eve.anomaly_decode,
            tagged: settings.eve.tagged_packets,
        },
        a.profile,
    );
    let threads = pool.threads();
    let control = Control::start(
        a.unix_socket.as_deref(),
        source,
        &rules,
        RunInfo {
            threads,
            ifaces: src.interfaces().into_iter().map(str::to_string).collect(),
            capture_mode: src.capture_mode(),
        },
    )?;
    // From here the rules live in the pipeline only, so that a reload frees them.
    drop(rules);
    let interrupt = Interrupt::install();
    let facts = RunFacts {
        started: t_load,
        load_time,
        mpm: a.mpm.clone(),
        threads,
        ips,
        midstream_exception: !settings.flow.midstream,
        stream_events: settings.eve.stream_events,
    };
    let stats_on = settings.stats_enabled && settings.eve.stats;
    let mut periodic = Periodic::new(settings.stats_interval, &facts, &control);
    let t_scan = Instant::now();
    reader.run(
        &mut src,
        &mut pool,
        &mut out,
        &interrupt,
        &control,
        stats_on.then_some(&mut periodic),
    )?;
    // Flows still open end with the input: their streams are inspected to the end.
    let report = pool.finish(reader.stats.packets + 1, &mut out)?;
    // The summary describes the rules in force at the end.
    let set = Arc::clone(out.rules());
    keep_until_exit(&set);
    let mut summary = Summary::new(&reader.stats, &report, &set, (&out, &control), &facts);
    if stats_on {
        summary.write_stats(&mut out, control.last_reload())?;
    }
    out.finish()?;
    // Datasets with a `save` file are written once the run is over; one that cannot be
    // is reported, and the run's output stands.
    for e in netsieve_detect::dataset::save_all() {
        eprintln!("netsieve scan: warning: {e}");
    }
    summary.scan_time = t_scan.elapsed();
    summary.print();
    if let Some(p) = &a.stats_json {
        let text = serde_json::to_string_pretty(&summary.json()).unwrap_or_default();
        std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if ips {
        eprintln!(
            "netsieve scan: {} frames dropped by drop and reject rules, the rest passed on",
            reader.stats.dropped
        );
    }
    if src.send_failures() > 0 {
        eprintln!(
            "netsieve scan: {} frames could not be sent on: larger than the interface's MTU (turn off GRO, LRO, TSO and GSO with ethtool -K, as for Suricata's IPS mode) or its queue full",
            src.send_failures()
        );
    }
    if let Some((received, dropped)) = src.kernel_stats() {
        eprintln!(
            "netsieve scan: the kernel passed {received} frames, dropped {dropped} (ring full)"
        );
    }
    if src.is_live() {
        // A live run ends when it is told to: that is its normal end.
        return Ok(ExitCode::SUCCESS);
    }
    Ok(exit_code(&reader.stats, &interrupt))
}

/// The capture files, or the live source the flags name. On an interface, `--bpf` is
/// compiled by netsieve's compiler and attached to the socket, so that the kernel drops
/// what it rejects before copying it (and `filter` is taken: nothing is left to check
/// here).
fn open_source(a: &Args) -> Result<FrameSource, String> {
    let live = LiveArgs {
        interface: a.interface.as_deref(),
        inline: a.inline.as_deref(),
        queue: a.queue,
        bpf: a.bpf.as_deref(),
    };
    match crate::live::open(&live)? {
        // On an interface the kernel runs the filter too, so that what it rejects is
        // not copied; the reader's copy still judges every frame, since frames that
        // arrived between the socket's bind and the filter's attach (netring binds
        // first) sit in the ring unfiltered.
        Some(src) => Ok(src),
        None => Ok(FrameSource::Files(
            Capture::open(&a.read).map_err(|e| e.to_string())?,
        )),
    }
}

/// `--build-info`: what this build has.
fn build_info() -> String {
    let protos: Vec<&str> = netsieve_applayer::AppProto::ALL
        .iter()
        .map(|p| p.name())
        .collect();
    let mut lines = vec![
        format!("This is netsieve version {}", env!("CARGO_PKG_VERSION")),
        "Prefilter (MPM): dfc (default), ac".to_string(),
        "Regular expressions: regex, PCRE2 for what regex refuses".to_string(),
        "Capture filters: netsieve's own compiler, JIT with Cranelift".to_string(),
        "Capture: pcap and pcapng files, AF_PACKET (TPACKET_V3), NFQUEUE".to_string(),
        "IPS: --simulate-ips, --inline (AF_PACKET copy), -q (NFQUEUE)".to_string(),
        format!("Application layer: {}", protos.join(", ")),
        format!("Detection threads: 1 to {MAX_THREADS}"),
    ];
    if cfg!(feature = "bench") {
        lines.push("netsieve bench: yes".to_string());
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// `--list-keywords`: each keyword and what netsieve does with rules that use it.
fn keyword_list() -> String {
    use netsieve_rules::parse::{KeywordClass, keyword_list};
    keyword_list()
        .into_iter()
        .map(|(name, class)| {
            let what = match class {
                KeywordClass::Option | KeywordClass::Hint => "inspected".to_string(),
                KeywordClass::Transform => "inspected (on application-layer buffers)".to_string(),
                KeywordClass::Buffer(b) => {
                    match netsieve_detect::app::Buf::new(b, None).or_else(|| {
                        netsieve_detect::app::Buf::new(b, Some(netsieve_applayer::AppProto::Smtp))
                    }) {
                        Some(buf) => format!("inspected ({} buffer)", buf.proto().name()),
                        None => {
                            "parsed, not inspected (no parser for its protocol yet)".to_string()
                        }
                    }
                }
                KeywordClass::Unsupported => "parsed, not inspected".to_string(),
            };
            format!("{name}: {what}\n")
        })
        .collect()
}

/// `-T` (and `--init-errors-fatal` when a rule failed): what loading found, and 0 when
/// every rule loaded. Rules that load but need a keyword or parser netsieve lacks are
/// counted, not failed (Suricata inspects them).
/// The rule set in force when the run ends is left for the process's exit to free:
/// freeing a large set piece by piece (ET Open 2024: about 70 ms of CPU) would only make
/// the run end later. Sets replaced by a reload are freed as before.
fn keep_until_exit(set: &Arc<netsieve_detect::RuleSet>) {
    std::mem::forget(Arc::clone(set));
}

fn test_verdict(rules: &rules::Rules) -> ExitCode {
    let s = rules.set.stats();
    let skipped = s.waiting_app_layer + s.unsupported.values().sum::<usize>();
    eprintln!(
        "netsieve scan: {} rules loaded, {} failed, {} not inspected (a keyword or parser netsieve lacks)",
        s.inspected,
        rules.errors.len(),
        skipped
    );
    if rules.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The size of the inputs, for progress.
fn input_bytes(inputs: &[PathBuf]) -> u64 {
    netsieve_packet::capture::expand_inputs(inputs)
        .ok()
        .map(|v| {
            v.iter()
                .filter_map(|p| std::fs::metadata(p).ok().map(|m| m.len()))
                .sum()
        })
        .unwrap_or(0)
}

/// 128 + the signal when interrupted; 1 when an input could not be read in full
/// (every alert found was written); else 0.
fn exit_code(read: &pipeline::ReadStats, interrupt: &Interrupt) -> ExitCode {
    if read.capture_errors > 0 {
        eprintln!(
            "netsieve scan: {} capture file(s) damaged; every alert found was written",
            read.capture_errors
        );
    }
    if read.undecoded > 0 {
        eprintln!(
            "netsieve scan: {} packets of link types netsieve does not decode were not inspected",
            read.undecoded
        );
    }
    if let Some(code) = interrupt.exit_code() {
        return code;
    }
    if read.capture_errors > 0 || read.undecoded > 0 {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
