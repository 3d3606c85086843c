//! TFTP on arbitrary bytes: each piece a UDP datagram (a leading byte picks the
//! direction and the length of each). No panic, and memory within the limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::tftp::Tftp;

fuzz_target!(|data: &[u8]| {
    let mut t = Tftp::default();
    for (dir, piece) in pieces::pieces(data) {
        t.datagram(dir, piece);
    }
    assert!(t.txs.len() <= 256);
});
