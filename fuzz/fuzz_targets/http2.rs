//! HTTP/2 on arbitrary bytes: the client's preface, then each piece in-order stream
//! bytes of one direction. No panic; transactions, bodies and kept headers within
//! their limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::Direction;
use netsieve_applayer::http2::{Http2, MAX_BODY, MAX_TXS, PREFACE};

fuzz_target!(|data: &[u8]| {
    let mut h = Http2::new();
    h.feed(Direction::ToServer, PREFACE);
    for (dir, piece) in pieces::pieces(data) {
        h.feed(dir, piece);
    }
    h.finish();
    assert!(h.txs.len() <= MAX_TXS);
    for t in h.txs.iter() {
        for m in t.msgs.values() {
            assert!(m.body.len() <= MAX_BODY);
            assert!(m.body.len() as u64 <= m.body_len);
            assert!(m.headers.len() <= 256);
        }
        assert!(t.file_data.len() <= MAX_BODY);
    }
});
