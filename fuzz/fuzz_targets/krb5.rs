//! Kerberos 5 on arbitrary bytes: a TCP session in pieces and the same pieces as UDP
//! datagrams (a leading byte picks the direction and the length of each). No panic, no
//! endless loop, and memory within the limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::krb5::Krb5;

fuzz_target!(|data: &[u8]| {
    let (mut tcp, mut udp) = (Krb5::default(), Krb5::default());
    for (dir, piece) in pieces::pieces(data) {
        tcp.feed(dir, piece);
        udp.datagram(dir, piece);
    }
    assert!(tcp.txs.len() <= 256 && udp.txs.len() <= 256);
});
