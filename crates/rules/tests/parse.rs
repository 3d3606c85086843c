//! Parser behaviour on the three dialects, and errors with their columns.

use netsieve_rules::*;

fn p(s: &str) -> Rule {
    parse_rule(s, &Vars::default()).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// The application-layer buffer named `name`.
fn app(name: &str) -> Buffer {
    let b = AppBuffer::ALL.iter().find(|b| b.name() == name);
    Buffer::App(*b.unwrap_or_else(|| panic!("no buffer {name}")))
}

/// What the rule needs of the application layer, by name.
fn needs(r: &Rule) -> Vec<String> {
    r.app_layer.iter().map(|n| n.to_string()).collect()
}

fn content(r: &Rule, list: usize, i: usize) -> &Content {
    match &r.lists[list].matches[i] {
        Match::Content(c) => c,
        m => panic!("not a content: {m:?}"),
    }
}

#[test]
fn legacy_modifiers_move_contents() {
    let r = p(
        r#"alert tcp any any -> any any (content:"GET"; http_method; content:"/x"; nocase; http_uri; content:"y"; sid:1;)"#,
    );
    let mut bufs: Vec<_> = r.lists.iter().map(|l| format!("{:?}", l.buffer)).collect();
    bufs.sort();
    assert_eq!(bufs, ["App(HttpMethod)", "App(HttpUri)", "Payload"]);
    let uri = r
        .lists
        .iter()
        .position(|l| l.buffer == app("http.uri"))
        .unwrap();
    assert!(content(&r, uri, 0).nocase);
    assert_eq!(
        needs(&r),
        ["http.uri", "http.method"],
        "in AppBuffer's order"
    );
}

#[test]
fn sticky_buffers_and_pkt_data() {
    let r = p(
        r#"alert http any any -> any any (http.uri; content:"a"; content:"b"; distance:0; pkt_data; content:"c"; sid:2;)"#,
    );
    assert_eq!(r.lists.len(), 2);
    assert_eq!(r.lists[0].matches.len(), 2);
    assert_eq!(content(&r, 0, 1).distance, Some(Val::Num(0)));
    assert_eq!(r.lists[1].buffer, Buffer::Payload);
    assert_eq!(r.proto, Proto::App("http".into()));
}

#[test]
fn snort3_comma_modifiers_and_sticky_names() {
    let r = p(
        r#"alert tcp any any -> any 80 (http_uri; content:"/swc",nocase; content:"ctr=",distance 0,nocase,fast_pattern; service:http; sid:3;)"#,
    );
    assert_eq!(r.lists[0].buffer, app("http.uri"));
    let c = content(&r, 0, 1);
    assert!(c.nocase && c.fast_pattern);
    assert_eq!(c.distance, Some(Val::Num(0)));
    assert_eq!(r.services, ["http"]);
}

#[test]
fn content_escapes_hex_and_negation() {
    let r = p(
        r#"alert tcp any any -> any any (content:!"a|3b 0d0A|\"\;\\"; depth:8; offset:1; fast_pattern:only; sid:4;)"#,
    );
    let c = content(&r, 0, 0);
    assert_eq!(c.pattern, b"a;\r\n\";\\");
    assert!(c.negated && c.fast_pattern_only);
    assert_eq!(
        (c.depth.clone(), c.offset.clone()),
        (Some(Val::Num(8)), Some(Val::Num(1)))
    );
}

#[test]
fn header_options() {
    let r = p(
        r#"drop tcp $EXTERNAL_NET [1024:,!2000] <> $HOME_NET !80 (msg:"m\;x"; flow:established,to_server; flags:S+,12; dsize:>10; ttl:<5; flowbits:isset,a|b; flowbits:noalert; threshold:type limit, track by_src, count 1, seconds 60; sid:5; rev:2; gid:3; classtype:trojan-activity; priority:1; target:dest_ip;)"#,
    );
    assert_eq!(r.action, Action::Drop);
    assert!(r.bidirectional);
    assert!(r.sport.matches(1024) && !r.sport.matches(2000) && !r.sport.matches(80));
    assert!(!r.dport.matches(80));
    assert_eq!(r.msg, "m;x");
    assert!(r.flow.established && r.flow.to_server);
    assert!(r.noalert);
    assert_eq!(r.flowbits[0].names, ["a", "b"]);
    assert!(r.flowbits[0].any);
    assert_eq!((r.sid, r.rev, r.gid, r.priority), (5, 2, 3, Some(1)));
    assert!(r.conds.contains(&Cond::Dsize(Cmp::Gt(10))));
    assert_eq!(r.threshold.unwrap().kind, ThresholdKind::Limit);
    assert!(r.app_layer.is_empty());
}

#[test]
fn byte_options_and_pcre() {
    let r = p(
        r#"alert udp any any -> any any (content:"x"; byte_extract:2,0,len,relative; byte_test:4,>,len,0,relative,little; byte_jump:2,1,relative,post_offset -2; isdataat:!10,relative; pcre:"/a.b/smiR"; sid:6;)"#,
    );
    let m = &r.lists[0].matches;
    assert!(matches!(&m[1], Match::ByteExtract { name, .. } if name == "len"));
    assert!(
        matches!(&m[2], Match::ByteTest { value: Val::Var(v), read, .. } if v == "len" && read.endian == Endian::Little)
    );
    assert!(matches!(
        &m[3],
        Match::ByteJump {
            post_offset: -2,
            ..
        }
    ));
    assert!(matches!(
        &m[4],
        Match::IsDataAt {
            negated: true,
            relative: true,
            ..
        }
    ));
    assert!(matches!(&m[5], Match::Pcre(p) if p.relative && p.has('s')));
    let r = p(r#"alert tcp any any -> any any (pcre:"/x/U"; sid:7;)"#);
    assert_eq!(r.lists[0].buffer, app("http.uri"));
    // Before its first '/', a pcre's text is ignored, as Suricata 8 reads it.
    let r = p(r#"alert tcp any any -> any any (pcre:"^/GET (.*)$/G, flow:v"; sid:8;)"#);
    assert!(matches!(&r.lists[0].matches[0], Match::Pcre(p) if p.pattern == "GET (.*)$"));
}

#[test]
fn lua_scripts_and_transforms() {
    let r = p(
        r#"alert http any any -> any any (http.uri; luaxform:up.lua, bytes 2; content:"X"; lua:!a.lua; luajit:b.lua; sid:1;)"#,
    );
    assert_eq!(r.lua.len(), 2);
    assert!(r.lua[0].negated && r.lua[0].script == "a.lua");
    assert!(!r.lua[1].negated && r.lua[1].script == "b.lua");
    assert_eq!(
        r.lists[0].transforms,
        [Transform::Lua {
            script: "up.lua".into(),
            args: vec!["bytes 2".into()]
        }]
    );
    let v = Vars::default();
    for bad in ["lua:;", "lua:!;", "luaxform:;", "luaxform: , x;"] {
        let text = format!("alert http any any -> any any (http.uri; {bad} sid:1;)");
        assert!(parse_rule(&text, &v).is_err(), "accepted: {text}");
    }
}

#[test]
fn errors_name_column_and_reason() {
    let v = Vars::default();
    let text = r#"alert tcp any any -> any any (msg:"x"; frobnicate:1; sid:1;)"#;
    let e = parse_rule(text, &v).unwrap_err();
    assert_eq!(e.category(), "unknown keyword 'frobnicate'");
    assert_eq!(&text[e.column() - 1..e.column() - 1 + 10], "frobnicate");
    for bad in [
        r#"alert tcp any any -> any any (content:"x"; sid:1"#,
        r#"alert tcp any any -> any any (content:"x|4"; sid:1;)"#,
        r#"alert tcp any any -> any any (content:"x"; depth:z z; sid:1;)"#,
        r#"alert tcp any any -> any any (nocase; sid:1;)"#,
        r#"alert tcp any any => any any (sid:1;)"#,
        r#"alert tcp $NOPE any -> any any (sid:1;)"#,
        r#"alert foo any any -> any any (sid:1;)"#,
        r#"alert tcp any any -> any any (content:"x";)"#,
        r#"alert tcp any any -> any any (pcre:"/x/Z"; sid:1;)"#,
        r#"alert tcp any any -> any any (byte_test:9,=,1,0; sid:1;)"#,
        r#"alert tcp any any -> any any (flow:sideways; sid:1;)"#,
        r#"alert tcp any any -> any any (threshold:type limit; sid:1;)"#,
        r#"alert http any any -> any any (filestore:sideways; sid:1;)"#,
        r#"alert http any any -> any any (filestore:both,forever; sid:1;)"#,
        r#"alert http any any -> any any (filestore:,flow; sid:1;)"#,
        r#"alert tcp any any -> any any (tag; sid:1;)"#,
        r#"alert tcp any any -> any any (tag:flow; sid:1;)"#,
        r#"alert tcp any any -> any any (tag:host,10; sid:1;)"#,
        r#"alert tcp any any -> any any (tag:host,ten,packets; sid:1;)"#,
        r#"alert tcp any any -> any any (tag:host,10,frames; sid:1;)"#,
        r#"alert tcp any any -> any any (tag:session,10,packets,src; sid:1;)"#,
        r#"alert tcp any any -> any any (tag:host,10,packets,up; sid:1;)"#,
        r#"alert tcp any any -> any any (tag:host,10,packets,src,dst; sid:1;)"#,
    ] {
        assert!(parse_rule(bad, &v).is_err(), "accepted: {bad}");
    }
}

/// Positions Suricata refuses are refused with the option's column (they used to load,
/// and some then alerted); the edges it accepts still load, in both content syntaxes.
#[test]
fn out_of_range_positions_are_refused() {
    let v = Vars::default();
    let rule = |opts: &str| format!("alert tcp any any -> any any ({opts} sid:1;)");
    for (opts, at) in [
        ("content:\"a\"; depth:-5;", "depth"),
        ("content:\"a\"; offset:-1;", "offset"),
        ("content:\"a\"; depth:4294967297;", "depth"),
        ("content:\"a\"; depth:65536;", "depth"),
        ("content:\"a\"; offset:65536;", "offset"),
        (
            "content:\"a\"; content:\"b\"; distance:-4294967296;",
            "distance",
        ),
        ("content:\"a\"; content:\"b\"; within:4294967296;", "within"),
        ("content:\"a\"; content:\"b\"; within:0;", "within"),
        ("content:\"ab\"; depth:1;", "depth"),
        ("content:\"a\",depth -1;", "content"),
    ] {
        let text = rule(opts);
        let e = parse_rule(&text, &v).unwrap_err();
        assert!(
            text[e.column() - 1..].starts_with(at),
            "{text}: column {} ({})",
            e.column(),
            e.category()
        );
    }
    for opts in [
        "content:\"a\"; depth:65535; offset:65535;",
        "content:\"a\"; content:\"b\"; distance:-65536; within:65536;",
        "content:\"ab\"; depth:2;",
        "content:\"a\"; content:\"b\"; within:1;",
        "content:\"a\",depth 4,offset 0;",
        "byte_extract:1,0,n; content:\"a\"; depth:n;",
    ] {
        assert!(parse_rule(&rule(opts), &v).is_ok(), "{opts}");
    }
}

#[test]
fn loader_skips_bad_rules_and_counts_reasons() {
    let mut l = Loaded::default();
    let text = "# comment\n\
        alert tcp any any -> any any (content:\"a\"; sid:1;)\n\
        alert tcp any any -> any any (bogus; sid:2;)\n\
        alert tcp any any -> any any (content:\"b\"; \\\n  sid:3;)\n\
        alert tcp any any -> any any (content:\"c\"; sid:1;)\n";
    l.add_text("t.rules", text, &Vars::default());
    l.dedup();
    assert_eq!(l.rules.iter().map(|r| r.sid).collect::<Vec<_>>(), [1, 3]);
    assert_eq!(l.rules[1].line, 4);
    assert_eq!(l.errors.len(), 2);
    assert_eq!(l.errors[0].line, 3);
    assert!(l.errors[0].to_string().starts_with("t.rules:3:"));
    assert_eq!(l.error_summary().len(), 2);
}

#[test]
fn a_file_with_bytes_that_are_not_utf8_still_loads() {
    let dir = std::env::temp_dir().join(format!("netsieve-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("latin1.rules");
    let mut text = b"alert tcp any any -> any any (msg:\"caf".to_vec();
    text.push(0xe9);
    text.extend_from_slice(b"\"; content:\"a\"; sid:1;)\n");
    text.extend_from_slice(b"alert tcp any any -> any any (content:\"b\"; sid:2;)\n");
    std::fs::write(&path, &text).unwrap();
    let mut l = Loaded::default();
    l.add_file(&path, &Vars::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(l.rules.iter().map(|r| r.sid).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(l.rules[0].msg, "caf\u{fffd}");
}

#[test]
fn a_large_file_loads_in_file_order() {
    // Rules are parsed on several threads; rules and errors still come in file order.
    let text: String = (1..=5000)
        .map(|i| {
            if i % 7 == 0 {
                format!("alert tcp any any -> any any (bogus; sid:{i};)\n")
            } else {
                format!("alert tcp any any -> any any (content:\"{i}\"; sid:{i};)\n")
            }
        })
        .collect();
    let mut l = Loaded::default();
    l.add_text("big.rules", &text, &Vars::default());
    let sids: Vec<u32> = l.rules.iter().map(|r| r.sid).collect();
    let want: Vec<u32> = (1..=5000).filter(|i| i % 7 != 0).collect();
    assert_eq!(sids, want);
    assert!(l.rules.iter().all(|r| r.line == r.sid as usize));
    let lines: Vec<usize> = l.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, (1..=5000).filter(|i| i % 7 == 0).collect::<Vec<_>>());
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Arbitrary text never panics the parser.
        #[test]
        fn never_panics(s in ".{0,200}") {
            let _ = parse_rule(&s, &Vars::default());
        }

        /// Mutations of a real rule never panic it either.
        #[test]
        fn mutated_rules_never_panic(cut in 0usize..200, ins in "[;:,|\"\\\\!<>\\[\\] a-z0-9]{0,6}") {
            let base = r#"alert tcp $HOME_NET any -> [1.2.3.0/24,!1.2.3.4] 80 (msg:"x"; content:"a|41|b"; depth:4; byte_test:2,>,1,0,relative; pcre:"/x/R"; flowbits:set,y; sid:1;)"#;
            let at = cut.min(base.len());
            let at = (0..=at).rev().find(|i| base.is_char_boundary(*i)).unwrap_or(0);
            let s = format!("{}{}{}", &base[..at], ins, &base[at..]);
            let _ = parse_rule(&s, &Vars::default());
        }
    }
}

/// `urilen` takes `raw` or `norm` after a comma, with or without a space (Suricata's
/// own tests write `urilen:15, norm`); anything else there is an error.
#[test]
fn urilen_kinds_with_and_without_spaces() {
    for (opt, buf) in [
        ("urilen:15, norm", "http.uri"),
        ("urilen:15,norm", "http.uri"),
        ("urilen:<20, raw", "http.uri.raw"),
        ("urilen:15", "http.uri"),
    ] {
        let r = p(&format!("alert tcp any any -> any any ({opt}; sid:1;)"));
        assert_eq!(r.lists[0].buffer, app(buf), "{opt}");
        assert!(matches!(r.lists[0].matches[0], Match::Bsize(_)), "{opt}");
    }
    let e = parse_rule(
        "alert tcp any any -> any any (urilen:15, sideways; sid:1;)",
        &Vars::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("expected ,raw or ,norm"), "{e}");
}

/// LDAP's operations and result codes by name or number; the responses' keywords pick
/// among the list's numbers (`any` by default, `all`, an index from either end).
#[test]
fn ldap_keywords_pick_among_responses() {
    let r = p(
        "alert ldap any any -> any any (ldap.request.operation:search_request; \
         ldap.responses.operation:search_result_done,-1; \
         ldap.responses.result_code:!success,all; ldap.responses.count:>2; sid:1;)",
    );
    assert_eq!(r.lists[0].matches, [Match::Uint(Cmp::Eq(3))]);
    assert_eq!(
        r.lists[1].matches,
        [Match::UintList(Cmp::Eq(5), Pick::At(-1))]
    );
    assert_eq!(r.lists[2].matches, [Match::UintList(Cmp::Ne(0), Pick::All)]);
    assert_eq!(r.lists[3].matches, [Match::Uint(Cmp::Gt(2))]);
    let r = p("alert ldap any any -> any any (ldap.responses.operation:4; sid:1;)");
    assert_eq!(r.lists[0].matches, [Match::UintList(Cmp::Eq(4), Pick::Any)]);
    for bad in ["nonsense", "search_result_done,first", "5,"] {
        let rule =
            format!("alert ldap any any -> any any (ldap.responses.operation:{bad}; sid:1;)");
        assert!(parse_rule(&rule, &Vars::default()).is_err(), "{bad}");
    }
    // The picks, on the list [4, 4, 5].
    let list = || [4i64, 4, 5].into_iter();
    assert!(Pick::Any.holds(Cmp::Eq(5), list()));
    assert!(!Pick::All.holds(Cmp::Eq(4), list()));
    assert!(Pick::All.holds(Cmp::Lt(6), list()));
    assert!(!Pick::All.holds(Cmp::Lt(6), std::iter::empty()));
    assert!(Pick::At(-1).holds(Cmp::Eq(5), list()));
    assert!(Pick::At(1).holds(Cmp::Eq(4), list()));
    assert!(!Pick::At(3).holds(Cmp::Eq(5), list()));
    assert!(!Pick::At(-4).holds(Cmp::Eq(4), list()));
}

/// DNS's integer keywords become a number match on their own buffer; a value that is not
/// one of Suricata's integer forms is an error at the option.
#[test]
fn dns_integer_keywords() {
    let r = p("alert dns any any -> any any (dns.opcode:!0; dns.rrtype:1-5; sid:1;)");
    assert_eq!(r.lists[0].buffer, app("dns.opcode"));
    assert_eq!(r.lists[0].matches, [Match::Uint(Cmp::Ne(0))]);
    assert_eq!(r.lists[1].buffer, app("dns.rrtype"));
    assert_eq!(r.lists[1].matches, [Match::Uint(Cmp::Range(1, 5))]);
    assert!(needs(&r).starts_with(&["dns.opcode".into(), "dns.rrtype".into()]));
    let e = parse_rule(
        "alert dns any any -> any any (dns.rcode:lots; sid:1;)",
        &Vars::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("bad number"), "{e}");
}

/// Suricata 4.1's `http_` sticky buffers (`http_header_names`, `http_accept`, ...) start
/// a list; only the classic modifiers move the content before them
/// (http-missing-protocol's rule).
#[test]
fn legacy_sticky_names_are_not_modifiers() {
    let r = p(
        r#"alert http any any -> any any (content:"GET"; http_method; http_header_names; content:"User-Agent"; sid:1;)"#,
    );
    let list = |name: &str| {
        r.lists
            .iter()
            .position(|l| l.buffer == app(name))
            .unwrap_or_else(|| panic!("{name} in {:?}", r.lists))
    };
    assert_eq!(content(&r, list("http.method"), 0).pattern, b"GET");
    assert_eq!(
        content(&r, list("http.header_names"), 0).pattern,
        b"User-Agent"
    );
    assert_eq!(r.lists[list("http.header_names")].matches.len(), 1);
}

/// Before any sticky buffer, options go to the payload, except that a relative one goes
/// to the list of the content or pcre before it, as Suricata places them: a pcre
/// without `R` after `uricontent` looks in the payload (UriTestSig16), a relative
/// byte_extract in the URI (UriTestSig28). Keywords that make a list of their own
/// (`pcre:/U`, `urilen`) do not make it current.
#[test]
fn options_before_a_sticky_buffer() {
    let r = p(
        r#"alert tcp any any -> any any (uricontent:"a"; pcre:"/b/R"; byte_extract:1,0,n,relative; pcre:"/c/"; sid:1;)"#,
    );
    let uri = r
        .lists
        .iter()
        .position(|l| l.buffer == app("http.uri"))
        .unwrap();
    let payload = r
        .lists
        .iter()
        .position(|l| l.buffer == Buffer::Payload)
        .unwrap();
    assert_eq!(r.lists[uri].matches.len(), 3, "{:?}", r.lists);
    assert!(matches!(&r.lists[payload].matches[..], [Match::Pcre(p)] if p.pattern == "c"));
    for opts in [r#"pcre:"/x/U"; content:"a";"#, r#"urilen:5; content:"a";"#] {
        let r = p(&format!("alert tcp any any -> any any ({opts} sid:1;)"));
        let l = r
            .lists
            .iter()
            .find(|l| l.buffer == Buffer::Payload)
            .unwrap();
        assert!(
            matches!(&l.matches[..], [Match::Content(_)]),
            "{opts}: {:?}",
            r.lists
        );
    }
}

#[test]
fn a_duplicate_sid_with_a_higher_rev_replaces_the_first() {
    // As Suricata 8: the first stays unless a later one has a higher rev.
    let mut l = Loaded::default();
    let text = "alert tcp any any -> any any (content:\"a\"; sid:1; rev:1;)\n\
        alert tcp any any -> any any (content:\"b\"; sid:1; rev:2;)\n\
        alert tcp any any -> any any (content:\"c\"; sid:1; rev:2;)\n";
    l.add_text("t.rules", text, &Vars::default());
    l.dedup();
    assert_eq!(l.rules.len(), 1);
    assert_eq!((l.rules[0].rev, l.rules[0].line), (2, 2));
    let dropped: Vec<usize> = l.errors.iter().map(|e| e.line).collect();
    assert_eq!(dropped, [1, 3]);
}

#[test]
fn decode_events_are_resolved_at_load() {
    let r = p("alert pkthdr any any -> any any (decode-event:ipv6.frag_overlap; sid:1;)");
    assert_eq!(
        r.conds,
        [Cond::DecodeEvent(
            netsieve_wire::DecodeEvent::Ipv6FragOverlap
        )]
    );
    let r = p("alert pkthdr any any -> any any (decode-event:decoder.udp.len_invalid; sid:1;)");
    assert_eq!(r.conds.len(), 1);
    // One netsieve does not raise is refused, naming the column of its value.
    let e = parse_rule(
        "alert pkthdr any any -> any any (decode-event:ipv4.wrong_ip_version; sid:1;)",
        &Vars::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("decoder event"), "{e}");
}

#[test]
fn requires_leaves_a_rule_uninspected_when_unmet() {
    // netsieve reads Suricata 8.0.6's rules and has JA3 and JA4.
    for met in [
        "requires: version >= 8",
        "requires: version >= 8.0.5",
        "requires: feature ja4, version >= 7",
        "requires: keyword dns.query",
    ] {
        let r = p(&format!("alert ip any any -> any any ({met}; sid:1;)"));
        assert!(r.unsupported.is_empty(), "{met}");
    }
    for unmet in [
        "requires: version >= 9.0.0",
        "requires: version >= 7 < 8",
        "requires: feature output::file-store",
        "requires: keyword nosuchkeyword",
        "requires: foo bar",
    ] {
        let r = p(&format!("alert ip any any -> any any ({unmet}; sid:1;)"));
        assert_eq!(r.unsupported.len(), 1, "{unmet}");
    }
}

/// A header buffer named again right after its own options goes on with its list;
/// an application buffer named again starts a new one (each instance apart).
#[test]
fn header_buffers_named_twice_continue_one_list() {
    let r = p(
        r#"alert tcp-pkt any any -> any 80 (tcp.hdr; content:"|00 50|"; offset:2; depth:2; tcp.hdr; content:"|50 18|"; distance:8; within:2; sid:3;)"#,
    );
    assert_eq!(r.lists.len(), 1);
    assert_eq!(r.lists[0].buffer, Buffer::Header(HeaderBuffer::Tcp));
    assert_eq!(r.lists[0].matches.len(), 2);
    let r = p(
        r#"alert tcp any any -> any any (ipv4.hdr; content:"a"; tcp.hdr; content:"b"; ipv4.hdr; content:"c"; sid:1;)"#,
    );
    assert_eq!(r.lists.len(), 3);
    let r = p(
        r#"alert dns any any -> any any (dns.query; content:"a"; dns.query; content:"b"; sid:1;)"#,
    );
    assert_eq!(r.lists.len(), 2);
    assert_eq!(r.lists[1].buffer, app("dns.query"));
}

/// A transform after matches starts a new instance of the buffer, with the transforms so
/// far: the matches before it see the buffer untransformed (from_base64-01's rules).
/// Arguments are checked where the option is.
#[test]
fn transforms_with_arguments_and_after_matches() {
    use netsieve_rules::{Base64Mode, Transform};
    let r = p(
        "alert http any any -> any any (http.uri; content:\"/?arg=\"; \
         from_base64: bytes 6, offset 6, mode rfc2045; content:\"this\"; gunzip: max-size 8; \
         content:\"x\"; sid:1;)",
    );
    assert_eq!(r.lists.len(), 3);
    assert!(r.lists.iter().all(|l| l.buffer == app("http.uri")));
    let b64 = Transform::FromBase64 {
        offset: 6,
        bytes: Some(6),
        mode: Base64Mode::Rfc2045,
    };
    assert!(r.lists[0].transforms.is_empty());
    assert_eq!(r.lists[1].transforms, std::slice::from_ref(&b64));
    assert_eq!(r.lists[2].transforms, [b64, Transform::Gunzip { max: 8 }]);
    let r = p(
        "alert http any any -> any any (http.uri; pcrexform:\"a=(.*)\"; xor:\"0d0A\"; content:\"p\"; sid:1;)",
    );
    assert_eq!(
        r.lists[0].transforms,
        [
            Transform::Pcre("a=(.*)".into()),
            Transform::Xor(vec![0x0d, 0x0a])
        ]
    );
    for (bad, why) in [
        ("xor:\"0d0\"", "hex"),
        ("xor:\"zz\"", "hex"),
        ("pcrexform:\"a=.*\"", "group"),
        ("from_base64: mode base32", "unknown mode"),
        ("gunzip: max-size none", "max-size"),
    ] {
        let e = parse_rule(
            &format!("alert http any any -> any any (http.uri; {bad}; content:\"p\"; sid:1;)"),
            &Vars::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains(why), "{bad}: {e}");
    }
}

/// The legacy TLS keywords are contents in the certificate's buffers (tls-subject,
/// tls-fingerprint-alert): the fingerprint case-blind, `!` negating.
#[test]
fn legacy_tls_keywords() {
    let r = p("alert tls any any -> any any (tls.subject:\"CN=SELKS\"; \
         tls.fingerprint:!\"90:86:A4\"; sid:1;)");
    assert_eq!(r.lists[0].buffer, app("tls.cert_subject"));
    let c = content(&r, 0, 0);
    assert_eq!(c.pattern, b"CN=SELKS");
    assert!(!c.nocase && !c.negated);
    assert_eq!(r.lists[1].buffer, app("tls.cert_fingerprint"));
    let c = content(&r, 1, 0);
    assert!(c.nocase && c.negated);
    let e = parse_rule(
        "alert tls any any -> any any (tls.issuerdn:CN=x; sid:1;)",
        &Vars::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("double quotes"), "{e}");
}

/// `vlan.id` takes a comparison and a layer (from the outside, negative from the inside,
/// or `all`); `vlan.layers` a comparison. Both print back as written.
#[test]
fn vlan_keywords() {
    let r = p(
        "alert ip any any -> any any (vlan.id:!200,1; vlan.id:0x12C; vlan.id:>100,all; \
         vlan.id:400,-1; vlan.layers:3; sid:1;)",
    );
    assert_eq!(
        r.conds,
        [
            Cond::VlanId {
                cmp: Cmp::Ne(200),
                layer: VlanLayer::At(1)
            },
            Cond::VlanId {
                cmp: Cmp::Eq(300),
                layer: VlanLayer::Any
            },
            Cond::VlanId {
                cmp: Cmp::Gt(100),
                layer: VlanLayer::All
            },
            Cond::VlanId {
                cmp: Cmp::Eq(400),
                layer: VlanLayer::At(-1)
            },
            Cond::VlanLayers(Cmp::Eq(3)),
        ]
    );
    let again = p(&r.to_string());
    assert_eq!(again.conds, r.conds);
    let e = parse_rule(
        "alert ip any any -> any any (vlan.id:200,7; sid:1;)",
        &Vars::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("layer"), "{e}");
}

/// `filestore`: which files a match stores, in Suricata's spellings.
#[test]
fn filestore_names_direction_and_scope() {
    use netsieve_rules::rule::{FileStore, FileStoreDir, FileStoreScope};
    let fs = |o: &str| p(&format!("alert http any any -> any any ({o} sid:1;)")).filestore;
    assert_eq!(fs(""), None);
    assert_eq!(fs("filestore;"), Some(FileStore::default()));
    assert_eq!(
        fs("filestore:request,ssn;"),
        Some(FileStore {
            dir: Some(FileStoreDir::ToServer),
            scope: FileStoreScope::Flow
        })
    );
    assert_eq!(
        fs("filestore:both,file;"),
        Some(FileStore {
            dir: Some(FileStoreDir::Both),
            scope: FileStoreScope::Tx
        })
    );
}

/// A rule whose `requires` netsieve does not meet is skipped whatever else it holds
/// (syntax of a later version included), as Suricata reads `requires` first; one whose
/// requirements are met is refused as before when it does not parse (requires-ok).
#[test]
fn unmet_requirements_skip_a_rule_that_does_not_parse() {
    let v = Vars::default();
    for text in [
        "alert vxlan any any -> any any (requires: version >= 10; sid:1;)",
        "alert udp any any -> any any (vxlan_vni:10; requires: version >= 10; sid:2;)",
        "alert http any any => any any (requires: version >= 10; sid:3;)",
    ] {
        let r = parse_rule(text, &v).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(r.unsupported.len(), 1, "{text}");
        assert_eq!(r.unsupported[0].name, "requires", "{text}");
    }
    for text in [
        "alert vxlan any any -> any any (requires: version >= 8; sid:1;)",
        "alert http any any => any any (sid:3;)",
        "alert http any any => any any (requires: version >= 10;)",
    ] {
        assert!(parse_rule(text, &v).is_err(), "accepted: {text}");
    }
}

/// `tag`: scope, count and metric (256 packets by default), and a host's side (the
/// destination by default), as Suricata reads them.
#[test]
fn tag_names_scope_count_metric_and_host() {
    use netsieve_rules::rule::{Tag, TagHost, TagMetric, TagScope};
    let tags = |o: &str| p(&format!("alert tcp any any -> any any ({o} sid:1;)")).tags;
    let tag = |scope, count, metric| Tag {
        scope,
        count,
        metric,
    };
    assert_eq!(tags(""), []);
    assert_eq!(
        tags("tag:session;"),
        [tag(TagScope::Session, 256, TagMetric::Packets)]
    );
    assert_eq!(
        tags("tag:host;"),
        [tag(TagScope::Host(TagHost::Dst), 256, TagMetric::Packets)]
    );
    assert_eq!(
        tags("tag: session, 20, packets; tag:host,3600,seconds,src;"),
        [
            tag(TagScope::Session, 20, TagMetric::Packets),
            tag(TagScope::Host(TagHost::Src), 3600, TagMetric::Seconds)
        ]
    );
}

/// `entropy`'s comparisons, in millionths of a bit; a value out of 0-8 is refused.
#[test]
fn entropy_compares_bits_per_byte() {
    let e = |o: &str| match &p(&format!(
        "alert tcp any any -> any any (entropy: {o}; sid:1;)"
    ))
    .lists[0]
        .matches[0]
    {
        Match::Entropy(e) => (e.negated, e.cmp, e.key.to_string(), e.offset, e.bytes),
        m => panic!("{m:?}"),
    };
    assert_eq!(
        e("value > 4.14"),
        (false, Cmp::Gt(4_140_000), "content".into(), 0, None)
    );
    assert_eq!(
        e("value 4-5"),
        (
            false,
            Cmp::Between(4_000_000, 5_000_000),
            "content".into(),
            0,
            None
        )
    );
    assert!(e("bytes 8, offset 2, value !4-5").0);
    assert_eq!(e("offset 2, value 3").1, Cmp::Eq(3_000_000));
    assert_eq!(e("offset 2, value 3").3, 2);
    assert_eq!(e("value !=4").1, Cmp::Ne(4_000_000));
    let file = p(r#"alert http any any -> any any (file.data; entropy: value <1; sid:1;)"#);
    assert!(matches!(&file.lists[0].matches[0], Match::Entropy(e) if &*e.key == "file_data"));
    let v = Vars::default();
    for bad in [
        "value 9",
        "value >x",
        "offset 2",
        "value",
        "depth 3, value 1",
    ] {
        let r = format!("alert tcp any any -> any any (entropy: {bad}; sid:1;)");
        assert!(parse_rule(&r, &v).is_err(), "accepted: {bad}");
    }
}
