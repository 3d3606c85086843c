//! Prints what the decoder makes of each packet of a capture:
//! `cargo run -p netsieve-packet --example dump -- FILE`.
fn main() {
    let path = std::path::PathBuf::from(std::env::args().nth(1).expect("a capture file"));
    let mut cap = netsieve_packet::Capture::open(&[path]).expect("open");
    let mut d = netsieve_packet::Decoder::new(true);
    let mut f = netsieve_packet::Frame::default();
    let mut p = netsieve_packet::Packet::default();
    let mut n = 0;
    while cap.next(&mut f).expect("read") {
        n += 1;
        d.decode(&f, n, &mut p);
        println!(
            "{n} link={} ip={:?} l4={:?} payload={} bad_csum={} err={:?}",
            f.linktype,
            p.ip.map(|i| (i.src, i.dst, i.proto)),
            p.l4,
            p.payload.len(),
            p.bad_checksum,
            p.error
        );
    }
}
