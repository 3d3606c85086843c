//! A printed rule reads back as the same rule: parse, print, parse again, over every
//! rule of Emerging Threats Open 2019 and 2024 and the Snort 3 community set (read
//! from `NETSIEVE_DATA`, default `../shared/data`; skipped when absent), and over a
//! table of rules written to reach each form the printer has.

use std::path::PathBuf;

use netsieve_rules::{Loaded, Match, Rule, Vars, parse_rule};

fn data_dir() -> Option<PathBuf> {
    let d = std::env::var_os("NETSIEVE_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    d.is_dir().then_some(d)
}

/// The rule without what depends on where and how its text was written: file, line, the
/// hash of the text, pcre columns.
fn placeless(mut r: Rule) -> Rule {
    r.file.clear();
    r.line = 0;
    r.text_hash = 0;
    for l in &mut r.lists {
        for m in &mut l.matches {
            if let Match::Pcre(p) = m {
                p.column = 0;
            }
        }
    }
    r
}

/// The printed rule, if it does not read back as `r`.
fn round_trip_error(r: &Rule, vars: &Vars) -> Option<String> {
    let text = r.to_string();
    match parse_rule(&text, vars) {
        Ok(back) if placeless(back.clone()) == placeless(r.clone()) => None,
        Ok(back) => {
            let (a, b) = (
                format!("{:?}", placeless(r.clone())),
                format!("{:?}", placeless(back)),
            );
            let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            let from = a[..at].char_indices().rev().nth(80).map_or(0, |(i, _)| i);
            let cut = |s: &str| s[from..].chars().take(200).collect::<String>();
            Some(format!(
                "{text}\n  first: ...{}\n  again: ...{}",
                cut(&a),
                cut(&b)
            ))
        }
        Err(e) => Some(format!("{text}\n  does not parse: {e}")),
    }
}

#[test]
fn rule_sets_read_back() {
    let Some(d) = data_dir() else { return };
    let mut report = Vec::new();
    for set in ["et-open-2019", "et-open-2024", "snort3-community"] {
        let dir = d.join("rules").join(set);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "rules"))
            .collect();
        files.sort();
        let vars = Vars::default();
        let mut loaded = Loaded::default();
        for f in &files {
            loaded.add_file(f, &vars).unwrap();
        }
        let failures: Vec<String> = loaded
            .rules
            .iter()
            .filter_map(|r| {
                round_trip_error(r, &vars).map(|e| format!("{}:{}: {e}", r.file, r.line))
            })
            .collect();
        assert!(
            loaded.rules.len() > 1000,
            "{set}: {} rules",
            loaded.rules.len()
        );
        if !failures.is_empty() {
            report.push(format!(
                "{set}: {} of {} rules do not read back; the first:\n{}",
                failures.len(),
                loaded.rules.len(),
                failures
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// Rules written to reach each form of the printer: every buffer spelling, legacy
/// lists, pcre-started lists, escapes, every condition and alert option.
#[test]
fn forms_read_back() {
    let vars = Vars::default();
    let rules = [
        r#"alert tcp any any -> any any (msg:"a \"quoted\" \\ msg\; here"; content:"|00 01|a\;b\"c|7C|"; nocase; sid:1;)"#,
        r#"alert http any any -> any any (content:"GET"; http_method; content:"/x"; http_uri; pcre:"/y/R"; sid:2;)"#,
        r#"alert http any any -> any any (pcre:"/x/U"; content:"a"; http_uri; content:"b"; sid:3;)"#,
        r#"alert http any any -> any any (content:"c"; http_raw_cookie; sid:4;)"#,
        r#"alert dns any any -> any any (dns.opcode:!0; dns.rrtype:1-5; dns_query; dotprefix; content:".example"; endswith; sid:5;)"#,
        r#"alert http any any -> any any (urilen:<20,raw; http.uri; bsize:>4; to_lowercase; content:"a"; offset:1; depth:4; sid:6;)"#,
        r#"alert tcp ![1.1.1.1,2.2.2.0/24] [80,!81,1000:] <> 10.0.0.1-10.0.0.9 !any (flags:S+,12; dsize:-1<=>5; ttl:<3; ip_proto:!gre; stream_size:client,>=,5; sid:7; gid:3;)"#,
        r#"alert tcp any any -> any any (content:"a"; byte_extract:2,0,len,relative,little,multiplier 2,align 4; byte_test:4,!&,len,2,relative,string,hex,bitmask 0xff; byte_test:len,=,1,0; byte_jump:2,0,relative,from_end,post_offset -3,multiplier 8; isdataat:!3,relative; sid:8;)"#,
        r#"alert tcp any any -> any any (content:"a"; fast_pattern:only; content:"bcd"; fast_pattern:1,2; distance:0; within:3; http.uri; sid:9;)"#,
        r#"alert tcp any any -> any any (flowbits:isset,a|b; flowbits:set,c; flowbits:isnotset,d|; flowbits:noalert; threshold:type backoff, track by_flow, count 1, multiplier 10; detection_filter:track by_src, count 5, seconds 60; target:dest_ip; sid:10;)"#,
        r#"alert tcp any any -> any any (xbits:set,x,track ip_src; lua:script.lua; reference:url,example.com; classtype:trojan-activity; priority:2; metadata:a b, c d; sid:11; rev:4;)"#,
        r#"alert http (msg:"snort 3"; http_uri; content:"x",nocase; service:http; sid:12;)"#,
        r#"alert icmp any any -> any any (itype:8; icode:0; icmp_id:5; icmp_seq:6; id:7; seq:8; ack:9; sameip; ipopts:rr; flow:stateless; sid:13;)"#,
        r#"alert http any any -> any any (http.uri; http.host; content:"h"; pkt_data; content:"p"; sid:14;)"#,
        r#"alert tcp any any -> any any (content:"a"; base64_decode:bytes 10,offset 2,relative; base64_data; content:"b"; sid:15;)"#,
        r#"alert tcp any any -> any any (base64_decode; base64_data; content:"b"; sid:16;)"#,
        r#"alert dcerpc any any -> any any (dcerpc.iface:E1AF8308-5d1f-11c9-91a4-08002b14a0fa,>1,any_frag; dce_iface:e1af8308-5d1f-11c9-91a4-08002b14a0fa; dcerpc.opnum:2-5; dce_stub_data; content:"x"; byte_test:2,=,5,0,relative,dce; sid:18;)"#,
        r#"alert tcp any any -> any any (content:"a"; asn1:bitstring_overflow, double_overflow, oversize_length 100, relative_offset -1; asn1:oversize_length 5, absolute_offset 2; sid:19;)"#,
        r#"alert http any any -> any any (http.host; to_sha256; dataset:isset,h,type sha256,load a.lst,format json,context_key c,value_key v.x,array_key arr,remove_key; ip.src; datarep:r,>=,5,type ip,load r.csv; ip.dst; dataset:set,s,type string,save s.csv; sid:20;)"#,
        r#"alert http any any -> any any (http.referer; absent; http.user_agent; absent: or_else; content:!"x"; flow.pkts:toserver,>3; flow.bytes_toclient:<=100; flow.pkts:either,10; flow.age:>20; tcpv4-csum:invalid; udpv6-csum:valid; sid:21;)"#,
        r#"alert tcp any any -> any any (iprep:src,bad,>,10; iprep:both,cnc,!=,0; app-layer-protocol:!http,final; app-layer-protocol:unknown; app-layer-protocol:tls,to_client; sid:22;)"#,
        r#"accept:flow,pass:packet,alert tls:<client_hello_done any any -> any any (tls.sni; content:"a"; sid:23;)"#,
        r#"drop:packet tcp:pre_stream any any -> any 443 (flow:to_server; tcp.flags:S; sid:24;)"#,
        r#"alert http any any -> any any (filemd5:list.md5; filesha256:!bad.lst; filesha1:s1.lst; sid:22;)"#,
        r#"alert http any any -> any any (filename:"a.exe"; filestore; sid:25;)"#,
        r#"alert tcp any any -> any any (flags:S; tag:session; tag:host,100,packets,src; tag:host,3,seconds; tag:session,1000,bytes; sid:32;)"#,
        r#"alert tcp any any -> any any (window:!1024; tcp.ack:5; tcp.seq:6; sid:27;)"#,
        r#"alert ipv6 any any -> any any (icmpv6.mtu:<1280; sid:28;)"#,
        r#"alert http any any -> any any (file.data; entropy: bytes 10, offset 2, value !4-5.5; entropy: value > 4.14; pcre:"/(a)(b)/i,flow:x,pkt:y"; pcre:"/(?P<alert_c>c)/"; sid:30;)"#,
        r#"alert http any any -> any any (http.uri; luaxform:up.lua, bytes 12, offset 2; content:"X"; lua:!a.lua; lua:b.lua; sid:31;)"#,
        r#"alert http any any -> any any (http.header; header_lowercase; strip_pseudo_headers; content:"a"; sid:29;)"#,
        r#"alert http any any -> any any (fileext:"exe"; filestore:to_client,flow; sid:26;)"#,
        r#"alert tcp any any -> any any (flowint:a,notset; flowint:a,+,1; flowint:b,>=,a; flowint:c,=,7; hostbits:set,h,dst,expire 9; xbits:toggle,p,track ip_pair; sid:17;)"#,
    ];
    for text in rules {
        let r = parse_rule(text, &vars).unwrap_or_else(|e| panic!("{text}: {e}"));
        if let Some(e) = round_trip_error(&r, &vars) {
            panic!("{e}");
        }
    }
}
