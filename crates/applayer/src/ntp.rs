//! NTP (RFC 5905) over UDP. Each datagram is a message and a transaction of its own
//! direction, as Suricata's are: its version, mode, stratum and reference id. These
//! are four fields at fixed places in the 48-byte header, read here directly (a parser
//! crate would add nothing for them).

use crate::txs::{Numbered, Txs};
use netsieve_wire::Direction;

/// Messages kept per flow.
const MAX_TXS: usize = 256;
/// The header's length: a datagram shorter than this is no NTP message.
const HEADER: usize = 48;

/// One message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    pub dir: Direction,
    pub version: u8,
    /// 3 client, 4 server, ... (RFC 5905 7.3).
    pub mode: u8,
    pub stratum: u8,
    pub reference_id: [u8; 4],
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

/// A flow's NTP state.
#[derive(Clone, Debug, Default)]
pub struct Ntp {
    pub txs: Txs<Tx, MAX_TXS>,
}

impl Ntp {
    /// A UDP datagram: one message. Returns whether it is one.
    pub fn datagram(&mut self, dir: Direction, data: &[u8]) -> bool {
        let Some(h) = data.get(..HEADER) else {
            return false;
        };
        let version = (h[0] >> 3) & 7;
        if !(1..=4).contains(&version) {
            return false;
        }
        let mut reference_id = [0; 4];
        reference_id.copy_from_slice(&h[12..16]);
        self.txs.begin(|id| Tx {
            id,
            dir,
            version,
            mode: h[0] & 7,
            stratum: h[1],
            reference_id,
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields_and_short_datagrams() {
        let mut m = [0u8; 48];
        m[0] = 0x23; // version 4, client
        m[1] = 2;
        m[12..16].copy_from_slice(b"LOCL");
        let mut n = Ntp::default();
        assert!(n.datagram(Direction::ToServer, &m));
        let t = &n.txs[0];
        assert_eq!(
            (t.version, t.mode, t.stratum, &t.reference_id),
            (4, 3, 2, b"LOCL")
        );
        assert!(!n.datagram(Direction::ToServer, &m[..47]));
        assert!(!n.datagram(Direction::ToServer, &[0u8; 48]));
    }
}
