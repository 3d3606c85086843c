//! Writing frames to a pcap file, opened at the first frame (whose link type the file
//! takes). Used by `filter -w` and `firewall -w`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use netsieve_packet::capture::Frame;
use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};

pub struct PcapOut {
    path: PathBuf,
    snaplen: u32,
    writer: Option<(PcapWriter<Box<dyn Write>>, u32)>,
}

impl PcapOut {
    /// A writer to `path` (- for standard output); nothing is created before the first
    /// frame.
    pub fn new(path: &Path, snaplen: u32) -> PcapOut {
        PcapOut {
            path: path.to_path_buf(),
            snaplen,
            writer: None,
        }
    }

    /// Writes the first `keep` bytes of `fr`.
    pub fn write(&mut self, fr: &Frame, keep: usize) -> Result<(), String> {
        let lt = fr.linktype;
        if self.writer.is_none() {
            let path = &self.path;
            let file: Box<dyn Write> = if path.as_os_str() == "-" {
                Box::new(BufWriter::new(io::stdout()))
            } else {
                Box::new(BufWriter::new(
                    File::create(path).map_err(|e| format!("{}: {e}", path.display()))?,
                ))
            };
            let header = PcapHeader {
                snaplen: self.snaplen.max(65_535),
                datalink: DataLink::from(lt),
                ..Default::default()
            };
            let w = PcapWriter::with_header(file, header).map_err(|e| e.to_string())?;
            self.writer = Some((w, lt));
        }
        let Some((w, wlt)) = self.writer.as_mut() else {
            return Ok(());
        };
        if *wlt != lt {
            return Err(format!(
                "cannot write link type {lt} into a pcap file of link type {wlt}"
            ));
        }
        let keep = keep.min(fr.data.len());
        w.write_packet(&PcapPacket::new(fr.ts, fr.orig_len, &fr.data[..keep]))
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    /// Flushes the file, if one was opened.
    pub fn finish(self) -> Result<(), String> {
        if let Some((w, _)) = self.writer {
            w.into_writer().flush().map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}
