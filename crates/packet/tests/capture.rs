//! The capture reader on pcap and pcapng, intact and cut at every byte: a cut file gives
//! a prefix of the frames, then an error unless the cut falls between records.

use std::path::{Path, PathBuf};

use netsieve_packet::{Capture, Frame};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/smtp-flowbits.pcap")
}

/// A frame's time, link type and bytes.
type Rec = (u128, u32, Vec<u8>);

/// Frames until the end or the first error.
fn read_all(p: &Path) -> (Vec<Rec>, Option<String>) {
    let mut c = match Capture::open(&[p.to_path_buf()]) {
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

/// A pcapng block of `kind` around `body`, little-endian.
fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let total = (12 + body.len().next_multiple_of(4)) as u32;
    let mut out = Vec::new();
    out.extend(kind.to_le_bytes());
    out.extend(total.to_le_bytes());
    out.extend(body);
    out.resize(total as usize - 4, 0);
    out.extend(total.to_le_bytes());
    out
}

/// The frames as pcapng: a section, an Ethernet interface (microsecond timestamps),
/// one enhanced packet block each.
fn to_pcapng(frames: &[Rec]) -> Vec<u8> {
    let mut shb = 0x1a2b_3c4d_u32.to_le_bytes().to_vec();
    shb.extend([1, 0, 0, 0]);
    shb.extend([0xff; 8]);
    let mut out = block(0x0a0d_0d0a, &shb);
    out.extend(block(1, &[1, 0, 0, 0, 0, 0, 0, 0]));
    for (ts, _, data) in frames {
        let micros = (*ts / 1000) as u64;
        let mut epb = Vec::new();
        epb.extend(0u32.to_le_bytes());
        epb.extend(((micros >> 32) as u32).to_le_bytes());
        epb.extend((micros as u32).to_le_bytes());
        epb.extend((data.len() as u32).to_le_bytes());
        epb.extend((data.len() as u32).to_le_bytes());
        epb.extend(data);
        out.extend(block(6, &epb));
    }
    out
}

#[test]
fn every_cut_gives_a_prefix_then_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = std::fs::read(example()).unwrap();
    let (frames, e) = read_all(&example());
    assert!(e.is_none(), "{e:?}");
    assert_eq!(frames.len(), 19);
    let ng = to_pcapng(&frames);
    for (name, bytes, header) in [("x.pcap", &pcap, 24), ("x.pcapng", &ng, 0)] {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let whole = read_all(&p);
        assert!(whole == (frames.clone(), None), "{name}: {:?}", whole.1);
        // Where each record ends: a cut there is a clean end of file.
        let mut ends = vec![header];
        for cut in 0..bytes.len() {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let (got, err) = read_all(&p);
            assert!(got[..] == frames[..got.len()], "{name} cut at {cut}");
            if err.is_none() {
                ends.push(cut);
            }
        }
        // pcap: a clean end after the header and after each record; pcapng: only after
        // records (a file without its interface block is an error).
        let clean = ends.len() - usize::from(name.ends_with("pcapng"));
        assert_eq!(
            clean,
            frames.len() + usize::from(name.ends_with(".pcap")),
            "{name}: {ends:?}"
        );
    }
}

#[test]
fn a_damaged_file_is_skipped_wherever_it_stands() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pcap");
    std::fs::write(&bad, b"this is not a capture at all").unwrap();
    for inputs in [vec![bad.clone(), example()], vec![example(), bad.clone()]] {
        let mut c = Capture::open(&inputs).unwrap();
        let mut f = Frame::default();
        let (mut frames, mut errors) = (0, Vec::new());
        loop {
            match c.next(&mut f) {
                Ok(true) => frames += 1,
                Ok(false) => break,
                Err(e) => errors.push(e.to_string()),
            }
        }
        assert_eq!(frames, 19, "{inputs:?}");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("bad.pcap") && errors[0].contains("not a pcap"),
            "{errors:?}"
        );
    }
}

#[test]
fn a_missing_file_fails_at_open() {
    let e = Capture::open(&[example(), PathBuf::from("/no/such/file.pcap")])
        .err()
        .unwrap();
    assert!(e.to_string().contains("/no/such/file.pcap"), "{e}");
}
