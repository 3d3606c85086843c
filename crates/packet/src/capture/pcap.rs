//! The classic pcap format, read as libpcap reads it (pcap-savefile(5)).
//!
//! libpcap is lenient where real captures are odd and strict only where reading on would
//! be guesswork, and this reader keeps the same line:
//! - a record's original length may exceed the snap length (every capture taken with
//!   `tcpdump -s`), and its microseconds may exceed a second: neither is checked;
//! - a record whose captured length exceeds the file's snap length, but not the largest
//!   packet the link type allows, is cut to the snap length and the rest skipped;
//! - a captured length beyond the link type's largest packet, or a record cut short by the
//!   end of the file, ends the file with an error;
//! - versions before 2.3, and 543.0 (DG/UX), store the two lengths the other way round;
//!   2.3 files may do either, and a captured length above the original one tells.

use super::{ByteOrder, Frame, Input, max_snaplen_for_link};
use std::time::Duration;

/// Magic numbers as read in the file's own byte order (microseconds, nanoseconds, and
/// Alexey Kuznetzov's patched format with 8 more bytes per record).
const MAGIC_USEC: u32 = 0xa1b2_c3d4;
const MAGIC_NSEC: u32 = 0xa1b2_3c4d;
const MAGIC_KUZNETZOV: u32 = 0xa1b2_cd34;

/// Whether four bytes start a pcap file, in either byte order.
pub(super) fn is_magic(m: [u8; 4]) -> bool {
    let le = u32::from_le_bytes(m);
    let be = u32::from_be_bytes(m);
    [le, be]
        .iter()
        .any(|v| matches!(*v, MAGIC_USEC | MAGIC_NSEC | MAGIC_KUZNETZOV))
}

/// How a record stores its two lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lengths {
    /// Captured, then original (version 2.4 and 2.3 files written by newer tools).
    InOrder,
    /// Original, then captured (before 2.3, and 543.0).
    Swapped,
    /// Version 2.3: swapped when the captured length comes out larger.
    MaybeSwapped,
}

/// The state of one pcap file being read: its header's facts.
#[derive(Debug)]
pub(super) struct Reader {
    order: ByteOrder,
    nanos: bool,
    record_len: usize,
    lengths: Lengths,
    linktype: u32,
    snaplen: u32,
}

impl Reader {
    /// Reads the file header (its first four bytes, `magic`, already read).
    pub(super) fn open(magic: [u8; 4], input: &mut Input) -> Result<Reader, String> {
        let mut rest = [0u8; 20];
        let got = input.fill(&mut rest)?;
        if got < rest.len() {
            return Err(format!(
                "truncated dump file; tried to read 24 file header bytes, only got {}",
                got + 4
            ));
        }
        let big_endian = !is_magic_le(magic);
        let order = ByteOrder { big_endian };
        let magic = order.u32(&magic, 0);
        let (major, minor) = (order.u16(&rest, 0), order.u16(&rest, 2));
        if major < 2 {
            return Err("archaic pcap savefile format".into());
        }
        if !((major == 2 && minor <= 4) || (major == 543 && minor == 0)) {
            return Err(format!("unsupported pcap savefile version {major}.{minor}"));
        }
        let lengths = match (major, minor) {
            (2, 0..=2) | (543, _) => Lengths::Swapped,
            (2, 3) => Lengths::MaybeSwapped,
            _ => Lengths::InOrder,
        };
        // The link type is the low 16 bits; the upper ones carry the FCS length and
        // reserved flags.
        let linktype = order.u32(&rest, 16) & 0xffff;
        let max = max_snaplen_for_link(linktype);
        let mut snaplen = match order.u32(&rest, 12) {
            0 => max,
            s if s > max => max,
            s => s,
        };
        if magic == MAGIC_KUZNETZOV && linktype == 1 {
            // The patched libpcap may have captured in cooked mode and added an
            // Ethernet header to at most a snap length of data.
            snaplen += 14;
        }
        Ok(Reader {
            order,
            nanos: magic == MAGIC_NSEC,
            record_len: if magic == MAGIC_KUZNETZOV { 24 } else { 16 },
            lengths,
            linktype,
            snaplen,
        })
    }

    pub(super) fn linktype(&self) -> u32 {
        self.linktype
    }

    /// Reads the next record into `frame`: `Ok(false)` at a clean end of file.
    pub(super) fn next(&mut self, input: &mut Input, frame: &mut Frame) -> Result<bool, String> {
        let mut head = [0u8; 24];
        let head = &mut head[..self.record_len];
        let got = input.fill(head)?;
        if got == 0 {
            return Ok(false);
        }
        if got < head.len() {
            return Err(format!(
                "truncated dump file; tried to read {} header bytes, only got {got}",
                head.len()
            ));
        }
        let field = |i: usize| self.order.u32(head, i * 4);
        let (secs, frac) = (field(0), field(1));
        let (mut caplen, mut len) = (field(2), field(3));
        let swap = match self.lengths {
            Lengths::InOrder => false,
            Lengths::Swapped => true,
            Lengths::MaybeSwapped => caplen > len,
        };
        if swap {
            std::mem::swap(&mut caplen, &mut len);
        }
        let max = max_snaplen_for_link(self.linktype);
        if caplen > max {
            return Err(if caplen > self.snaplen {
                format!(
                    "invalid packet capture length {caplen}, bigger than snaplen of {}",
                    self.snaplen
                )
            } else {
                format!("invalid packet capture length {caplen}, bigger than maximum of {max}")
            });
        }
        let keep = caplen.min(self.snaplen);
        let got = input.read_into(u64::from(keep), &mut frame.data)?;
        if got < u64::from(keep) {
            return Err(short_record(keep, got));
        }
        if keep < caplen {
            let got = input.skip(u64::from(caplen - keep))?;
            if got < u64::from(caplen - keep) {
                return Err(short_record(caplen - keep, got));
            }
        }
        let frac = if self.nanos {
            Duration::from_nanos(u64::from(frac))
        } else {
            Duration::from_micros(u64::from(frac))
        };
        frame.ts = Duration::from_secs(u64::from(secs)) + frac;
        frame.orig_len = len;
        frame.linktype = self.linktype;
        Ok(true)
    }
}

fn is_magic_le(m: [u8; 4]) -> bool {
    matches!(
        u32::from_le_bytes(m),
        MAGIC_USEC | MAGIC_NSEC | MAGIC_KUZNETZOV
    )
}

fn short_record(want: u32, got: u64) -> String {
    format!("truncated dump file; tried to read {want} captured bytes, only got {got}")
}
