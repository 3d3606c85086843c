//! SIP and SDP on arbitrary bytes: a TCP session in pieces (a leading byte picks the
//! direction and the length of each), and each piece again as a UDP datagram. No panic,
//! no endless loop, and memory within the limits.

#![no_main]

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::Direction;
use netsieve_applayer::sip::{MAX_MESSAGE, Sip};

fuzz_target!(|data: &[u8]| {
    let mut tcp = Sip::default();
    let mut udp = Sip::default();
    let mut rest = data;
    while let Some((&b, tail)) = rest.split_first() {
        let n = (b & 0x7f) as usize;
        let take = n.min(tail.len());
        let dir = if b & 0x80 == 0 {
            Direction::ToServer
        } else {
            Direction::ToClient
        };
        tcp.feed(dir, &tail[..take]);
        udp.datagram(dir, &tail[..take]);
        rest = &tail[take..];
    }
    for s in [&tcp, &udp] {
        assert!(s.txs.len() <= 256);
        for t in &s.txs {
            assert!(!t.msg.line.contains(&b'\n'));
            assert!(t.msg.line.len() <= MAX_MESSAGE.max(data.len()));
        }
    }
});
