//! Both capture readers (whole file in memory, streaming) give the same frames and the
//! same errors, for pcap and pcapng, intact and cut at every byte.

use std::path::{Path, PathBuf};

use netsieve_packet::{Capture, Frame};
use pcap_file::DataLink;
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/smtp-flowbits.pcap")
}

/// A frame's time, link type and bytes.
type Rec = (u128, u32, Vec<u8>);

/// Frames until the end or the first error.
fn read_all(p: &Path, read_whole: u64) -> (Vec<Rec>, Option<String>) {
    let mut c = match Capture::open_with(&[p.to_path_buf()], read_whole) {
        Ok(c) => c,
        Err(e) => return (Vec::new(), Some(e.to_string())),
    };
    let mut f = Frame::default();
    let mut out = Vec::new();
    loop {
        match c.next(&mut f) {
            Ok(true) => out.push((f.ts.as_nanos(), f.linktype, f.data.clone())),
            Ok(false) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

fn to_pcapng(frames: &[Rec]) -> Vec<u8> {
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    w.write_pcapng_block(InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen: 0xffff,
        options: vec![],
    })
    .unwrap();
    for (ts, _, data) in frames {
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 0,
            timestamp: std::time::Duration::from_nanos(*ts as u64),
            original_len: data.len() as u32,
            data: data.as_slice().into(),
            options: vec![],
        })
        .unwrap();
    }
    w.into_inner()
}

#[test]
fn memory_and_streaming_readers_agree_on_every_cut() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = std::fs::read(example()).unwrap();
    let (frames, e) = read_all(&example(), 0);
    assert!(e.is_none(), "{e:?}");
    assert_eq!(frames.len(), 19);
    let ng = to_pcapng(&frames);
    for (name, bytes) in [("x.pcap", &pcap), ("x.pcapng", &ng)] {
        let p = dir.path().join(name);
        let whole = {
            std::fs::write(&p, bytes).unwrap();
            read_all(&p, u64::MAX)
        };
        assert_eq!(whole.0, frames, "{name}");
        for cut in 0..bytes.len() {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let a = read_all(&p, u64::MAX);
            let b = read_all(&p, 0);
            assert_eq!(a.0, b.0, "{name} cut at {cut}");
            assert_eq!(
                a.1.is_some(),
                b.1.is_some(),
                "{name} cut at {cut}: {a:?} {b:?}"
            );
            assert_eq!(a.0[..], frames[..a.0.len()], "{name} cut at {cut}");
        }
    }
}
