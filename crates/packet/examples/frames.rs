//! Prints each frame of a capture as libpcap's readers would list it (time, captured and
//! original length, link type): `cargo run -p netsieve-packet --example frames -- FILE`.
fn main() {
    let path = std::path::PathBuf::from(std::env::args().nth(1).expect("a capture file"));
    let mut cap = match netsieve_packet::Capture::open(&[path]) {
        Ok(c) => c,
        Err(e) => return println!("open: {e}"),
    };
    let mut f = netsieve_packet::Frame::default();
    loop {
        match cap.next(&mut f) {
            Ok(true) => println!(
                "{}.{:06} caplen={} len={} link={}",
                f.ts.as_secs(),
                f.ts.subsec_micros(),
                f.data.len(),
                f.orig_len,
                f.linktype
            ),
            Ok(false) => break,
            Err(e) => break println!("err: {e}"),
        }
    }
}
