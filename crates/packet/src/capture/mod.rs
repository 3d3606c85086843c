//! Reading frames from pcap and pcapng captures, one file or several as one stream.

//!
//! Both formats are read by this module's own readers, which follow libpcap: they read
//! every packet libpcap reads and stop, with libpcap's message, where libpcap stops
//! (`tests/libpcap_counts.rs` checks this against libpcap on every capture of the shared
//! corpora). Memory per file is bounded: one record of at most the link type's largest
//! packet (256 KiB for most), or one pcapng block of at most 16 MiB.

#[cfg(target_os = "linux")]
mod live;
#[cfg(target_os = "linux")]
mod nfqueue;
mod pcap;
mod pcapng;

#[cfg(target_os = "linux")]
pub use live::{Bridge, Interface, LiveOptions};
#[cfg(target_os = "linux")]
pub use nfqueue::NfQueue;

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One captured frame. [`Capture::next`] refills the same value, reusing its buffer.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// Time since the Unix epoch.
    pub ts: Duration,
    /// The link type of the frame (LINKTYPE_* numbers: 1 Ethernet, 101 raw IP, 113 Linux
    /// cooked, 276 Linux cooked v2, 0 null, 108 loopback).
    pub linktype: u32,
    /// Length on the wire (may exceed `data.len()` when the capture was truncated).
    pub orig_len: u32,
    pub data: Vec<u8>,
}

/// What asking a source for a frame gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// A frame, in the caller's [`Frame`].
    Frame,
    /// Nothing for a while (a live source): time to look around, then ask again.
    Idle,
    /// The source ended (the last capture file was read).
    End,
}

/// Where a run's frames come from: capture files read as one stream, or a live
/// interface.
pub enum FrameSource {
    Files(Capture),
    #[cfg(target_os = "linux")]
    Live(Interface),
    /// Two interfaces bridged inline: frames are forwarded unless dropped.
    #[cfg(target_os = "linux")]
    Inline(Bridge),
    /// A netfilter queue: each packet waits for its verdict.
    #[cfg(target_os = "linux")]
    Queue(NfQueue),
}

impl FrameSource {
    pub fn next(&mut self, frame: &mut Frame) -> Result<Next, CaptureError> {
        match self {
            FrameSource::Files(c) => Ok(if c.next(frame)? {
                Next::Frame
            } else {
                Next::End
            }),
            #[cfg(target_os = "linux")]
            FrameSource::Live(i) => i.next(frame),
            #[cfg(target_os = "linux")]
            FrameSource::Inline(b) => b.next(frame),
            #[cfg(target_os = "linux")]
            FrameSource::Queue(q) => q.next(frame),
        }
    }

    /// The verdict on the last frame read: inline, a frame that passes is sent on to the
    /// other interface, a queued packet is accepted; otherwise it is dropped. Sources
    /// that only watch have nothing to do.
    pub fn verdict(&mut self, frame: &Frame, pass: bool) -> Result<(), CaptureError> {
        match self {
            #[cfg(target_os = "linux")]
            FrameSource::Inline(b) if pass => b.forward(frame),
            #[cfg(target_os = "linux")]
            FrameSource::Queue(q) => q.verdict(pass),
            _ => Ok(()),
        }
    }

    /// Packets wait for a verdict (inline and queue): detection must answer for each
    /// before the next.
    pub fn needs_verdicts(&self) -> bool {
        match self {
            FrameSource::Files(_) => false,
            #[cfg(target_os = "linux")]
            FrameSource::Live(_) => false,
            #[cfg(target_os = "linux")]
            FrameSource::Inline(_) | FrameSource::Queue(_) => true,
        }
    }

    /// The file or interface being read.
    pub fn name(&self) -> &str {
        match self {
            FrameSource::Files(c) => c.file_name(),
            #[cfg(target_os = "linux")]
            FrameSource::Live(i) => i.name(),
            #[cfg(target_os = "linux")]
            FrameSource::Inline(b) => b.side_name(),
            #[cfg(target_os = "linux")]
            FrameSource::Queue(q) => q.name(),
        }
    }

    pub fn is_live(&self) -> bool {
        !matches!(self, FrameSource::Files(_))
    }

    /// The interfaces read: none for files and queues, one live, two inline.
    pub fn interfaces(&self) -> Vec<&str> {
        match self {
            #[cfg(target_os = "linux")]
            FrameSource::Live(i) => vec![i.name()],
            #[cfg(target_os = "linux")]
            FrameSource::Inline(b) => b.names().to_vec(),
            _ => Vec::new(),
        }
    }

    /// Suricata's name for the capture mode (its socket's `capture-mode`).
    pub fn capture_mode(&self) -> &'static str {
        match self {
            FrameSource::Files(_) => "PCAP_FILE",
            #[cfg(target_os = "linux")]
            FrameSource::Live(_) | FrameSource::Inline(_) => "AF_PACKET_DEV",
            #[cfg(target_os = "linux")]
            FrameSource::Queue(_) => "NFQ",
        }
    }

    /// Inline: frames that could not be sent on (larger than the interface's MTU, or its
    /// queue full).
    pub fn send_failures(&self) -> u64 {
        match self {
            #[cfg(target_os = "linux")]
            FrameSource::Inline(b) => b.send_failures(),
            _ => 0,
        }
    }

    /// For a live interface: frames the kernel passed and dropped so far.
    pub fn kernel_stats(&self) -> Option<(u64, u64)> {
        match self {
            FrameSource::Files(_) => None,
            #[cfg(target_os = "linux")]
            FrameSource::Live(i) => i.kernel_stats(),
            #[cfg(target_os = "linux")]
            FrameSource::Inline(b) => b.kernel_stats(),
            #[cfg(target_os = "linux")]
            FrameSource::Queue(_) => None,
        }
    }
}

/// A capture that could not be opened or read. Names the file and, for damage inside a
/// file, the packet number (1-based, counted within that file) where reading stopped.
#[derive(Debug)]
pub struct CaptureError {
    pub file: String,
    pub packet: Option<u64>,
    pub message: String,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.packet {
            Some(n) => write!(f, "{}: packet {n}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for CaptureError {}

/// A sequence of capture files read as one stream of frames, in the order given.
pub struct Capture {
    sources: Vec<Source>,
    next_source: usize,
    current: Option<Open>,
    /// Frames read from the current file.
    in_file: u64,
    /// Frames read in all.
    total: u64,
    /// The link type the last file read declared (pcap header, first pcapng interface).
    declared: Option<u32>,
}

/// Where a capture's bytes come from.
enum Source {
    File(PathBuf),
    Stdin,
    /// Bytes from a reader, taken when its turn comes.
    Reader(String, Option<Box<dyn Read + Send>>),
}

/// The file being read.
struct Open {
    name: String,
    input: Input,
    format: Format,
}

enum Format {
    Pcap(pcap::Reader),
    PcapNg(pcapng::Reader),
}

impl Format {
    fn linktype(&self) -> Option<u32> {
        match self {
            Format::Pcap(r) => Some(r.linktype()),
            Format::PcapNg(r) => r.first_linktype(),
        }
    }
}

/// Opens `-` as standard input, a directory as its files in name order, else the file.
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, CaptureError> {
    let mut out = Vec::new();
    for p in inputs {
        if p.as_os_str() != "-" && p.is_dir() {
            let rd = std::fs::read_dir(p).map_err(|e| err(p, None, e.to_string()))?;
            let mut files: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && looks_like_capture(p))
                .collect();
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Whether a file starts with a pcap or pcapng magic number (directories may hold
/// other files: licences, notes).
fn looks_like_capture(p: &Path) -> bool {
    let mut m = [0u8; 4];
    File::open(p).and_then(|mut f| f.read_exact(&mut m)).is_ok()
        && (pcap::is_magic(m) || pcapng::is_magic(m))
}

fn err(p: &Path, packet: Option<u64>, message: String) -> CaptureError {
    CaptureError {
        file: p.display().to_string(),
        packet,
        message,
    }
}

/// The largest captured length libpcap accepts for a link type: 256 KiB, more for the
/// few link types whose frames are larger.
fn max_snaplen_for_link(linktype: u32) -> u32 {
    match linktype {
        // D-Bus messages
        231 => 128 << 20,
        // Elektrobit high-speed capture
        279 => 8 << 20,
        // USBPcap
        249 => 1 << 20,
        _ => 256 << 10,
    }
}

/// A file's byte order, for the fields of its headers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ByteOrder {
    big_endian: bool,
}

impl ByteOrder {
    fn u16(self, b: &[u8], at: usize) -> u16 {
        let v = [b[at], b[at + 1]];
        if self.big_endian {
            u16::from_be_bytes(v)
        } else {
            u16::from_le_bytes(v)
        }
    }

    fn u32(self, b: &[u8], at: usize) -> u32 {
        let v = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if self.big_endian {
            u32::from_be_bytes(v)
        } else {
            u32::from_le_bytes(v)
        }
    }

    fn u64(self, b: &[u8], at: usize) -> u64 {
        let hi = u64::from(self.u32(b, at));
        let lo = u64::from(self.u32(b, at + 4));
        if self.big_endian {
            (hi << 32) | lo
        } else {
            (lo << 32) | hi
        }
    }
}

/// Records up to this long are read straight into their buffer: every packet of a
/// capture with a usual snap length.
const DIRECT_READ: u64 = 256 << 10;

/// A byte source with the reads the format readers need: as many bytes as there are,
/// and how many there were when the input ends early.
pub(super) struct Input {
    r: BufReader<Box<dyn Read + Send>>,
}

impl Input {
    fn new(r: Box<dyn Read + Send>) -> Input {
        Input {
            r: BufReader::with_capacity(1 << 16, r),
        }
    }

    /// Fills `buf` as far as the input goes; returns the number of bytes read.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, String> {
        let mut got = 0;
        while got < buf.len() {
            match self.r.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("error reading dump file: {e}")),
            }
        }
        Ok(got)
    }

    /// Replaces `out` with the next `n` bytes, or as many as there are; returns how many.
    /// Past [`DIRECT_READ`] bytes, `out` grows with what is read, not with `n` (a
    /// damaged length may claim far more than the file holds).
    fn read_into(&mut self, n: u64, out: &mut Vec<u8>) -> Result<u64, String> {
        if n <= DIRECT_READ {
            // Most records lie whole in the reader's buffer: copied once from there.
            if let Ok(held) = self.r.fill_buf()
                && held.len() as u64 >= n
            {
                out.clear();
                out.extend_from_slice(&held[..n as usize]);
                self.r.consume(n as usize);
                return Ok(n);
            }
            // Read in place: `read_to_end`'s probing and growth cost 2.7% of a scan.
            out.resize(n as usize, 0);
            let got = self.fill(out)?;
            out.truncate(got);
            return Ok(got as u64);
        }
        out.clear();
        (&mut self.r)
            .take(n)
            .read_to_end(out)
            .map(|got| got as u64)
            .map_err(|e| format!("error reading dump file: {e}"))
    }

    /// Skips `n` bytes, or as many as there are; returns how many.
    fn skip(&mut self, n: u64) -> Result<u64, String> {
        io::copy(&mut (&mut self.r).take(n), &mut io::sink())
            .map_err(|e| format!("error reading dump file: {e}"))
    }
}

impl Capture {
    /// A capture over `inputs` (files, directories, or `-` for standard input). Every
    /// file is opened up front, so a mistyped name fails before any packet is processed
    /// (and before the caller creates its outputs). A file that is not a capture, or is
    /// damaged, is reported by [`Capture::next`] when its turn comes.
    pub fn open(inputs: &[PathBuf]) -> Result<Capture, CaptureError> {
        let sources = expand_inputs(inputs)?;
        if sources.is_empty() {
            return Err(CaptureError {
                file: inputs
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                packet: None,
                message: "no capture files".into(),
            });
        }
        for s in &sources {
            if s.as_os_str() != "-" {
                File::open(s).map_err(|e| err(s, None, e.to_string()))?;
            }
        }
        let sources = sources
            .into_iter()
            .map(|p| {
                if p.as_os_str() == "-" {
                    Source::Stdin
                } else {
                    Source::File(p)
                }
            })
            .collect();
        Ok(Capture {
            sources,
            next_source: 0,
            current: None,
            in_file: 0,
            total: 0,
            declared: None,
        })
    }

    /// A capture of the bytes `reader` yields, named `name` in errors.
    pub fn from_reader(name: &str, reader: Box<dyn Read + Send>) -> Capture {
        Capture {
            sources: vec![Source::Reader(name.to_string(), Some(reader))],
            next_source: 0,
            current: None,
            in_file: 0,
            total: 0,
            declared: None,
        }
    }

    /// Opens the next file and reads its header: `Ok(false)` when none is left.
    fn open_next(&mut self) -> Result<bool, CaptureError> {
        let Some(source) = self.sources.get_mut(self.next_source) else {
            return Ok(false);
        };
        self.next_source += 1;
        self.in_file = 0;
        let name = match source {
            Source::File(p) => p.display().to_string(),
            Source::Stdin => "<stdin>".to_string(),
            Source::Reader(name, _) => name.clone(),
        };
        let named = |message: String| CaptureError {
            file: name.clone(),
            packet: None,
            message,
        };
        let raw: Box<dyn Read + Send> = match source {
            Source::File(p) => Box::new(File::open(p).map_err(|e| named(e.to_string()))?),
            Source::Stdin => Box::new(io::stdin()),
            Source::Reader(_, r) => r.take().unwrap_or_else(|| Box::new(io::empty())),
        };
        let mut input = Input::new(raw);
        let mut magic = [0u8; 4];
        if input.fill(&mut magic).map_err(&named)? < 4 {
            return Err(named(
                "not a pcap or pcapng capture (shorter than a header)".into(),
            ));
        }
        let format = if pcapng::is_magic(magic) {
            Format::PcapNg(pcapng::Reader::open(&mut input).map_err(&named)?)
        } else if pcap::is_magic(magic) {
            Format::Pcap(pcap::Reader::open(magic, &mut input).map_err(&named)?)
        } else {
            return Err(named(format!(
                "not a pcap or pcapng capture (starts with {:02x}{:02x}{:02x}{:02x})",
                magic[0], magic[1], magic[2], magic[3]
            )));
        };
        self.current = Some(Open {
            name,
            input,
            format,
        });
        Ok(true)
    }

    /// The name of the file being read.
    pub fn file_name(&self) -> &str {
        self.current.as_ref().map(|c| c.name.as_str()).unwrap_or("")
    }

    /// Frames read so far, in all files.
    pub fn frames_read(&self) -> u64 {
        self.total
    }

    /// The link type declared by the last file read (its pcap header, or its first
    /// pcapng interface): what a copy of an input without packets takes.
    pub fn linktype(&self) -> Option<u32> {
        self.declared
    }

    /// Reads the next frame into `frame`. `Ok(false)` at the end of the last file. An
    /// error ends the damaged file, not the capture: the next call goes on with the
    /// next file.
    pub fn next(&mut self, frame: &mut Frame) -> Result<bool, CaptureError> {
        loop {
            if self.current.is_none() && !self.open_next()? {
                return Ok(false);
            }
            let Some(open) = self.current.as_mut() else {
                return Ok(false);
            };
            let got = match &mut open.format {
                Format::Pcap(r) => r.next(&mut open.input, frame),
                Format::PcapNg(r) => r.next(&mut open.input, frame),
            };
            if let Some(l) = open.format.linktype() {
                self.declared = Some(l);
            }
            match got {
                Ok(true) => {
                    self.in_file += 1;
                    self.total += 1;
                    return Ok(true);
                }
                Ok(false) => self.current = None,
                Err(message) => {
                    let e = CaptureError {
                        file: open.name.clone(),
                        packet: Some(self.in_file + 1),
                        message: format!("capture damaged or truncated: {message}"),
                    };
                    self.current = None;
                    return Err(e);
                }
            }
        }
    }
}
