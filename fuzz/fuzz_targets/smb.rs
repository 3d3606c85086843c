//! SMB on arbitrary bytes: a TCP session in pieces (a leading byte picks the direction
//! and the length of each). No panic, no endless loop, and memory within the limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::smb::{FILE_KEEP, Kind, Smb};

fuzz_target!(|data: &[u8]| {
    let mut s = Smb::default();
    for (dir, piece) in pieces::pieces(data) {
        s.feed(dir, piece);
    }
    s.finish();
    assert!(s.txs.len() <= 256 && s.rpc.txs.len() <= 256);
    for t in &s.txs {
        assert!(t.response);
        if let Kind::File(f) = &t.kind {
            assert!(f.closed && f.data.len() <= FILE_KEEP);
        }
        if matches!(t.kind, Kind::Rpc { .. }) {
            // A call a transaction names is kept until the transaction goes.
            assert!(s.call(t).is_some());
        }
    }
});
