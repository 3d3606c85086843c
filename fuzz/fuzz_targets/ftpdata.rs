//! An FTP data channel on arbitrary bytes: each piece in-order stream bytes of one
//! direction, a direction's end, or a description (a leading byte picks which). No
//! panic, one transfer at most, its kept bytes within the limit and counted whole.

#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use netsieve_applayer::ftpdata::{FtpData, MAX_DATA};

fuzz_target!(|data: &[u8]| {
    let mut f = FtpData::default();
    let mut fed = 0u64;
    for (dir, piece) in pieces::pieces(data) {
        match piece.first().map(|b| b % 8) {
            Some(0) => f.close(dir),
            Some(1) => f.describe(&piece[1..], piece.get(2..)),
            _ => {
                let before = f.txs.back().map_or(0, |t| t.size);
                f.feed(dir, piece);
                fed += f.txs.back().map_or(0, |t| t.size) - before;
            }
        }
    }
    assert!(f.txs.len() <= 1);
    if let Some(t) = f.txs.back() {
        assert!(t.data.len() <= MAX_DATA);
        assert_eq!(t.size, fed);
        assert!(t.data.len() as u64 <= t.size);
    }
});
