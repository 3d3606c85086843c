//! WebSocket on arbitrary bytes: frames of both directions in pieces (a leading byte
//! picks the direction and the length of each), masked, fragmented, compressed or not.
//! No panic, no endless loop, and memory within the limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::websocket::{MAX_PAYLOAD, WebSocket};

fuzz_target!(|data: &[u8]| {
    let mut w = WebSocket::default();
    w.marks.enable();
    for (dir, piece) in pieces::pieces(data) {
        w.feed(dir, piece);
    }
    assert!(w.txs.len() <= 256);
    for t in w.txs.iter() {
        assert!(t.payload.len() <= MAX_PAYLOAD);
        assert!(t.opcode < 16 && t.flags & 0x0f == 0);
    }
});
