//! TFTP (RFC 1350) over UDP, on its port: a read or write request is a transaction of
//! the client's, as Suricata's are (the transfer that follows runs between other ports
//! and is not TFTP's to read). A request is a 2-byte opcode, then the file's name and
//! the transfer mode, each ended by a zero byte; read here directly.

use crate::txs::{Numbered, Txs};
use netsieve_wire::Direction;

/// Requests kept per flow.
const MAX_TXS: usize = 256;

/// One request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    /// A write request (WRQ), else a read request (RRQ).
    pub write: bool,
    pub file: Vec<u8>,
    /// `octet`, `netascii`, `mail`.
    pub mode: Vec<u8>,
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

/// A flow's TFTP state.
#[derive(Clone, Debug, Default)]
pub struct Tftp {
    pub txs: Txs<Tx, MAX_TXS>,
}

impl Tftp {
    /// A UDP datagram: a request, if it is one. Returns whether it was.
    pub fn datagram(&mut self, dir: Direction, data: &[u8]) -> bool {
        if dir != Direction::ToServer {
            return false;
        }
        let write = match data {
            [0, 1, ..] => false,
            [0, 2, ..] => true,
            _ => return false,
        };
        let mut fields = data[2..].split(|&b| b == 0);
        let (Some(file), Some(mode), Some(_)) = (fields.next(), fields.next(), fields.next())
        else {
            // The mode has no zero byte after it.
            return false;
        };
        self.txs.begin(|id| Tx {
            id,
            write,
            file: file.to_vec(),
            mode: mode.to_vec(),
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_what_is_not_one() {
        let mut t = Tftp::default();
        assert!(t.datagram(Direction::ToServer, b"\x00\x01rfc1350.txt\x00octet\x00"));
        assert!(t.datagram(Direction::ToServer, b"\x00\x02up.bin\x00netascii\x00"));
        let (r, w) = (&t.txs[0], &t.txs[1]);
        assert_eq!(
            (r.write, &r.file[..], &r.mode[..]),
            (false, &b"rfc1350.txt"[..], &b"octet"[..])
        );
        assert_eq!((w.write, &w.file[..]), (true, &b"up.bin"[..]));
        // Data, an unended mode, a reply: none is a request.
        assert!(!t.datagram(Direction::ToServer, b"\x00\x03\x00\x01data"));
        assert!(!t.datagram(Direction::ToServer, b"\x00\x01name\x00octet"));
        assert!(!t.datagram(Direction::ToClient, b"\x00\x01name\x00octet\x00"));
        assert!(!t.datagram(Direction::ToServer, b"\x00"));
        assert_eq!(t.txs.len(), 2);
    }
}
