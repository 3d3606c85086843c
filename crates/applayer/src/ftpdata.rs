//! FTP data channels (Suricata's `ftp-data`): a TCP flow that an FTP control flow
//! announced (`PASV`, `PORT`, ...; the detector's `expect` table names it). Its bytes,
//! in the one direction that carries them, are one file and one transaction; the
//! control flow's command (`RETR`, `STOR`, `LIST`, ...) and the file's name describe it
//! once the detector hands them over ([`FtpData::describe`]), as Suricata names a data
//! channel by the command that opened it.

use crate::txs::{Numbered, Txs};
use netsieve_wire::Direction;

/// A file's bytes kept for inspection (`file.data`) at most; its size counts them all.
pub const MAX_DATA: usize = 1 << 20;

/// The data channel's transfer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    /// The control flow's command that opened the channel, as sent (`RETR`).
    pub command: Option<Vec<u8>>,
    /// The file it names, if any (`LIST` and `NLST` name none).
    pub filename: Option<Vec<u8>>,
    /// The direction the bytes go, once some came.
    pub dir: Option<Direction>,
    /// The first [`MAX_DATA`] bytes.
    pub data: Vec<u8>,
    /// Every byte's count.
    pub size: u64,
    /// The direction carrying the bytes ended (or the flow did).
    pub closed: bool,
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

impl Tx {
    /// The transfer's command as `ftpdata_command` compares it: 1 for `RETR`, 2 for
    /// `STOR`, 3 for any other, 0 before the command is known.
    pub fn command_code(&self) -> u64 {
        match self.command.as_deref() {
            None => 0,
            Some(c) if c.eq_ignore_ascii_case(b"RETR") => 1,
            Some(c) if c.eq_ignore_ascii_case(b"STOR") => 2,
            Some(_) => 3,
        }
    }
}

/// A data channel's state: at most one transfer.
#[derive(Clone, Debug, Default)]
pub struct FtpData {
    pub txs: Txs<Tx, 1>,
}

impl FtpData {
    /// In-order bytes of one direction: the file's, when they go the way the first
    /// bytes went (bytes the other way are not part of it).
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.txs.begun() == 0 {
            self.txs.begin(|id| Tx {
                id,
                ..Tx::default()
            });
        }
        let Some(t) = self.txs.back_mut() else { return };
        if t.closed || *t.dir.get_or_insert(dir) != dir {
            return;
        }
        t.size += bytes.len() as u64;
        let room = MAX_DATA.saturating_sub(t.data.len());
        t.data.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// Direction `dir` ended: the file is complete if its bytes went that way.
    pub fn close(&mut self, dir: Direction) {
        if let Some(t) = self.txs.back_mut()
            && t.dir == Some(dir)
        {
            t.closed = true;
        }
    }

    /// The flow ended: the file is complete, whatever came.
    pub fn finish(&mut self) {
        if let Some(t) = self.txs.back_mut() {
            t.closed = true;
        }
    }

    /// Whether the transfer still waits for its command.
    pub fn undescribed(&self) -> bool {
        self.txs.back().is_some_and(|t| t.command.is_none())
    }

    /// The control flow's command and file name for this channel.
    pub fn describe(&mut self, command: &[u8], filename: Option<&[u8]>) {
        if let Some(t) = self.txs.back_mut() {
            t.command = Some(command.to_vec());
            t.filename = filename.map(<[u8]>::to_vec);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_in_the_direction_of_its_first_bytes() {
        let mut f = FtpData::default();
        f.feed(Direction::ToClient, b"");
        assert!(f.txs.is_empty());
        f.feed(Direction::ToServer, b"root:x:0");
        f.feed(Direction::ToClient, b"ignored");
        f.feed(Direction::ToServer, b":0\n");
        assert!(f.undescribed());
        f.describe(b"RETR", Some(b"passwd"));
        f.close(Direction::ToClient);
        assert!(!f.txs[0].closed);
        f.close(Direction::ToServer);
        f.feed(Direction::ToServer, b"after the end");
        let t = &f.txs[0];
        assert_eq!(t.data, b"root:x:0:0\n");
        assert_eq!(
            (t.size, t.closed, t.dir),
            (11, true, Some(Direction::ToServer))
        );
        assert_eq!(
            (t.command_code(), t.filename.as_deref()),
            (1, Some(&b"passwd"[..]))
        );
    }

    #[test]
    fn a_large_file_is_counted_whole_and_kept_in_part() {
        let mut f = FtpData::default();
        let chunk = vec![b'x'; 300_000];
        for _ in 0..4 {
            f.feed(Direction::ToClient, &chunk);
        }
        assert_eq!(f.txs[0].size, 1_200_000);
        assert_eq!(f.txs[0].data.len(), MAX_DATA);
    }
}
