//! The HTTP/1.x parser: transactions from hand-written conversations, the same result
//! for every way the bytes are split, limits on hostile input.

use std::io::Write;

use netsieve_applayer::Direction;
use netsieve_applayer::http::{Event, Http, Limits, Progress};
use proptest::prelude::*;

/// Everything the parser found, as text (to compare runs).
fn digest(h: &Http) -> String {
    let mut s = String::new();
    for t in &h.txs {
        s += &format!("tx {}\n", t.id);
        if let Some(r) = &t.request {
            s += &format!(
                "  req {:?} {:?} {:?} headers {:?} body {:?} ({}) complete {}\n",
                String::from_utf8_lossy(&r.method),
                String::from_utf8_lossy(&r.uri),
                String::from_utf8_lossy(&r.protocol),
                r.msg.headers,
                String::from_utf8_lossy(&r.msg.body),
                r.msg.body_len,
                r.msg.complete
            );
            for f in r.form.iter().flat_map(|f| f.files()) {
                s += &format!(
                    "  form file {:?} {}\n",
                    String::from_utf8_lossy(&f.name),
                    f.size
                );
            }
        }
        if let Some(r) = &t.response {
            s += &format!(
                "  resp {:?} {:?} headers {:?} file {:?} ({}) complete {}\n",
                String::from_utf8_lossy(&r.status),
                String::from_utf8_lossy(&r.reason),
                r.msg.headers,
                String::from_utf8_lossy(&r.file_data),
                r.msg.body_len,
                r.msg.complete
            );
        }
    }
    s += &format!("events {:?}\n", h.events);
    s
}

const REQS: &[u8] = b"GET /a/../index.html?x=1 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: test\r\n  folded\r\n\r\n\
POST /form HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello\
PUT /up HTTP/1.1\nTransfer-Encoding: chunked\n\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n";

const RESPS: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n\
HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Type: text/html\r\n\r\nbody\
HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n\
HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n4\r\ndone\r\n0\r\n\r\n";

fn run(reqs: &[&[u8]], resps: &[&[u8]]) -> Http {
    let mut h = Http::new(Limits::default());
    for r in reqs {
        h.feed(Direction::ToServer, r);
    }
    for r in resps {
        h.feed(Direction::ToClient, r);
    }
    h
}

#[test]
fn pipelined_requests_pair_with_responses_in_order() {
    let h = run(&[REQS], &[RESPS]);
    assert_eq!(h.txs.len(), 3);
    let t0 = &h.txs[0];
    let r = t0.request.as_ref().unwrap();
    assert_eq!(r.method, b"GET");
    assert_eq!(r.uri, b"/a/../index.html?x=1");
    assert_eq!(r.protocol, b"HTTP/1.1");
    assert_eq!(r.msg.header("host"), Some(&b"example.com"[..]));
    assert_eq!(r.msg.header("USER-AGENT"), Some(&b"test folded"[..]));
    assert!(r.msg.complete);
    let resp = t0.response.as_ref().unwrap();
    assert_eq!(resp.code(), Some(200), "the 100 Continue was skipped");
    assert_eq!(resp.file_data, b"body");
    let t1 = &h.txs[1];
    assert_eq!(t1.request.as_ref().unwrap().msg.body, b"hello");
    assert_eq!(t1.response.as_ref().unwrap().reason, b"Found");
    let t2 = &h.txs[2];
    assert_eq!(t2.request.as_ref().unwrap().msg.body, b"abcde");
    assert_eq!(t2.response.as_ref().unwrap().file_data, b"done");
    // Its chunked request's size line carries an extension.
    assert_eq!(h.events, [Event::RequestChunkExtension]);
}

#[test]
fn progress_reports_heads_and_ends() {
    let mut h = Http::new(Limits::default());
    let p = h.feed(
        Direction::ToServer,
        b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nab",
    );
    assert_eq!(p, [Progress::RequestHead(0)]);
    assert_eq!(
        h.feed(Direction::ToServer, b"c"),
        [Progress::RequestDone(0)]
    );
    // A response read until the close completes only then.
    assert_eq!(
        h.feed(Direction::ToClient, b"HTTP/1.0 200 OK\r\n\r\nstream"),
        [Progress::ResponseHead(0)]
    );
    assert_eq!(h.close(Direction::ToClient), [Progress::ResponseDone(0)]);
    assert_eq!(h.txs[0].response.as_ref().unwrap().file_data, b"stream");
}

/// A request line opens its transaction before the headers are complete, as libhtp's
/// request-line progress does; the head then completes the same transaction.
#[test]
fn a_request_line_opens_its_transaction_before_the_head() {
    let mut h = Http::new(Limits::default());
    assert_eq!(h.feed(Direction::ToServer, b"GET /a?b HTTP/1.1"), []);
    assert_eq!(
        h.feed(Direction::ToServer, b"\r\nHost: x\r\n"),
        [Progress::RequestLine(0)]
    );
    let r = h.txs[0].request.as_ref().unwrap();
    assert!(r.line_only && r.msg.headers.is_empty());
    assert_eq!(
        (&r.method[..], &r.uri[..], &r.protocol[..]),
        (&b"GET"[..], &b"/a?b"[..], &b"HTTP/1.1"[..])
    );
    // More header lines open nothing new.
    assert_eq!(h.feed(Direction::ToServer, b"Accept: */*\r\n"), []);
    assert_eq!(
        h.feed(Direction::ToServer, b"\r\n"),
        [Progress::RequestHead(0), Progress::RequestDone(0)]
    );
    assert_eq!(h.txs.len(), 1);
    let r = h.txs[0].request.as_ref().unwrap();
    assert!(!r.line_only && r.msg.complete);
    assert_eq!(r.msg.header("host"), Some(&b"x"[..]));
    // The next request, whole in one feed, has no line-only step; one whose line is
    // not a request line opens nothing until its head fails.
    assert_eq!(
        h.feed(Direction::ToServer, b"GET /2 HTTP/1.1\r\n\r\n"),
        [Progress::RequestHead(1), Progress::RequestDone(1)]
    );
    assert_eq!(h.feed(Direction::ToServer, b"GET\r\nX: y\r\n"), []);
    assert_eq!(h.txs.len(), 2);
    assert_eq!(h.feed(Direction::ToServer, b"\r\n"), []);
    assert_eq!(h.events, [Event::InvalidRequestLine]);
    // The response pairs with the line-opened transaction.
    assert_eq!(
        h.feed(
            Direction::ToClient,
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        ),
        [Progress::ResponseHead(0), Progress::ResponseDone(0)]
    );
}

#[test]
fn head_204_and_304_responses_have_no_body() {
    let h = run(
        &[b"HEAD / HTTP/1.1\r\n\r\nGET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n"],
        &[b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n\
HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\n\r\n"],
    );
    assert!(
        h.txs
            .iter()
            .all(|t| t.response.as_ref().unwrap().msg.complete)
    );
    assert!(h.events.is_empty());
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn compressed_bodies_are_decoded_within_the_limit() {
    let body = gzip(b"<html>secret</html>");
    let mut resp = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    resp.extend_from_slice(&body);
    let h = run(&[b"GET / HTTP/1.1\r\n\r\n"], &[&resp]);
    let r = h.txs[0].response.as_ref().unwrap();
    assert_eq!(r.file_data, b"<html>secret</html>");
    // A bomb: 50 MB of zeros in ~50 KB decodes to the limit only.
    let bomb = gzip(&vec![0u8; 50 << 20]);
    let mut resp = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        bomb.len()
    )
    .into_bytes();
    resp.extend_from_slice(&bomb);
    let limits = Limits::default();
    let h = run(&[b"GET / HTTP/1.1\r\n\r\n"], &[&resp]);
    let r = h.txs[0].response.as_ref().unwrap();
    assert_eq!(r.file_data.len(), limits.response_body);
    // Deflate in its zlib form; a body that does not decode is an event.
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(b"zlib data").unwrap();
    let z = z.finish().unwrap();
    let (out, ok) = netsieve_applayer::http::decode_body(&z, Some(b"deflate"), 100, 2);
    assert!(ok);
    assert_eq!(out, b"zlib data");
    // A body that does not decode passes through as sent (as libhtp does).
    let (out, ok) = netsieve_applayer::http::decode_body(b"not gzip", Some(b"gzip"), 100, 2);
    assert!(!ok);
    assert_eq!(out, b"not gzip");
    // More codings than the layers undone (2): an event, as libhtp raises it
    // (suricata-verify bug-2511's header; `identity` is no layer).
    let resp = b"HTTP/1.1 200 OK\r\nContent-Encoding: identity, identity, gzip, identity, gzip, gzip\r\nContent-Length: 0\r\n\r\n";
    let h = run(&[b"GET / HTTP/1.1\r\n\r\n"], &[resp]);
    assert_eq!(h.events, [Event::TooManyEncodingLayers]);
    let resp =
        b"HTTP/1.1 200 OK\r\nContent-Encoding: identity, gzip, gzip\r\nContent-Length: 0\r\n\r\n";
    let h = run(&[b"GET / HTTP/1.1\r\n\r\n"], &[resp]);
    assert!(h.events.is_empty());
}

/// With `file_bytes` (file-store), a body past the body limit is kept whole for its
/// file (decoded, for a compressed response), in every split, while the inspected body
/// stops at the limit (a compressed one cut there does not decode: it stays as sent);
/// one past `file_bytes` too is not kept.
#[test]
fn a_file_past_the_body_limit_is_kept_whole_for_file_store() {
    let limits = Limits {
        request_body: 8,
        response_body: 8,
        file_bytes: 64,
        ..Limits::default()
    };
    let text = b"0123456789abcdefghij0123456789abcdefghij";
    let zipped = gzip(text);
    let mut resp = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        zipped.len()
    )
    .into_bytes();
    resp.extend_from_slice(&zipped);
    let mut req = b"POST /up HTTP/1.1\r\nContent-Length: 40\r\n\r\n".to_vec();
    req.extend_from_slice(text);
    for cut in [1, 7, 45, 60] {
        let mut h = Http::new(limits);
        for part in req.chunks(cut) {
            h.feed(Direction::ToServer, part);
        }
        for part in resp.chunks(cut) {
            h.feed(Direction::ToClient, part);
        }
        let t = &h.txs[0];
        let (q, r) = (t.request.as_ref().unwrap(), t.response.as_ref().unwrap());
        assert_eq!(q.msg.body, &text[..8], "cut {cut}");
        assert_eq!(q.msg.file.as_deref(), Some(&text[..]), "cut {cut}");
        assert!(r.file_data.len() <= 8, "cut {cut}");
        assert_eq!(r.msg.file.as_deref(), Some(&text[..]), "cut {cut}");
    }
    // Past `file_bytes`, or without it, nothing beyond the limit is kept.
    for file_bytes in [0, 16] {
        let mut h = Http::new(Limits {
            file_bytes,
            ..limits
        });
        h.feed(Direction::ToServer, &req);
        assert_eq!(h.txs[0].request.as_ref().unwrap().msg.file, None);
    }
}

#[test]
fn hostile_input_raises_events() {
    let limits = Limits::default();
    // An endless head.
    let mut h = Http::new(limits);
    h.feed(Direction::ToServer, b"GET / HTTP/1.1\r\n");
    for _ in 0..2000 {
        h.feed(
            Direction::ToServer,
            b"X-Long: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n",
        );
    }
    // Past 64 KiB, the lines that fit are the head (its first 256 headers are kept, as
    // libhtp keeps them), with events; the rest of the head is skipped, and the next
    // request is read as usual.
    assert_eq!(h.events, [Event::HeadTooLong, Event::TooManyHeaders]);
    assert_eq!(h.txs.len(), 1);
    let r = h.txs[0].request.as_ref().unwrap();
    assert!(!r.line_only && r.msg.complete);
    assert_eq!(r.msg.headers.len(), limits.headers);
    h.feed(
        Direction::ToServer,
        b"X-Last: z\r\n\r\nGET /next HTTP/1.1\r\nHost: b\r\n\r\n",
    );
    assert_eq!(h.txs.len(), 2);
    assert_eq!(h.txs[1].request.as_ref().unwrap().uri, b"/next");
    // One header line longer than the limit: the request line is still the head.
    let mut h = Http::new(limits);
    h.feed(Direction::ToServer, b"GET /long HTTP/1.1\r\nHost: a\r\nX: ");
    h.feed(Direction::ToServer, &vec![b'y'; 70_000]);
    h.feed(Direction::ToServer, b"\r\n\r\nGET /after HTTP/1.1\r\n\r\n");
    assert_eq!(h.events, [Event::HeadTooLong]);
    let r = h.txs[0].request.as_ref().unwrap();
    assert_eq!(
        (r.uri.as_slice(), r.msg.header("host")),
        (&b"/long"[..], Some(&b"a"[..]))
    );
    assert_eq!(h.txs[1].request.as_ref().unwrap().uri, b"/after");
    // Too many headers in a head that fits: the first 256 are kept, the message goes on.
    let mut many = b"GET / HTTP/1.1\r\nHost: h\r\n".to_vec();
    for i in 0..300 {
        many.extend_from_slice(format!("H{i}: v\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\nGET /2 HTTP/1.1\r\n\r\n");
    let h = run(&[&many], &[]);
    assert_eq!(h.events, [Event::TooManyHeaders]);
    let r = h.txs[0].request.as_ref().unwrap();
    assert_eq!(r.msg.headers.len(), limits.headers);
    assert_eq!(r.msg.header("host"), Some(&b"h"[..]));
    assert_eq!(h.txs[1].request.as_ref().unwrap().uri, b"/2");
    // Bad chunk sizes, bad lengths, bad lines.
    for (req, e) in [
        (
            &b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"[..],
            Event::InvalidChunk,
        ),
        (
            b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            Event::InvalidContentLength,
        ),
        (b"GET\r\n\r\n", Event::InvalidRequestLine),
        (
            b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
            Event::InvalidHeader,
        ),
        (
            b"GET / HTTP/1.1\r\nbad name: x\r\n\r\n",
            Event::InvalidHeader,
        ),
    ] {
        let h = run(&[req], &[]);
        assert_eq!(h.events, [e], "{}", String::from_utf8_lossy(req));
    }
    // A bad status code is an event; the response is still parsed (leniently, as
    // clients read it), without a status.
    let h = run(&[], &[b"HTTP/1.1 2000 OK\r\n\r\n"]);
    assert!(h.events.contains(&Event::InvalidStatusLine));
    assert!(h.txs[0].response.as_ref().unwrap().status.is_empty());
    let h = run(&[], &[b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"]);
    assert_eq!(h.events, [Event::UnsolicitedResponse]);
    assert!(h.txs[0].request.is_none());
    // Bodies are kept up to the limit, counted beyond it.
    let mut big = b"POST / HTTP/1.1\r\nContent-Length: 300000\r\n\r\n".to_vec();
    big.extend(std::iter::repeat_n(b'a', 300_000));
    let h = run(&[&big], &[]);
    let r = h.txs[0].request.as_ref().unwrap();
    assert_eq!(r.msg.body.len(), limits.request_body);
    assert_eq!(r.msg.body_len, 300_000);
    // Open transactions are capped.
    let many: Vec<u8> = b"GET / HTTP/1.1\r\n\r\n".repeat(600);
    let h = run(&[&many], &[]);
    assert_eq!(h.txs.len(), limits.open_txs);
    assert_eq!(h.txs.back().unwrap().id, 599);
}

#[test]
fn every_two_way_split_gives_the_same_result() {
    let whole = digest(&run(&[REQS], &[RESPS]));
    for cut in 0..=REQS.len() {
        let h = run(&[&REQS[..cut], &REQS[cut..]], &[RESPS]);
        assert_eq!(digest(&h), whole, "request cut at {cut}");
    }
    for cut in 0..=RESPS.len() {
        let h = run(&[REQS], &[&RESPS[..cut], &RESPS[cut..]]);
        assert_eq!(digest(&h), whole, "response cut at {cut}");
    }
}

proptest! {
    #[test]
    fn any_split_gives_the_same_result(cuts in prop::collection::vec(0usize..400, 0..12)) {
        let whole = digest(&run(&[REQS], &[RESPS]));
        let split = |data: &[u8]| {
            let mut c: Vec<usize> = cuts.iter().map(|&x| x % (data.len() + 1)).collect();
            c.sort_unstable();
            let mut pieces = Vec::new();
            let mut last = 0;
            for x in c {
                pieces.push(data[last..x].to_vec());
                last = x;
            }
            pieces.push(data[last..].to_vec());
            pieces
        };
        let rq = split(REQS);
        let rs = split(RESPS);
        let rq: Vec<&[u8]> = rq.iter().map(|v| v.as_slice()).collect();
        let rs: Vec<&[u8]> = rs.iter().map(|v| v.as_slice()).collect();
        prop_assert_eq!(digest(&run(&rq, &rs)), whole);
    }

    #[test]
    fn random_bytes_never_panic_and_stay_bounded(
        a in prop::collection::vec(any::<u8>(), 0..2000),
        b in prop::collection::vec(any::<u8>(), 0..2000),
        prefix in 0usize..3,
    ) {
        let starts: [&[u8]; 3] = [b"", b"GET / HTTP/1.1\r\n", b"HTTP/1.1 200 OK\r\n"];
        let mut h = Http::new(Limits { open_txs: 4, ..Limits::default() });
        let mut req = starts[prefix].to_vec();
        req.extend_from_slice(&a);
        h.feed(Direction::ToServer, &req);
        let mut resp = starts[2].to_vec();
        resp.extend_from_slice(&b);
        h.feed(Direction::ToClient, &resp);
        h.close(Direction::ToClient);
        prop_assert!(h.txs.len() <= 5);
    }
}

/// libhtp's reading of request lines: a target may hold spaces when the line ends in a
/// protocol (http-uri-spaces); runs of spaces and tabs separate words; a last word that
/// is not a protocol makes the line invalid.
#[test]
fn request_targets_may_hold_spaces() {
    for (line, uri, protocol) in [
        (
            &b"GET /uri afterspace HTTP/1.1"[..],
            &b"/uri afterspace"[..],
            &b"HTTP/1.1"[..],
        ),
        (b"GET  /a \t b  c   HTTP/1.0  ", b"/a \t b  c", b"HTTP/1.0"),
        (b"GET /x HTTP/1.1", b"/x", b"HTTP/1.1"),
        (b"GET /x", b"/x", b""),
    ] {
        let h = run(&[&[line, b"\r\nHost: h\r\n\r\n"].concat()], &[]);
        let want: &[Event] = if protocol.is_empty() {
            &[Event::RequestLineMissingProtocol]
        } else {
            &[]
        };
        assert_eq!(h.events, want, "{}", String::from_utf8_lossy(line));
        let r = h.txs[0].request.as_ref().unwrap();
        assert_eq!((&r.uri[..], &r.protocol[..]), (uri, protocol));
    }
    let h = run(&[b"GET /a b c\r\n\r\n"], &[]);
    assert_eq!(h.events, [Event::InvalidRequestLine]);
}

/// The request anomalies libhtp raises events for, one table of (request, events); each
/// was checked against Suricata 8 on suricata-verify's captures and nDPI's.
#[test]
fn request_anomalies_raise_libhtps_events() {
    let cases: &[(&[u8], &[Event])] = &[
        (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", &[]),
        (
            b"POST / HTTP/1.1\r\nContent-Length:1\r\nContent-Length:2\r\n\r\nab",
            &[Event::DuplicateContentLengthRequest],
        ),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1 ; a=b\r\nx\r\n0\r\n\r\n",
            &[Event::RequestChunkExtension],
        ),
        (b"GET /\r\n\r\n", &[Event::RequestLineMissingProtocol]),
        (
            b"GET / HTTP/1.1\r\nAuthorization: Turbo x\r\n\r\n",
            &[Event::RequestAuthUnrecognized],
        ),
        (b"GET / HTTP/1.1\r\nAuthorization: basic eA==\r\n\r\n", &[]),
        (b"GET / HTTP/1.1\r\nAuthorization: Bearer t\r\n\r\n", &[]),
        (b"GET /a%2527b HTTP/1.1\r\n\r\n", &[Event::DoubleEncodedUri]),
        // Only in the path, and only before two hex digits.
        (b"GET /a?b=%2527 HTTP/1.1\r\n\r\n", &[]),
        (b"GET /a%25zz HTTP/1.1\r\n\r\n", &[]),
    ];
    for (req, want) in cases {
        let mut h = Http::new(Limits::default());
        h.feed(Direction::ToServer, req);
        assert_eq!(h.events, *want, "{}", String::from_utf8_lossy(req));
    }
}

/// A `multipart/form-data` body's parts named as files are its files (each with its
/// name, bytes and size, the line end before the boundary not theirs); its other parts
/// are fields. The same for every split of the body, and for a part's line longer than
/// the piece the form reads at once.
#[test]
fn a_forms_file_parts_are_its_files() {
    let long = vec![b'x'; 20_000];
    let body = [
        &b"--BB\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nfield\r\n"[..],
        b"--BB\r\nContent-Disposition: form-data; name=\"a\"; filename=\"a.txt\"\r\n",
        b"Content-Type: text/plain\r\n\r\nfirst file\n\r\n",
        b"--BB\r\nContent-Disposition: form-data; name=\"b\"; filename=\"b.bin\"\r\n\r\n",
        &long,
        b"\r\n--BB--\r\n",
    ]
    .concat();
    let head = format!(
        "POST /up HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=BB\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let all = [head.as_bytes(), &body].concat();
    for cut in [head.len() + 7, head.len() + 100, all.len() - 5, all.len()] {
        let h = run(&[&all[..cut], &all[cut..]], &[]);
        let r = h.txs[0].request.as_ref().unwrap();
        let files = r.form.as_ref().expect("a form").files();
        let got: Vec<(&[u8], u64)> = files.iter().map(|f| (&f.name[..], f.size)).collect();
        assert_eq!(
            got,
            [(&b"a.txt"[..], 11), (&b"b.bin"[..], 20_000)],
            "cut {cut}"
        );
        assert_eq!(files[0].data, b"first file\n");
        assert!(files[1].data.iter().all(|&c| c == b'x'));
        assert!(files.iter().all(|f| f.closed));
    }
    // Another body is no form.
    let h = run(&[b"POST /x HTTP/1.1\r\nContent-Length: 2\r\n\r\nab"], &[]);
    assert!(h.txs[0].request.as_ref().unwrap().form.is_none());
}

/// After a complete request, a line whose first word is no method libhtp knows is more
/// of that request's body, with an event (Suricata 8, measured on captures built for
/// it: `FOO /b`, `get /b` and `junk=1` lines are body; `GET /c` opens a request); a
/// line the client never ended joins the body at the close, with no event.
#[test]
fn lines_after_a_request_that_open_none_are_its_body() {
    let mut h = Http::new(Limits::default());
    h.feed(
        Direction::ToServer,
        b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcjunk=1\r\nget /b HTTP/1.1\r\nGET /c HTTP/1.1\r\n\r\n",
    );
    let body = |h: &Http, id| h.tx(id).unwrap().request.as_ref().unwrap().msg.body.clone();
    assert_eq!(body(&h, 0), b"abcjunk=1\r\nget /b HTTP/1.1\r\n");
    assert_eq!(h.tx(1).unwrap().request.as_ref().unwrap().method, b"GET");
    assert_eq!(
        h.events,
        [Event::RequestBodyUnexpected, Event::RequestBodyUnexpected]
    );
    // The first request on a connection is a request whatever its method.
    let mut h = Http::new(Limits::default());
    h.feed(Direction::ToServer, b"FOO / HTTP/1.1\r\n\r\nlogin=foo");
    assert_eq!(h.tx(0).unwrap().request.as_ref().unwrap().method, b"FOO");
    assert_eq!(body(&h, 0), b"");
    h.close(Direction::ToServer);
    assert_eq!(body(&h, 0), b"login=foo");
    assert!(h.events.is_empty());
}
