//! `netsieve scan`: captures and rules in, Suricata-compatible alerts out.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use netsieve_detect::{Alert, Detector, FlowData, Mpm, RuleSet};
use netsieve_packet::flow::{Direction, FlowConfig, FlowTable};
use netsieve_packet::{Capture, Decoder, Frame, L4, Packet};
use netsieve_rules::{Classifications, Loaded, Vars};
use serde_json::json;

use crate::config;

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
    /// Worker threads (accepted; detection currently runs on one thread).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Prefilter matcher.
    #[arg(long, default_value = "dfc", value_parser = ["dfc", "ac"])]
    mpm: String,
    /// Write the end-of-run summary as JSON to this file.
    #[arg(long)]
    stats_json: Option<PathBuf>,
    /// Accepted for compatibility with Suricata's command line; ignored.
    #[arg(long)]
    runmode: Option<String>,
}

struct Settings {
    vars: Vars,
    flow: FlowConfig,
    classification: Option<PathBuf>,
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
    } else if key == "stream.midstream" {
        s.flow.midstream =
            config::parse_bool(value).ok_or_else(|| format!("{key}: not a boolean: {value}"))?;
    } else if key == "stream.reassembly.depth" {
        s.flow.depth =
            config::parse_size(value).ok_or_else(|| format!("{key}: not a size: {value}"))?;
    } else if key == "classification-file" {
        s.classification = Some(PathBuf::from(value));
    } else {
        ignored.push(key.to_string());
    }
    Ok(())
}

pub fn run(a: Args) -> ExitCode {
    match scan(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("netsieve scan: {e}");
            ExitCode::from(2)
        }
    }
}

fn scan(a: Args) -> Result<ExitCode, String> {
    let t_load = Instant::now();
    let mut settings = Settings {
        vars: Vars::default(),
        flow: FlowConfig::default(),
        classification: None,
    };
    let mut ignored = Vec::new();
    if let Some(c) = &a.config {
        let text = std::fs::read_to_string(c).map_err(|e| format!("{}: {e}", c.display()))?;
        for (k, v) in config::flatten(&text) {
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
    let mpm = if a.mpm == "ac" { Mpm::Ac } else { Mpm::Dfc };
    let set = Arc::new(RuleSet::build(loaded.rules, &classes, mpm));
    for (sid, e) in &set.stats.compile_errors {
        eprintln!("netsieve scan: rule skipped: sid {sid}: {e}");
    }
    let load_time = t_load.elapsed();

    // Outputs.
    std::fs::create_dir_all(&a.log_dir).map_err(|e| format!("{}: {e}", a.log_dir.display()))?;
    let open = |name: &str| -> Result<BufWriter<File>, String> {
        let p = a.log_dir.join(name);
        File::create(&p)
            .map(|f| BufWriter::with_capacity(1 << 16, f))
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let mut eve = open("eve.json")?;
    let mut fast = open("fast.log")?;

    let mut cap = Capture::open(&a.read).map_err(|e| e.to_string())?;
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
    let mut flows: FlowTable<FlowData> = FlowTable::new(settings.flow.clone());
    let mut det = Detector::new(Arc::clone(&set), a.simulate_ips);
    let mut frame = Frame::default();
    let mut pkt = Packet::default();
    let mut alerts: Vec<Alert> = Vec::new();
    let mut stats = RunStats::default();
    let mut auto = AutoChecksum::default();
    let t_scan = Instant::now();
    let mut capture_errors = 0usize;
    loop {
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
        stats.packets += 1;
        stats.bytes += frame.data.len() as u64;
        decoder.decode(&frame, stats.packets, &mut pkt);
        if checksums == Checksums::Auto {
            auto.observe(&pkt, &mut decoder);
        }
        let bad = pkt.bad_checksum && decoder.checksums;
        if bad {
            stats.bad_checksum += 1;
        }
        alerts.clear();
        // A segment with a wrong checksum would not reach the receiver: its payload
        // stays out of the reassembled stream, but the packet itself is inspected (as
        // Suricata does; captures taken on the sending host often have such packets).
        match flows.packet(&pkt, !bad) {
            Some((f, obs)) => det.inspect(&pkt, Some((f, &obs)), &mut alerts),
            None => det.inspect(&pkt, None, &mut alerts),
        }
        for al in &alerts {
            write_alert(&mut eve, &mut fast, &set, al, &pkt).map_err(|e| e.to_string())?;
            stats.alerts += 1;
        }
        if progress && stats.packets % 100_000 == 0 {
            eprint!(
                "\r{} packets, {:.0} MB of {:.0} MB, {} alerts",
                stats.packets,
                stats.bytes as f64 / 1e6,
                total_bytes as f64 / 1e6,
                stats.alerts
            );
        }
    }
    if progress {
        eprintln!();
    }
    eve.flush().map_err(|e| e.to_string())?;
    fast.flush().map_err(|e| e.to_string())?;
    let scan_time = t_scan.elapsed();
    stats.flows = flows.stats.created;

    let s = &set.stats;
    let summary = json!({
        "packets": stats.packets,
        "bytes": stats.bytes,
        "flows": stats.flows,
        "alerts": stats.alerts,
        "bad_checksum_packets": stats.bad_checksum,
        "rules": {
            "parsed": parsed,
            "failed": failed + s.compile_errors.len(),
            "inspected": s.inspected,
            "waiting_for_app_layer": s.waiting_app_layer,
            "unsupported_keyword": s.unsupported.values().sum::<usize>(),
            "pcre_regex_crate": s.pcre_linear,
            "pcre_pcre2": s.pcre_backtracking,
        },
        "load_seconds": load_time.as_secs_f64(),
        "scan_seconds": scan_time.as_secs_f64(),
        "gbit_per_second": stats.bytes as f64 * 8.0 / scan_time.as_secs_f64().max(1e-9) / 1e9,
        "prefilter_bytes": set.prefilter_bytes(),
        "mpm": a.mpm,
        "candidates_evaluated": det.evaluated,
    });
    eprintln!(
        "netsieve scan: {} packets, {:.1} MB, {} flows, {} alerts; rules: {} inspected, {} waiting for app-layer, {} unsupported keyword, {} failed; load {:.3} s, scan {:.3} s ({:.2} Gbit/s)",
        stats.packets,
        stats.bytes as f64 / 1e6,
        stats.flows,
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
    flows: u64,
    alerts: u64,
    bad_checksum: u64,
}

fn proto_name(p: u8) -> String {
    match p {
        6 => "TCP".into(),
        17 => "UDP".into(),
        1 => "ICMP".into(),
        58 => "IPv6-ICMP".into(),
        n => n.to_string(),
    }
}

/// `YYYY-MM-DDTHH:MM:SS.uuuuuu+0000` (UTC).
fn timestamp(ts: Duration) -> String {
    let (date, time) = civil(ts);
    format!("{date}T{time}.{:06}+0000", ts.subsec_micros())
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
    p: &Packet,
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
        "pkt_src": "wire/pcap",
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
    match p.l4 {
        L4::Tcp(_) | L4::Udp { .. } => {
            obj.insert("src_port".into(), json!(al.sport));
            obj.insert("dest_port".into(), json!(al.dport));
        }
        L4::Icmp { itype, icode, .. } => {
            obj.insert("icmp_type".into(), json!(itype));
            obj.insert("icmp_code".into(), json!(icode));
        }
        L4::None => {}
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
    let ports = |ip: IpAddr, port: u16| match p.l4 {
        L4::Tcp(_) | L4::Udp { .. } => format!("{}:{port}", ip_str(ip)),
        _ => ip_str(ip),
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

fn ip_str(ip: IpAddr) -> String {
    ip.to_string()
}
