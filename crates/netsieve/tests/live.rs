//! Live capture, tested on real interfaces: two network namespaces (a client and a server)
//! joined by a veth pair, `netsieve scan -i` on the server's end, and traffic from real
//! tools (ping, curl against Python's HTTP server, UDP from Python).
//!
//! The tests make and remove their namespaces themselves. They need root (CI runs as
//! root) and `ip` from iproute2; where namespaces cannot be made they say so and pass.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Two namespaces and a veth pair: `{name}c` holds `c0` (10.77.N.2), `{name}s` holds
/// `s0` (10.77.N.1). Removed on drop.
struct Net {
    name: String,
    n: u8,
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Net {
    /// The namespaces for test `n`, or `None` (with the reason printed) where they
    /// cannot be made.
    fn new(n: u8) -> Option<Net> {
        let name = format!("nsv{}x{n}", std::process::id() % 100_000);
        let net = Net { name, n };
        let (c, s) = (net.ns('c'), net.ns('s'));
        let (vc, vs) = (format!("{}c0", net.name), format!("{}s0", net.name));
        let ok = ip(&["netns", "add", &c])
            && ip(&["netns", "add", &s])
            && ip(&["link", "add", &vc, "type", "veth", "peer", "name", &vs])
            && ip(&["link", "set", &vc, "netns", &c])
            && ip(&["link", "set", &vs, "netns", &s])
            && net.exec_ok('c', &["ip", "link", "set", &vc, "name", "c0"])
            && net.exec_ok('s', &["ip", "link", "set", &vs, "name", "s0"])
            && net.exec_ok('c', &["ip", "addr", "add", &net.addr(2, true), "dev", "c0"])
            && net.exec_ok('s', &["ip", "addr", "add", &net.addr(1, true), "dev", "s0"])
            && net.exec_ok('c', &["ip", "link", "set", "c0", "up"])
            && net.exec_ok('s', &["ip", "link", "set", "s0", "up"])
            && net.exec_ok('c', &["ip", "link", "set", "lo", "up"])
            && net.exec_ok('s', &["ip", "link", "set", "lo", "up"]);
        if !ok {
            eprintln!("skipped: network namespaces cannot be made here (needs root and iproute2)");
            return None;
        }
        Some(net)
    }

    fn ns(&self, side: char) -> String {
        format!("{}{side}", self.name)
    }

    /// Host `h` of this test's subnet, with its prefix length when `prefix`.
    fn addr(&self, h: u8, prefix: bool) -> String {
        format!("10.77.{}.{h}{}", self.n, if prefix { "/24" } else { "" })
    }

    fn cmd(&self, side: char, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns(side)]).args(args);
        c
    }

    fn exec_ok(&self, side: char, args: &[&str]) -> bool {
        self.cmd(side, args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end in it, and with it the pair.
        ip(&["netns", "del", &self.ns('c')]);
        ip(&["netns", "del", &self.ns('s')]);
    }
}

/// `netsieve scan -i s0` in the server's namespace, until stopped.
struct Scan {
    child: Child,
}

impl Scan {
    fn start(net: &Net, rules: &Path, out: &Path, extra: &[&str]) -> Scan {
        let exe = env!("CARGO_BIN_EXE_netsieve");
        let child = net
            .cmd('s', &[exe, "scan", "-i", "s0"])
            .arg("-S")
            .arg(rules)
            .arg("-l")
            .arg(out)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("netsieve starts");
        // The ring is set up within moments of the start; give it time.
        std::thread::sleep(Duration::from_millis(800));
        Scan { child }
    }

    /// SIGINT, as Ctrl-C: the run drains its flows, writes every alert and exits 0.
    fn stop(self) -> std::process::Output {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-INT", &pid]).status().unwrap();
        self.stop_after_shutdown()
    }

    /// Waits for the run to end (after a `shutdown` command or a signal).
    fn stop_after_shutdown(mut self) -> std::process::Output {
        let start = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "netsieve did not stop within 10 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let child = std::mem::replace(
            &mut self.child,
            Command::new("true").spawn().expect("true runs"),
        );
        child.wait_with_output().unwrap()
    }
}

impl Drop for Scan {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sids(out: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(out.join("eve.json")).unwrap_or_default();
    let mut v: Vec<u64> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event_type"] == "alert")
        .filter_map(|v| v["alert"]["signature_id"].as_u64())
        .collect();
    v.sort();
    v.dedup();
    v
}

const RULES: &str = r#"alert icmp any any -> any any (msg:"ping"; itype:8; sid:1; rev:1;)
alert http any any -> any any (msg:"secret URI"; flow:to_server,established; http.uri; content:"/secret"; sid:2; rev:1;)
alert udp any any -> any any (msg:"UDP hello"; content:"hello"; sid:3; rev:1;)
"#;

fn send_udp(net: &Net, text: &str) {
    let code = format!(
        "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'{text}', ('{}', 9999))",
        net.addr(1, false)
    );
    assert!(
        net.exec_ok('c', &["python3", "-c", &code]),
        "python3 sends UDP"
    );
}

fn has(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn live_interface_alerts_on_ping_http_and_udp_and_stops_cleanly() {
    let Some(net) = Net::new(1) else { return };
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("live.rules");
    std::fs::write(&rules, RULES).unwrap();
    let mut server = net
        .cmd('s', &["python3", "-m", "http.server", "8080", "--bind"])
        .arg(net.addr(1, false))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3's HTTP server starts");
    let scan = Scan::start(&net, &rules, dir.path(), &["--threads", "2"]);

    // UDP first: its alert must reach eve.json while netsieve still runs (a live run
    // writes its alerts out whenever traffic pauses).
    send_udp(&net, "hello there");
    let start = Instant::now();
    while !sids(dir.path()).contains(&3) {
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "the UDP alert was not written within 3 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut want = vec![2, 3];
    if has("ping") {
        let server = net.addr(1, false);
        assert!(net.exec_ok('c', &["ping", "-c", "2", "-i", "0.2", &server]));
        want.insert(0, 1);
    } else {
        eprintln!("ping not installed: the ICMP part is skipped");
    }
    let url = format!("http://{}:8080/secret", net.addr(1, false));
    let curl = if has("curl") {
        net.exec_ok('c', &["curl", "-s", "-o", "/dev/null", &url])
    } else {
        let code =
            format!("import urllib.request as u\ntry: u.urlopen('{url}')\nexcept Exception: pass");
        net.exec_ok('c', &["python3", "-c", &code])
    };
    assert!(curl, "the HTTP request was made");
    std::thread::sleep(Duration::from_millis(300));

    let o = scan.stop();
    let _ = server.kill();
    let _ = server.wait();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "exit {:?}: {stderr}", o.status);
    assert_eq!(sids(dir.path()), want, "{stderr}");
    assert!(
        stderr.contains("netsieve scan:"),
        "the summary is printed: {stderr}"
    );
}

#[test]
fn live_bpf_runs_in_the_kernel() {
    let Some(net) = Net::new(2) else { return };
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("live.rules");
    std::fs::write(&rules, RULES).unwrap();
    let scan = Scan::start(&net, &rules, dir.path(), &["--bpf", "udp port 9999"]);
    send_udp(&net, "hello");
    if has("ping") {
        assert!(net.exec_ok('c', &["ping", "-c", "1", &net.addr(1, false)]));
    }
    // A UDP datagram to another port: the filter rejects it.
    let code = format!(
        "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'hello', ('{}', 9998))",
        net.addr(1, false)
    );
    assert!(net.exec_ok('c', &["python3", "-c", &code]));
    std::thread::sleep(Duration::from_millis(300));
    let o = scan.stop();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(sids(dir.path()), [3]);
    // Only the one datagram the filter accepts reached netsieve: no ARP, no ICMP, not
    // the datagram to port 9998.
    let eve = std::fs::read_to_string(dir.path().join("eve.json")).unwrap();
    assert_eq!(eve.lines().count(), 1, "{eve}");
    assert!(stderr.contains(": 1 packets,"), "{stderr}");
}

#[test]
fn a_missing_interface_is_an_error_that_names_it() {
    let o = Command::new(env!("CARGO_BIN_EXE_netsieve"))
        .args(["scan", "-i", "nosuchif0", "-S", "/dev/null", "-l"])
        .arg(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("nosuchif0"), "{stderr}");
}

/// A client of the control socket speaking Suricata's protocol (the version handshake,
/// then one command).
fn command(sock: &Path, cmd: &str, args: serde_json::Value) -> serde_json::Value {
    use std::io::{BufRead, BufReader, Write};
    let mut s = std::os::unix::net::UnixStream::connect(sock).expect("the socket accepts");
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut line = String::new();
    s.write_all(b"{\"version\": \"0.2\"}\n").unwrap();
    r.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), r#"{"return":"OK"}"#);
    let mut req = serde_json::json!({ "command": cmd });
    if !args.is_null() {
        req["arguments"] = args;
    }
    s.write_all(format!("{req}\n").as_bytes()).unwrap();
    line.clear();
    r.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap()
}

/// Sends `texts` as UDP datagrams from one source port: one flow.
fn send_flow(net: &Net, port: u16, texts: &[&str]) {
    let list = texts
        .iter()
        .map(|t| format!("b'{t}'"))
        .collect::<Vec<_>>()
        .join(",");
    let code = format!(
        "import socket, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.bind(('{}', {port}))\nfor t in [{list}]:\n    s.sendto(t, ('{}', 9999)); time.sleep(0.05)",
        net.addr(2, false),
        net.addr(1, false)
    );
    assert!(
        net.exec_ok('c', &["python3", "-c", &code]),
        "python3 sends UDP"
    );
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{what}: not within 3 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn rules_change_through_the_socket_while_flows_carry_over() {
    let Some(net) = Net::new(3) else { return };
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("live.rules");
    let sock = dir.path().join("ns.sock");
    // Rule 10 sets a flowbit on a flow's "first" datagram and alerts once a minute at
    // most; the reload brings rule 11, which needs that bit, and a rule with an error,
    // which is reported and skipped.
    let rule10 = "alert udp any any -> any any (msg:\"first\"; content:\"first\"; flowbits:set,seen; threshold:type limit,track by_src,count 1,seconds 60; sid:10; rev:1;)\n";
    std::fs::write(&rules, rule10).unwrap();
    let scan = Scan::start(
        &net,
        &rules,
        dir.path(),
        &["--unix-socket", sock.to_str().unwrap()],
    );
    send_flow(&net, 40000, &["first", "first"]);
    wait_for("the first alert", || sids(dir.path()) == [10]);
    let r = command(&sock, "ruleset-stats", serde_json::Value::Null);
    assert_eq!(r["message"][0]["rules_loaded"], 1, "{r}");

    // The new rules come first, so that rule 10 has another place in the new set.
    let text = [
        "alert udp any any -> any any (msg:\"second\"; content:\"second\"; flowbits:isset,seen; sid:11; rev:1;)\n",
        rule10,
        "alert udp any any -> any any (msg:\"broken\"; content:\"x; sid:12;)\n",
    ];
    std::fs::write(&rules, text.concat()).unwrap();
    let t = Instant::now();
    let r = command(&sock, "reload-rules", serde_json::Value::Null);
    let reload = t.elapsed();
    assert_eq!(r["return"], "OK", "{r}");
    eprintln!("reload-rules answered in {reload:?}");
    let r = command(&sock, "ruleset-stats", serde_json::Value::Null);
    assert_eq!(r["message"][0]["rules_loaded"], 2, "{r}");
    assert_eq!(r["message"][0]["rules_failed"], 1, "{r}");
    let r = command(&sock, "ruleset-failed-rules", serde_json::Value::Null);
    let failed = r["message"][0]["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(failed.contains("live.rules:3:"), "{r}");
    assert_eq!(
        sids(dir.path()),
        [10],
        "no alert from the new rules for packets before the reload"
    );

    // The same flow (same ports): its flowbit, set before the reload, is seen after it,
    // and rule 10's threshold still counts its alert from before.
    send_flow(&net, 40000, &["first", "second"]);
    wait_for("the flowbit alert", || sids(dir.path()) == [10, 11]);
    // Another flow without the bit: no alert from rule 11.
    send_flow(&net, 40001, &["second"]);

    // One rule added and removed through the socket.
    let r = command(
        &sock,
        "add-rule",
        serde_json::json!({"rule": "alert udp any any -> any any (msg:\"added\"; content:\"third\"; sid:20; rev:1;)"}),
    );
    assert_eq!(r["return"], "OK", "{r}");
    send_flow(&net, 40002, &["third"]);
    wait_for("the added rule's alert", || sids(dir.path()).contains(&20));
    let r = command(&sock, "remove-rule", serde_json::json!({"sid": 20}));
    assert_eq!(r["return"], "OK", "{r}");
    send_flow(&net, 40003, &["third"]);
    let r = command(
        &sock,
        "add-rule",
        serde_json::json!({"rule": "alert udp any any -> (sid:21;)"}),
    );
    assert_eq!(
        r["return"], "OK",
        "a bad rule is reported, the rest stay: {r}"
    );

    let r = command(&sock, "shutdown", serde_json::Value::Null);
    assert_eq!(r["return"], "OK", "{r}");
    let o = scan.stop_after_shutdown();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let eve = std::fs::read_to_string(dir.path().join("eve.json")).unwrap();
    let count = |sid: &str| eve.matches(&format!("\"signature_id\":{sid},")).count();
    assert_eq!((count("10"), count("11"), count("20")), (1, 1, 1), "{eve}");
    assert!(!sock.exists(), "the socket file is removed at the end");
}
