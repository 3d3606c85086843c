//! SNMP on arbitrary bytes: each piece a UDP datagram (a leading byte picks the
//! direction and the length of each). No panic, no endless loop, and memory within the
//! limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::snmp::Snmp;

fuzz_target!(|data: &[u8]| {
    let mut s = Snmp::default();
    for (dir, piece) in pieces::pieces(data) {
        s.datagram(dir, piece);
    }
    assert!(s.txs.len() <= 256);
    assert!(s.txs.iter().all(|t| t.vars.len() <= 64));
});
