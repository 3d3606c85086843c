//! Frames from an attacker, through everything a packet meets in `netsieve scan`:
//! decoding on every link type, tunnels, defragmentation, the flow table and TCP
//! reassembly, and detection with rules that use stream, flow, byte and pcre keywords
//! (half the inputs with firewall rules in front of them, at packet and application
//! hooks).
//! Input: one byte picks the link type, then frames as (2-byte length, bytes).
#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use netsieve_detect::{BuildOptions, DetectOptions, Detector, FlowData, RuleSet};
use netsieve_packet::capture::Frame;
use netsieve_packet::decode::{Decoder, Packet};
use netsieve_packet::flow::{FlowConfig, FlowTable};
use netsieve_packet::reassembly::OverlapPolicy;
use netsieve_rules::{Classifications, Vars, parse_rule};

const RULES: &str = r#"alert tcp any any -> any any (content:"GET"; content:"HTTP"; distance:0; sid:1;)
alert tcp any any -> any 80 (flow:established,to_server; content:"abc"; byte_test:1,>,3,0,relative; sid:2;)
alert udp any any -> any 53 (content:"|01 00|"; offset:2; depth:2; byte_jump:1,10,relative; isdataat:1,relative; sid:3;)
alert tcp any any -> any any (flowbits:set,x; flowbits:noalert; content:"x"; sid:4;)
alert tcp any any -> any any (flowbits:isset,x; pcre:"/a(b|c)+d/si"; sid:5;)
drop ip any any -> any any (dsize:>1000; sid:6;)
alert icmp any any -> any any (itype:8; content:"ping"; nocase; sid:7;)
pass tcp any any <> any 22 (sid:8;)
alert http any any -> any any (http.uri; content:"/a"; http.host; content:"x"; sid:9;)
alert http any any -> any any (file.data; content:"EICAR"; http.stat_code; content:"200"; sid:10;)
alert http any any -> any any (http.header_names; content:"|0d 0a|Host"; pcre:"/^GET/M"; sid:11;)
alert dns any any -> any any (dns.query; dotprefix; content:".com"; endswith; sid:12;)
alert tls any any -> any any (tls.sni; content:"a"; ja3.hash; bsize:32; sid:13;)
alert tls any any -> any any (tls.cert_subject; content:"CN="; tls.certs; isdataat:10; sid:14;)"#;

/// Suricata 8 firewall rules: packet tables, application states, `<state`, secondary
/// actions, flowbits between the two.
const FIREWALL: &str = r#"drop:packet tcp:pre_flow any any -> any 7 (sid:101;)
drop:packet tcp:pre_stream any any -> any 8 (tcp.flags:S; alert; sid:102;)
accept:flow icmp:flow_start any any -> any any (itype:8; alert; sid:103;)
accept:packet tcp:all any any <> any any (flow:not_established; sid:104;)
accept:hook tcp:all any any <> any any (flow:established; flowbits:set,fw; sid:105;)
accept:hook udp:all any any <> any 53 (sid:106;)
accept:tx http1:<request_headers any any -> any any (http.uri; content:"/a"; alert; sid:107;)
accept:hook http1:request_body any any -> any any (sid:108;)
accept:flow,pass:flow,alert tls:<client_hello_done any any -> any any (tls.sni; content:"a"; sid:109;)
drop:flow,alert tls:server_hello any any -> any any (sid:110;)
accept:hook dns:request_started any any -> any any (flowbits:isset,fw; sid:111;)
accept:tx dns:request_complete any any -> any any (dns.query; content:"a"; sid:112;)
accept:hook ssh:<request_banner_done any any -> any any (ssh.software; content:"x"; alert; sid:113;)"#;

fn set(firewall: bool) -> Arc<RuleSet> {
    static SETS: [OnceLock<Arc<RuleSet>>; 2] = [OnceLock::new(), OnceLock::new()];
    SETS[usize::from(firewall)]
        .get_or_init(|| {
            let vars = Vars::default();
            let mut rules: Vec<_> = RULES
                .lines()
                .map(|l| parse_rule(l, &vars).unwrap())
                .collect();
            if firewall {
                for l in FIREWALL.lines() {
                    let mut r = parse_rule(l, &vars).unwrap();
                    r.firewall = true;
                    rules.push(r);
                }
            }
            Arc::new(RuleSet::build(
                rules,
                &Classifications::bundled(),
                BuildOptions::default(),
            ))
        })
        .clone()
}

const LINKTYPES: [u32; 9] = [1, 101, 113, 276, 0, 108, 9, 12, 228];

fuzz_target!(|data: &[u8]| {
    let Some((&lt, mut rest)) = data.split_first() else {
        return;
    };
    let linktype = LINKTYPES[lt as usize % LINKTYPES.len()];
    let mut decoder = Decoder::new(lt & 0x80 != 0);
    let mut flows: FlowTable<FlowData> = FlowTable::new(FlowConfig {
        midstream: lt & 0x40 != 0,
        max_flows: 16,
        // Half the inputs reassemble with the last-wins overlap policy.
        policies: if lt & 0x10 != 0 {
            vec![("0.0.0.0".parse().unwrap(), 0, OverlapPolicy::Last)]
        } else {
            Vec::new()
        },
        ..FlowConfig::default()
    });
    let mut det = Detector::new(
        set(lt & 0x08 != 0),
        DetectOptions {
            ips: lt & 0x20 != 0,
            inline: lt & 0x20 != 0,
            keep_bytes: true,
            // Small chunks, so IDS-mode stream inspection triggers often.
            chunk: netsieve_packet::PerDir::new((lt & 0x0f) as u64 * 3, 7),
            payload_limit: 64,
            ..DetectOptions::default()
        },
    );
    let mut alerts = Vec::new();
    let mut num = 0u64;
    while rest.len() >= 2 {
        let len = u16::from_le_bytes([rest[0], rest[1]]) as usize;
        let body = &rest[2..];
        let take = len.min(body.len());
        num += 1;
        let frame = Frame {
            ts: Duration::from_millis(num * 10),
            linktype,
            orig_len: take as u32,
            data: body[..take].to_vec(),
        };
        rest = &body[take..];
        let mut p = Packet::default();
        decoder.decode(&frame, num, &mut p);
        let mut inner = Packet::default();
        let mut depth = 0;
        loop {
            match flows.packet(&p, true) {
                Some((f, obs)) => det.inspect(&p, Some((f, &obs)), &mut alerts),
                None => det.inspect(&p, None, &mut alerts),
            }
            for mut f in flows.take_retired() {
                det.flow_end(&mut f, num, &mut alerts);
            }
            depth += 1;
            assert!(depth <= 8, "tunnel chain does not end");
            if !decoder.decode_inner(&p, &mut inner) {
                break;
            }
            std::mem::swap(&mut p, &mut inner);
        }
    }
    for mut f in flows.drain() {
        det.flow_end(&mut f, num + 1, &mut alerts);
    }
});
