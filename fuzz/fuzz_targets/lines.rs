//! The line protocols' parsers on arbitrary bytes (SMTP with its MIME decoder, FTP,
//! SSH): both directions of a session in pieces (a leading byte picks the direction
//! and the length of each), then the flow's end. No panic, no endless loop, and memory
//! within the limits.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::ftp::{self, Ftp};
use netsieve_applayer::mime::{FILE_KEEP, Mime};
use netsieve_applayer::smtp::{MAX_LINE, Smtp};
use netsieve_applayer::ssh::{MAX_BANNER, Ssh};

fuzz_target!(|data: &[u8]| {
    let mut s = Smtp::default();
    let mut m = Mime::new();
    let mut f = Ftp::default();
    let mut h = Ssh::default();
    for (dir, piece) in pieces::pieces(data) {
        s.feed(dir, piece);
        m.line(piece);
        f.feed(dir, piece);
        h.feed(dir, piece);
    }
    s.finish();
    m.finish();
    assert!(s.txs.len() <= 64);
    for t in &s.txs {
        assert!(t.complete);
        assert!(t.helo.as_ref().is_none_or(|h| h.len() <= MAX_LINE));
        for f in t.mime.iter().flat_map(|m| &m.files) {
            assert!(f.data.len() <= FILE_KEEP && f.data.len() as u64 <= f.size);
        }
    }
    assert!(m.files.iter().all(|f| f.closed));
    assert!(f.txs.len() <= 256);
    for t in &f.txs {
        assert!(t.command_data.len() <= ftp::MAX_LINE && t.replies.len() <= 64);
    }
    for b in h.banner.values().flatten() {
        assert!(b.proto_version.len() + b.software_version.len() <= MAX_BANNER);
    }
});
