//! `netsieve firewall` end to end on the bundled example capture.

mod common;

use common::{netsieve, pcap};

use std::path::{Path, PathBuf};

fn stat(out: &str, key: &str) -> u64 {
    out.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('\t')?.split('\t').next())
        .unwrap_or_else(|| panic!("no `{key}` in\n{out}"))
        .parse()
        .unwrap()
}

fn filter_count(file: &str, expr: &str) -> u64 {
    let o = netsieve(&["filter", "-r", file, "--count", expr]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().trim().parse().unwrap()
}

const RULES: &str = "\
*filter
:FORWARD DROP [0:0]
:smtp - [0:0]
-A FORWARD -p tcp -m tcp --dport 25 -j smtp
-A FORWARD -p tcp -m tcp --sport 25 -m conntrack --ctstate ESTABLISHED -j ACCEPT
-A smtp -m string --string \"MAIL FROM\" --algo bm -j REJECT
-A smtp -j ACCEPT
COMMIT
";

/// A temporary directory holding [`RULES`] as `rules.v4`.
fn with_rules() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.v4");
    std::fs::write(&rules, RULES).unwrap();
    (dir, rules)
}

#[test]
fn firewall_counts_agree_with_bpf_and_write_what_passes() {
    let (dir, rules) = with_rules();
    let out = dir.path().join("passed.pcap");
    let tsv = dir.path().join("v.tsv");
    let p = pcap();
    let o = netsieve(&[
        "firewall",
        "-R",
        rules.to_str().unwrap(),
        "-r",
        &p,
        "-w",
        out.to_str().unwrap(),
        "--verdicts",
        tsv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = String::from_utf8(o.stdout).unwrap();
    let packets = stat(&s, "packets");
    assert_eq!(packets, filter_count(&p, "ip"));
    let accept = stat(&s, "accepted");
    let reject = stat(&s, "rejected");
    // Exactly one client packet carries MAIL FROM.
    assert_eq!(reject, 1, "{s}");
    // Everything to port 25 but that one, and the server's replies (all after the
    // handshake, so ESTABLISHED), pass.
    assert_eq!(accept, filter_count(&p, "tcp port 25") - 1, "{s}");
    assert_eq!(filter_count(out.to_str().unwrap(), ""), accept);
    let lines = std::fs::read_to_string(&tsv).unwrap();
    assert_eq!(lines.lines().count() as u64, packets);
    assert!(lines.lines().all(|l| l.split('\t').count() == 3));
}

/// `netsieve firewall ARGS --updates UPDATES` under each strategy: the verdict files.
fn per_strategy(dir: &Path, args: &[&str], updates: &Path) -> Vec<String> {
    let mut seen = Vec::new();
    for strategy in ["full", "cut", "interval"] {
        let tsv = dir.join(format!("{strategy}.tsv"));
        let mut all = vec!["firewall"];
        all.extend_from_slice(args);
        all.extend_from_slice(&[
            "--strategy",
            strategy,
            "--updates",
            updates.to_str().unwrap(),
            "--verdicts",
            tsv.to_str().unwrap(),
        ]);
        let o = netsieve(&all);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        seen.push(std::fs::read_to_string(&tsv).unwrap());
    }
    seen
}

#[test]
fn strategies_and_updates_give_the_same_verdicts() {
    let (dir, rules) = with_rules();
    let updates = dir.path().join("updates");
    std::fs::write(
        &updates,
        "# packet, change\n\
         3 insert 0 -p tcp --sport 25 -m length --length 0:60 -j DROP\n\
         5 rebuild\n\
         8 delete 0\n\
         9 insert 1 -p tcp --dport 25 -j DROP\n",
    )
    .unwrap();
    let pcap = pcap();
    let seen = per_strategy(
        dir.path(),
        &["-R", rules.to_str().unwrap(), "-r", &pcap],
        &updates,
    );
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0], seen[2]);
    // The inserted DROP at position 1 takes the client's packets from packet 9 on.
    assert!(
        seen[0].lines().skip(9).any(|l| l.ends_with("\t1\tDROP")),
        "{}",
        seen[0]
    );
}

/// A firewall fails closed: a rule it cannot represent is reported with its position
/// and stops the run, unless --allow-skipped, when the summary lists what was left out.
#[test]
fn bad_rules_are_reported_with_their_position() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.v4");
    std::fs::write(
        &rules,
        "*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -s 10.0.0.0/33 -j DROP\n-A FORWARD -p tcp -j DROP\n-A FORWARD -m set --match-set bad src -j DROP\nCOMMIT\n",
    )
    .unwrap();
    let o = netsieve(&["firewall", "-R", rules.to_str().unwrap(), "-r", &pcap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("rules.v4:3:15: invalid address"), "{err}");
    assert!(
        err.contains("rules.v4:5:") && err.contains("--allow-skipped"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "no packet was classified");
    let o = netsieve(&[
        "firewall",
        "-R",
        rules.to_str().unwrap(),
        "-r",
        &pcap(),
        "--allow-skipped",
    ]);
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout).unwrap();
    assert_eq!(stat(&s, "dropped"), filter_count(&pcap(), "tcp"));
    assert_eq!(stat(&s, "rules left out (their protection is lost)"), 2);
    assert!(s.contains("left out\t") && s.contains("rules.v4:5:"), "{s}");
}

/// No usable rule set is an error, never a firewall that accepts everything: an `nft
/// list ruleset` dump with no table of the family, a file that is not a dump, a chain
/// that does not exist, a ClassBench file without a rule. Updates past the end of the
/// list are errors too.
#[test]
fn a_firewall_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let nft = dir.path().join("nft.txt");
    std::fs::write(
        &nft,
        "table ip6 filter {\n  chain forward {\n    type filter hook forward priority 0; policy drop;\n  }\n}\n",
    )
    .unwrap();
    let garbage = dir.path().join("garbage");
    std::fs::write(&garbage, b"\x00\x01 not rules \xff\n").unwrap();
    let rules = dir.path().join("rules.v4");
    std::fs::write(
        &rules,
        b"*filter\n:FORWARD DROP [0:0]\n-A FORWARD -m comment --comment \"caf\xe9\" -p tcp -j ACCEPT\nCOMMIT\n",
    )
    .unwrap();
    let cb = dir.path().join("cb");
    std::fs::write(&cb, "@not a rule\n@1.2.3.4/40 x\n").unwrap();
    for (args, says) in [
        (vec!["-R", nft.to_str().unwrap()], "no `*filter` table"),
        (vec!["-R", garbage.to_str().unwrap()], "no `*filter` table"),
        (
            vec!["-R", rules.to_str().unwrap(), "--chain", "INPUT"],
            "no chain `INPUT`",
        ),
        (vec!["-R", cb.to_str().unwrap()], "no ClassBench rule"),
    ] {
        let mut all = vec!["firewall", "-r"];
        let p = pcap();
        all.push(&p);
        all.extend(args);
        let o = netsieve(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{all:?}: {err}");
        assert!(err.contains(says), "{all:?}: {err}");
    }
    // A byte that is not UTF-8 (in a comment) is read around, with its position.
    let o = netsieve(&["firewall", "-R", rules.to_str().unwrap(), "-r", &pcap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("rules.v4:3:37: not UTF-8"), "{err}");
    // An update past the end of the list.
    let updates = dir.path().join("updates");
    for change in ["3 delete 99", "3 delete 1", "3 insert 7 -p udp -j DROP"] {
        std::fs::write(&updates, format!("{change}\n")).unwrap();
        let args = [
            "firewall",
            "-R",
            rules.to_str().unwrap(),
            "-r",
            &pcap(),
            "--updates",
        ];
        let o = netsieve(&[&args[..], &[updates.to_str().unwrap()]].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{change}: {err}");
        assert!(
            err.contains("update before packet 3: no position"),
            "{change}: {err}"
        );
    }
}

#[test]
fn classbench_trace() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("set");
    std::fs::write(
        &rules,
        "@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t80 : 80\t0x06/0xFF\t\n\
         @0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x00/0x00\t\n",
    )
    .unwrap();
    let trace = dir.path().join("trace");
    // 10.1.2.3 -> 1.2.3.4:80/tcp, then the same to port 81.
    std::fs::write(
        &trace,
        "167838211\t16909060\t1234\t80\t6\t0\t1\n167838211\t16909060\t1234\t81\t6\t0\t2\n",
    )
    .unwrap();
    let tsv = dir.path().join("v.tsv");
    let o = netsieve(&[
        "firewall",
        "-R",
        rules.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--verdicts",
        tsv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(&tsv).unwrap(),
        "0\t0\tACCEPT\n1\t1\tACCEPT\n"
    );
}

/// Trace mode classifies in batches of 64 cut where an update is due: the verdicts change
/// exactly at the packets the updates name, also inside and right after a batch.
#[test]
fn trace_updates_take_effect_at_their_packet() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("set");
    std::fs::write(
        &rules,
        "@0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t81 : 81\t0x06/0xFF\t\n\
         @0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t80 : 80\t0x06/0xFF\t\n\
         @0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x00/0x00\t\n",
    )
    .unwrap();
    let updates = dir.path().join("updates");
    std::fs::write(
        &updates,
        "70 insert 0 @10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t80 : 80\t0x06/0xFF\n\
         130 delete 0\n\
         150 delete 0\n\
         64 rebuild\n",
    )
    .unwrap();
    let trace = dir.path().join("trace");
    // 200 times 10.1.2.3 -> 1.2.3.4:80/tcp.
    std::fs::write(
        &trace,
        "167838211\t16909060\t1234\t80\t6\t0\t1\n".repeat(200),
    )
    .unwrap();
    let seen = per_strategy(
        dir.path(),
        &[
            "-R",
            rules.to_str().unwrap(),
            "--format",
            "classbench",
            "--trace",
            trace.to_str().unwrap(),
        ],
        &updates,
    );
    let want: String = (0..200)
        .map(|i| {
            let pos = match i {
                0..70 => 1,
                70..130 => 0,
                130..150 => 1,
                _ => 0,
            };
            format!("{i}\t{pos}\tACCEPT\n")
        })
        .collect();
    for s in &seen {
        assert_eq!(*s, want);
    }
}

#[test]
fn list_shows_the_flattened_positions() {
    let (_dir, rules) = with_rules();
    let o = netsieve(&["firewall", "-R", rules.to_str().unwrap(), "--list"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = s.lines().collect();
    // The jump to `smtp` is flattened into its two rules, then the ESTABLISHED rule.
    assert_eq!(lines.len(), 4, "{s}");
    // Each: position, the chains that lead to it, origin, action, kind, its text.
    let r = |i: usize| lines[i].split('\t').collect::<Vec<_>>();
    assert_eq!(r(0)[0], "0");
    assert_eq!(
        r(0)[1..],
        [
            "FORWARD > smtp",
            &format!("{}:6", rules.display()),
            "REJECT",
            "complex",
            "-A smtp -m string --string \"MAIL FROM\" --algo bm -j REJECT"
        ]
    );
    assert_eq!(
        r(1)[1..4],
        [
            "FORWARD > smtp",
            &format!("{}:7", rules.display()),
            "ACCEPT"
        ]
    );
    assert_eq!(r(1)[4..], ["simple", "-A smtp -j ACCEPT"], "{s}");
    assert_eq!(r(2)[1], "FORWARD", "{s}");
    assert_eq!(r(2)[4], "complex", "{s}");
    assert_eq!(lines[3], "policy\tDROP");
}

/// The summary speaks the admin's words: packets, matched, accepted, dropped, rejected,
/// then each rule's packets and bytes as `iptables -L -v -n -x` counts them (the IP
/// length), by the chain that holds it, and the policy's; the fast and slow paths'
/// figures only with `--stats`.
#[test]
fn the_summary_counts_per_rule_as_iptables_does() {
    let (_dir, rules) = with_rules();
    let p = pcap();
    let o = netsieve(&["firewall", "-R", rules.to_str().unwrap(), "-r", &p]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = String::from_utf8(o.stdout).unwrap();
    let (packets, accepted, rejected, dropped) = (
        stat(&s, "packets"),
        stat(&s, "accepted"),
        stat(&s, "rejected"),
        stat(&s, "dropped"),
    );
    assert_eq!(packets, accepted + rejected + dropped, "{s}");
    assert!(!s.contains("shunted") && !s.contains("validID"), "{s}");
    // Per rule: pkts, bytes, target, chain, origin, text.
    let row = |text: &str| -> (u64, u64) {
        let l = s
            .lines()
            .find(|l| l.ends_with(text))
            .unwrap_or_else(|| panic!("no row for {text} in\n{s}"));
        let w: Vec<&str> = l.split_whitespace().collect();
        (w[0].parse().unwrap(), w[1].parse().unwrap())
    };
    let (rej_pkts, rej_bytes) = row("--algo bm -j REJECT");
    assert_eq!((rej_pkts, rejected), (1, 1), "{s}");
    // Its bytes are the IP length of the one packet carrying MAIL FROM.
    let mail = netsieve(&["filter", "-r", &p, "-v", "tcp[32:4] = 0x4d41494c"]);
    let ip_len: u64 = String::from_utf8_lossy(&mail.stdout)
        .split("length ")
        .nth(1)
        .and_then(|x| x.split(')').next())
        .and_then(|x| x.parse().ok())
        .expect("the MAIL FROM packet's IP length");
    assert_eq!(rej_bytes, ip_len, "{s}");
    let (acc_pkts, _) = row("-A smtp -j ACCEPT");
    let (est_pkts, _) = row("--ctstate ESTABLISHED -j ACCEPT");
    assert_eq!(acc_pkts + est_pkts, accepted, "{s}");
    assert!(s.contains("\npolicy DROP ("), "{s}");
    let o = netsieve(&[
        "firewall",
        "-R",
        rules.to_str().unwrap(),
        "-r",
        &p,
        "--stats",
    ]);
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(s.contains("\nstats\n"), "{s}");
    assert_eq!(stat(&s, "fast path") + stat(&s, "shunted"), packets, "{s}");
}

/// Updates in iptables' own forms (`-I CHAIN N`, `-A CHAIN`, `-D CHAIN N`, `-D CHAIN
/// RULE`), numbered as `iptables -L --line-numbers` numbers the classified chain at the
/// time they apply, give the verdicts of the same changes by flattened position.
#[test]
fn updates_in_iptables_forms() {
    let (dir, rules) = with_rules();
    let (a, b, c) = (
        "-p tcp --sport 25 -m length --length 0:60 -j DROP",
        "-p tcp -j REJECT",
        "-p tcp --sport 25 -j DROP",
    );
    // FORWARD holds: 1 the jump to smtp (flattened into positions 0 and 1), 2 the
    // ESTABLISHED rule.
    let chain_forms = format!(
        "3 -I FORWARD 1 {a}\n5 -A FORWARD {b}\n7 -D FORWARD 1\n8 -D FORWARD {b}\n9 -I FORWARD 2 {c}\n"
    );
    let positions =
        format!("3 insert 0 {a}\n5 insert 4 {b}\n7 delete 0\n8 delete 3\n9 insert 2 {c}\n");
    let run = |text: &str| {
        let updates = dir.path().join("u");
        std::fs::write(&updates, text).unwrap();
        let args = ["-R", rules.to_str().unwrap(), "-r", &pcap()];
        per_strategy(dir.path(), &args, &updates).remove(0)
    };
    let by_chain = run(&chain_forms);
    assert_eq!(by_chain, run(&positions));
    // The DROP before the ESTABLISHED rule decides the server's packets from packet 9.
    assert!(
        by_chain.lines().skip(9).any(|l| l.ends_with("\t2\tDROP")),
        "{by_chain}"
    );
    // What iptables would refuse, or netsieve cannot do, stops the run with a reason.
    for (change, says) in [
        ("3 -D FORWARD 1", "is a jump"),
        ("3 -I FORWARD 4 -j DROP", "no rule number 4"),
        ("3 -I smtp 1 -j DROP", "only the classified chain (FORWARD)"),
        (
            "3 -D FORWARD -p udp -j DROP",
            "no rule `-A FORWARD -p udp -j DROP`",
        ),
    ] {
        let updates = dir.path().join("bad");
        std::fs::write(&updates, format!("{change}\n")).unwrap();
        let o = netsieve(&[
            "firewall",
            "-R",
            rules.to_str().unwrap(),
            "-r",
            &pcap(),
            "--updates",
            updates.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{change}: {err}");
        assert!(err.contains(says), "{change}: {err}");
    }
}

/// An `nft list ruleset` dump (found by its `table` line) is read as the iptables-save
/// dump it stands for: the same verdicts on the example capture, its rules listed with
/// the nft lines they came from, and a statement with no iptables form refused with its
/// line and column.
#[test]
fn nftables_rulesets_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let nft = dir.path().join("rules.nft");
    std::fs::write(
        &nft,
        "table ip filter {\n\
         \tchain forward {\n\
         \t\ttype filter hook forward priority filter; policy drop;\n\
         \t\ttcp dport 25 counter packets 0 bytes 0 jump smtp\n\
         \t\ttcp sport 25 ct state established accept\n\
         \t}\n\
         \tchain smtp {\n\
         \t\t@th,0,8 0x1 drop comment \"skipped\"\n\
         \t\taccept\n\
         \t}\n\
         }\n",
    )
    .unwrap();
    let verdicts = |set: &Path, extra: &[&str]| {
        let tsv = dir.path().join("v.tsv");
        let mut args = vec!["firewall", "-R", set.to_str().unwrap()];
        args.extend_from_slice(extra);
        let p = pcap();
        args.extend_from_slice(&["-r", &p, "--verdicts", tsv.to_str().unwrap()]);
        let o = netsieve(&args);
        (o, std::fs::read_to_string(&tsv).unwrap_or_default())
    };
    // The payload match has no nft form here: refused, with its line and column...
    let (o, _) = verdicts(&nft, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("rules.nft:8:3"), "{err}");
    // ... and left out with --allow-skipped; without the MAIL FROM rule, the iptables set
    // gives the same verdicts (its REJECT rule is the one the nft set lacks).
    let (o, by_nft) = verdicts(&nft, &["--allow-skipped"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plain = dir.path().join("plain.v4");
    std::fs::write(
        &plain,
        RULES.replace(
            "-A smtp -m string --string \"MAIL FROM\" --algo bm -j REJECT\n",
            "",
        ),
    )
    .unwrap();
    let (_, by_iptables) = verdicts(&plain, &[]);
    assert!(!by_nft.is_empty());
    assert_eq!(by_nft, by_iptables);
    let o = netsieve(&[
        "firewall",
        "-R",
        nft.to_str().unwrap(),
        "--list",
        "--allow-skipped",
    ]);
    let list = String::from_utf8(o.stdout).unwrap();
    assert!(
        list.lines()
            .next()
            .unwrap()
            .starts_with("0\tFORWARD > smtp\t"),
        "{list}"
    );
    assert!(
        list.contains("rules.nft:9\tACCEPT\tsimple\t-A smtp -j ACCEPT"),
        "{list}"
    );
}
