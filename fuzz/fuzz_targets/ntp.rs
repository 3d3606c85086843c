//! NTP on arbitrary bytes: each piece a UDP datagram (a leading byte picks the direction
//! and the length of each). No panic, and memory within the limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::ntp::Ntp;

fuzz_target!(|data: &[u8]| {
    let mut n = Ntp::default();
    for (dir, piece) in pieces::pieces(data) {
        let ok = n.datagram(dir, piece);
        assert!(!ok || piece.len() >= 48);
    }
    assert!(n.txs.len() <= 256);
    assert!(n.txs.iter().all(|t| (1..=4).contains(&t.version) && t.mode < 8));
});
