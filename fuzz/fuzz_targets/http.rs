//! The HTTP/1.x parser and URI normaliser on arbitrary bytes: both directions, fed in
//! the pieces the input describes; no panic, and what is kept stays within the limits.

#![no_main]

mod pieces;

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
        ..Limits::default()
    };
    let mut h = Http::new(limits);
    for (dir, piece) in pieces::pieces(data) {
        let _ = probe(piece);
        h.feed(dir, piece);
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
