//! DCE/RPC on arbitrary bytes: a TCP session in pieces (a leading byte picks the
//! direction and the length of each). No panic, no endless loop, and memory within the
//! limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::dcerpc::{Dcerpc, MAX_STUB};

fuzz_target!(|data: &[u8]| {
    let mut d = Dcerpc::default();
    for (dir, piece) in pieces::pieces(data) {
        d.feed(dir, piece);
    }
    d.finish();
    assert!(d.txs.len() <= 256);
    for t in &d.txs {
        assert!(t.complete());
        assert!(t.request.stub.len() <= MAX_STUB && t.response.stub.len() <= MAX_STUB);
        assert!(t.interfaces.len() <= 256);
    }
});
