//! `netsieve filter` and `netsieve scan --bpf` end to end on the bundled example capture.

mod common;

use common::{netsieve, pcap, root};

use std::process::Command;

fn count(expr: &str, file: &str) -> u64 {
    let o = netsieve(&["filter", "-r", file, "--count", expr]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().trim().parse().unwrap()
}

#[test]
fn filter_writes_what_it_counts() {
    let p = pcap();
    let all = count("", &p);
    assert_eq!(all, 19);
    let to25 = count("tcp dst port 25", &p);
    let from25 = count("tcp src port 25", &p);
    assert!(to25 > 0 && from25 > 0);
    assert_eq!(to25 + from25, count("tcp port 25", &p));
    assert_eq!(count("udp", &p), 0);
    // Interpreted and native runs agree.
    let o = netsieve(&[
        "filter",
        "-r",
        &p,
        "--count",
        "--interpret",
        "tcp dst port 25",
    ]);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap().trim(),
        to25.to_string()
    );
    // -w writes exactly the matching packets, and they all match again.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.pcap");
    let o = netsieve(&[
        "filter",
        "-r",
        &p,
        "-w",
        out.to_str().unwrap(),
        "tcp",
        "dst",
        "port",
        "25",
    ]);
    assert!(o.status.success());
    let out = out.display().to_string();
    assert_eq!(count("", &out), to25);
    assert_eq!(count("tcp dst port 25", &out), to25);
}

#[test]
fn filter_prints_programs() {
    let o = netsieve(&["filter", "-d", "ip"]);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "(000) ldh      [12]\n(001) jeq      #0x800           jt 2\tjf 3\n(002) ret      #262144\n(003) ret      #0\n"
    );
    let o = netsieve(&["filter", "-ddd", "ip"]);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "4\n40 0 0 12\n21 0 1 2048\n6 0 0 262144\n6 0 0 0\n"
    );
    let o = netsieve(&["filter", "-dd", "--linktype", "raw", "ip6"]);
    assert!(
        String::from_utf8(o.stdout)
            .unwrap()
            .starts_with("{ 0x30, 0, 0, 0x00000000 },")
    );
}

/// Programs are optimised as tcpdump's are unless `-O` says otherwise; both filter the
/// same packets.
#[test]
fn optimiser_is_on_by_default_and_o_turns_it_off() {
    let lines = |args: &[&str]| {
        String::from_utf8(netsieve(args).stdout)
            .unwrap()
            .lines()
            .count()
    };
    assert_eq!(lines(&["filter", "-d", "ip and tcp"]), 6);
    assert!(lines(&["filter", "-O", "-d", "ip and tcp"]) > 6);
    let p = pcap();
    let count = |extra: &[&str]| {
        let mut args = vec!["filter", "-r", p.as_str(), "--count"];
        args.extend_from_slice(extra);
        args.push("port 25 or udp");
        let o = netsieve(&args);
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let optimised = count(&[]);
    assert!(optimised.parse::<u64>().unwrap() > 0, "{optimised}");
    assert_eq!(optimised, count(&["-O"]));
}

#[test]
fn bad_expressions_are_reported_with_a_column() {
    let o = netsieve(&["filter", "-r", &pcap(), "tcp port 80 and (udp"]);
    // As tcpdump: every error exits 1.
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("column 21"), "{err}");
}

#[test]
fn scan_applies_the_capture_filter() {
    let dir = tempfile::tempdir().unwrap();
    let rules = root()
        .join("examples/smtp-flowbits.rules")
        .display()
        .to_string();
    let alerts = |bpf: Option<&str>| {
        let mut args = vec![
            "scan",
            "-r",
            &pcap(),
            "-S",
            &rules,
            "-l",
            dir.path().to_str().unwrap(),
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        if let Some(b) = bpf {
            args.push("--bpf".into());
            args.push(b.into());
        }
        let o = Command::new(env!("CARGO_BIN_EXE_netsieve"))
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(dir.path().join("eve.json"))
            .unwrap()
            .lines()
            .filter(|l| l.contains("\"event_type\":\"alert\""))
            .count()
    };
    let base = alerts(None);
    assert!(base > 0);
    assert_eq!(alerts(Some("tcp port 25")), base);
    assert_eq!(alerts(Some("not tcp")), 0);
    let o = netsieve(&[
        "scan",
        "-r",
        &pcap(),
        "-S",
        &rules,
        "-l",
        dir.path().to_str().unwrap(),
        "--bpf",
        "tcp prt 25",
    ]);
    assert_eq!(o.status.code(), Some(1));
}

/// A reader that goes away (`netsieve filter -d ... | head -1`) ends the listing quietly:
/// no panic, exit 0. The pipe is closed before the program writes; should the program
/// have written first, the test checks nothing more than a normal run.
#[test]
fn a_closed_pipe_is_not_a_crash() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .args([
            "filter",
            "-ddd",
            "tcp port 80 or udp port 53 or icmp or vlan 7",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}

/// With no packet matching, `-w` still writes a capture: a header with the input's link
/// type and snap length, and no packets (as tcpdump does; scripts read that file).
#[test]
fn no_match_still_writes_an_empty_capture() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("none.pcap");
    let o = netsieve(&[
        "filter",
        "-r",
        &pcap(),
        "-w",
        out.to_str().unwrap(),
        "-s",
        "96",
        "udp",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes.len(), 24, "a header and nothing else");
    assert_eq!(bytes[..4], 0xa1b2_c3d4_u32.to_le_bytes());
    assert_eq!(
        bytes[16..20],
        96u32.to_le_bytes(),
        "snap length as -s gave it"
    );
    assert_eq!(
        bytes[20..24],
        1u32.to_le_bytes(),
        "the input's link type (Ethernet)"
    );
    assert_eq!(count("", out.to_str().unwrap()), 0);
}

/// A damaged capture: the packets before the damage are written, the next file is read,
/// and the exit code is 1, as for `scan` and `firewall` (tcpdump exits 1 too).
#[test]
fn a_damaged_capture_exits_1_after_writing_what_was_read() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(pcap()).unwrap();
    let cut = dir.path().join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() - 30]).unwrap();
    let out = dir.path().join("out.pcap");
    let o = netsieve(&[
        "filter",
        "-r",
        cut.to_str().unwrap(),
        "-r",
        &pcap(),
        "-w",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cut.pcap: packet 19"), "{err}");
    assert_eq!(count("", out.to_str().unwrap()), 18 + 19, "{err}");
}

/// Write errors name the file and say what went wrong; a reader that goes away ends the
/// run quietly.
#[test]
fn write_errors_name_the_output() {
    if std::path::Path::new("/dev/full").exists() {
        let o = netsieve(&["filter", "-r", &pcap(), "-w", "/dev/full"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("/dev/full: No space left on device"), "{err}");
    }
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .args([
            "filter",
            "-r",
            &pcap(),
            "-r",
            &pcap(),
            "-r",
            &pcap(),
            "-w",
            "-",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(0), "{err}");
}

/// Deep nesting is refused with an error (it used to overflow the stack), in `filter`
/// and in `scan --bpf`; the error quotes a few words, not the whole expression.
#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("{}tcp{}", "(".repeat(3000), ")".repeat(3000));
    let o = netsieve(&["filter", "-d", &deep]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("nested more than") && err.len() < 400, "{err}");
    let dir = tempfile::tempdir().unwrap();
    let rules = root().join("examples/smtp-flowbits.rules");
    let o = netsieve(&[
        "scan",
        "-r",
        &pcap(),
        "-S",
        rules.to_str().unwrap(),
        "-l",
        dir.path().to_str().unwrap(),
        "--bpf",
        &deep,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--bpf") && err.contains("nested more than"),
        "{err}"
    );
}

/// A capture of a link type netsieve cannot read is said so, and the exit code is 1
/// (it used to read as nothing, exit 0, where tcpdump reads the packets).
#[test]
fn an_unknown_link_type_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("usb.pcap");
    let mut bytes = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 147] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    for i in 0..3u32 {
        for v in [1, i, 10, 10] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        bytes.extend_from_slice(&[0x78; 10]);
    }
    std::fs::write(&cap, &bytes).unwrap();
    let o = netsieve(&["filter", "-r", cap.to_str().unwrap(), "--count", "tcp"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("link type 147"), "{err}");
    let rules = root().join("examples/smtp-flowbits.rules");
    let o = netsieve(&[
        "scan",
        "-r",
        cap.to_str().unwrap(),
        "-S",
        rules.to_str().unwrap(),
        "-l",
        dir.path().to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("usb.pcap: link type 147 is not one netsieve decodes"),
        "{err}"
    );
}

/// Without `-w`, a line per packet as tcpdump prints it (`-nn -S`: no names, absolute
/// sequence numbers), in local time; `-c` stops after that many, `-v` adds the IP
/// header, `-n` is accepted. Where tcpdump is installed, every line of the example
/// agrees with its own up to the first `: `.
#[test]
fn filter_prints_packets_as_tcpdump_does() {
    let p = pcap();
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_netsieve"))
            .env("TZ", "UTC0")
            .arg("filter")
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let two = run(&["-r", &p, "-c", "2", "-nn", "tcp"]);
    assert_eq!(
        two,
        "15:30:19.952558 IP 88.191.140.111.51906 > 188.125.69.79.25: Flags [S], seq 193523752, win 5840, length 0\n\
         15:30:19.982883 IP 188.125.69.79.25 > 88.191.140.111.51906: Flags [S.], seq 2819290848, ack 193523753, win 65535, length 0\n"
    );
    let verbose = run(&["-r", &p, "-c", "1", "-v", "-n", "tcp"]);
    assert_eq!(
        verbose,
        "15:30:19.952558 IP (tos 0x0, ttl 64, id 54606, offset 0, flags [DF], proto TCP (6), length 60)\n    \
         88.191.140.111.51906 > 188.125.69.79.25: Flags [S], seq 193523752, win 5840, length 0\n"
    );
    let all = run(&["-r", &p]);
    assert_eq!(all.lines().count(), 19);
    // Data segments carry their sequence range and length.
    assert!(
        all.lines()
            .any(|l| l.contains("Flags [P.], seq ") && l.contains(':') && !l.ends_with("length 0")),
        "{all}"
    );
    let Ok(t) = Command::new("tcpdump")
        .env("TZ", "UTC0")
        .args(["-nn", "-S", "-r", &p])
        .output()
    else {
        return;
    };
    let head = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| l.split(": ").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(head(&all), head(&String::from_utf8_lossy(&t.stdout)));
}

/// A host name is not looked up: the error says so instead of calling it a bad address.
#[test]
fn filter_says_names_are_not_resolved() {
    let o = netsieve(&["filter", "-r", &pcap(), "host", "localhost"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`localhost` is a host name, and names are not resolved"),
        "{err}"
    );
}
