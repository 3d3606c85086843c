//! The pcapng format, read as libpcap reads it.
//!
//! A file is a sequence of blocks: `type, total length, body, total length`. A section
//! header block (SHB) opens each section; interface description blocks (IDB) declare the
//! link type, snap length and time resolution of the interfaces that packet blocks
//! (enhanced, simple, and the obsolete packet block) refer to by index. Other blocks are
//! skipped. The reader stops with an error where libpcap does: a block shorter than its
//! header or its fixed fields, a length that is not a multiple of 4 or over the largest
//! block, trailer and header lengths that differ, a malformed time option, a packet
//! before any interface or on an undeclared one, a captured length over the snap length
//! or the block, a section of another byte order or major version. One difference, on
//! purpose: libpcap refuses an interface whose link type or snap length differs from the
//! first interface's; this reader goes on, and each frame carries its own link type.

use super::{ByteOrder, Frame, Input, max_snaplen_for_link};
use std::time::Duration;

const SHB: u32 = 0x0a0d_0d0a;
const IDB: u32 = 0x0000_0001;
const PB: u32 = 0x0000_0002;
const SPB: u32 = 0x0000_0003;
const EPB: u32 = 0x0000_0006;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;

/// The largest block before the first interface is known.
const MAX_BLOCK: u32 = 16 << 20;
/// The largest first section header block.
const MAX_FIRST_SHB: u32 = 1 << 20;

/// Whether four bytes start a pcapng file.
pub(super) fn is_magic(m: [u8; 4]) -> bool {
    u32::from_le_bytes(m) == SHB
}

/// An interface of the current section.
#[derive(Debug, Clone, Copy)]
struct Interface {
    linktype: u32,
    snaplen: u32,
    /// Timestamp units per second: `10^n`, or `2^n` when `binary`.
    units: u64,
    binary: bool,
    /// Seconds added to every timestamp (`if_tsoffset`).
    offset: i64,
}

impl Interface {
    /// A timestamp of `ticks` units, to the microsecond as libpcap gives it (including
    /// its arithmetic for binary resolutions); decimal resolutions keep their
    /// nanoseconds.
    fn time(&self, ticks: u64) -> Duration {
        let secs = (ticks / self.units).wrapping_add(self.offset as u64);
        let frac = ticks % self.units;
        let nanos = if self.binary {
            frac.wrapping_mul(1_000_000) / self.units * 1000
        } else {
            (u128::from(frac) * 1_000_000_000 / u128::from(self.units)) as u64
        };
        Duration::new(secs, nanos as u32)
    }
}

/// The state of one pcapng file being read.
#[derive(Debug)]
pub(super) struct Reader {
    order: ByteOrder,
    /// The interfaces of the current section.
    interfaces: Vec<Interface>,
    /// The link type of the file's first interface: before one, a packet is an error.
    first_linktype: Option<u32>,
    max_block: u32,
    /// The body of the block being read (between its length and its trailer), reused.
    block: Vec<u8>,
}

impl Reader {
    /// Reads the first section header (its type, the file's first four bytes, already
    /// read).
    pub(super) fn open(input: &mut Input) -> Result<Reader, String> {
        let mut head = [0u8; 8];
        let got = input.fill(&mut head)?;
        if got < head.len() {
            return Err(truncated(8, got as u64));
        }
        let order = match byte_order(&head[4..]) {
            Some(order) => order,
            None => return Err("section header block with an unknown byte-order magic".into()),
        };
        let total = order.u32(&head, 0);
        if !(28..=MAX_FIRST_SHB).contains(&total) {
            return Err(format!(
                "Section Header Block in pcapng dump file has invalid length {total}"
            ));
        }
        let mut r = Reader {
            order,
            interfaces: Vec::new(),
            first_linktype: None,
            max_block: MAX_BLOCK,
            block: Vec::new(),
        };
        // The rest of the block, trailer included; libpcap does not check this block's
        // trailer.
        let want = u64::from(total - 12);
        let got = input.read_into(want, &mut r.block)?;
        if got < want {
            return Err(truncated(want, got));
        }
        let (major, minor) = (order.u16(&r.block, 0), order.u16(&r.block, 2));
        if !(major == 1 && (minor == 0 || minor == 2)) {
            return Err(format!(
                "unsupported pcapng savefile version {major}.{minor}"
            ));
        }
        Ok(r)
    }

    /// Reads blocks up to the next packet and fills `frame` with it: `Ok(false)` at a
    /// clean end of file.
    pub(super) fn next(&mut self, input: &mut Input, frame: &mut Frame) -> Result<bool, String> {
        loop {
            let Some(kind) = self.read_block(input)? else {
                if self.first_linktype.is_none() {
                    return Err("the capture file has no Interface Description Blocks".into());
                }
                return Ok(false);
            };
            match kind {
                SHB => self.section_header()?,
                IDB => self.interface()?,
                EPB => return self.packet(frame, Layout::Enhanced).map(|()| true),
                PB => return self.packet(frame, Layout::Obsolete).map(|()| true),
                SPB => return self.simple_packet(frame).map(|()| true),
                _ => {}
            }
        }
    }

    /// Reads a block into `self.block` and returns its type: `None` at the end of the
    /// file.
    fn read_block(&mut self, input: &mut Input) -> Result<Option<u32>, String> {
        let mut head = [0u8; 8];
        let got = input.fill(&mut head)?;
        if got == 0 {
            return Ok(None);
        }
        if got < head.len() {
            return Err(truncated(8, got as u64));
        }
        let kind = self.order.u32(&head, 0);
        let total = self.order.u32(&head, 4);
        if total < 12 {
            return Err(format!(
                "block in pcapng dump file has a length of {total} < 12"
            ));
        }
        if !total.is_multiple_of(4) {
            return Err(format!(
                "block in pcapng dump file has a length of {total} that is not a multiple of 4"
            ));
        }
        if total > self.max_block {
            return Err(format!(
                "pcapng block size {total} > maximum {}",
                self.max_block
            ));
        }
        let want = u64::from(total - 8);
        let got = input.read_into(want, &mut self.block)?;
        if got < want {
            return Err(truncated(want, got));
        }
        let body = self.block.len() - 4;
        let trailer = self.order.u32(&self.block, body);
        if trailer != total {
            return Err(format!(
                "block total length in header {total} and trailer {trailer} don't match"
            ));
        }
        self.block.truncate(body);
        Ok(Some(kind))
    }

    /// A section header after the first: same byte order, major version 1; its
    /// interfaces replace the previous section's.
    fn section_header(&mut self) -> Result<(), String> {
        let b = self.fixed(SHB, 16)?;
        match byte_order(&b[..4]) {
            Some(o) if o == self.order => {}
            Some(_) => return Err("the file has sections with different byte orders".into()),
            None => {
                return Err("the file has a section with a bad byte order magic field".into());
            }
        }
        let major = self.order.u16(b, 4);
        if major != 1 {
            return Err(format!(
                "unknown pcapng savefile major version number {major}"
            ));
        }
        self.interfaces.clear();
        Ok(())
    }

    /// An interface description block: link type, snap length and time options.
    fn interface(&mut self) -> Result<(), String> {
        let b = self.fixed(IDB, 8)?;
        let linktype = u32::from(self.order.u16(b, 0));
        let max = max_snaplen_for_link(linktype);
        let snaplen = match self.order.u32(b, 4) {
            0 => max,
            s => s.min(max),
        };
        let mut iface = Interface {
            linktype,
            snaplen,
            units: 1_000_000,
            binary: false,
            offset: 0,
        };
        self.time_options(&mut iface)?;
        if self.first_linktype.is_none() {
            // The first interface may raise the largest block to fit its largest packet.
            let fits = 8 + 20 + max + 131_072 + 4;
            self.max_block = self.max_block.max(fits);
        }
        self.interfaces.push(iface);
        self.first_linktype.get_or_insert(linktype);
        Ok(())
    }

    /// Reads `if_tsresol` and `if_tsoffset` from an interface's options, which must be
    /// well formed up to `opt_endofopt` or the end of the block.
    fn time_options(&self, iface: &mut Interface) -> Result<(), String> {
        let b = &self.block;
        let (mut at, mut saw_resol, mut saw_offset) = (8, false, false);
        while at < b.len() {
            if at + 4 > b.len() {
                return Err(too_short(IDB));
            }
            let code = self.order.u16(b, at);
            let len = usize::from(self.order.u16(b, at + 2));
            let value = at + 4;
            at = value + len.next_multiple_of(4);
            if at > b.len() {
                return Err(too_short(IDB));
            }
            let value = &b[value..value + len];
            match code {
                0 if len != 0 => {
                    return Err(format!(
                        "Interface Description Block has opt_endofopt option with length {len} != 0"
                    ));
                }
                0 => break,
                9 => {
                    if len != 1 || saw_resol {
                        return Err(
                            "Interface Description Block has a bad if_tsresol option".into()
                        );
                    }
                    saw_resol = true;
                    let v = value[0];
                    iface.binary = v & 0x80 != 0;
                    let exp = u32::from(v & 0x7f);
                    iface.units = match (iface.binary, exp) {
                        (true, 0..=63) => 1 << exp,
                        (false, 0..=19) => 10u64.pow(exp),
                        _ => {
                            return Err(format!(
                                "Interface Description Block if_tsresol option resolution {v:#04x} is too high"
                            ));
                        }
                    };
                }
                14 => {
                    if len != 8 || saw_offset {
                        return Err(
                            "Interface Description Block has a bad if_tsoffset option".into()
                        );
                    }
                    saw_offset = true;
                    iface.offset = self.order.u64(value, 0) as i64;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// An enhanced or obsolete packet block.
    fn packet(&self, frame: &mut Frame, layout: Layout) -> Result<(), String> {
        let kind = match layout {
            Layout::Enhanced => EPB,
            Layout::Obsolete => PB,
        };
        let b = self.fixed(kind, 20)?;
        let iface = match layout {
            Layout::Enhanced => self.order.u32(b, 0),
            Layout::Obsolete => u32::from(self.order.u16(b, 0)),
        };
        let iface = self.interface_at(iface)?;
        let ticks = (u64::from(self.order.u32(b, 4)) << 32) | u64::from(self.order.u32(b, 8));
        let caplen = self.order.u32(b, 12);
        let len = self.order.u32(b, 16);
        self.fill(frame, iface, 20, caplen, len)?;
        frame.ts = iface.time(ticks);
        Ok(())
    }

    /// A simple packet block: interface 0, no timestamp (the interface's offset, as
    /// libpcap gives it), and as many bytes as the original length or the snap length
    /// allows.
    fn simple_packet(&self, frame: &mut Frame) -> Result<(), String> {
        let b = self.fixed(SPB, 4)?;
        let iface = self.interface_at(0)?;
        let len = self.order.u32(b, 0);
        self.fill(frame, iface, 4, len.min(iface.snaplen), len)?;
        frame.ts = iface.time(0);
        Ok(())
    }

    /// Fills `frame` with `caplen` bytes of the block from `at`.
    fn fill(
        &self,
        frame: &mut Frame,
        iface: Interface,
        at: usize,
        caplen: u32,
        len: u32,
    ) -> Result<(), String> {
        if caplen > iface.snaplen {
            return Err(format!(
                "invalid packet capture length {caplen}, bigger than snaplen of {}",
                iface.snaplen
            ));
        }
        let Some(data) = self.block.get(at..at + caplen as usize) else {
            return Err(too_short(EPB));
        };
        frame.data.clear();
        frame.data.extend_from_slice(data);
        frame.orig_len = len;
        frame.linktype = iface.linktype;
        Ok(())
    }

    /// The block's body, which must hold at least the `need` bytes of its fixed part.
    fn fixed(&self, kind: u32, need: usize) -> Result<&[u8], String> {
        if self.block.len() < need {
            return Err(too_short(kind));
        }
        Ok(&self.block)
    }

    pub(super) fn first_linktype(&self) -> Option<u32> {
        self.first_linktype
    }

    fn interface_at(&self, i: u32) -> Result<Interface, String> {
        if self.first_linktype.is_none() {
            return Err(
                "the capture file has a packet block before any Interface Description Blocks"
                    .into(),
            );
        }
        self.interfaces.get(i as usize).copied().ok_or_else(|| {
            format!(
                "a packet arrived on interface {i}, but there's no Interface Description Block for that interface"
            )
        })
    }
}

/// Where a packet block keeps its interface index.
#[derive(Clone, Copy)]
enum Layout {
    /// Enhanced packet block: a 32-bit interface index.
    Enhanced,
    /// The obsolete packet block: a 16-bit index, then a 16-bit drop count.
    Obsolete,
}

/// The byte order a byte-order magic field announces.
fn byte_order(magic: &[u8]) -> Option<ByteOrder> {
    let m = [magic[0], magic[1], magic[2], magic[3]];
    if u32::from_le_bytes(m) == BYTE_ORDER_MAGIC {
        Some(ByteOrder { big_endian: false })
    } else if u32::from_be_bytes(m) == BYTE_ORDER_MAGIC {
        Some(ByteOrder { big_endian: true })
    } else {
        None
    }
}

fn truncated(want: u64, got: u64) -> String {
    format!("truncated pcapng dump file; tried to read {want} bytes, only got {got}")
}

fn too_short(kind: u32) -> String {
    format!("block of type {kind} in pcapng dump file is too short")
}
