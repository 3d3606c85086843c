//! The DNS and TLS parsers on arbitrary bytes: DNS as a datagram and as a TCP stream in
//! pieces, TLS as both directions of a handshake in pieces, and the X.509 reader on the
//! raw input. No panic, no endless loop (DNS pointers, nested DER), bounded memory.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::Direction;
use netsieve_applayer::dns::{self, Dns};
use netsieve_applayer::tls::{self, Tls};

fuzz_target!(|data: &[u8]| {
    let _ = dns::parse(data);
    if let Some(c) = tls::parse_cert(data) {
        let _ = c.fingerprint();
    }
    let mut d = Dns::default();
    d.datagram(Direction::ToServer, data);
    let mut t = Tls::default();
    for (dir, piece) in pieces::pieces(data) {
        d.stream(dir, piece);
        t.feed(dir, piece);
    }
    assert!(d.txs.len() <= 256);
    if let Some(c) = &t.client_hello {
        assert!(c.ja3.len() <= 6 * data.len() + 16);
        assert_eq!(c.ja4().len(), 36);
    }
});
