//! The `tftp` object: one TFTP request as Suricata's `tftp` logger writes it (`read`
//! or `write`, the file's name and the transfer mode). `tftp` records and alerts on
//! TFTP flows carry it.

use netsieve_applayer::tftp::Tx;
use serde::Serialize;

/// EVE's `tftp` object.
pub(super) struct Object<'a>(pub &'a Tx);

impl Serialize for Object<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct O<'a> {
            packet: &'a str,
            file: &'a str,
            mode: &'a str,
        }
        let t = self.0;
        let (file, mode) = (
            String::from_utf8_lossy(&t.file),
            String::from_utf8_lossy(&t.mode),
        );
        O {
            packet: if t.write { "write" } else { "read" },
            file: &file,
            mode: &mode,
        }
        .serialize(s)
    }
}
