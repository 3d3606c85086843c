//! `netsieve scan` end to end on the bundled example capture.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scan(args: &[&str], out: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .arg("scan")
        .args(args)
        .arg("-l")
        .arg(out)
        .output()
        .expect("runs")
}

/// Scans the bundled example (its capture and its rules) with `extra` arguments.
fn scan_example(extra: &[&str], out: &std::path::Path) -> std::process::Output {
    let pcap = root().join("examples/smtp-flowbits.pcap");
    let rules = root().join("examples/smtp-flowbits.rules");
    let args = ["-r", pcap.to_str().unwrap(), "-S", rules.to_str().unwrap()];
    scan(&[&args[..], extra].concat(), out)
}

/// eve.json without its `stats` record, which holds the wall-clock time of the run.
/// The eve.json of the bundled capture scanned in `dir` with a suricata.yaml whose
/// eve-log lists `types` (YAML list items).
fn scan_example_with_types(dir: &std::path::Path, types: &str) -> String {
    let yaml = dir.join("types.yaml");
    let head = "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      types:\n";
    std::fs::write(&yaml, format!("{head}{types}")).unwrap();
    let out = dir.join("with-types");
    let o = scan_example(&["-c", yaml.to_str().unwrap()], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out.join("eve.json")).unwrap()
}

fn eve_records(out: &std::path::Path) -> String {
    std::fs::read_to_string(out.join("eve.json"))
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"event_type\":\"stats\""))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn eve_sids(out: &std::path::Path) -> Vec<u64> {
    std::fs::read_to_string(out.join("eve.json"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["event_type"] == "alert")
        .map(|v| v["alert"]["signature_id"].as_u64().unwrap())
        .collect()
}

#[test]
fn flowbit_chain_alerts_in_packet_order() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = root().join("examples/smtp-flowbits.pcap");
    let rules = root().join("examples/smtp-flowbits.rules");
    let o = scan_example(&[], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(eve_sids(dir.path()), [1, 2, 3]);
    let fast = std::fs::read_to_string(dir.path().join("fast.log")).unwrap();
    assert_eq!(fast.lines().count(), 3);
    assert!(fast.contains("[1:2:1] SMTP DATA [**]"));
    // Without the flowbit set by rule 1, rules 2 and 3 stay silent.
    let only23 = dir.path().join("r.rules");
    let text = std::fs::read_to_string(&rules).unwrap();
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("sid:1;")).collect();
    std::fs::write(&only23, kept.join("\n")).unwrap();
    let o = scan(
        &["-r", pcap.to_str().unwrap(), "-S", only23.to_str().unwrap()],
        dir.path(),
    );
    assert!(o.status.success());
    assert!(eve_sids(dir.path()).is_empty());
}

#[test]
fn truncated_capture_keeps_earlier_alerts_and_names_the_packet() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(root().join("examples/smtp-flowbits.pcap")).unwrap();
    bytes.truncate(bytes.len() - 30);
    let pcap = dir.path().join("cut.pcap");
    std::fs::write(&pcap, &bytes).unwrap();
    let rules = root().join("examples/smtp-flowbits.rules");
    let o = scan(
        &["-r", pcap.to_str().unwrap(), "-S", rules.to_str().unwrap()],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cut.pcap: packet 19"), "{err}");
    assert_eq!(eve_sids(dir.path()), [1, 2, 3]);
}

#[test]
fn a_damaged_file_in_a_directory_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps");
    std::fs::create_dir(&caps).unwrap();
    let bytes = std::fs::read(root().join("examples/smtp-flowbits.pcap")).unwrap();
    // Name order: the damaged file comes first, the intact one after it.
    std::fs::write(caps.join("a-cut.pcap"), &bytes[..bytes.len() - 30]).unwrap();
    std::fs::write(caps.join("b-whole.pcap"), &bytes).unwrap();
    let rules = root().join("examples/smtp-flowbits.rules");
    let out = dir.path().join("out");
    let stats = dir.path().join("stats.json");
    let o = scan(
        &[
            "-r",
            caps.to_str().unwrap(),
            "-S",
            rules.to_str().unwrap(),
            "--stats-json",
            stats.to_str().unwrap(),
        ],
        &out,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("a-cut.pcap: packet 19"), "{err}");
    assert_eq!(eve_sids(&out)[..3], [1, 2, 3]);
    // 18 packets of the damaged file, then all 19 of the whole one.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(v["packets"], 18 + 19, "{err}");
}

#[test]
fn bad_rules_are_skipped_even_all_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = root().join("examples/smtp-flowbits.pcap");
    let rules = dir.path().join("x.rules");
    std::fs::write(
        &rules,
        "alert tcp any any -> any 25 (content:\"EHLO \"; sid:7;)\nalert tcp any any -> any any (bogus:1; sid:8;)\nalert tcp any any -> any any (msg:\"x\"; pcre:\"/a(b/\"; sid:9;)\n",
    )
    .unwrap();
    let o = scan(
        &["-r", pcap.to_str().unwrap(), "-S", rules.to_str().unwrap()],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("x.rules:2:"), "{err}");
    // A pcre that does not compile is named by file, line and the option's column.
    assert!(err.contains("x.rules:3:40: sid 9: pcre"), "{err}");
    assert_eq!(eve_sids(dir.path()), [7]);

    // With every rule bad, the capture is still read, as Suricata reads it ("rule
    // files specified, but no rules were loaded").
    std::fs::write(&rules, "alert tcp any any -> any any (bogus:1; sid:8;)\n").unwrap();
    let o = scan(
        &["-r", pcap.to_str().unwrap(), "-S", rules.to_str().unwrap()],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("all 1 rules failed to load"), "{err}");
    assert!(err.contains(" packets"), "the capture was read: {err}");
    assert!(eve_sids(dir.path()).is_empty());
    let o = scan(
        &["-r", "/nonexistent.pcap", "-S", rules.to_str().unwrap()],
        dir.path(),
    );
    assert!(!o.status.success());
}

#[test]
fn both_prefilters_give_the_same_alerts() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    scan_example(&["--mpm", "dfc"], a.path());
    scan_example(&["--mpm", "ac"], b.path());
    assert_eq!(eve_records(a.path()), eve_records(b.path()));
}

/// The shared corpora, if present (`$NETSIEVE_DATA` or `../shared/data`); with
/// `NETSIEVE_REQUIRE_DATA=1` their absence fails the test.
fn corpus() -> Option<PathBuf> {
    let d = std::env::var_os("NETSIEVE_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/data"));
    if d.join("pcaps/ndpi").is_dir() && d.join("rules/et-open-2019").is_dir() {
        return Some(d);
    }
    if std::env::var_os("NETSIEVE_REQUIRE_DATA").is_some_and(|v| v == "1") {
        panic!("NETSIEVE_REQUIRE_DATA=1 but no corpora at {}", d.display());
    }
    eprintln!("SKIPPED: no corpora at {}", d.display());
    None
}

#[test]
fn output_is_identical_for_every_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let (caps, rules): (Vec<PathBuf>, Vec<PathBuf>) = match corpus() {
        // Real traffic (thousands of flows) against all of ET Open 2019.
        Some(d) => (
            vec![d.join("pcaps/ndpi")],
            std::fs::read_dir(d.join("rules/et-open-2019"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "rules"))
                .collect(),
        ),
        None => (
            vec![root().join("examples/smtp-flowbits.pcap")],
            vec![root().join("examples/smtp-flowbits.rules")],
        ),
    };
    let mut outputs = Vec::new();
    for threads in ["1", "2", "3"] {
        let out = dir.path().join(threads);
        let mut args = vec!["--threads".to_string(), threads.to_string(), "-r".into()];
        args.extend(caps.iter().map(|p| p.display().to_string()));
        args.push("-S".into());
        args.extend(rules.iter().map(|p| p.display().to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = scan(&args, &out);
        // The nDPI set holds damaged captures (exit 1); anything else is a failure.
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        // Alerts in the same order; flow records the same, but a flow ends when its
        // worker's table lets it go (each worker holds a share of the flows), so where
        // its record falls among the others may differ.
        let eve = eve_records(&out);
        let (alerts, mut flows): (Vec<&str>, Vec<&str>) = eve
            .lines()
            .partition(|l| !l.contains("\"event_type\":\"flow\""));
        flows.sort_unstable();
        outputs.push((
            alerts.join("\n"),
            flows.join("\n"),
            std::fs::read(out.join("fast.log")).unwrap(),
        ));
    }
    assert!(!outputs[0].0.is_empty() && !outputs[0].1.is_empty());
    assert!(outputs.iter().all(|o| *o == outputs[0]));
}

/// A damaged file is skipped wherever it stands among the -r files: first or second, the
/// other file's alerts are written and the exit code is 1.
#[test]
fn a_damaged_file_is_skipped_first_or_last() {
    let dir = tempfile::tempdir().unwrap();
    let good = root().join("examples/smtp-flowbits.pcap");
    let bad = dir.path().join("bad.pcap");
    std::fs::write(&bad, b"\xd4\xc3\xb2\xa1 not really a capture").unwrap();
    let rules = root().join("examples/smtp-flowbits.rules");
    for order in [[&bad, &good], [&good, &bad]] {
        let out = dir.path().join("out");
        let o = scan(
            &[
                "-r",
                order[0].to_str().unwrap(),
                "-r",
                order[1].to_str().unwrap(),
                "-S",
                rules.to_str().unwrap(),
            ],
            &out,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("bad.pcap"), "{err}");
        assert_eq!(eve_sids(&out), [1, 2, 3], "{err}");
    }
}

/// A mistyped -r fails before the outputs are touched: the last run's eve.json and
/// fast.log stay as they were.
#[test]
fn a_mistyped_capture_leaves_earlier_outputs_alone() {
    let dir = tempfile::tempdir().unwrap();
    let rules = root().join("examples/smtp-flowbits.rules");
    let o = scan_example(&[], dir.path());
    assert!(o.status.success());
    let before = std::fs::read(dir.path().join("eve.json")).unwrap();
    assert!(!before.is_empty());
    let o = scan(
        &["-r", "/no/such/capture.pcap", "-S", rules.to_str().unwrap()],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("/no/such/capture.pcap"), "{err}");
    assert_eq!(std::fs::read(dir.path().join("eve.json")).unwrap(), before);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("fast.log"))
            .unwrap()
            .lines()
            .count(),
        3
    );
}

/// A full disk is reported with the name of the file that could not be written.
#[test]
fn a_full_disk_names_the_file() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("SKIPPED: no /dev/full");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/full", dir.path().join("eve.json")).unwrap();
    let o = scan_example(&[], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("eve.json: No space left on device"), "{err}");
}

/// Absurd thread counts are refused before anything is written (30,000 used to abort
/// and 100,000 to panic, leaving empty outputs).
#[test]
fn absurd_thread_counts_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for n in ["0", "30000", "100000", "-1"] {
        let threads = format!("--threads={n}");
        let o = scan_example(&[&threads], &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--threads {n}: {err}");
        assert!(err.contains("--threads"), "{err}");
        assert!(!out.exists(), "--threads {n} created the log directory");
    }
}

/// suricata.yaml variables that list each other 100 times over four levels (10^8
/// entries) are refused at once, naming the variable; ports likewise. An invalid YAML
/// file is an error naming its line, not a warning.
#[test]
fn config_errors_name_the_variable_or_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let run = |yaml: &str| {
        let c = dir.path().join("s.yaml");
        std::fs::write(&c, yaml).unwrap();
        let o = scan_example(&["-c", c.to_str().unwrap()], &dir.path().join("out"));
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let chain = |group: &str, names: &[&str], leaf: &str| {
        let mut y = format!("vars:\n  {group}:\n");
        for w in names.windows(2) {
            let items = vec![format!("${}", w[1]); 100].join(",");
            y += &format!("    {}: \"[{items}]\"\n", w[0]);
        }
        y += &format!("    {}: \"{leaf}\"\n", names[names.len() - 1]);
        y
    };
    let (code, err) = run(&chain(
        "address-groups",
        &["A", "B", "C", "D", "E"],
        "10.0.0.1",
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("vars.address-groups.A: $A -> $B"), "{err}");
    let (code, err) = run(&chain("port-groups", &["P", "Q", "R", "S", "T"], "80"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("vars.port-groups.P"), "{err}");
    let (code, err) =
        run("vars:\n  address-groups:\n    HOME_NET: \"[10.0.0.0/8]\n  port-groups:\n");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("s.yaml:3:") && err.contains("not valid YAML"),
        "{err}"
    );
}

/// Ctrl-C stops a run cleanly: the packet in hand is finished, flows are drained, every
/// eve.json line is whole, the summary is printed, and the exit code is 130. (It used to
/// kill the run with no summary and a line cut in half.) The capture comes from a pipe
/// that stays open, so the run is still going when the signal arrives.
#[test]
fn ctrl_c_stops_cleanly() {
    use std::io::Write;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let pcap = std::fs::read(root().join("examples/smtp-flowbits.pcap")).unwrap();
    let rules = root().join("examples/smtp-flowbits.rules");
    let mut child = Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .args(["scan", "-r", "-", "-S", rules.to_str().unwrap(), "-l"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&pcap).unwrap();
    stdin.flush().unwrap();
    // The run reads the 19 packets, then waits for more.
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    // One more packet reaches the reader, which then stops (the pipe stays open).
    stdin.write_all(&pcap[24..24 + 16 + 74]).unwrap();
    stdin.flush().unwrap();
    let o = child.wait_with_output().unwrap();
    drop(stdin);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted") && err.contains("20 packets"),
        "{err}"
    );
    // The flow-bit chain's three alerts, each a whole line.
    assert_eq!(eve_sids(dir.path()), [1, 2, 3]);
}

/// Alert records list their keys in Suricata 8's order (tools that read EVE by position,
/// and people who compare the two side by side, see the same layout).
#[test]
fn alert_keys_come_in_suricatas_order() {
    let dir = tempfile::tempdir().unwrap();
    let o = scan_example(&[], dir.path());
    assert!(o.status.success());
    let eve = std::fs::read_to_string(dir.path().join("eve.json")).unwrap();
    let line = eve.lines().next().unwrap();
    // As Suricata 8.0.6 writes an alert of this capture (its `traffic`, `metadata` and
    // payload fields aside).
    let order = [
        "timestamp",
        "flow_id",
        "pcap_cnt",
        "event_type",
        "src_ip",
        "src_port",
        "dest_ip",
        "dest_port",
        "proto",
        "ip_v",
        "pkt_src",
        "alert",
        "direction",
        "flow",
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|k| {
            line.find(&format!("\"{k}\":"))
                .unwrap_or_else(|| panic!("no {k} in {line}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{line}");
    let alert = [
        "action",
        "gid",
        "signature_id",
        "rev",
        "signature",
        "category",
        "severity",
    ];
    let inner: Vec<usize> = alert
        .iter()
        .map(|k| line.find(&format!("\"{k}\":")).unwrap())
        .collect();
    assert!(inner.windows(2).all(|w| w[0] < w[1]), "{line}");
}

/// A flow record per flow at its end, field for field as Suricata 8.0.6 writes it for
/// the bundled capture (its record, from the reference's stock configuration, is quoted
/// here but for `flow_id`, its own hash, and `app_proto`/`tx_cnt`, which need the SMTP
/// parser netsieve does not have); none with a suricata.yaml that does not list
/// `flow` among its eve-log types.
#[test]
fn a_flow_record_is_written_when_a_flow_ends() {
    let dir = tempfile::tempdir().unwrap();
    let o = scan_example(&[], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let eve = std::fs::read_to_string(dir.path().join("eve.json")).unwrap();
    let flows: Vec<serde_json::Value> = eve
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["event_type"] == "flow")
        .collect();
    assert_eq!(flows.len(), 1, "{eve}");
    let mut got = flows[0].clone();
    got.as_object_mut().unwrap().remove("flow_id");
    // Suricata names the protocol `smtp`; netsieve, which has no SMTP parser yet, says
    // its detection failed.
    assert_eq!(got["app_proto"], "failed");
    got.as_object_mut().unwrap().remove("app_proto");
    let want: serde_json::Value = serde_json::from_str(
        r#"{"timestamp":"2013-11-26T15:30:20.306047+0000","event_type":"flow","src_ip":"88.191.140.111","src_port":51906,"dest_ip":"188.125.69.79","dest_port":25,"ip_v":4,"proto":"TCP","flow":{"pkts_toserver":11,"pkts_toclient":8,"bytes_toserver":1340,"bytes_toclient":808,"start":"2013-11-26T15:30:19.952558+0000","end":"2013-11-26T15:30:20.306047+0000","age":1,"state":"closed","reason":"shutdown","alerted":true},"tcp":{"tcp_flags":"1f","tcp_flags_ts":"1f","tcp_flags_tc":"1b","syn":true,"fin":true,"rst":true,"psh":true,"ack":true,"state":"closed","ts_max_regions":1,"tc_max_regions":1},"metadata":{"flowbits":["smtp.data.found"]}}"#,
    )
    .unwrap();
    assert_eq!(got, want);
    // The flow's alerts come before its record.
    let lines: Vec<&str> = eve.lines().collect();
    let last_alert = lines
        .iter()
        .rposition(|l| l.contains("\"event_type\":\"alert\""));
    let record = lines
        .iter()
        .position(|l| l.contains("\"event_type\":\"flow\""));
    assert!(last_alert < record, "{eve}");

    let eve = scan_example_with_types(dir.path(), "        - alert:\n            payload: no\n");
    assert!(!eve.contains("\"event_type\":\"flow\""), "{eve}");
    assert!(eve.contains("\"event_type\":\"alert\""), "{eve}");
}

/// With `netflow` among the eve-log types, a record per direction of each flow, as
/// Suricata 8.0.6 writes them for the bundled capture (quoted from the reference but for
/// `flow_id`, its own hash, and `app_proto`/`tx_cnt`, as the flow record's test says);
/// no `flow` record unless listed too.
#[test]
fn netflow_records_give_each_direction() {
    let dir = tempfile::tempdir().unwrap();
    let eve = scan_example_with_types(dir.path(), "        - netflow\n");
    let got: Vec<serde_json::Value> = eve
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["event_type"] != "alert")
        .map(|mut v| {
            let o = v.as_object_mut().unwrap();
            for k in ["flow_id", "app_proto", "metadata"] {
                o.remove(k);
            }
            o["netflow"].as_object_mut().unwrap().remove("tx_cnt");
            v
        })
        .collect();
    let want: Vec<serde_json::Value> = [
        r#"{"timestamp":"2013-11-26T15:30:20.306047+0000","event_type":"netflow","src_ip":"88.191.140.111","src_port":51906,"dest_ip":"188.125.69.79","dest_port":25,"proto":"TCP","netflow":{"pkts":11,"bytes":1340,"start":"2013-11-26T15:30:19.952558+0000","end":"2013-11-26T15:30:20.306047+0000","age":1,"min_ttl":64,"max_ttl":64},"tcp":{"tcp_flags":"1f","syn":true,"fin":true,"rst":true,"psh":true,"ack":true}}"#,
        r#"{"timestamp":"2013-11-26T15:30:20.306047+0000","event_type":"netflow","src_ip":"188.125.69.79","src_port":25,"dest_ip":"88.191.140.111","dest_port":51906,"proto":"TCP","netflow":{"pkts":8,"bytes":808,"start":"2013-11-26T15:30:19.952558+0000","end":"2013-11-26T15:30:20.306047+0000","age":1,"min_ttl":55,"max_ttl":55},"tcp":{"tcp_flags":"1b","syn":true,"fin":true,"psh":true,"ack":true}}"#,
    ]
    .iter()
    .map(|r| serde_json::from_str(r).unwrap())
    .collect();
    assert_eq!(got, want, "{eve}");
}

/// In IPS mode, with `drop` among the eve-log types, a record per dropped packet, as
/// Suricata 8.0.6 writes them for the bundled capture and a rule that drops its SMTP
/// session (`--simulate-ips`, `drop: {alerts: yes, flows: all}`): the packet the rule
/// matched, with the rule, then every later packet of the flow, `flow drop`. The first
/// record is quoted from the reference (but for `flow_id`, its own hash).
#[test]
fn ips_writes_a_drop_record_per_dropped_packet() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("drop.rules");
    std::fs::write(
        &rules,
        "drop tcp any any -> any 25 (msg:\"smtp drop\"; content:\"EHLO\"; sid:5;)\n",
    )
    .unwrap();
    let yaml = dir.path().join("drop.yaml");
    std::fs::write(
        &yaml,
        "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      types:\n        - alert\n        - drop:\n            alerts: yes\n            flows: all\n",
    )
    .unwrap();
    let pcap = root().join("examples/smtp-flowbits.pcap");
    // eve.json of a run with (or without) --simulate-ips.
    let run = |mode: &[&str], name: &str| {
        let out = dir.path().join(name);
        let files = ["-c", yaml.to_str().unwrap(), "-r", pcap.to_str().unwrap()];
        let rules = ["-S", rules.to_str().unwrap(), "-k", "none"];
        let o = scan(&[mode, &files[..], &rules[..]].concat(), &out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(out.join("eve.json")).unwrap()
    };
    let eve = run(&["--simulate-ips"], "ips");
    let drops: Vec<serde_json::Value> = eve
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["event_type"] == "drop")
        .collect();
    let reasons: Vec<&str> = drops
        .iter()
        .map(|d| d["drop"]["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons.len(), 14, "{eve}");
    assert_eq!(reasons[0], "rules");
    assert!(
        reasons[1..].iter().all(|r| *r == "flow drop"),
        "{reasons:?}"
    );
    let mut first = drops[0].clone();
    first.as_object_mut().unwrap().remove("flow_id");
    let want: serde_json::Value = serde_json::from_str(
        r#"{"timestamp":"2013-11-26T15:30:20.014493+0000","pcap_cnt":6,"event_type":"drop","src_ip":"88.191.140.111","src_port":51906,"dest_ip":"188.125.69.79","dest_port":25,"proto":"TCP","ip_v":4,"pkt_src":"wire/pcap","direction":"to_server","drop":{"len":79,"tos":0,"ttl":64,"ipid":54609,"tcpseq":193523753,"tcpack":2819290912,"tcpwin":6,"syn":false,"ack":true,"psh":true,"rst":false,"urg":false,"fin":false,"tcpres":0,"tcpurgp":0,"reason":"rules"},"alert":{"action":"blocked","gid":1,"signature_id":5,"rev":0,"signature":"smtp drop","category":"","severity":3}}"#,
    )
    .unwrap();
    assert_eq!(first, want);
    // Outside IPS mode nothing is dropped, so nothing is written.
    assert!(!run(&[], "ids").contains("\"drop\":{"));
}

/// A full disk under eve.json (a link to /dev/full) stops the run with an error that
/// names the file, though the records are written on a thread of their own.
#[test]
fn a_write_error_names_the_output() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/full", dir.path().join("eve.json")).unwrap();
    let o = scan_example(&[], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("eve.json: No space left on device"), "{err}");
}

/// A `stats` record at the end of the run, with the counters netsieve keeps under
/// Suricata's names (for the bundled capture: as Suricata 8.0.6 counts them); none with
/// a suricata.yaml that does not list `stats`.
#[test]
fn a_stats_record_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let o = scan_example(&["-k", "none"], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let eve = std::fs::read_to_string(dir.path().join("eve.json")).unwrap();
    let last: serde_json::Value = serde_json::from_str(eve.lines().last().unwrap()).unwrap();
    assert_eq!(last["event_type"], "stats", "{eve}");
    let s = &last["stats"];
    let d = &s["decoder"];
    assert_eq!(
        (
            d["pkts"].as_u64(),
            d["bytes"].as_u64(),
            d["ipv4"].as_u64(),
            d["tcp"].as_u64()
        ),
        (Some(19), Some(2148), Some(19), Some(19)),
        "{s}"
    );
    assert_eq!(
        (s["flow"]["total"].as_u64(), s["flow"]["tcp"].as_u64()),
        (Some(1), Some(1))
    );
    let e = &s["detect"]["engines"][0];
    assert_eq!(e["rules_loaded"], 3, "{s}");
    assert_eq!(e["rules_failed"], 0, "{s}");
    assert_eq!(s["detect"]["alert"], eve_sids(dir.path()).len(), "{s}");

    // The stream engine's counters: one session, its SYN and SYN/ACK.
    let t = &s["tcp"];
    assert_eq!(
        (
            t["sessions"].as_u64(),
            t["syn"].as_u64(),
            t["synack"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{s}"
    );
    // `null-values: false` leaves out the counters that are zero, and objects left empty.
    let lean = tempfile::tempdir().unwrap();
    let no_zeros = [
        "-k",
        "none",
        "--set",
        "outputs.eve-log.types.stats.null-values=no",
    ];
    let o = scan_example(&no_zeros, lean.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let eve = std::fs::read_to_string(lean.path().join("eve.json")).unwrap();
    let last: serde_json::Value = serde_json::from_str(eve.lines().last().unwrap()).unwrap();
    let l = &last["stats"];
    assert_eq!(l["decoder"]["pkts"], s["decoder"]["pkts"], "{l}");
    assert!(l["decoder"].get("invalid").is_none(), "{l}");
    assert!(s["decoder"]["invalid"] == 0, "{s}");
    let engine = &l["detect"]["engines"][0];
    assert_eq!(
        (
            engine["rules_loaded"].as_u64(),
            engine["rules_failed"].as_u64()
        ),
        (Some(3), Some(0)),
        "the rule set's description is whole: {l}"
    );
    fn no_zero(v: &serde_json::Value, path: &str) {
        match v {
            serde_json::Value::Object(m) => {
                assert!(!m.is_empty(), "{path} is empty");
                for (k, x) in m.iter().filter(|(k, _)| *k != "engines") {
                    no_zero(x, &format!("{path}.{k}"));
                }
            }
            serde_json::Value::Number(n) => assert!(n.as_f64() != Some(0.0), "{path} is 0"),
            _ => {}
        }
    }
    no_zero(l, "stats");

    // `stats.enabled: no` turns the counters off: no stats record, not even the last.
    let off = tempfile::tempdir().unwrap();
    let o = scan_example(&["-k", "none", "--set", "stats.enabled=no"], off.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let eve = std::fs::read_to_string(off.path().join("eve.json")).unwrap();
    assert!(!eve.contains("\"event_type\":\"stats\""), "{eve}");
    assert_eq!(eve_sids(off.path()), eve_sids(dir.path()));
    // An interval is a whole number of seconds, at least one.
    let o = scan_example(&["--set", "stats.interval=0"], off.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("stats.interval"),
        "{err}"
    );
}

/// Suricata's habits for checking rules: `-T` tests them and exits (no capture needed,
/// no output written; 1 when a rule fails), `--init-errors-fatal` refuses to run with a
/// failed rule, `-s` adds a rule file beside `-S`, and `--runmode` takes Suricata's
/// names only.
#[test]
fn rules_are_tested_as_suricata_tests_them() {
    let dir = tempfile::tempdir().unwrap();
    let good = root().join("examples/smtp-flowbits.rules");
    let bad = dir.path().join("bad.rules");
    std::fs::write(
        &bad,
        "alert tcp any any -> any 25 (msg:\"ehlo\"; content:\"EHLO\"; sid:70;)\nalert tcp any any -> any any (bogus:1; sid:71;)\n",
    )
    .unwrap();
    let netsieve = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_netsieve"))
            .arg("scan")
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let o = netsieve(&["-T", "-S", good.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("3 rules loaded, 0 failed"), "{err}");
    assert!(!dir.path().join("eve.json").exists(), "-T writes nothing");

    let o = netsieve(&[
        "-T",
        "-S",
        good.to_str().unwrap(),
        "-s",
        bad.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bad.rules:2:"),
        "the failed rule is named: {err}"
    );
    assert!(err.contains("4 rules loaded, 1 failed"), "{err}");

    let pcap = root().join("examples/smtp-flowbits.pcap");
    let (pcap, bad) = (pcap.to_str().unwrap(), bad.to_str().unwrap());
    let o = netsieve(&["--init-errors-fatal", "-r", pcap, "-S", bad]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!dir.path().join("eve.json").exists(), "nothing ran");
    // Without it the bad rule is skipped, and -s rules alert beside -S ones.
    let o = netsieve(&[
        "-r",
        pcap,
        "-S",
        good.to_str().unwrap(),
        "-s",
        bad,
        "--runmode",
        "single",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sids = eve_sids(dir.path());
    assert!(sids.contains(&70) && sids.len() > 1, "{sids:?}");

    let o = netsieve(&["--runmode", "bogus", "-r", pcap, "-S", bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bogus"));
}

/// A capture filter given as Suricata takes it, as the words after the options.
#[test]
fn a_filter_can_follow_the_options() {
    let dir = tempfile::tempdir().unwrap();
    let all = scan_example(&["-k", "none"], dir.path());
    assert!(all.status.success());
    let n = eve_sids(dir.path()).len();
    assert!(n > 0);
    let o = scan_example(&["-k", "none", "port", "22"], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(eve_sids(dir.path()).is_empty());
    let o = scan_example(&["-k", "none", "tcp", "port", "25"], dir.path());
    assert!(o.status.success());
    assert_eq!(eve_sids(dir.path()).len(), n);
}

/// Suricata's listing flags: `--build-info`, `--list-keywords` (each keyword with what
/// netsieve does with rules that use it) and `--list-app-layer-protos`; no capture or
/// rules needed.
#[test]
fn build_info_and_lists_answer_without_a_capture() {
    let run = |flag: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_netsieve"))
            .args(["scan", flag])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{flag}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let info = run("--build-info");
    assert!(info.contains(env!("CARGO_PKG_VERSION")), "{info}");
    assert!(info.contains("AF_PACKET") && info.contains("dfc"), "{info}");
    assert_eq!(
        run("--list-app-layer-protos"),
        "http\ntls\ndns\nsmtp\nssh\nftp\nsip\nmqtt\nkrb5\nsnmp\nntp\nldap\ntftp\npop3\nimap\nsmb\ndcerpc\nftp-data\nhttp2\ndoh2\nwebsocket\n"
    );
    let kw = run("--list-keywords");
    let line = |name: &str| {
        kw.lines()
            .find(|l| l.starts_with(&format!("{name}: ")))
            .unwrap_or("")
    };
    assert_eq!(line("content"), "content: inspected");
    assert_eq!(line("http.uri"), "http.uri: inspected (http buffer)");
    assert_eq!(
        line("smb.named_pipe"),
        "smb.named_pipe: inspected (smb buffer)"
    );
    assert!(line("js_data").contains("not inspected"), "{kw}");
    assert!(kw.lines().count() > 100);
}

/// Rules netsieve does not inspect are named: with -v on standard error, and in
/// --stats-json, each with its sid and what it needs.
#[test]
fn rules_not_inspected_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("r.rules");
    std::fs::write(
        &rules,
        "alert tcp any any -> any 25 (content:\"EHLO\"; sid:1;)\n\
         alert http any any -> any any (js_data; content:\"x\"; sid:2;)\n",
    )
    .unwrap();
    let stats = dir.path().join("stats.json");
    let pcap = root().join("examples/smtp-flowbits.pcap");
    let o = scan(
        &[
            "-v",
            "-r",
            pcap.to_str().unwrap(),
            "-S",
            rules.to_str().unwrap(),
            "--stats-json",
            stats.to_str().unwrap(),
        ],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("sid 2 not inspected: needs js_data"), "{err}");
    assert!(!err.contains("sid 1 not inspected"), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let listed = &v["rules"]["not_inspected"];
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(listed[0]["sid"], 2);
}

/// Packets with a wrong checksum get a warning at the end that names `-k none`, as
/// Suricata's does; with `-k none`, no warning.
#[test]
fn bad_checksums_are_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let mut pcap = std::fs::read(root().join("examples/smtp-flowbits.pcap")).unwrap();
    // The first packet's TCP checksum: file header 24, record header 16, Ethernet 14,
    // IPv4 20, then 16 bytes into the TCP header.
    pcap[24 + 16 + 14 + 20 + 16] ^= 0xff;
    let bad = dir.path().join("bad.pcap");
    std::fs::write(&bad, pcap).unwrap();
    let rules = root().join("examples/smtp-flowbits.rules");
    let run = |extra: &[&str]| {
        let args = [
            &["-r", bad.to_str().unwrap(), "-S", rules.to_str().unwrap()][..],
            extra,
        ]
        .concat();
        let o = scan(&args, dir.path());
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let err = run(&[]);
    assert!(
        err.contains("1 of 19 packets (5.3%) had a wrong checksum"),
        "{err}"
    );
    assert!(err.contains("-k none"), "{err}");
    assert!(!run(&["-k", "none"]).contains("wrong checksum"));
}

/// Timestamps are local time with the zone's offset, as Suricata writes them (EVE
/// `...-0500`, fast.log `MM/DD/YYYY-HH:MM:SS`), the zone from `TZ`. A POSIX zone string
/// (`XST5`: five hours west, no summer time) needs no tz database on the machine.
#[test]
fn timestamps_are_local_time_with_their_offset() {
    let run = |tz: &str| {
        let dir = tempfile::tempdir().unwrap();
        let pcap = root().join("examples/smtp-flowbits.pcap");
        let rules = root().join("examples/smtp-flowbits.rules");
        let o = Command::new(env!("CARGO_BIN_EXE_netsieve"))
            .env("TZ", tz)
            .args(["scan", "-r", pcap.to_str().unwrap(), "-S"])
            .arg(rules)
            .arg("-l")
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let eve = std::fs::read_to_string(dir.path().join("eve.json")).unwrap();
        let first: serde_json::Value = serde_json::from_str(eve.lines().next().unwrap()).unwrap();
        let fast = std::fs::read_to_string(dir.path().join("fast.log")).unwrap();
        (
            first["timestamp"].as_str().unwrap().to_string(),
            fast.lines().next().unwrap()[..26].to_string(),
        )
    };
    let (utc, utc_fast) = run("UTC0");
    let (west, west_fast) = run("XST5");
    assert!(utc.ends_with("+0000"), "{utc}");
    assert!(west.ends_with("-0500"), "{west}");
    let hour = |t: &str, at: usize| t[at..at + 2].parse::<i32>().unwrap();
    assert_eq!(
        (hour(&utc, 11) - 5).rem_euclid(24),
        hour(&west, 11),
        "{utc} {west}"
    );
    assert_eq!(
        (hour(&utc_fast, 11) - 5).rem_euclid(24),
        hour(&west_fast, 11),
        "{utc_fast} {west_fast}"
    );
    // The two logs agree on the time of the first alert.
    assert_eq!(&utc[11..26], &utc_fast[11..26], "{utc} {utc_fast}");
}

/// Without `--threads`, one detection thread per core, as Suricata sizes its workers.
#[test]
fn threads_default_to_the_cores() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let o = scan_example(
        &["--stats-json", stats.to_str().unwrap()],
        &dir.path().join("o"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert_eq!(s["threads"], cores, "{s}");
}

/// `--profile` times the detection loop's phases: each is named in `--stats-json`, the
/// candidates' phases found time for the example's payloads, and the phases together
/// fit within detection's time.
#[test]
fn profile_times_each_detection_phase() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let o = scan_example(
        &["--profile", "--stats-json", stats.to_str().unwrap()],
        &dir.path().join("o"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("detection phases: setup"), "{err}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let phases = &s["detection_phase_seconds"];
    let names = [
        "setup",
        "firewall",
        "packet_candidates",
        "stream_candidates",
        "evaluation",
        "transactions",
        "verdict",
    ];
    let secs: Vec<f64> = names
        .iter()
        .map(|n| {
            phases[n]
                .as_f64()
                .unwrap_or_else(|| panic!("{n} missing: {s}"))
        })
        .collect();
    assert!(secs.iter().all(|&t| t >= 0.0), "{s}");
    assert!(secs[2] > 0.0, "{s}");
    let p = &s["profile_seconds"];
    let detect: f64 = ["app_layer", "prefilter", "rule_evaluation"]
        .iter()
        .map(|n| p[n].as_f64().unwrap())
        .sum();
    assert!(secs.iter().sum::<f64>() <= detect + 1e-3, "{s}");
}

/// On a terminal, a run that lasts shows how far it is (packets, megabytes of the
/// total, alerts); off a terminal nothing is added. Run under `script`, which gives the
/// scan a terminal, over the nDPI captures read thirty times (two seconds here).
#[test]
fn long_runs_show_progress_on_a_terminal() {
    let Some(d) = corpus() else { return };
    let ndpi = d.join("pcaps/ndpi").display().to_string();
    let rules = root().join("examples/smtp-flowbits.rules");
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = format!(
        "'{}' scan --threads 1 -k none -S '{}' -l '{}'",
        env!("CARGO_BIN_EXE_netsieve"),
        rules.display(),
        dir.path().display()
    );
    for _ in 0..30 {
        cmd += &format!(" -r '{ndpi}'");
    }
    let Ok(o) = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
    else {
        eprintln!("SKIPPED: no `script` to give the scan a terminal");
        return;
    };
    let tty = String::from_utf8_lossy(&o.stdout);
    assert!(
        tty.contains(" MB of ") && tty.contains(" alerts, "),
        "no progress on a terminal: {tty}"
    );
    // The same kind of run without a terminal: only the summary.
    let o = Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .args(["scan", "--threads", "1", "-k", "none", "-S"])
        .arg(&rules)
        .arg("-l")
        .arg(dir.path())
        .args(["-r", &ndpi])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains(" MB of "), "{err}");
}

/// `--dump-config` prints the settings in force as `key = value` and exits: defaults,
/// then -c, then --set; no capture or rules needed.
#[test]
fn dump_config_prints_the_settings_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = dir.path().join("s.yaml");
    std::fs::write(
        &yaml,
        "vars:\n  address-groups:\n    HOME_NET: \"[10.1.0.0/16]\"\noutputs:\n  - eve-log:\n      types:\n        - alert\n        - dns:\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .args(["scan", "--dump-config", "-c"])
        .arg(&yaml)
        .args(["--set", "stream.reassembly.depth=2mb"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    for line in [
        "vars.address-groups.HOME_NET = [10.1.0.0/16]",
        "stream.reassembly.depth = 2097152",
        "outputs.eve-log.types = alert, dns",
        "packet-alert-max = 15",
    ] {
        assert!(
            out.lines().any(|l| l == line),
            "{line} missing from:\n{out}"
        );
    }
}

#[test]
fn bench_scan_names_a_missing_peer_before_running() {
    let rules = root().join("examples/smtp-flowbits.rules");
    let pcap = root().join("examples/smtp-flowbits.pcap");
    let o = Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .args([
            "bench",
            "scan",
            "--suricata",
            "/nonexistent/suricata/run",
            "-r",
        ])
        .arg(&pcap)
        .arg("--rules")
        .arg(format!("example={}", rules.display()))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/nonexistent/suricata/run: not found") && err.contains("--suricata"),
        "{err}"
    );
}
