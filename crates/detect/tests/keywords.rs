//! Payload keywords whose edge cases Suricata defines precisely, one rule at a time over
//! short buffers (cases from suricata-verify issue-8031-01-isdataat and
//! detect-bytejump-05).

use netsieve_detect::eval::{Ctx, compile_list, matches};
use netsieve_detect::pcre::Regexes;
use netsieve_rules::{Vars, parse_rule};

fn hits(options: &str, buf: &[u8]) -> bool {
    let rule = parse_rule(
        &format!("alert tcp any any -> any any ({options} sid:1;)"),
        &Vars::default(),
    )
    .unwrap();
    let list = &rule.payload_lists().next().expect("a payload list").matches;
    let compiled = compile_list(list, &mut Vec::new(), &Regexes::default()).unwrap();
    matches(&compiled, buf, &mut Ctx::default())
}

#[test]
fn isdataat_absolute_needs_a_byte_at_the_offset() {
    let buf = [b'a'; 32];
    assert!(hits("isdataat:31;", &buf));
    assert!(!hits("isdataat:32;", &buf));
    assert!(hits("isdataat:!32;", &buf));
}

#[test]
fn isdataat_relative_needs_that_many_bytes_after_the_pointer() {
    let buf = [b'a'; 32];
    // Without a previous match the pointer is 0: 32 more bytes fit in 32.
    assert!(hits("isdataat:32,relative;", &buf));
    assert!(!hits("isdataat:33,relative;", &buf));
    // After "a" at 0 the pointer is 1.
    assert!(hits("content:\"a\"; depth:1; isdataat:31,relative;", &buf));
    assert!(!hits("content:\"a\"; depth:1; isdataat:32,relative;", &buf));
    // The ET idiom for "nothing follows": true only at the very end.
    assert!(hits("content:\"xyz\"; isdataat:!1,relative;", b"abcxyz"));
    assert!(!hits("content:\"xyz\"; isdataat:!1,relative;", b"abcxyz!"));
}

#[test]
fn byte_jump_before_the_buffer_start_lands_on_the_start() {
    let buf = b"\x0a\x95\x00\x20NSLO and more";
    assert!(hits(
        "content:\"|0A 95 00 20|\"; byte_jump:0,0,relative,post_offset -8; pcre:\"/NSLO/R\";",
        buf
    ));
    assert!(hits(
        "content:\"|0A 95 00 20|\"; byte_jump:0,0,relative,post_offset -10; pcre:\"/^\\x0a\\x95/R\";",
        buf
    ));
    // Past the end still fails.
    assert!(!hits(
        "content:\"|0A 95 00 20|\"; byte_jump:0,0,relative,post_offset 100;",
        buf
    ));
}

/// `dns.opcode`, `dns.rcode` and `dns.rrtype` compare numbers, with Suricata's integer
/// forms (`4`, `!0`, `>2`, `1-3`); `dns.rrtype` holds for a message when any of its
/// records (questions, and a response's answers) has the type.
#[test]
fn dns_numbers_match_any_record() {
    use netsieve_applayer::Direction;
    use netsieve_applayer::dns;
    use netsieve_detect::app::{TxRef, fill};
    use netsieve_rules::AppBuffer;

    // A response (id 7, opcode 4, NXDOMAIN) to a question of type MX (15), with one
    // answer of type A (1).
    let mut b = vec![0, 7, 0x80 | (4 << 3), 3, 0, 1, 0, 1, 0, 0, 0, 0];
    b.extend_from_slice(&[1, b'x', 0, 0, 15, 0, 1]);
    b.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 1]);
    let msg = dns::parse(&b).expect("a valid response");
    let tx = dns::Tx {
        id: 0,
        dir: Direction::ToClient,
        msg,
    };
    let holds = |options: &str, buf: AppBuffer| {
        let rule = parse_rule(
            &format!("alert dns any any -> any any ({options} sid:1;)"),
            &Vars::default(),
        )
        .unwrap();
        let compiled =
            compile_list(&rule.lists[0].matches, &mut Vec::new(), &Regexes::default()).unwrap();
        let mut bufs = Vec::new();
        fill(buf, TxRef::Dns(&tx), Direction::ToClient, &mut bufs);
        bufs.iter()
            .any(|b| matches(&compiled, b, &mut Ctx::default()))
    };
    assert!(holds("dns.opcode:4;", AppBuffer::DnsOpcode));
    assert!(!holds("dns.opcode:!4;", AppBuffer::DnsOpcode));
    assert!(holds("dns.rcode:3;", AppBuffer::DnsRcode));
    assert!(holds("dns.rcode:>2;", AppBuffer::DnsRcode));
    assert!(!holds("dns.rcode:0;", AppBuffer::DnsRcode));
    assert!(holds("dns.rrtype:15;", AppBuffer::DnsRrtype));
    assert!(holds("dns.rrtype:1;", AppBuffer::DnsRrtype));
    assert!(
        holds("dns.rrtype:!15;", AppBuffer::DnsRrtype),
        "the answer is not MX"
    );
    assert!(!holds("dns.rrtype:28;", AppBuffer::DnsRrtype));
    assert!(!holds("dns.rrtype:2-14;", AppBuffer::DnsRrtype));
    assert!(holds(
        "dns.queries.rrname; content:\"x\";",
        AppBuffer::DnsQueriesRrname
    ));
    // The answer's owner is the question's name (a pointer to it); its data an address.
    assert!(holds(
        "dns.answers.rrname; content:\"x\"; bsize:1;",
        AppBuffer::DnsAnswersRrname
    ));
    assert!(holds(
        "dns.response.rrname; content:\"x\"; bsize:1;",
        AppBuffer::DnsResponseRrname
    ));
    assert!(!holds(
        "dns.response.rrname; content:\"|0a 00 00 01|\";",
        AppBuffer::DnsResponseRrname
    ));
}

/// `tls.random*` are the random of the inspected direction's hello (the client's to the
/// server, the server's to the client); `tls.cert_chain_len` counts the certificates.
#[test]
fn tls_random_follows_the_direction_and_chains_have_lengths() {
    use netsieve_applayer::Direction;
    use netsieve_applayer::tls::{Cert, ClientHello, ServerHello, Tls};
    use netsieve_detect::app::{TxRef, fill};
    use netsieve_rules::AppBuffer;

    let mut t = Tls::default();
    t.client_hello = Some(ClientHello {
        random: [1; 32],
        ..ClientHello::default()
    });
    t.server_hello = Some(ServerHello {
        random: std::array::from_fn(|i| i as u8),
        ..ServerHello::default()
    });
    t.certs = vec![Cert::default(), Cert::default()];
    fn get(t: &Tls, buf: AppBuffer, d: Direction) -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        fill(buf, TxRef::Tls(t), d, &mut v);
        v.into_iter().map(|b| b.into_owned()).collect()
    }
    assert_eq!(
        get(&t, AppBuffer::TlsRandomTime, Direction::ToServer),
        [vec![1; 4]]
    );
    assert_eq!(
        get(&t, AppBuffer::TlsRandomTime, Direction::ToClient),
        [vec![0, 1, 2, 3]]
    );
    assert_eq!(
        get(&t, AppBuffer::TlsRandomBytes, Direction::ToClient),
        [(4..32).collect::<Vec<u8>>()]
    );
    assert_eq!(
        get(&t, AppBuffer::TlsRandom, Direction::ToServer),
        [vec![1; 32]]
    );
    let rule = parse_rule(
        "alert tls any any -> any any (tls.cert_chain_len:2; sid:1;)",
        &Vars::default(),
    )
    .unwrap();
    let compiled =
        compile_list(&rule.lists[0].matches, &mut Vec::new(), &Regexes::default()).unwrap();
    let len = get(&t, AppBuffer::TlsCertChainLen, Direction::ToClient);
    assert!(matches(&compiled, &len[0], &mut Ctx::default()));
    t.certs.pop();
    let len = get(&t, AppBuffer::TlsCertChainLen, Direction::ToClient);
    assert!(!matches(&compiled, &len[0], &mut Ctx::default()));
}

/// `hits` for a rule with a `base64_data` list, attached to its `base64_decode` as the
/// rule set does.
fn b64_hits(options: &str, buf: &[u8]) -> bool {
    let rule = parse_rule(
        &format!("alert tcp any any -> any any ({options} sid:1;)"),
        &Vars::default(),
    )
    .unwrap();
    let mut vars = Vec::new();
    let mut payload = compile_list(&rule.lists[0].matches, &mut vars, &Regexes::default()).unwrap();
    let data = compile_list(&rule.lists[1].matches, &mut vars, &Regexes::default()).unwrap();
    assert!(netsieve_detect::eval::attach_base64_data([&mut payload], data).is_none());
    matches(&payload, buf, &mut Ctx::default())
}

#[test]
fn base64_decode_feeds_base64_data() {
    // "aGVsbG8gd29ybGQ=" is "hello world".
    let buf = b"GET /?q=aGVsbG8gd29ybGQ= HTTP/1.1";
    let rule = |opts: &str, data: &str| format!("content:\"q=\"; {opts} base64_data; {data}");
    assert!(b64_hits(
        &rule("base64_decode:relative;", "content:\"hello world\";"),
        buf
    ));
    assert!(b64_hits(
        &rule(
            "base64_decode:bytes 8,offset 0,relative;",
            "content:\"hello\"; bsize:6;"
        ),
        buf
    ));
    assert!(!b64_hits(
        &rule("base64_decode:bytes 8,relative;", "content:\"world\";"),
        buf
    ));
    // Absolute: from the buffer's start, which is no base64 at all ("GET" stops at ' ').
    assert!(!b64_hits(
        &rule("base64_decode;", "content:\"hello\";"),
        buf
    ));
    assert!(b64_hits(
        &rule(
            "base64_decode:offset 8;",
            "content:\"hello world\"; endswith;"
        ),
        buf
    ));
    // Nothing decoded: no match, even for a negated content.
    assert!(!b64_hits(
        &rule("base64_decode:offset 40;", "content:!\"x\";"),
        buf
    ));
}

/// `byte_test`'s byte count may be a variable (detect-bytetest-04); one outside 1 to 8
/// fails the match.
#[test]
fn byte_test_counts_from_a_variable() {
    let buf = [0x00, 0x02, 0x01, 0x02, 0x09];
    // n = 2: the two bytes at offset 2 are 0x0102.
    assert!(hits("byte_extract:1,1,n; byte_test:n,=,0x0102,2;", &buf));
    assert!(!hits("byte_extract:1,1,n; byte_test:n,=,0x01,2;", &buf));
    // n = 9: more than a binary read takes.
    assert!(!hits("byte_extract:1,4,n; byte_test:n,>,0,0;", &buf));
}

/// `byte_math` reads, computes and stores; the detection pointer stays where it was
/// (detect-bytemath-*).
#[test]
fn byte_math_computes_into_a_variable() {
    let buf = [0x05, 0x06, 0x14, 0x00, 0x02];
    assert!(hits(
        "byte_math:bytes 1, offset 0, oper +, rvalue 1, result r; byte_test:1,=,r,1;",
        &buf
    ));
    assert!(!hits(
        "byte_math:bytes 1, offset 0, oper +, rvalue 2, result r; byte_test:1,=,r,1;",
        &buf
    ));
    assert!(hits(
        "byte_math:bytes 1, offset 0, oper <<, rvalue 2, result r; byte_test:1,=,r,2;",
        &buf
    ));
    // Division by zero fails the rule.
    assert!(!hits(
        "byte_math:bytes 1, offset 0, oper /, rvalue 0, result r;",
        &buf
    ));
    // The byte count from a variable: 2 bytes at offset 3 (0x0002), times 3.
    assert!(hits(
        "byte_extract:1,4,n; byte_math:bytes n, offset 3, oper *, rvalue 3, result r; byte_test:1,=,r,1;",
        &buf
    ));
    // Relative to the last match, and the pointer stays: `relative` reads after "|06|".
    assert!(hits(
        "content:\"|06|\"; byte_math:bytes 1, offset 0, oper -, rvalue 20, result r, relative; byte_test:1,=,20,0,relative; byte_test:1,=,r,3;",
        &buf
    ));
    // A bad operator is a parse error.
    assert!(netsieve_rules::parse_rule(
        "alert tcp any any -> any any (byte_math:bytes 1, offset 0, oper %, rvalue 1, result r; sid:1;)",
        &netsieve_rules::Vars::default()
    )
    .is_err());
}
