//! The control socket's protocol (Suricata's: a version handshake, then one JSON command
//! per line), on a run reading a capture from a pipe that the test holds open. Reloads
//! on live traffic are tested in `live.rs`.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Client {
    w: UnixStream,
    r: BufReader<UnixStream>,
}

impl Client {
    fn connect(sock: &Path) -> Client {
        let start = Instant::now();
        let w = loop {
            match UnixStream::connect(sock) {
                Ok(s) => break s,
                Err(e) => {
                    assert!(start.elapsed() < Duration::from_secs(10), "no socket: {e}");
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        };
        let r = BufReader::new(w.try_clone().unwrap());
        Client { w, r }
    }

    fn send(&mut self, v: &Value) -> Value {
        self.w.write_all(format!("{v}\n").as_bytes()).unwrap();
        let mut line = String::new();
        self.r.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

/// `netsieve scan` reading a capture from a pipe, with its control socket at `sock`.
fn start(rules: &Path, sock: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .args(["scan", "-r", "-", "-S"])
        .arg(rules)
        .arg("-l")
        .arg(rules.parent().unwrap())
        .arg("--unix-socket")
        .arg(sock)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Ends the run's input with a capture of no packets (the reader sees orders at its next
/// packet or at the end of its input) and waits for it.
fn finish(mut child: Child) -> Output {
    let mut header = Vec::new();
    for v in [0xa1b2_c3d4u32, 0, 0, 0, 65535, 1] {
        header.extend_from_slice(&v.to_le_bytes());
    }
    header[4..8].copy_from_slice(&[2, 0, 4, 0]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&header).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn the_socket_speaks_suricatas_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("r.rules");
    std::fs::write(
        &rules,
        "alert udp any any -> any any (msg:\"a\"; content:\"a\"; sid:1;)\nalert udp any any -> any any (msg:\"b\"; content:\"b; sid:2;)\n",
    )
    .unwrap();
    let sock = dir.path().join("ctl.sock");
    let child = start(&rules, &sock);
    let mut c = Client::connect(&sock);
    // A command before the handshake is refused.
    assert_eq!(c.send(&json!({"command": "version"}))["return"], "NOK");
    assert_eq!(c.send(&json!({"version": "0.2"})), json!({"return": "OK"}));
    let list = c.send(&json!({"command": "command-list"}));
    let cmds: Vec<&str> = list["message"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for want in [
        "version",
        "uptime",
        "running-mode",
        "capture-mode",
        "reload-rules",
        "ruleset-reload-nonblocking",
        "ruleset-reload-time",
        "ruleset-stats",
        "ruleset-failed-rules",
        "iface-list",
        "iface-stat",
        "dump-counters",
        "shutdown",
        "add-rule",
        "remove-rule",
    ] {
        assert!(cmds.contains(&want), "{want} missing from {list}");
    }
    assert_eq!(list["message"]["count"], cmds.len());
    let v = c.send(&json!({"command": "version"}));
    assert!(
        v["message"].as_str().unwrap().starts_with("netsieve "),
        "{v}"
    );
    assert_eq!(
        c.send(&json!({"command": "capture-mode"}))["message"],
        "PCAP_FILE"
    );
    // Without --threads, one detection thread per core, as Suricata's autofp.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert_eq!(
        c.send(&json!({"command": "running-mode"}))["message"],
        if cores > 1 { "autofp" } else { "single" }
    );
    assert_eq!(
        c.send(&json!({"command": "iface-list"}))["message"]["count"],
        0
    );
    let stats = c.send(&json!({"command": "ruleset-stats"}));
    assert_eq!(stats["message"][0]["rules_loaded"], 1, "{stats}");
    assert_eq!(stats["message"][0]["rules_failed"], 1, "{stats}");
    let failed = c.send(&json!({"command": "ruleset-failed-rules"}));
    let msg = failed["message"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains("r.rules:2:"),
        "the failed rule is named by file and line: {msg}"
    );
    let t = c.send(&json!({"command": "ruleset-reload-time"}));
    assert!(
        t["message"][0]["last_reload"]
            .as_str()
            .unwrap()
            .ends_with("+0000")
    );
    assert_eq!(
        c.send(&json!({"command": "iface-stat", "arguments": {"iface": "eth9"}}))["return"],
        "NOK"
    );
    assert_eq!(
        c.send(&json!({"command": "no-such-command"}))["return"],
        "NOK"
    );
    assert_eq!(c.send(&json!({"command": "add-rule"}))["return"], "NOK");
    let counters = c.send(&json!({"command": "dump-counters"}));
    assert!(
        counters["message"]["decoder"]["pkts"].is_u64(),
        "{counters}"
    );
    // Not JSON: an error answer, and the connection stays usable.
    c.w.write_all(b"hello\n").unwrap();
    let mut line = String::new();
    c.r.read_line(&mut line).unwrap();
    assert!(line.contains("NOK"), "{line}");
    assert_eq!(c.send(&json!({"command": "uptime"}))["return"], "OK");

    assert_eq!(c.send(&json!({"command": "shutdown"}))["return"], "OK");
    let o = finish(child);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!sock.exists(), "the socket file is removed at the end");
}

#[test]
fn a_socket_path_that_cannot_be_bound_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .args(["scan", "-r", "/dev/null", "-S", "/dev/null", "-l"])
        .arg(dir.path())
        .arg("--unix-socket")
        .arg(dir.path().join("no/such/dir/ctl.sock"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--unix-socket"));
}

/// Suricata's own client, where the reference Suricata is installed beside the
/// repository (`../shared/ref/suricata-8.0.6`).
fn suricatasc() -> Option<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let run = root.join("shared/ref/suricata-8.0.6/run");
    let ok = run.exists()
        && Command::new(&run)
            .args(["sc", "--help"])
            .output()
            .is_ok_and(|o| o.status.success());
    ok.then_some(run)
}

#[test]
fn suricatas_own_client_works_against_netsieve() {
    let Some(run) = suricatasc() else {
        eprintln!("skipped: the reference suricatasc is not installed here");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("r.rules");
    std::fs::write(
        &rules,
        "alert udp any any -> any any (content:\"a\"; sid:1;)\n",
    )
    .unwrap();
    let sock = dir.path().join("ctl.sock");
    let child = start(&rules, &sock);
    drop(Client::connect(&sock));
    let sc = |cmd: &str| -> Value {
        let o = Command::new(&run)
            .args(["sc", "-c", cmd])
            .arg(&sock)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "suricatasc -c {cmd}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    };
    assert!(
        sc("version")["message"]
            .as_str()
            .unwrap()
            .starts_with("netsieve")
    );
    assert_eq!(sc("ruleset-stats")["message"][0]["rules_loaded"], 1);
    assert_eq!(sc("iface-stat eth0")["return"], "NOK");
    assert_eq!(sc("shutdown")["return"], "OK");
    assert!(finish(child).status.success());
}
