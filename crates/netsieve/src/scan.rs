//! `netsieve scan`: captures and rules in, Suricata-compatible alerts out.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use netsieve_applayer::http::Limits as HttpLimits;
use netsieve_detect::Profile;
use netsieve_detect::{
    Alert, BuildOptions, DetectOptions, Detector, ExceptionPolicy, FlowData, Mpm, RuleSet,
    Thresholds, Verdict,
};
use netsieve_packet::decode::decodes_link;
use netsieve_packet::defrag::Defrag;
use netsieve_packet::flow::{
    Direction, FLOW_BYTES, Flow, FlowConfig, FlowStats, FlowTable, SweepClock, TCP_SESSION_BYTES,
};
use netsieve_packet::reassembly::OverlapPolicy;
use netsieve_packet::{Capture, Decoder, Frame, Packet};
use netsieve_rules::{Classifications, Loaded, ThresholdConfig, Vars};
use serde_json::json;

use crate::config;
use crate::interrupt::Interrupt;

#[derive(ClapArgs)]
pub struct Args {
    /// Capture file (pcap or pcapng), a directory of them, or - for standard input.
    /// Repeat to read several files as one stream of time.
    #[arg(short = 'r', required = true, num_args = 1..)]
    read: Vec<PathBuf>,
    /// Rule file; repeat for several.
    #[arg(short = 'S', required = true, num_args = 1..)]
    rules: Vec<PathBuf>,
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
    /// Detection threads (1 to 1024). Flows are spread over them by a hash of their
    /// addresses and ports; alerts are merged back in packet order, so the output is the
    /// same for every value.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=MAX_THREADS as i64))]
    threads: u16,
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
    #[arg(long)]
    bpf: Option<String>,
    /// Accepted for compatibility with Suricata's command line; ignored.
    #[arg(long)]
    runmode: Option<String>,
}

/// The most detection threads `--threads` takes: far more than any machine's cores, and
/// few enough that each keeps a useful share of the flow table and stream memory.
const MAX_THREADS: usize = 1024;

struct Settings {
    vars: Vars,
    flow: FlowConfig,
    classification: Option<PathBuf>,
    threshold_file: Option<PathBuf>,
    eve: EveOptions,
    build: BuildOptions,
    /// `exception-policy` (the master switch) and `stream.midstream-policy`.
    exception_policy: Option<String>,
    midstream_policy: Option<String>,
    /// `stream.reassembly.to{server,client}-chunk-size`.
    chunk: [u64; 2],
    /// `outputs.eve-log.types.alert.payload-buffer-size`.
    payload_limit: usize,
    /// `app-layer.protocols.http.libhtp.default-config.*` limits.
    http: HttpLimits,
    /// `packet-alert-max`.
    alert_max: usize,
    /// `defrag.trackers` and `defrag.memcap`: datagrams being reassembled, and their bytes.
    defrag_datagrams: usize,
    defrag_bytes: usize,
}

/// What alert records carry beyond the alert (suricata.yaml's
/// `outputs.eve-log.types.alert` options).
#[derive(Clone, Copy, Default)]
struct EveOptions {
    payload: bool,
    payload_printable: bool,
    packet: bool,
    verdict: bool,
}

fn apply_setting(
    s: &mut Settings,
    key: &str,
    value: &str,
    ignored: &mut Vec<String>,
) -> Result<(), String> {
    if let Some(name) = key.strip_prefix("vars.address-groups.") {
        s.vars.addresses.insert(name.to_string(), value.to_string());
    } else if let Some(name) = key.strip_prefix("vars.port-groups.") {
        s.vars.ports.insert(name.to_string(), value.to_string());
    } else if key == "stream.inline" {
        // `auto` means inline only in IPS mode, which --simulate-ips sets anyway.
        s.flow.inline = config::parse_bool(value).unwrap_or(false);
    } else if key == "stream.midstream" {
        s.flow.midstream =
            config::parse_bool(value).ok_or_else(|| format!("{key}: not a boolean: {value}"))?;
    } else if let Some(side) = key
        .strip_prefix("stream.reassembly.")
        .and_then(|k| k.strip_suffix("-chunk-size"))
        .filter(|k| matches!(*k, "toserver" | "toclient"))
    {
        let v = config::parse_size(value).ok_or_else(|| format!("{key}: not a size: {value}"))?;
        s.chunk[usize::from(side == "toclient")] = v;
    } else if let Some(os) = key.strip_prefix("host-os-policy.") {
        let policy = OverlapPolicy::from_os(os)
            .ok_or_else(|| format!("{key}: unknown host OS policy {os:?}"))?;
        for item in value.trim_matches(|c| c == '[' || c == ']').split(',') {
            let item = item.trim().trim_matches('"');
            if item.is_empty() {
                continue;
            }
            let (net, len) = parse_prefix(item)
                .ok_or_else(|| format!("{key}: not an address or network: {item:?}"))?;
            s.flow.policies.push((net, len, policy));
        }
    } else if let Some(cap) = Memcap::of(key) {
        let bytes =
            config::parse_size(value).ok_or_else(|| format!("{key}: not a size: {value}"))?;
        let n = usize::try_from(bytes).unwrap_or(usize::MAX);
        match cap {
            Memcap::Flow => s.flow.max_flows = (n / FLOW_BYTES).max(1),
            Memcap::Stream => s.flow.max_tcp_sessions = (n / TCP_SESSION_BYTES).max(1),
            Memcap::Reassembly => s.flow.stream_memcap = n,
            Memcap::Pending => s.flow.max_pending = n,
            Memcap::Defrag => s.defrag_bytes = n,
        }
    } else if key == "defrag.trackers" {
        s.defrag_datagrams = value
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{key}: not a positive number: {value}"))?;
    } else if key == "stream.reassembly.depth" {
        s.flow.depth =
            config::parse_size(value).ok_or_else(|| format!("{key}: not a size: {value}"))?;
    } else if let Some(opt) = key.strip_prefix("outputs.eve-log.types.alert.") {
        let on = config::parse_bool(value);
        match opt {
            "payload" => s.eve.payload = on.unwrap_or(false),
            "payload-printable" => s.eve.payload_printable = on.unwrap_or(false),
            "packet" => s.eve.packet = on.unwrap_or(false),
            "verdict" => s.eve.verdict = on.unwrap_or(false),
            "payload-buffer-size" => {
                s.payload_limit = config::parse_size(value)
                    .ok_or_else(|| format!("{key}: not a size: {value}"))?
                    as usize;
            }
            _ => ignored.push(key.to_string()),
        }
    } else if let Some(opt) = key.strip_prefix("app-layer.protocols.http.libhtp.default-config.") {
        let size =
            || config::parse_size(value).ok_or_else(|| format!("{key}: not a size: {value}"));
        match opt {
            "request-body-limit" => s.http.request_body = size()? as usize,
            "response-body-limit" => s.http.response_body = size()? as usize,
            "response-body-decompress-layer-limit" => s.http.decompress_layers = size()? as usize,
            _ => ignored.push(key.to_string()),
        }
    } else if key == "packet-alert-max" {
        // Suricata takes 1 to 65535 and falls back to its default (15) otherwise.
        s.alert_max = value
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=65535).contains(n))
            .unwrap_or(15);
    } else if key == "exception-policy" {
        s.exception_policy = Some(value.to_string());
    } else if key == "stream.midstream-policy" {
        s.midstream_policy = Some(value.to_string());
    } else if key == "action-order" {
        s.build.set_action_order(value)?;
    } else if key == "threshold-file" {
        s.threshold_file = Some(PathBuf::from(value));
    } else if key == "classification-file" {
        s.classification = Some(PathBuf::from(value));
    } else {
        ignored.push(key.to_string());
    }
    Ok(())
}

/// Refuses variables that expand past the rules crate's bound (variables listing each
/// other many times grow exponentially), naming them; other errors in a variable are
/// reported with the rules that use it.
fn check_var_sizes(vars: &Vars) -> Result<(), String> {
    let mut names: Vec<(&str, &String)> = vars
        .addresses
        .keys()
        .map(|k| ("address-groups", k))
        .chain(vars.ports.keys().map(|k| ("port-groups", k)))
        .collect();
    names.sort();
    for (group, name) in names {
        let r = if group == "address-groups" {
            vars.address(&format!("${name}")).err()
        } else {
            vars.port(&format!("${name}")).err()
        };
        if let Some(e) = r.filter(|e| e.0.contains("expands to more than")) {
            return Err(format!("vars.{group}.{name}: {e}"));
        }
    }
    Ok(())
}

/// The memory caps settings set, by their suricata.yaml names.
#[derive(Clone, Copy)]
enum Memcap {
    /// `flow.memcap`: flows held, at `FLOW_BYTES` a flow.
    Flow,
    /// `stream.memcap`: TCP sessions held, at `TCP_SESSION_BYTES` a session.
    Stream,
    /// `stream.reassembly.memcap`: stream bytes held by all flows.
    Reassembly,
    /// `stream.reassembly.max-pending` (netsieve's): out-of-order bytes per stream.
    Pending,
    /// `defrag.memcap`: fragment bytes held.
    Defrag,
}

impl Memcap {
    fn of(key: &str) -> Option<Memcap> {
        Some(match key {
            "flow.memcap" => Memcap::Flow,
            "stream.memcap" => Memcap::Stream,
            "stream.reassembly.memcap" => Memcap::Reassembly,
            "stream.reassembly.max-pending" => Memcap::Pending,
            "defrag.memcap" => Memcap::Defrag,
            _ => return None,
        })
    }
}

/// An address or a network in CIDR form: (network, prefix length).
fn parse_prefix(s: &str) -> Option<(IpAddr, u8)> {
    let (a, len) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l.parse::<u8>().ok()?)),
        None => (s, None),
    };
    let ip: IpAddr = a.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let len = len.unwrap_or(max);
    (len <= max).then_some((ip, len))
}

/// The policy for TCP flows picked up midstream, as Suricata resolves it:
/// `stream.midstream-policy`, else the `exception-policy` master switch, else ignore.
/// With `stream.midstream` on, only ignore, pass-flow and bypass apply (a master
/// switch of `auto` or `drop-flow` then means ignore).
fn midstream_policy(s: &Settings, ips: bool) -> Result<ExceptionPolicy, String> {
    let (key, value) = match (&s.midstream_policy, &s.exception_policy) {
        (Some(v), _) => ("stream.midstream-policy", v),
        (None, Some(v)) => ("exception-policy", v),
        (None, None) => return Ok(ExceptionPolicy::Ignore),
    };
    let p = ExceptionPolicy::parse(value, ips)
        .ok_or_else(|| format!("{key}: unknown exception policy {value:?}"))?;
    Ok(match p {
        ExceptionPolicy::Ignore | ExceptionPolicy::PassFlow => p,
        _ if s.flow.midstream => ExceptionPolicy::Ignore,
        _ => p,
    })
}

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

fn scan(a: Args) -> Result<ExitCode, String> {
    let t_load = Instant::now();
    let mut settings = Settings {
        vars: Vars::default(),
        flow: FlowConfig::default(),
        classification: None,
        threshold_file: None,
        eve: EveOptions::default(),
        build: BuildOptions::default(),
        exception_policy: None,
        midstream_policy: None,
        chunk: DetectOptions::default().chunk,
        payload_limit: DetectOptions::default().payload_limit,
        http: HttpLimits::default(),
        alert_max: DetectOptions::default().alert_max,
        defrag_datagrams: Defrag::default().max_datagrams,
        defrag_bytes: Defrag::default().max_bytes,
    };
    let mut ignored = Vec::new();
    if let Some(c) = &a.config {
        let text = std::fs::read_to_string(c).map_err(|e| format!("{}: {e}", c.display()))?;
        let flat =
            config::flatten(&text).map_err(|e| format!("{}:{e} (not valid YAML)", c.display()))?;
        for (k, v) in flat {
            apply_setting(&mut settings, &k, &v, &mut ignored)?;
        }
        ignored.retain(|k| {
            !k.starts_with("vars.") && !k.starts_with("outputs.") && !k.starts_with("logging.")
        });
    }
    for kv in &a.set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set {kv}: expected KEY=VALUE"))?;
        apply_setting(&mut settings, k.trim(), v.trim(), &mut ignored)?;
    }
    if !ignored.is_empty() {
        eprintln!(
            "netsieve scan: warning: {} setting(s) not used by netsieve (e.g. {})",
            ignored.len(),
            ignored
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    check_var_sizes(&settings.vars)?;
    settings.flow.inline |= a.simulate_ips;
    let checksums = match a.checksums.as_deref() {
        None | Some("auto") => Checksums::Auto,
        Some("all") => Checksums::All,
        Some("none") => Checksums::None,
        Some(x) => return Err(format!("-k {x}: expected all, none or auto")),
    };

    // Rules.
    let mut loaded = Loaded::default();
    for f in &a.rules {
        loaded.add_file(f, &settings.vars)?;
    }
    loaded.dedup();
    for e in &loaded.errors {
        eprintln!("netsieve scan: rule skipped: {e}");
    }
    let parsed = loaded.rules.len();
    let failed = loaded.errors.len();
    if parsed == 0 && failed > 0 {
        return Err(format!("all {failed} rules failed to load"));
    }
    let classes = match &settings.classification {
        Some(p) if p.exists() => Classifications::parse(
            &std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
        ),
        _ => Classifications::bundled(),
    };
    if a.mpm == "ac" {
        settings.build.mpm = Mpm::Ac;
    }
    let set = RuleSet::build(loaded.rules, &classes, settings.build);
    for (_, e) in &set.stats.compile_errors {
        eprintln!("netsieve scan: rule skipped: {e}");
    }
    let threshold_config = match &settings.threshold_file {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let c = ThresholdConfig::parse(&text, &settings.vars);
            for e in &c.errors {
                eprintln!(
                    "netsieve scan: threshold entry skipped: {}:{e}",
                    p.display()
                );
            }
            Some(c)
        }
        None => None,
    };
    let set = Arc::new(set);
    let load_time = t_load.elapsed();

    // Inputs are checked before the outputs are touched: a mistyped -r leaves the
    // eve.json and fast.log of an earlier run as they were.
    let mut capture_filter = a.bpf.as_deref().map(CaptureFilter::new).transpose()?;
    let mut cap = Capture::open(&a.read).map_err(|e| e.to_string())?;

    // Outputs.
    std::fs::create_dir_all(&a.log_dir).map_err(|e| format!("{}: {e}", a.log_dir.display()))?;
    let open = |name: &str| -> Result<Output, String> {
        let p = a.log_dir.join(name);
        File::create(&p)
            .map(|f| Output {
                name: p.display().to_string(),
                w: BufWriter::with_capacity(1 << 16, f),
            })
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let mut eve = open("eve.json")?;
    let mut fast = open("fast.log")?;
    let total_bytes: u64 = netsieve_packet::capture::expand_inputs(&a.read)
        .ok()
        .map(|v| {
            v.iter()
                .filter_map(|p| std::fs::metadata(p).ok().map(|m| m.len()))
                .sum()
        })
        .unwrap_or(0);
    let progress = std::io::stderr().is_terminal() && total_bytes > (64 << 20);

    let mut decoder = Decoder::new(checksums != Checksums::None);
    decoder.defrag.max_datagrams = settings.defrag_datagrams;
    decoder.defrag.max_bytes = settings.defrag_bytes;
    // Profiling times the stages of one pipeline.
    let threads = if a.profile { 1 } else { usize::from(a.threads) };
    let mut frame = Frame::default();
    let mut pkt = Packet::default();
    let mut inner = Packet::default();
    let mut stats = RunStats::default();
    let mut auto = AutoChecksum::default();
    let mut sink = Sink {
        set: Arc::clone(&set),
        thresholds: Thresholds::new(&set, threshold_config.as_ref(), a.simulate_ips),
        eve: &mut eve,
        fast: &mut fast,
        alerts: 0,
        opts: settings.eve,
    };
    let det = DetectOptions {
        ips: a.simulate_ips,
        inline: settings.flow.inline,
        keep_bytes: settings.eve.payload || settings.eve.payload_printable || settings.eve.packet,
        midstream: midstream_policy(&settings, a.simulate_ips)?,
        chunk: settings.chunk,
        payload_limit: settings.payload_limit,
        http: settings.http,
        alert_max: settings.alert_max,
    };
    let mut pool = if threads > 1 {
        Some(Pool::start(threads, &set, &settings.flow, det))
    } else {
        None
    };
    let mut inline = Worker::new(&set, &settings.flow, 1, det);
    let mut alerts: Vec<Alert> = Vec::new();
    let mut clock = SweepClock::default();
    let t_scan = Instant::now();
    let mut capture_errors = 0usize;
    let mut undecoded_links: Vec<(String, u32)> = Vec::new();
    let mut decode_time = Duration::ZERO;
    if a.profile {
        inline.det.prof = Some(Profile::default());
    }
    let interrupt = Interrupt::install();
    loop {
        if interrupt.requested() {
            // Stop between packets; the run then ends as at the end of its input.
            eprintln!("netsieve scan: interrupted; finishing what was read");
            break;
        }
        match cap.next(&mut frame) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                // The damaged file ends here; the others are still read.
                eprintln!("netsieve scan: {e}");
                capture_errors += 1;
                continue;
            }
        }
        if let Some(f) = capture_filter.as_mut()
            && !f.accepts(&frame)?
        {
            continue;
        }
        stats.packets += 1;
        stats.bytes += frame.data.len() as u64;
        if !decodes_link(frame.linktype) {
            // Read, counted, and reported once per file and link type: nothing in it
            // can be inspected.
            stats.undecoded += 1;
            let seen = (cap.file_name().to_string(), frame.linktype);
            if !undecoded_links.contains(&seen) {
                eprintln!(
                    "netsieve scan: {}: link type {} is not one netsieve decodes; its packets are not inspected",
                    seen.0, seen.1
                );
                undecoded_links.push(seen);
            }
        }
        let t_dec = a.profile.then(Instant::now);
        decoder.decode(&frame, stats.packets, &mut pkt);
        if let Some(t) = t_dec {
            decode_time += t.elapsed();
        }
        if checksums == Checksums::Auto {
            auto.observe(&pkt, &mut decoder);
        }
        let bad = pkt.bad_checksum && decoder.checksums;
        if bad {
            stats.bad_checksum += 1;
        }
        // A segment with a wrong checksum would not reach the receiver: its payload
        // stays out of the reassembled stream, but the packet itself is inspected (as
        // Suricata does; captures taken on the sending host often have such packets).
        if clock.due(pkt.ts) {
            match pool.as_mut() {
                Some(pool) => pool.sweep(pkt.ts, stats.packets),
                None => {
                    alerts.clear();
                    inline.sweep(pkt.ts, stats.packets, &mut alerts);
                    for al in &alerts {
                        sink.emit(al)?;
                    }
                }
            }
        }
        // The packet, then the packets of the tunnels it carries, innermost last.
        let mut track = !bad;
        loop {
            let t_dec = a.profile.then(Instant::now);
            let more = decoder.decode_inner(&pkt, &mut inner);
            if let Some(t) = t_dec {
                decode_time += t.elapsed();
            }
            match pool.as_mut() {
                Some(pool) => pool.push(std::mem::take(&mut pkt), track, &mut sink)?,
                None => {
                    alerts.clear();
                    inline.process(&pkt, track, &mut alerts);
                    for al in &alerts {
                        sink.emit(al)?;
                    }
                }
            }
            if !more {
                break;
            }
            std::mem::swap(&mut pkt, &mut inner);
            track = !(pkt.bad_checksum && decoder.checksums);
        }
        if progress && stats.packets % 100_000 == 0 {
            eprint!(
                "\r{} packets, {:.0} MB of {:.0} MB, {} alerts",
                stats.packets,
                stats.bytes as f64 / 1e6,
                total_bytes as f64 / 1e6,
                sink.alerts
            );
        }
    }
    // Flows still open end with the input: their streams are inspected to the end.
    alerts.clear();
    inline.end(stats.packets + 1, &mut alerts);
    for al in &alerts {
        sink.emit(al)?;
    }
    let mut evaluated = inline.det.evaluated;
    let profile = inline.det.prof.map(|p| (p, inline.flow_time));
    stats.flows = inline.flows.stats.clone();
    if let Some(pool) = pool.take() {
        let (flows, ev) = pool.finish(stats.packets + 1, &mut sink)?;
        add_flow_stats(&mut stats.flows, &flows);
        evaluated += ev;
    }
    stats.alerts = sink.alerts;
    drop(sink);
    if progress {
        eprintln!();
    }
    eve.flush().map_err(|e| e.to_string())?;
    fast.flush().map_err(|e| e.to_string())?;
    let scan_time = t_scan.elapsed();

    let s = &set.stats;
    let summary = json!({
        "packets": stats.packets,
        "bytes": stats.bytes,
        "flows": stats.flows.created,
        "flows_evicted": stats.flows.evicted,
        "established_flows_evicted": stats.flows.evicted_established,
        "alerts": stats.alerts,
        "bad_checksum_packets": stats.bad_checksum,
        "undecoded_link_type_packets": stats.undecoded,
        "rules": {
            "parsed": parsed,
            "failed": failed + s.compile_errors.len(),
            "inspected": s.inspected,
            "waiting_for_app_layer": s.waiting_app_layer,
            "app_layer_missing": s.app_missing,
            "transaction_rules": s.app_layer,
            "unsupported_keyword": s.unsupported.values().sum::<usize>(),
            "pcre_regex_crate": s.pcre_linear,
            "pcre_pcre2": s.pcre_backtracking,
        },
        "load_seconds": load_time.as_secs_f64(),
        "scan_seconds": scan_time.as_secs_f64(),
        "gbit_per_second": stats.bytes as f64 * 8.0 / scan_time.as_secs_f64().max(1e-9) / 1e9,
        "prefilter_bytes": set.prefilter_bytes(),
        "port_groups": { "tcp": set.groups[0].ports.len(), "udp": set.groups[1].ports.len() },
        "mpm": a.mpm,
        "candidates_evaluated": evaluated,
        "threads": threads,
    });
    let mut summary = summary;
    if let Some((p, flow_time)) = profile {
        let eval = p.detect.saturating_sub(p.app + p.prefilter);
        let other = scan_time.saturating_sub(decode_time + flow_time + p.detect);
        let stages = [
            ("decode", decode_time),
            ("flow_and_reassembly", flow_time),
            ("app_layer", p.app),
            ("prefilter", p.prefilter),
            ("rule_evaluation", eval),
            ("capture_and_output", other),
        ];
        let mut line = String::from("netsieve scan: profile:");
        let mut obj = serde_json::Map::new();
        for (name, d) in stages {
            let share = 100.0 * d.as_secs_f64() / scan_time.as_secs_f64().max(1e-9);
            line.push_str(&format!(" {name} {:.3} s ({share:.0}%),", d.as_secs_f64()));
            obj.insert(name.into(), json!(d.as_secs_f64()));
        }
        line.pop();
        eprintln!("{line}");
        summary["profile_seconds"] = serde_json::Value::Object(obj);
    }
    eprintln!(
        "netsieve scan: {} packets, {:.1} MB, {} flows, {} alerts; rules: {} inspected, {} waiting for app-layer, {} unsupported keyword, {} failed; load {:.3} s, scan {:.3} s ({:.2} Gbit/s)",
        stats.packets,
        stats.bytes as f64 / 1e6,
        stats.flows.created,
        stats.alerts,
        s.inspected,
        s.waiting_app_layer,
        s.unsupported.values().sum::<usize>(),
        failed + s.compile_errors.len(),
        load_time.as_secs_f64(),
        scan_time.as_secs_f64(),
        summary["gbit_per_second"].as_f64().unwrap_or(0.0),
    );
    if let Some(p) = &a.stats_json {
        std::fs::write(
            p,
            serde_json::to_string_pretty(&summary).unwrap_or_default(),
        )
        .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if capture_errors > 0 {
        eprintln!(
            "netsieve scan: {capture_errors} capture file(s) damaged; every alert found was written"
        );
    }
    if stats.undecoded > 0 {
        eprintln!(
            "netsieve scan: {} packets of link types netsieve does not decode were not inspected",
            stats.undecoded
        );
    }
    if let Some(code) = interrupt.exit_code() {
        return Ok(code);
    }
    if capture_errors > 0 || stats.undecoded > 0 {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Checksums {
    All,
    None,
    Auto,
}

/// Suricata's `checksum-checks: auto` for capture files: validation stays on unless
/// more than 10% of the first 1,000 checked packets are wrong (a capture taken with
/// checksum offloading), then it is switched off.
#[derive(Default)]
struct AutoChecksum {
    seen: u64,
    bad: u64,
    decided: bool,
}

impl AutoChecksum {
    fn observe(&mut self, p: &Packet, d: &mut Decoder) {
        if self.decided || p.ip.is_none() {
            return;
        }
        self.seen += 1;
        self.bad += p.bad_checksum as u64;
        if self.bad * 10 > self.seen.max(10) {
            d.checksums = false;
            self.decided = true;
        } else if self.seen >= 1000 {
            self.decided = true;
        }
    }
}

#[derive(Default)]
struct RunStats {
    packets: u64,
    bytes: u64,
    /// Packets of link types the decoder does not read.
    undecoded: u64,
    flows: FlowStats,
    alerts: u64,
    bad_checksum: u64,
}

fn proto_name(p: u8) -> String {
    match p {
        6 => "TCP".into(),
        17 => "UDP".into(),
        1 => "ICMP".into(),
        58 => "IPv6-ICMP".into(),
        4 => "IP-in-IP".into(),
        41 => "IPv6".into(),
        47 => "GRE".into(),
        n => n.to_string(),
    }
}

/// `YYYY-MM-DDTHH:MM:SS.uuuuuu+0000` (UTC).
fn timestamp(ts: Duration) -> String {
    let (date, time) = civil(ts);
    format!("{date}T{time}.{:06}+0000", ts.subsec_micros())
}

/// An output file whose errors name it (a full disk says which file it stopped).
struct Output {
    name: String,
    w: BufWriter<File>,
}

impl Output {
    fn named(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(e.kind(), format!("{}: {e}", self.name))
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.write(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush().map_err(|e| self.named(e))
    }
}

/// Where alerts go: thresholds (which count across flows, so across workers) applied in
/// packet order, then eve.json and fast.log.
struct Sink<'a> {
    set: Arc<RuleSet>,
    thresholds: Thresholds,
    eve: &'a mut Output,
    fast: &'a mut Output,
    alerts: u64,
    opts: EveOptions,
}

impl Sink<'_> {
    fn emit(&mut self, al: &Alert) -> Result<(), String> {
        let mut al = al.clone();
        if !self.thresholds.admit(&self.set, &mut al) {
            return Ok(());
        }
        self.alerts += 1;
        write_alert(self.eve, self.fast, &self.set, &al, self.opts).map_err(|e| e.to_string())
    }
}

/// One detection worker: a flow table and a detector.
struct Worker {
    flows: FlowTable<FlowData>,
    det: Detector,
    /// Time in the flow table (tracking and reassembly), when profiling.
    flow_time: Duration,
}

impl Worker {
    /// A worker holding `1 / share` of the flow and stream-memory budget.
    fn new(set: &Arc<RuleSet>, flow: &FlowConfig, share: usize, det: DetectOptions) -> Worker {
        let mut cfg = flow.clone();
        cfg.max_flows = (cfg.max_flows / share).max(1);
        cfg.max_tcp_sessions = (cfg.max_tcp_sessions / share).max(1);
        cfg.stream_memcap = (cfg.stream_memcap / share).max(1 << 20);
        Worker {
            flows: FlowTable::new(cfg),
            det: Detector::new(Arc::clone(set), det),
            flow_time: Duration::ZERO,
        }
    }

    fn process(&mut self, pkt: &Packet, track_stream: bool, out: &mut Vec<Alert>) {
        let n = out.len();
        let t = self.det.prof.is_some().then(Instant::now);
        let flow = self.flows.packet(pkt, track_stream);
        if let Some(t) = t {
            self.flow_time += t.elapsed();
        }
        match flow {
            // Inline, a segment that overlaps the stream with other bytes goes on as
            // the stream holds it (and is inspected so).
            Some((f, obs)) => match &obs.normalized {
                Some(bytes) => {
                    let mut q = pkt.clone();
                    q.rewrite_tcp_payload(bytes);
                    self.det.inspect(&q, Some((f, &obs)), out)
                }
                None => self.det.inspect(pkt, Some((f, &obs)), out),
            },
            None => self.det.inspect(pkt, None, out),
        }
        // Flows this packet ended (expired, or evicted for room) come before it.
        let retired = self.flows.take_retired();
        if !retired.is_empty() {
            let mut ended = Vec::new();
            self.finish_flows(retired, pkt.num, &mut ended);
            out.splice(n..n, ended);
        }
    }

    /// Sweeps idle flows before packet `at`, finishing them.
    fn sweep(&mut self, now: Duration, at: u64, out: &mut Vec<Alert>) {
        self.flows.sweep(now);
        let retired = self.flows.take_retired();
        self.finish_flows(retired, at, out);
    }

    /// Ends every flow (end of input; `at` is past the last packet).
    fn end(&mut self, at: u64, out: &mut Vec<Alert>) {
        let flows = self.flows.drain();
        self.finish_flows(flows, at, out);
    }

    fn finish_flows(&mut self, flows: Vec<Flow<FlowData>>, at: u64, out: &mut Vec<Alert>) {
        for mut f in flows {
            self.det.flow_end(&mut f, at, out);
        }
    }
}

/// Packets per chunk: the unit in which packets go out to the workers and alerts come
/// back to be merged.
const CHUNK: usize = 1024;

/// Worker threads. The reader splits each chunk of packets by flow hash, so a flow
/// always lands on the same worker; each worker returns its alerts for the chunk in
/// packet order, and the chunks are merged and emitted in order.
/// What a worker is sent, in packet order.
// A packet is moved to its worker by value; boxing it would add an allocation per packet.
#[allow(clippy::large_enum_variant)]
enum Work {
    /// A packet and whether its TCP payload may enter the stream.
    Packet(Packet, bool),
    /// Sweep idle flows (at the same place in the packet stream for every worker),
    /// before the packet with this number.
    Sweep(Duration, u64),
    /// The input ended after the packet before this number: end every flow.
    End(u64),
}

struct Pool {
    txs: Vec<mpsc::SyncSender<(u64, Vec<Work>)>>,
    rx: mpsc::Receiver<(u64, Vec<Alert>)>,
    handles: Vec<std::thread::JoinHandle<(FlowStats, u64)>>,
    batches: Vec<Vec<Work>>,
    in_chunk: usize,
    next_chunk: u64,
    next_emit: u64,
    /// Per chunk: replies received and the alerts so far.
    pending: HashMap<u64, (usize, Vec<Alert>)>,
}

impl Pool {
    fn start(n: usize, set: &Arc<RuleSet>, flow: &FlowConfig, det: DetectOptions) -> Pool {
        let (res_tx, rx) = mpsc::channel();
        let mut txs = Vec::new();
        let mut handles = Vec::new();
        for _ in 0..n {
            let (tx, wrx) = mpsc::sync_channel::<(u64, Vec<Work>)>(4);
            let mut w = Worker::new(set, flow, n, det);
            let res_tx = res_tx.clone();
            handles.push(std::thread::spawn(move || {
                for (chunk, pkts) in wrx {
                    let mut out = Vec::new();
                    for work in &pkts {
                        match work {
                            Work::Packet(p, track) => w.process(p, *track, &mut out),
                            Work::Sweep(now, at) => w.sweep(*now, *at, &mut out),
                            Work::End(at) => w.end(*at, &mut out),
                        }
                    }
                    if res_tx.send((chunk, out)).is_err() {
                        break;
                    }
                }
                (w.flows.stats.clone(), w.det.evaluated)
            }));
            txs.push(tx);
        }
        Pool {
            txs,
            rx,
            handles,
            batches: (0..n).map(|_| Vec::new()).collect(),
            in_chunk: 0,
            next_chunk: 0,
            next_emit: 0,
            pending: HashMap::new(),
        }
    }

    fn push(&mut self, p: Packet, track: bool, sink: &mut Sink<'_>) -> Result<(), String> {
        let n = self.txs.len() as u64;
        let w = netsieve_packet::flow::flow_hash(&p).map_or(0, |h| h % n) as usize;
        self.batches[w].push(Work::Packet(p, track));
        self.in_chunk += 1;
        if self.in_chunk == CHUNK {
            self.send()?;
            // Keep a bounded number of chunks in flight.
            while self.next_chunk - self.next_emit > 2 * n {
                self.receive(sink)?;
            }
        }
        Ok(())
    }

    fn sweep(&mut self, now: Duration, at: u64) {
        for b in &mut self.batches {
            b.push(Work::Sweep(now, at));
        }
    }

    /// Sends the current chunk: one batch (maybe empty) to every worker.
    fn send(&mut self) -> Result<(), String> {
        for (tx, b) in self.txs.iter().zip(&mut self.batches) {
            tx.send((self.next_chunk, std::mem::take(b)))
                .map_err(|_| "a detection thread stopped".to_string())?;
        }
        self.next_chunk += 1;
        self.in_chunk = 0;
        Ok(())
    }

    /// Waits for one reply, then emits every chunk that is complete, in order.
    fn receive(&mut self, sink: &mut Sink<'_>) -> Result<(), String> {
        let (chunk, alerts) = loop {
            match self.rx.recv_timeout(Duration::from_secs(1)) {
                Ok(r) => break r,
                // A worker that died would leave the others waiting for work and this
                // thread waiting for its reply.
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if self.handles.iter().any(|h| h.is_finished()) {
                        return Err("a detection thread stopped".into());
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err("the detection threads stopped".into());
                }
            }
        };
        let e = self.pending.entry(chunk).or_default();
        e.0 += 1;
        e.1.extend(alerts);
        while let Some((got, _)) = self.pending.get(&self.next_emit) {
            if *got < self.txs.len() {
                break;
            }
            let (_, mut alerts) = self.pending.remove(&self.next_emit).expect("present");
            // A packet's alerts come from one worker, in evaluation order: a stable
            // sort by packet number (flow ends first, by flow) restores the
            // single-threaded order.
            alerts.sort_by_key(Alert::order);
            for al in &alerts {
                sink.emit(al)?;
            }
            self.next_emit += 1;
        }
        Ok(())
    }

    /// Flushes the last chunk, ends every flow (`at` is past the last packet), drains
    /// the workers and returns their flow counters and candidates evaluated, summed.
    fn finish(mut self, at: u64, sink: &mut Sink<'_>) -> Result<(FlowStats, u64), String> {
        for b in &mut self.batches {
            b.push(Work::End(at));
        }
        self.send()?;
        while self.next_emit < self.next_chunk {
            self.receive(sink)?;
        }
        self.txs.clear();
        let mut totals = (FlowStats::default(), 0);
        for h in self.handles {
            let (f, e) = h
                .join()
                .map_err(|_| "a detection thread panicked".to_string())?;
            add_flow_stats(&mut totals.0, &f);
            totals.1 += e;
        }
        Ok(totals)
    }
}

fn add_flow_stats(to: &mut FlowStats, s: &FlowStats) {
    to.created += s.created;
    to.evicted += s.evicted;
    to.evicted_established += s.evicted_established;
    to.expired += s.expired;
}

fn civil(ts: Duration) -> (String, String) {
    let secs = ts.as_secs() as i64;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!("{:02}:{:02}:{:02}", sod / 3600, sod / 60 % 60, sod % 60),
    )
}

fn write_alert(
    eve: &mut impl Write,
    fast: &mut impl Write,
    set: &RuleSet,
    al: &Alert,
    opts: EveOptions,
) -> std::io::Result<()> {
    let s = &set.sigs[al.sig as usize];
    let r = &s.rule;
    let action = if al.blocked { "blocked" } else { "allowed" };
    let mut rec = json!({
        "timestamp": timestamp(al.ts),
        "event_type": "alert",
        "src_ip": ip_str(al.src),
        "dest_ip": ip_str(al.dst),
        "proto": proto_name(al.proto),
        "ip_v": if al.src.is_ipv4() { 4 } else { 6 },
        "pcap_cnt": al.packet,
        "pkt_src": if al.pseudo.is_some() { "stream (flow timeout)" } else { "wire/pcap" },
        "alert": {
            "action": action,
            "gid": r.gid,
            "signature_id": r.sid,
            "rev": r.rev,
            "signature": r.msg,
            "category": s.category,
            "severity": s.severity,
        },
    });
    let obj = rec.as_object_mut().expect("object");
    if al.pseudo.is_some() {
        // A pseudo packet was not read from the capture.
        obj.remove("pcap_cnt");
    }
    if opts.verdict {
        let action = match al.verdict {
            Verdict::Alert => "alert",
            Verdict::Pass => "pass",
            Verdict::Drop => "drop",
        };
        obj.insert("verdict".into(), json!({ "action": action }));
    }
    if !al.traffic.is_empty() {
        // Flowbits named traffic/id/NAME and traffic/label/NAME tag the flow's traffic.
        let mut t = serde_json::Map::new();
        for &b in &al.traffic {
            let name = &set.flowbit_names[b as usize];
            for (prefix, key) in [("traffic/id/", "id"), ("traffic/label/", "label")] {
                if let Some(v) = name.strip_prefix(prefix) {
                    t.entry(key)
                        .or_insert_with(|| json!([]))
                        .as_array_mut()
                        .expect("array")
                        .push(json!(v));
                }
            }
        }
        if !t.is_empty() {
            obj.insert("traffic".into(), serde_json::Value::Object(t));
        }
    }
    if let Some(f) = &al.flow {
        // The flow's counters as of this packet, as Suricata's alert record has them.
        obj.insert(
            "flow".into(),
            json!({
                "pkts_toserver": f.pkts[0],
                "pkts_toclient": f.pkts[1],
                "bytes_toserver": f.bytes[0],
                "bytes_toclient": f.bytes[1],
                "start": timestamp(f.start),
                "src_ip": ip_str(f.client.0),
                "dest_ip": ip_str(f.server.0),
                "src_port": f.client.1,
                "dest_port": f.server.1,
            }),
        );
    }
    if let Some(t) = &al.tunnel {
        let mut tun = json!({
            "src_ip": ip_str(t.src),
            "dest_ip": ip_str(t.dst),
            "proto": proto_name(t.proto),
            "depth": t.depth - 1,
        });
        if t.proto == 17 {
            tun["src_port"] = json!(t.sport);
            tun["dest_port"] = json!(t.dport);
        }
        obj.insert("tunnel".into(), tun);
        let v = if t.src.is_ipv4() { "ipv4" } else { "ipv6" };
        obj.insert("pkt_src".into(), json!(format!("{v} tunnel")));
    }
    if let Some(b) = &al.bytes {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD;
        let (payload, packet) = (&b.0, &b.1);
        if opts.payload {
            obj.insert("payload".into(), json!(b64.encode(payload)));
        }
        if opts.payload_printable {
            let text: String = payload
                .iter()
                .map(|&c| {
                    if c.is_ascii_graphic() || c == b' ' {
                        c as char
                    } else {
                        '.'
                    }
                })
                .collect();
            obj.insert("payload_printable".into(), json!(text));
        }
        if opts.payload || opts.payload_printable {
            obj.insert("stream".into(), json!(u8::from(al.stream)));
        }
        if opts.packet {
            if !packet.is_empty() {
                obj.insert("packet".into(), json!(b64.encode(packet)));
            }
            obj.insert(
                "packet_info".into(),
                json!({"linktype": al.linktype, "linktype_name": linktype_name(al.linktype)}),
            );
        }
    }
    if al.vlan[0] != 0 {
        let v: Vec<u16> = al.vlan.iter().copied().filter(|&v| v != 0).collect();
        obj.insert("vlan".into(), json!(v));
    }
    let has_ports = matches!(al.proto, 6 | 17);
    if has_ports {
        obj.insert("src_port".into(), json!(al.sport));
        obj.insert("dest_port".into(), json!(al.dport));
    }
    if let Some((itype, icode)) = al.icmp {
        obj.insert("icmp_type".into(), json!(itype));
        obj.insert("icmp_code".into(), json!(icode));
    }
    if let Some(id) = al.flow_id {
        obj.insert("flow_id".into(), json!(id));
    }
    if let Some(d) = al.dir {
        obj.insert(
            "direction".into(),
            json!(match d {
                Direction::ToServer => "to_server",
                Direction::ToClient => "to_client",
            }),
        );
    }
    if let Some(p) = al.app_proto {
        obj.insert("app_proto".into(), json!(p.name()));
    }
    if let Some(t) = &al.tx {
        obj.insert("tx_id".into(), json!(t.tx_id));
        let mut o = serde_json::Map::new();
        for (k, v) in &t.strings {
            o.insert((*k).into(), json!(v));
        }
        for (k, v) in &t.numbers {
            o.insert((*k).into(), json!(v));
        }
        if let Some(d) = &t.dns {
            // Suricata 8 logs an alert's DNS message in its version 3 form.
            o.insert("version".into(), json!(3));
            o.insert(
                "type".into(),
                json!(if d.response { "response" } else { "request" }),
            );
            o.insert("id".into(), json!(d.id));
            o.insert("opcode".into(), json!(d.opcode));
            if d.response {
                o.insert("rcode".into(), json!(d.rcode));
            }
            let q: Vec<_> = d
                .queries
                .iter()
                .map(|(name, ty)| json!({"rrname": name, "rrtype": ty}))
                .collect();
            o.insert("queries".into(), json!(q));
            if !d.answers.is_empty() {
                let a: Vec<_> = d
                    .answers
                    .iter()
                    .map(|(name, ty, ttl)| json!({"rrname": name, "rrtype": ty, "ttl": ttl}))
                    .collect();
                o.insert("answers".into(), json!(a));
            }
        }
        if let Some(p) = al.app_proto {
            obj.insert(p.name().into(), serde_json::Value::Object(o));
        }
    }
    if !r.metadata.is_empty() {
        let mut meta = serde_json::Map::new();
        for m in &r.metadata {
            let mut it = m.splitn(2, char::is_whitespace);
            let (Some(k), Some(v)) = (it.next(), it.next()) else {
                continue;
            };
            meta.entry(k.to_string())
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .expect("array")
                .push(json!(v.trim()));
        }
        obj["alert"]
            .as_object_mut()
            .expect("object")
            .insert("metadata".into(), serde_json::Value::Object(meta));
    }
    serde_json::to_writer(&mut *eve, &rec)?;
    eve.write_all(b"\n")?;

    let (date, time) = civil(al.ts);
    let (y, rest) = date.split_at(4);
    let md = &rest[1..].replace('-', "/");
    let ports = |ip: IpAddr, port: u16| {
        if has_ports {
            format!("{}:{port}", ip_str(ip))
        } else {
            ip_str(ip)
        }
    };
    let class = if s.category.is_empty() {
        String::new()
    } else {
        format!("[Classification: {}] ", s.category)
    };
    let drop = if al.blocked { "[Drop] " } else { "" };
    writeln!(
        fast,
        "{md}/{y}-{time}.{:06}  {drop}[**] [{}:{}:{}] {} [**] {class}[Priority: {}] {{{}}} {} -> {}",
        al.ts.subsec_micros(),
        r.gid,
        r.sid,
        r.rev,
        r.msg,
        s.severity,
        proto_name(al.proto),
        ports(al.src, al.sport),
        ports(al.dst, al.dport),
    )
}

/// Addresses as Suricata writes them: IPv6 in full, eight groups of four digits.
fn ip_str(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => a
            .segments()
            .iter()
            .map(|g| format!("{g:04x}"))
            .collect::<Vec<_>>()
            .join(":"),
    }
}

/// libpcap's name for a link type, as Suricata's `packet_info` gives it.
fn linktype_name(l: u32) -> &'static str {
    match l {
        0 => "NULL",
        1 => "EN10MB",
        9 => "PPP",
        12 | 14 | 101 => "RAW",
        104 => "C_HDLC",
        108 => "LOOP",
        113 => "LINUX_SLL",
        228 => "IPv4",
        229 => "IPv6",
        276 => "LINUX_SLL2",
        _ => "UNKNOWN",
    }
}

/// `--bpf`: the expression compiled per link type as frames of each type arrive.
struct CaptureFilter {
    expr: String,
    by_link: Vec<(u32, netsieve_bpf::Filter)>,
}

impl CaptureFilter {
    /// Checks the expression up front: it must compile for at least one link type.
    fn new(expr: &str) -> Result<CaptureFilter, String> {
        use netsieve_bpf::LinkType::*;
        let tries = [Ethernet, Raw, LinuxSll].map(|l| netsieve_bpf::compile(expr, l));
        if let Some(Err(e)) = tries
            .iter()
            .find(|t| t.is_err())
            .filter(|_| tries.iter().all(|t| t.is_err()))
        {
            return Err(format!("--bpf: {}", e.in_expr(expr)));
        }
        Ok(CaptureFilter {
            expr: expr.to_string(),
            by_link: Vec::new(),
        })
    }

    fn accepts(&mut self, frame: &Frame) -> Result<bool, String> {
        let lt = frame.linktype;
        let f = match self.by_link.iter().position(|(l, _)| *l == lt) {
            Some(i) => &self.by_link[i].1,
            None => {
                let link = netsieve_bpf::LinkType::from_linktype(lt).ok_or_else(|| {
                    format!("--bpf: capture filters are not supported on link type {lt}")
                })?;
                let p = netsieve_bpf::compile(&self.expr, link)
                    .map_err(|e| format!("--bpf: {}", e.in_expr(&self.expr)))?;
                self.by_link.push((lt, netsieve_bpf::Filter::new(&p)));
                &self.by_link[self.by_link.len() - 1].1
            }
        };
        Ok(f.run(&frame.data, frame.orig_len) != 0)
    }
}
