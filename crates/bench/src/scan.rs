//! `netsieve bench scan`: `netsieve scan` against a peer Suricata, side by side.
//!
//! Both engines read the same capture with the same rules, one after the other in each
//! round (netsieve first in odd rounds, Suricata first in even ones), and the medians
//! of the rounds are reported. Scan time leaves rule loading out on both sides: netsieve
//! reports it in `--stats-json`, Suricata prints it with `-v` as `time elapsed`, counted
//! from the end of its rule loading. Each process's peak RSS comes from `wait4`. The
//! alerts of the last round are compared per (signature, flow) as
//! `../shared/tools/eve-diff` compares them, and per packet (`pcap_cnt`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::Value;

/// What to run.
pub struct Options {
    /// The netsieve binary.
    pub netsieve: PathBuf,
    /// Suricata's command (the reference's `run` wrapper, or a `suricata` binary).
    pub suricata: PathBuf,
    /// Suricata's configuration (alerts only, to do the same work as netsieve).
    pub suricata_config: PathBuf,
    /// The capture both engines read.
    pub input: PathBuf,
    /// Rule sets: a name and its rule files.
    pub rule_sets: Vec<(String, Vec<PathBuf>)>,
    pub rounds: usize,
    /// netsieve's `--threads`; Suricata runs `--runmode single` for 1, `autofp` else.
    pub threads: usize,
    /// Scratch directory for the outputs.
    pub work: PathBuf,
}

/// The two engines raced.
#[derive(Clone, Copy)]
enum Engine {
    Netsieve,
    Suricata,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Netsieve => "netsieve",
            Engine::Suricata => "suricata",
        }
    }

    /// Where this engine writes its outputs for rule set `set`.
    fn out_dir(self, o: &Options, set: &str) -> PathBuf {
        o.work.join(format!("{set}-{}", self.name()))
    }
}

/// One run of one engine.
#[derive(Clone, Debug)]
struct Run {
    scan: f64,
    /// Wall-clock time outside the scan: loading, and shutting down.
    load: f64,
    rss_kb: u64,
}

/// The figures of one rule set.
pub struct Row {
    pub name: String,
    pub netsieve_scan: f64,
    pub suricata_scan: f64,
    pub netsieve_load: f64,
    pub suricata_load: f64,
    pub netsieve_rss_mb: f64,
    pub suricata_rss_mb: f64,
    pub agreement: Agreement,
}

/// Alerts compared per (signature, flow) and per packet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agreement {
    pub ours: usize,
    pub theirs: usize,
    /// Distinct (signature, flow) pairs either engine reported.
    pub pairs: usize,
    /// Pairs with the same number of alerts on both sides.
    pub same_count: usize,
    /// Alerts matched by one of the other side on the same (signature, flow, packet).
    pub same_packet: usize,
}

/// Runs the benchmark, calling `progress` with a line per run.
pub fn run(o: &Options, progress: &mut dyn FnMut(String)) -> Result<Vec<Row>, String> {
    std::fs::create_dir_all(&o.work).map_err(|e| format!("{}: {e}", o.work.display()))?;
    let mut rows = Vec::new();
    for (name, files) in &o.rule_sets {
        // Suricata takes one rule file with -S: both engines get the same concatenation.
        let rules = o.work.join(format!("{name}.rules"));
        concat(files, &rules)?;
        let (mut ns, mut su) = (Vec::new(), Vec::new());
        for round in 0..o.rounds.max(1) {
            let order = if round % 2 == 0 {
                [Engine::Netsieve, Engine::Suricata]
            } else {
                [Engine::Suricata, Engine::Netsieve]
            };
            for engine in order {
                let out = engine.out_dir(o, name);
                let _ = std::fs::remove_dir_all(&out);
                std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
                let r = match engine {
                    Engine::Netsieve => run_netsieve(o, &rules, &out)?,
                    Engine::Suricata => run_suricata(o, &rules, &out)?,
                };
                progress(format!(
                    "{name} round {} {}: scan {:.3} s, load {:.3} s, {} MB",
                    round + 1,
                    engine.name(),
                    r.scan,
                    r.load,
                    r.rss_kb / 1024
                ));
                match engine {
                    Engine::Netsieve => ns.push(r),
                    Engine::Suricata => su.push(r),
                }
            }
        }
        // Read as streams: what the bench holds when it starts the next runs counts in
        // their peak RSS (see `measure`), and eve.json with records is tens of MB.
        let eve = |e: Engine| open(&e.out_dir(o, name).join("eve.json"));
        let agreement = compare(eve(Engine::Netsieve)?, eve(Engine::Suricata)?);
        rows.push(Row {
            name: name.clone(),
            netsieve_scan: median(ns.iter().map(|r| r.scan)),
            suricata_scan: median(su.iter().map(|r| r.scan)),
            netsieve_load: median(ns.iter().map(|r| r.load)),
            suricata_load: median(su.iter().map(|r| r.load)),
            netsieve_rss_mb: median(ns.iter().map(|r| r.rss_kb as f64 / 1024.0)),
            suricata_rss_mb: median(su.iter().map(|r| r.rss_kb as f64 / 1024.0)),
            agreement,
        });
    }
    Ok(rows)
}

fn concat(files: &[PathBuf], to: &Path) -> Result<(), String> {
    let mut all = Vec::new();
    for f in files {
        all.extend(std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?);
        all.push(b'\n');
    }
    std::fs::write(to, all).map_err(|e| format!("{}: {e}", to.display()))
}

fn read(p: &Path) -> Result<String, String> {
    std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn open(p: &Path) -> Result<BufReader<File>, String> {
    File::open(p)
        .map(BufReader::new)
        .map_err(|e| format!("{}: {e}", p.display()))
}

fn run_netsieve(o: &Options, rules: &Path, out: &Path) -> Result<Run, String> {
    let stats = out.join("stats.json");
    let mut c = Command::new(&o.netsieve);
    c.args([
        "scan",
        "-k",
        "none",
        "--threads",
        &o.threads.to_string(),
        "-r",
    ])
    .arg(&o.input)
    .arg("-S")
    .arg(rules)
    .arg("-l")
    .arg(out)
    .arg("--stats-json")
    .arg(&stats)
    // The same configuration as the peer: the same records written.
    .arg("-c")
    .arg(&o.suricata_config);
    let (wall, rss_kb, _) = measure(c)?;
    let s: Value = serde_json::from_str(&read(&stats)?).map_err(|e| format!("{e}"))?;
    let scan = s["scan_seconds"].as_f64().ok_or("no scan_seconds")?;
    Ok(Run {
        scan,
        load: wall - scan,
        rss_kb,
    })
}

fn run_suricata(o: &Options, rules: &Path, out: &Path) -> Result<Run, String> {
    let mut c = Command::new(&o.suricata);
    c.arg("-c")
        .arg(&o.suricata_config)
        .args(["--set", "stream.reassembly.randomize-chunk-size=false"])
        .args([
            "--set",
            "app-layer.protocols.http.libhtp.default-config.randomize-inspection-sizes=false",
        ])
        .args(["-k", "none", "-v", "--runmode"])
        .arg(if o.threads <= 1 { "single" } else { "autofp" })
        .arg("-S")
        .arg(rules)
        .arg("-r")
        .arg(&o.input)
        .arg("-l")
        .arg(out);
    let (wall, rss_kb, log) = measure(c)?;
    let scan = elapsed(&log).ok_or_else(|| {
        format!(
            "Suricata printed no 'time elapsed' (is {} a Suricata?)",
            o.suricata.display()
        )
    })?;
    Ok(Run {
        scan,
        load: wall - scan,
        rss_kb,
    })
}

/// Suricata's scan time: `time elapsed 1.234s` in its `-v` output.
fn elapsed(log: &str) -> Option<f64> {
    let at = log.rfind("time elapsed ")?;
    let rest = &log[at + "time elapsed ".len()..];
    let end = rest.find('s')?;
    rest[..end].trim().parse().ok()
}

/// Runs `c` to its end: wall-clock seconds, peak RSS in KB and what it printed.
///
/// The child is forked, not spawned with `posix_spawn`: that one starts the child in
/// the parent's memory (`vfork`), and Linux then charges the parent's own peak RSS to
/// the child's `ru_maxrss`. A forked child is charged only what the parent holds when
/// it forks, which the bench keeps small. (Measured: after a 300 MB peak, a spawned
/// `true` showed 320 MB, a forked one 10 MB.)
fn measure(mut c: Command) -> Result<(f64, u64, String), String> {
    // SAFETY: the hook does nothing, so it is async-signal-safe; it is there only to
    // make std fork the child (std uses `posix_spawn` when no hook is set).
    unsafe {
        c.pre_exec(|| Ok(()));
    }
    let t = Instant::now();
    let child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{:?}: {e}", c.get_program()))?;
    let pid = child.id() as libc::pid_t;
    // Both pipes are read to their end on threads, so the child never blocks on them.
    let mut child = child;
    let (mut so, mut se) = (child.stdout.take(), child.stderr.take());
    let out = std::thread::spawn(move || read_all(so.as_mut()));
    let err = std::thread::spawn(move || read_all(se.as_mut()));
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child; `status` and `usage` are valid, writable
    // and live across the call.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = t.elapsed().as_secs_f64();
    if r != pid {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    let log = out.join().unwrap_or_default() + &err.join().unwrap_or_default();
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) > 1 {
        return Err(format!(
            "{:?} failed ({status}): {}",
            c.get_program(),
            log.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
        ));
    }
    Ok((wall, usage.ru_maxrss as u64, log))
}

fn read_all(r: Option<&mut impl std::io::Read>) -> String {
    let mut s = Vec::new();
    if let Some(r) = r {
        let _ = r.read_to_end(&mut s);
    }
    String::from_utf8_lossy(&s).into_owned()
}

fn median(v: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = v.collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// An alert's (signature, flow): the flow by protocol and its two ends in either order.
type PairKey = (u64, String, [String; 2]);

/// The alerts of an eve.json: per (signature, flow), their packets (`pcap_cnt`, or
/// none for a flow's end).
fn alerts(eve: impl BufRead) -> HashMap<PairKey, Vec<Option<u64>>> {
    let mut m: HashMap<PairKey, Vec<Option<u64>>> = HashMap::new();
    for line in eve.split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(v) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if v["event_type"] != "alert" {
            continue;
        }
        let end = |ip: &str, port: &str| format!("{}:{}", v[ip], v[port]);
        let mut ends = [end("src_ip", "src_port"), end("dest_ip", "dest_port")];
        ends.sort();
        let sid = v["alert"]["signature_id"].as_u64().unwrap_or(0);
        let key = (sid, v["proto"].to_string(), ends);
        m.entry(key).or_default().push(v["pcap_cnt"].as_u64());
    }
    m
}

/// Compares two eve.json streams alert for alert.
pub fn compare(ours: impl BufRead, theirs: impl BufRead) -> Agreement {
    let (a, b) = (alerts(ours), alerts(theirs));
    let mut g = Agreement {
        ours: a.values().map(Vec::len).sum(),
        theirs: b.values().map(Vec::len).sum(),
        ..Agreement::default()
    };
    let mut keys: Vec<&PairKey> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    g.pairs = keys.len();
    let none = Vec::new();
    for k in keys {
        let (x, y) = (a.get(k).unwrap_or(&none), b.get(k).unwrap_or(&none));
        g.same_count += usize::from(x.len() == y.len());
        // Same packets, as multisets.
        let mut left: HashMap<Option<u64>, usize> = HashMap::new();
        for p in y {
            *left.entry(*p).or_default() += 1;
        }
        for p in x {
            if let Some(n) = left.get_mut(p).filter(|n| **n > 0) {
                *n -= 1;
                g.same_packet += 1;
            }
        }
    }
    g
}

/// The report as a Markdown table.
pub fn markdown(o: &Options, rows: &[Row]) -> String {
    let mut s = format!(
        "`netsieve scan` ({}) against Suricata over {} ({} rounds, {} thread(s), medians)\n\n",
        o.netsieve.display(),
        o.input.display(),
        o.rounds.max(1),
        o.threads
    );
    s.push_str("| rules | netsieve scan | Suricata scan | ratio | netsieve load | Suricata load | netsieve RSS | Suricata RSS | RSS ratio | alerts (netsieve / Suricata) | same count per (sid, flow) | same packet |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in rows {
        let g = &r.agreement;
        let pct = |n: usize, d: usize| 100.0 * n as f64 / d.max(1) as f64;
        s.push_str(&format!(
            "| {} | {:.3} s | {:.3} s | **{:.2}x** | {:.3} s | {:.3} s | {:.0} MB | {:.0} MB | {:.2} | {} / {} | {:.1}% of {} | {:.1}% |\n",
            r.name,
            r.netsieve_scan,
            r.suricata_scan,
            r.suricata_scan / r.netsieve_scan.max(1e-9),
            r.netsieve_load,
            r.suricata_load,
            r.netsieve_rss_mb,
            r.suricata_rss_mb,
            r.netsieve_rss_mb / r.suricata_rss_mb.max(1e-9),
            g.ours,
            g.theirs,
            pct(g.same_count, g.pairs),
            g.pairs,
            pct(g.same_packet, g.theirs.max(g.ours)),
        ));
    }
    s.push_str("\nratio: Suricata's scan time over netsieve's (above 1, netsieve is faster). Load: wall-clock time outside the scan (rule loading, start-up and shutdown). Same packet: alerts on the same (signature, flow, pcap_cnt) on both sides, of the larger count.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alert(sid: u64, src: &str, dst: &str, pkt: Option<u64>) -> String {
        let (s, sp) = src.split_once(':').unwrap();
        let (d, dp) = dst.split_once(':').unwrap();
        let pcap = pkt.map_or(String::new(), |p| format!(r#""pcap_cnt":{p},"#));
        format!(
            r#"{{"event_type":"alert",{pcap}"src_ip":"{s}","src_port":{sp},"dest_ip":"{d}","dest_port":{dp},"proto":"TCP","alert":{{"signature_id":{sid}}}}}"#
        )
    }

    #[test]
    fn alerts_are_compared_per_signature_and_flow_in_either_direction() {
        let ours = [
            alert(1, "10.0.0.1:1000", "10.0.0.2:80", Some(3)),
            alert(1, "10.0.0.2:80", "10.0.0.1:1000", Some(4)),
            alert(2, "10.0.0.1:1000", "10.0.0.2:80", None),
            r#"{"event_type":"flow"}"#.to_string(),
            "not json".to_string(),
        ]
        .join("\n");
        let theirs = [
            alert(1, "10.0.0.1:1000", "10.0.0.2:80", Some(3)),
            alert(1, "10.0.0.1:1000", "10.0.0.2:80", Some(5)),
            alert(3, "10.0.0.1:1000", "10.0.0.2:80", Some(3)),
        ]
        .join("\n");
        let g = compare(ours.as_bytes(), theirs.as_bytes());
        assert_eq!(
            g,
            Agreement {
                ours: 3,
                theirs: 3,
                pairs: 3,
                // sid 1: two alerts each side; sids 2 and 3: one side only.
                same_count: 1,
                // sid 1 on packet 3.
                same_packet: 1,
            }
        );
    }

    #[test]
    fn a_childs_peak_rss_is_its_own_not_the_benchs() {
        // A 256 MB peak here, given back before the child starts.
        let mut big = vec![0u8; 256 << 20];
        for i in (0..big.len()).step_by(4096) {
            big[i] = 1;
        }
        std::hint::black_box(&big);
        drop(big);
        let (_, rss_kb, _) = measure(Command::new("true")).unwrap();
        assert!(rss_kb < 100 << 10, "`true` charged {rss_kb} KB");
    }

    #[test]
    fn suricatas_scan_time_is_read_from_its_log() {
        let log = "Info: suricata: time elapsed 1.647s\nNotice: ...";
        assert_eq!(elapsed(log), Some(1.647));
        assert_eq!(elapsed("no such line"), None);
    }

    #[test]
    fn medians() {
        assert_eq!(median([3.0, 1.0, 2.0].into_iter()), 2.0);
        assert_eq!(median([4.0, 1.0, 2.0, 3.0].into_iter()), 2.5);
    }
}
