//! iptables-save semantics: flattening, negation, multiport, errors.

use netsieve_classify::iptables::{Family, parse};
use netsieve_classify::linear::Linear;
use netsieve_classify::rule::*;

fn pkt(src: [u8; 4], dst: [u8; 4], proto: u8, sport: u16, dport: u16, flags: u16) -> Key {
    Key {
        src: v4(u32::from_be_bytes(src)),
        dst: v4(u32::from_be_bytes(dst)),
        sport,
        dport,
        proto,
        flags,
    }
}

fn verdict(dump: &str, chain: &str, k: Key) -> (Option<usize>, Action) {
    let p = parse(dump, Family::V4, chain, "t").unwrap();
    assert!(p.errors.is_empty(), "{:?}", p.errors);
    let mut l = Linear::new(&p.set);
    let v = l.classify(&Packet::header_only(k));
    (v.rule, v.action)
}

const DUMP: &str = "\
*nat
:PREROUTING ACCEPT [0:0]
-A PREROUTING -p tcp -j DNAT --to-destination 1.2.3.4
COMMIT
*filter
:INPUT DROP [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:web - [0:0]
:trusted - [0:0]
:nothing - [0:0]
[3:180] -A INPUT -s 10.0.0.0/255.0.0.0 -j trusted
-A INPUT -p tcp -m tcp --dport 80 -j web
-A INPUT -p tcp -m multiport --dports 22,8000:8080 -j ACCEPT
-A INPUT ! -s 192.168.0.0/16 -p udp -j REJECT --reject-with icmp-port-unreachable
-A INPUT -p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -j LOG --log-prefix \"syn \\\"x\\\" \"
-A INPUT -p tcp --syn -j DROP
-A INPUT -p tcp -j ACCEPT
-A trusted -s 10.0.0.1/32 -j RETURN
-A trusted -j ACCEPT
-A web -s 172.16.0.0/12 -g nothing
-A web -j ACCEPT
-A nothing -s 10.9.9.9 -j ACCEPT
COMMIT
";

#[test]
fn flattening_keeps_netfilter_semantics() {
    let k = |s, p, dport, flags| pkt(s, [1, 1, 1, 1], p, 1234, dport, flags);
    // trusted: 10/8 accepted except 10.0.0.1, which RETURNs and goes on.
    assert_eq!(
        verdict(DUMP, "INPUT", k([10, 2, 3, 4], 17, 53, 0)).1,
        Action::Accept
    );
    assert_eq!(
        verdict(DUMP, "INPUT", k([10, 0, 0, 1], 17, 53, 0)).1,
        Action::Reject
    );
    // web: port 80 from 172.16/12 goes (`-g`) to `nothing` and falls off its end, so it
    // does not come back to `web` (whose next rule accepts) but to the chain that jumped
    // to `web`: INPUT, whose last rule (flattened position 5) accepts TCP. Others are
    // accepted by `web` (position 1).
    assert_eq!(
        verdict(DUMP, "INPUT", k([172, 16, 0, 9], 6, 80, 0x10)),
        (Some(5), Action::Accept)
    );
    assert_eq!(
        verdict(DUMP, "INPUT", k([172, 16, 0, 9], 6, 80, 0x02)),
        (Some(4), Action::Drop)
    );
    assert_eq!(
        verdict(DUMP, "INPUT", k([8, 8, 8, 8], 6, 80, 0x02)),
        (Some(1), Action::Accept)
    );
    // multiport.
    assert_eq!(
        verdict(DUMP, "INPUT", k([8, 8, 8, 8], 6, 8042, 0x10)).1,
        Action::Accept
    );
    assert_eq!(
        verdict(DUMP, "INPUT", k([8, 8, 8, 8], 6, 22, 0x02)).1,
        Action::Accept
    );
    // ! -s: UDP from outside 192.168/16 rejected, from inside falls to the policy.
    assert_eq!(
        verdict(DUMP, "INPUT", k([8, 8, 8, 8], 17, 53, 0)).1,
        Action::Reject
    );
    assert_eq!(
        verdict(DUMP, "INPUT", k([192, 168, 1, 1], 17, 53, 0)),
        (None, Action::Drop)
    );
    // LOG does not decide; --syn does.
    assert_eq!(
        verdict(DUMP, "INPUT", k([8, 8, 8, 8], 6, 443, 0x02)).1,
        Action::Drop
    );
    assert_eq!(
        verdict(DUMP, "INPUT", k([8, 8, 8, 8], 6, 443, 0x12)).1,
        Action::Accept
    );
    // Other chains and tables are separate.
    assert_eq!(
        verdict(DUMP, "FORWARD", k([8, 8, 8, 8], 6, 80, 0)),
        (None, Action::Accept)
    );
    let p = parse(DUMP, Family::V4, "INPUT", "t").unwrap();
    assert_eq!(p.non_terminating, vec![("LOG".to_string(), 1)]);
}

#[test]
fn bad_rules_are_reported_and_skipped() {
    let dump = "\
*filter
:INPUT ACCEPT [0:0]
-A INPUT -s 10.0.0.300 -j DROP
-A INPUT -p tcp -m mac --mac-source 00:11:22:33:44:55 -j DROP
-A INPUT -p tcp --dport 99999 -j DROP
-A INPUT -p bogus -j DROP
-A INPUT -m string --hex-string \"|zz|\" --algo bm -j DROP
-A INPUT -m comment --comment \"unterminated -j DROP
-A INPUT -p tcp -j nosuchchain
-A INPUT -p udp -j DROP
COMMIT
";
    let p = parse(dump, Family::V4, "INPUT", "t").unwrap();
    let at: Vec<(usize, usize)> = p.errors.iter().map(|e| (e.line(), e.column())).collect();
    assert_eq!(
        at,
        vec![(3, 13), (4, 17), (5, 25), (6, 13), (7, 33), (8, 31), (9, 1)],
        "{:#?}",
        p.errors
    );
    assert_eq!(p.set.rules.len(), 1);
    assert!(p.errors[1].message().contains("mac"));
}

#[test]
fn complex_matches_are_parsed() {
    let dump = "\
*filter
:FORWARD DROP [0:0]
-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FORWARD -p tcp -m string --string \"evil\" --algo bm --from 40 --to 200 --icase -j DROP
-A FORWARD -m length --length 0:64 -m ttl --ttl-lt 5 -j DROP
-A FORWARD -m limit --limit 10/minute --limit-burst 3 -j ACCEPT
-A FORWARD -m statistic --mode nth --every 3 --packet 0 -j ACCEPT
-A FORWARD -p tcp -m multiport --ports 80,443 -j ACCEPT
COMMIT
";
    let p = parse(dump, Family::V4, "FORWARD", "t").unwrap();
    assert!(p.errors.is_empty(), "{:?}", p.errors);
    let r = &p.set.rules;
    assert_eq!(r.len(), 6);
    assert!(r[..5].iter().all(|r| !r.is_simple()));
    assert!(r[5].is_simple());
    // --ports: source or destination.
    assert_eq!(r[5].header.len(), 4);
    let Complex::String(s) = &r[1].complex[0] else {
        panic!("{:?}", r[1].complex)
    };
    assert_eq!((s.from, s.to, s.icase), (40, 200, true));
    let mut ip = vec![0u8; 100];
    ip[60..64].copy_from_slice(b"EViL");
    assert!(s.matches(&ip));
    assert!(!s.matches(&ip[..62]));
    let Complex::Limit { per_sec, burst } = r[3].complex[0] else {
        panic!()
    };
    assert!((per_sec - 10.0 / 60.0).abs() < 1e-9 && burst == 3);
}

/// Loops are refused; chains that fan out are bounded, not exponential.
#[test]
fn hostile_chains_are_bounded() {
    let mut dump = String::from("*filter\n:INPUT ACCEPT [0:0]\n:a - [0:0]\n:b - [0:0]\n");
    dump.push_str("-A INPUT -j a\n-A a -j b\n-A b -j a\n-A b -j DROP\n");
    let p = parse(&dump, Family::V4, "INPUT", "t").unwrap();
    assert!(
        p.errors.iter().any(|e| e.message().contains("loop")),
        "{:?}",
        p.errors
    );
    assert_eq!(p.set.rules.len(), 1);
    // Ten chains, each jumping ten times to the next: 10^9 paths.
    let mut dump = String::from("*filter\n:INPUT ACCEPT [0:0]\n");
    for c in 0..10 {
        dump.push_str(&format!(":c{c} - [0:0]\n"));
    }
    dump.push_str("-A INPUT -j c0\n");
    for c in 0..9 {
        for i in 0..10 {
            dump.push_str(&format!(
                "-A c{c} -p tcp -j c{} -m comment --comment {i}\n",
                c + 1
            ));
        }
    }
    dump.push_str("-A c9 -j DROP\n");
    let p = parse(&dump, Family::V4, "INPUT", "t").unwrap();
    assert!(p.errors.iter().any(|e| e.message().contains("more than")));
}

#[test]
fn not_a_dump_and_missing_chains_are_errors() {
    // No usable table or chain: an error, never an empty set that accepts everything.
    let nft = "table inet filter {\n\tchain input {\n\t\ttype filter hook input priority 0; policy drop;\n\t}\n}\n";
    for text in ["<iptables-rules/>\n", nft, "", "\u{fffd}garbage\n"] {
        let e = parse(text, Family::V4, "INPUT", "t").unwrap_err();
        assert!(e.message().contains("no `*filter` table"), "{e}");
    }
    let e = parse(
        "*filter\n:INPUT DROP [0:0]\nCOMMIT\n",
        Family::V4,
        "FORWARD",
        "t",
    )
    .unwrap_err();
    assert!(
        e.message().contains("no chain `FORWARD`") && e.message().contains("INPUT"),
        "{e}"
    );
}
