//! Capture files from an attacker through the pcap and pcapng readers: every frame they
//! yield stays within the limits the readers promise, and reading always ends.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netsieve_packet::capture::{Capture, Frame};

fuzz_target!(|data: &[u8]| {
    let mut cap = Capture::from_reader("fuzz", Box::new(std::io::Cursor::new(data.to_vec())));
    let mut frame = Frame::default();
    let mut frames = 0usize;
    while let Ok(true) = cap.next(&mut frame) {
        // A frame never holds more than the input, nor more than the largest block.
        assert!(frame.data.len() <= data.len() && frame.data.len() <= 16 << 20);
        frames += 1;
        // Each frame consumes at least a record header.
        assert!(frames <= data.len() / 12);
    }
});
