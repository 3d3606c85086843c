//! LDAP on arbitrary bytes: each piece TCP bytes of one direction, or with the odd
//! pieces a UDP datagram (a leading byte picks the direction and the length of each).
//! No panic, no endless loop, and memory within the limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::ldap::Ldap;

fuzz_target!(|data: &[u8]| {
    let (mut tcp, mut udp) = (Ldap::default(), Ldap::default());
    for (dir, piece) in pieces::pieces(data) {
        tcp.feed(dir, piece);
        udp.datagram(dir, piece);
    }
    for l in [&tcp, &udp] {
        assert!(l.txs.len() <= 256);
        assert!(l.txs.iter().all(|t| t.responses.len() <= 1024));
    }
});
