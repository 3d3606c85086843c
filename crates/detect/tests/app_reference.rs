//! Transaction rules against a reference: random HTTP conversations and random rules
//! over random buffers, run through the whole engine (decoding, flows, reassembly, the
//! application layer fed on ACK or on arrival, per-buffer DFC prefilters, stages),
//! must alert exactly for the rules whose content a plain substring search finds in
//! the buffer (as [`app::fill`] defines it) of the parsed transaction.

use std::collections::BTreeSet;
use std::sync::Arc;

use netsieve_applayer::Direction;
use netsieve_applayer::http::{Http, Limits};
use netsieve_detect::app::{TxRef, fill};
use netsieve_detect::{BuildOptions, DetectOptions, RuleSet};
use netsieve_rules::AppBuffer;
use netsieve_rules::{Classifications, Vars, parse_rule};
use proptest::prelude::*;

mod common;

/// A TCP segment between 10.0.0.1:40000 and 10.0.0.2:8080: HTTP is found by its bytes,
/// not the port.
fn segment(to_server: bool, flags: u8, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
    common::tcp_segment(8080, to_server, flags, seq, ack, payload)
}

/// Handshake, the request in `cut`-sized segments (each acknowledged), the response
/// likewise, then FINs.
fn frames(req: &[u8], resp: &[u8], cut: usize) -> Vec<Vec<u8>> {
    let (mut c, mut s) = (1001u32, 5001u32);
    let mut f = vec![
        segment(true, 0x02, 1000, 0, b""),
        segment(false, 0x12, 5000, c, b""),
        segment(true, 0x10, c, s, b""),
    ];
    for part in req.chunks(cut) {
        f.push(segment(true, 0x18, c, s, part));
        c += part.len() as u32;
        f.push(segment(false, 0x10, s, c, b""));
    }
    for part in resp.chunks(cut) {
        f.push(segment(false, 0x18, s, c, part));
        s += part.len() as u32;
        f.push(segment(true, 0x10, c, s, b""));
    }
    f.push(segment(false, 0x11, s, c, b""));
    f.push(segment(true, 0x11, c, s + 1, b""));
    f.push(segment(false, 0x10, s + 1, c + 1, b""));
    f
}

fn engine(rules: &[String], frames: &[Vec<u8>], inline: bool) -> BTreeSet<u32> {
    let vars = Vars::default();
    let parsed = rules
        .iter()
        .map(|r| parse_rule(r, &vars).unwrap())
        .collect();
    let set = Arc::new(RuleSet::build(
        parsed,
        &Classifications::bundled(),
        BuildOptions::default(),
    ));
    assert_eq!(set.stats().inspected, rules.len());
    let out = common::run(
        &set,
        frames,
        DetectOptions {
            inline,
            ..DetectOptions::default()
        },
    );
    let mut seen = BTreeSet::new();
    for a in &out {
        let sid = set.sig(a.sig).rule.sid;
        let dir = a.dir.map(|d| d.index());
        assert!(
            seen.insert((sid, dir)),
            "sid {sid} alerted twice in one direction"
        );
        assert_eq!(a.tx.as_ref().map(|t| t.tx_id), Some(0));
    }
    seen.into_iter().map(|x| x.0).collect()
}

/// (rule keyword, buffer, inspected directions): buffers of either message are
/// inspected both ways by a rule that names no direction.
const BUFS: &[(&str, AppBuffer, &[Direction])] = &[
    ("http.uri", AppBuffer::HttpUri, &[Direction::ToServer]),
    (
        "http.uri.raw",
        AppBuffer::HttpUriRaw,
        &[Direction::ToServer],
    ),
    ("http.host", AppBuffer::HttpHost, &[Direction::ToServer]),
    (
        "http.user_agent",
        AppBuffer::HttpUserAgent,
        &[Direction::ToServer],
    ),
    ("http.method", AppBuffer::HttpMethod, &[Direction::ToServer]),
    (
        "http.request_line",
        AppBuffer::HttpRequestLine,
        &[Direction::ToServer],
    ),
    (
        "http.header",
        AppBuffer::HttpHeader,
        &[Direction::ToServer, Direction::ToClient],
    ),
    (
        "http.stat_code",
        AppBuffer::HttpStatCode,
        &[Direction::ToClient],
    ),
    (
        "http.response_line",
        AppBuffer::HttpResponseLine,
        &[Direction::ToClient],
    ),
    (
        "file.data",
        AppBuffer::FileData,
        &[Direction::ToServer, Direction::ToClient],
    ),
    // The response's twin of `file.data` (one prefilter searches the two).
    (
        "http.response_body",
        AppBuffer::HttpResponseBody,
        &[Direction::ToClient],
    ),
];

fn reference(specs: &[(usize, Vec<u8>)], req: &[u8], resp: &[u8]) -> BTreeSet<u32> {
    let mut h = Http::new(Limits::default());
    h.feed(Direction::ToServer, req);
    h.feed(Direction::ToClient, resp);
    h.close(Direction::ToClient);
    h.finish_all();
    let tx = &h.txs[0];
    let mut want = BTreeSet::new();
    for (i, (b, pat)) in specs.iter().enumerate() {
        let (_, buf, dirs) = BUFS[*b];
        let mut v = Vec::new();
        for &d in dirs {
            fill(buf, TxRef::Http(tx), d, &mut v);
        }
        if v.iter()
            .any(|x| x.windows(pat.len()).any(|w| w == &pat[..]))
        {
            want.insert(i as u32 + 1);
        }
    }
    want
}

fn text(alphabet: &'static [u8], len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(alphabet), len)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn transaction_rules_match_the_reference(
        path in text(b"ab/.%2", 1..12),
        host in text(b"abAB:1", 1..6),
        body in text(b"ab", 0..40),
        specs in prop::collection::vec((0..BUFS.len(), text(b"ab/.%A2", 1..4)), 1..10),
        cut in 1usize..40,
    ) {
        let req = [
            b"GET /".as_slice(), &path, b" HTTP/1.1\r\nHost: ", &host,
            b"\r\nUser-Agent: ab/", &path, b"\r\n\r\n",
        ].concat();
        let resp = [
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).as_bytes(),
            &body,
        ].concat();
        let rules: Vec<String> = specs
            .iter()
            .enumerate()
            .map(|(i, (b, pat))| {
                let hex: String = pat.iter().map(|c| format!("{c:02x} ")).collect();
                format!(
                    "alert http any any -> any any ({}; content:\"|{}|\"; sid:{};)",
                    BUFS[*b].0, hex.trim(), i + 1
                )
            })
            .collect();
        let want = reference(&specs, &req, &resp);
        let f = frames(&req, &resp, cut);
        prop_assert_eq!(&engine(&rules, &f, true), &want, "inline");
        prop_assert_eq!(&engine(&rules, &f, false), &want, "IDS");
    }
}

/// A request whose headers never end: rules on its request line (URI, method, the line)
/// alert, as Suricata inspects libhtp's request-line progress; rules on its headers
/// cannot.
#[test]
fn a_request_line_is_inspected_before_its_head_completes() {
    let req = b"POST /now_this_is HTTP/1.0\r\nUser-Agent: Mozilla/1.0\r\n";
    let rules: Vec<String> = [
        "http.uri; content:\"this\"",
        "http.method; content:\"POST\"",
        "http.request_line; content:\"HTTP/1.0\"",
        "http.user_agent; content:\"Mozilla\"",
        "http.uri; content:\"this\"; http.user_agent; content:\"Mozilla\"",
    ]
    .iter()
    .enumerate()
    .map(|(i, o)| format!("alert http any any -> any any ({o}; sid:{};)", i + 1))
    .collect();
    for cut in [7, 100] {
        let f = frames(req, b"", cut);
        for inline in [true, false] {
            assert_eq!(
                engine(&rules, &f, inline),
                BTreeSet::from([1, 2, 3]),
                "cut {cut}, inline {inline}"
            );
        }
    }
}

/// An HTTP body's `file.data` and `http.response_body` are twins, searched by one
/// prefilter: each rule still alerts on its own buffer only, in a set built with both
/// and in one that had the second added by an edit.
#[test]
fn twin_buffers_share_a_prefilter_and_keep_their_own_rules() {
    let req = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nbodyNEEDLEzz";
    let rule = |sid: u32, o: &str| format!("alert http any any -> any any ({o}; sid:{sid};)");
    let first = [
        rule(1, "file.data; content:\"NEEDLE\""),
        rule(3, "http.response_body; content:\"absent\""),
        rule(5, "http.header; content:\"NEEDLE\""),
    ];
    let later = [
        rule(2, "http.response_body; content:\"bodyN\""),
        rule(
            4,
            "file.data; content:\"zz\"; http.response_body; content:\"absent\"",
        ),
        rule(6, "file.data; content:\"zz\""),
    ];
    let want = BTreeSet::from([1, 2, 6]);
    let sids = |set: &Arc<RuleSet>, f: &[Vec<u8>]| -> BTreeSet<u32> {
        (common::run(set, f, DetectOptions::default()).iter())
            .map(|a| set.sig(a.sig).rule.sid)
            .collect()
    };
    for cut in [5, 100] {
        let f = frames(req, resp, cut);
        let all: Vec<&String> = first.iter().chain(&later).collect();
        assert_eq!(sids(&rule_set(&all), &f), want, "built at once, cut {cut}");
        let edited = rule_set(&first).edit(
            &[],
            (later.iter())
                .map(|r| parse_rule(r, &Vars::default()).unwrap())
                .collect(),
            BuildOptions::default(),
        );
        assert_eq!(sids(&Arc::new(edited), &f), want, "edited, cut {cut}");
    }
}

/// The rule set of `rules`, each of which must parse.
fn rule_set(rules: &[impl AsRef<str>]) -> Arc<RuleSet> {
    Arc::new(RuleSet::build(
        rules
            .iter()
            .map(|r| parse_rule(r.as_ref(), &Vars::default()).unwrap())
            .collect(),
        &Classifications::bundled(),
        BuildOptions::default(),
    ))
}

/// The frame (0-based) that carries byte `at` of a message sent in `cut`-sized segments
/// after a handshake of three frames and a request of `req_segments` (each acknowledged).
fn frame_of(at: usize, cut: usize, req_segments: usize) -> usize {
    3 + 2 * req_segments + 2 * (at / cut)
}

/// A body is inspected once its minimal inspect size arrived (40 KiB of a response, 32
/// KiB of a request), as Suricata's libhtp settings have it, not only at its end; then
/// again as it grows, from a window before its new bytes. Measured on the reference: a
/// PE download in an nDPI capture alerts on the packet after 40 KiB of it, a content
/// past that on the packet that brings it, and a content anchored at the body's start
/// with another past the first part never.
#[test]
fn a_body_is_inspected_once_its_minimal_inspect_size_arrived() {
    let cut = 1000;
    let mut body = b"MZ".to_vec();
    body.resize(60_000, b'a');
    body[55_000..55_006].copy_from_slice(b"NEEDLE");
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n";
    let resp = [&head[..], &body].concat();
    let req = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    let rules: Vec<String> = [
        "file_data; content:\"MZ\"; depth:2",
        "file_data; content:\"NEEDLE\"",
        "http.response_body; content:\"MZ\"; depth:2",
        "file_data; content:\"MZ\"; depth:2; content:\"NEEDLE\"; distance:0",
        "file_data; content:\"NEEDLE\"; depth:50000",
        "file_data; content:\"NEEDLE\"; offset:54000",
    ]
    .iter()
    .enumerate()
    .map(|(i, o)| {
        format!(
            "alert http any any -> any any (flow:to_client; {o}; sid:{};)",
            i + 1
        )
    })
    .collect();
    let f = frames(req, &resp, cut);
    let set = rule_set(&rules);
    let out = common::run(&set, &f, DetectOptions::default());
    let at = |sid: u32| {
        let a: Vec<u64> = out
            .iter()
            .filter(|a| set.sig(a.sig).rule.sid == sid)
            .map(|a| a.packet)
            .collect();
        assert_eq!(a.len(), 1, "sid {sid}: {a:?}");
        a[0]
    };
    // Packet numbers count from 1: the frame with the 40,960th body byte, its
    // acknowledgement, then the next packet of the response.
    let min = frame_of(head.len() + (40 << 10), cut, 1) as u64 + 1;
    for sid in [1, 3] {
        assert!(
            (min..=min + 3).contains(&at(sid)),
            "sid {sid} at {}, min {min}",
            at(sid)
        );
    }
    // Past the part inspected first: found on the packet after the one that brings it.
    let needle = frame_of(head.len() + 55_005, cut, 1) as u64 + 1;
    assert!(
        (needle..=needle + 3).contains(&at(2)),
        "sid 2 at {}, needle {needle}",
        at(2)
    );
    // The body's start is out of the windows inspected after the first; a depth counts
    // from the body's start, an offset from the window's.
    for sid in [4, 5, 6] {
        assert!(
            out.iter().all(|a| set.sig(a.sig).rule.sid != sid),
            "sid {sid}"
        );
    }

    // A to-client rule reads the request's body whole, whatever window of the
    // response it is judged on.
    let mut post = b"POST / HTTP/1.1\r\nContent-Length: 40000\r\n\r\nMZ".to_vec();
    post.resize(post.len() + 39_998, b'b');
    let rule = "alert http any any -> any any (flow:to_client; http.request_body; content:\"MZ\"; depth:2; file_data; content:\"NEEDLE\"; sid:7;)";
    let set = rule_set(&[rule]);
    let out = common::run(&set, &frames(&post, &resp, cut), DetectOptions::default());
    assert_eq!(out.len(), 1, "{out:?}");

    // A request body likewise, from 32 KiB of it.
    let post_head = b"POST / HTTP/1.1\r\nContent-Length: 100000\r\n\r\n";
    let mut post = [&post_head[..], b"MZ"].concat();
    post.resize(50_000, b'b');
    let rule = "alert http any any -> any any (http.request_body; content:\"MZ\"; depth:2; sid:9;)";
    let set = rule_set(&[rule]);
    let out = common::run(&set, &frames(&post, b"", cut), DetectOptions::default());
    assert_eq!(out.len(), 1);
    let min = frame_of(post_head.len() + (32 << 10), cut, 0) as u64 + 1;
    assert!(
        out[0].packet < frame_of(post.len(), cut, 0) as u64,
        "at {}",
        out[0].packet
    );
    assert!(out[0].packet >= min, "at {}, min {min}", out[0].packet);

    // A form's files, though, once the request is complete: anywhere in them (a window
    // of the body would not line up with the second file's data).
    let head = |name: &str| {
        format!(
            "--XX\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}\"\r\n\r\n"
        )
    };
    let mut second = vec![b'c'; 30_000];
    second[20_000..20_006].copy_from_slice(b"NEEDLE");
    let form = [
        head("a").as_bytes(),
        &[b'd'; 30_000],
        b"\r\n",
        head("b").as_bytes(),
        &second,
        b"\r\n--XX--\r\n",
    ]
    .concat();
    let post = [
        format!(
            "POST /up HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: {}\r\n\r\n",
            form.len()
        )
        .as_bytes(),
        &form,
    ]
    .concat();
    let rule = "alert http any any -> any any (file_data; content:\"NEEDLE\"; sid:10;)";
    let set = rule_set(&[rule]);
    let out = common::run(&set, &frames(&post, b"", cut), DetectOptions::default());
    assert_eq!(out.len(), 1, "{out:?}");
}
