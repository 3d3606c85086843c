//! SIP and SDP on arbitrary bytes: a TCP session in pieces (a leading byte picks the
//! direction and the length of each), and each piece again as a UDP datagram. No panic,
//! no endless loop, and memory within the limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::sip::{MAX_MESSAGE, Sip};

fuzz_target!(|data: &[u8]| {
    let mut tcp = Sip::default();
    let mut udp = Sip::default();
    for (dir, piece) in pieces::pieces(data) {
        tcp.feed(dir, piece);
        udp.datagram(dir, piece);
    }
    for s in [&tcp, &udp] {
        assert!(s.txs.len() <= 256);
        for t in &s.txs {
            assert!(!t.msg.line.contains(&b'\n'));
            assert!(t.msg.line.len() <= MAX_MESSAGE.max(data.len()));
        }
    }
});
