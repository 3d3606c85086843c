//! The HTTP/1.x parser and URI normaliser on arbitrary bytes: both directions, fed in
//! the pieces the input describes; no panic, and what is kept stays within the limits.

#![no_main]

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::Direction;
use netsieve_applayer::http::{Http, Limits};
use netsieve_applayer::{probe, uri};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        head_bytes: 2048,
        headers: 16,
        request_body: 512,
        response_body: 512,
        open_txs: 8,
        decompress_layers: 3,
    };
    let mut h = Http::new(limits);
    // Each piece: a byte whose top bit picks the direction and whose low bits give the
    // length of the piece that follows.
    let mut rest = data;
    while let Some((&b, tail)) = rest.split_first() {
        let n = (b & 0x7f) as usize;
        let take = n.min(tail.len());
        let dir = if b & 0x80 == 0 {
            Direction::ToServer
        } else {
            Direction::ToClient
        };
        let _ = probe(&tail[..take]);
        h.feed(dir, &tail[..take]);
        rest = &tail[take..];
    }
    h.close(Direction::ToClient);
    h.finish_all();
    assert!(h.txs.len() <= limits.open_txs + 1);
    for t in &h.txs {
        if let Some(r) = &t.request {
            assert!(r.msg.body.len() <= limits.request_body);
            let _ = uri::normalize(&r.uri);
        }
        if let Some(r) = &t.response {
            assert!(r.msg.body.len() <= limits.response_body);
            assert!(r.file_data.len() <= limits.response_body);
        }
    }
    let _ = uri::normalize(data);
});
