//! MQTT on arbitrary bytes: a TCP session in pieces (a leading byte picks the direction
//! and the length of each). No panic, no endless loop, and memory within the limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::mqtt::Mqtt;

fuzz_target!(|data: &[u8]| {
    let mut m = Mqtt::default();
    for (dir, piece) in pieces::pieces(data) {
        m.feed(dir, piece);
    }
    m.finish();
    assert!(m.txs.len() <= 256);
    assert!(m.events.len() <= 64);
    for t in &m.txs {
        assert!(t.complete && !t.msgs.is_empty());
        // An exchange is one packet and its answers: at most PUBLISH, PUBREC, PUBREL
        // and PUBCOMP.
        assert!(t.msgs.len() <= 4, "{t:?}");
    }
});
