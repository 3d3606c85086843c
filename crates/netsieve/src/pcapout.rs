//! Writing frames to a pcap file, as tcpdump -w writes one: little-endian, microsecond
//! timestamps, the link type of the first frame written (or, when none is, of the input),
//! and the snap length asked for. Used by `filter -w` and `firewall -w`.
//!
//! Errors name the file; an error's kind is kept, so a reader that has gone away
//! (`-w - | head`) can be told from a full disk.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use netsieve_packet::capture::Frame;

pub struct PcapOut {
    path: PathBuf,
    snaplen: u32,
    /// The open output and its link type, from the first frame (or `finish`).
    writer: Option<(Box<dyn Write>, u32)>,
}

impl PcapOut {
    /// A writer to `path` (- for standard output); the file is created at the first
    /// frame, or by `finish` when there is none. A snap length of 0 means 262,144, as
    /// for tcpdump.
    pub fn new(path: &Path, snaplen: u32) -> PcapOut {
        PcapOut {
            path: path.to_path_buf(),
            snaplen: if snaplen == 0 { 262_144 } else { snaplen },
            writer: None,
        }
    }

    fn name(&self) -> String {
        if self.path.as_os_str() == "-" {
            "standard output".into()
        } else {
            self.path.display().to_string()
        }
    }

    /// An error about this file, of the same kind.
    fn error(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("{}: {e}", self.name()))
    }

    /// Creates the file and writes its header.
    fn open(&mut self, linktype: u32) -> io::Result<()> {
        let mut w: Box<dyn Write> = if self.path.as_os_str() == "-" {
            Box::new(BufWriter::new(io::stdout()))
        } else {
            Box::new(BufWriter::new(File::create(&self.path)?))
        };
        let mut header = Vec::with_capacity(24);
        header.extend(0xa1b2_c3d4_u32.to_le_bytes());
        header.extend(2u16.to_le_bytes());
        header.extend(4u16.to_le_bytes());
        header.extend([0; 8]);
        header.extend(self.snaplen.to_le_bytes());
        header.extend(linktype.to_le_bytes());
        w.write_all(&header)?;
        self.writer = Some((w, linktype));
        Ok(())
    }

    /// Writes the first `keep` bytes of `fr`.
    pub fn write(&mut self, fr: &Frame, keep: usize) -> io::Result<()> {
        if self.writer.is_none() {
            self.open(fr.linktype).map_err(|e| self.error(e))?;
        }
        let Some((w, wlt)) = self.writer.as_mut() else {
            return Ok(());
        };
        if *wlt != fr.linktype {
            let msg = format!(
                "cannot write link type {} into a pcap file of link type {wlt}",
                fr.linktype
            );
            return Err(self.error(io::Error::other(msg)));
        }
        let data = &fr.data[..keep.min(fr.data.len())];
        let mut record = [0u8; 16];
        record[0..4].copy_from_slice(&(fr.ts.as_secs() as u32).to_le_bytes());
        record[4..8].copy_from_slice(&fr.ts.subsec_micros().to_le_bytes());
        record[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
        record[12..16].copy_from_slice(&fr.orig_len.to_le_bytes());
        let r = w.write_all(&record).and_then(|()| w.write_all(data));
        r.map_err(|e| self.error(e))
    }

    /// Flushes the file; when no frame was written, creates it with no packets and
    /// `linktype`, as tcpdump does.
    pub fn finish(mut self, linktype: u32) -> io::Result<()> {
        if self.writer.is_none() {
            self.open(linktype).map_err(|e| self.error(e))?;
        }
        let r = match self.writer.as_mut() {
            Some((w, _)) => w.flush(),
            None => Ok(()),
        };
        r.map_err(|e| self.error(e))
    }
}
