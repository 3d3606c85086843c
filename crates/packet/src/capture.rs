//! Reading frames from pcap and pcapng captures, one file or several as one stream.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcap_file::pcap::{PcapParser, PcapReader};
use pcap_file::pcapng::{Block, PcapNgParser, PcapNgReader};

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

type Input = BufReader<Box<dyn Read + Send>>;

/// Files up to this size are read whole and parsed in place. Larger files and standard
/// input stream through pcap-file's readers, whose zeroed 8 MB buffer per file would
/// otherwise cost more than reading a directory of small captures.
pub const READ_WHOLE: u64 = 8 << 20;

enum Reader {
    Pcap(PcapReader<Input>),
    /// A pcapng reader with the link types of the current section's interfaces.
    PcapNg(PcapNgReader<Input>, Vec<u32>),
    /// A whole file in memory and the read position.
    PcapMem(PcapParser, Vec<u8>, usize),
    PcapNgMem(PcapNgParser, Vec<u8>, usize, Vec<u32>),
}

/// Fills `frame` from a pcapng block: `None` for blocks that carry no packet.
fn ng_frame(
    block: Block<'_>,
    links: &mut Vec<u32>,
    frame: &mut Frame,
) -> Option<Result<(), String>> {
    match block {
        Block::SectionHeader(_) => links.clear(),
        Block::InterfaceDescription(i) => links.push(u32::from(i.linktype)),
        Block::EnhancedPacket(p) => {
            let Some(&link) = links.get(p.interface_id as usize) else {
                return Some(Err(format!(
                    "packet on undeclared interface {}",
                    p.interface_id
                )));
            };
            frame.ts = p.timestamp;
            frame.orig_len = p.original_len;
            frame.linktype = link;
            frame.data.clear();
            frame.data.extend_from_slice(&p.data);
            return Some(Ok(()));
        }
        Block::SimplePacket(p) => {
            frame.ts = Duration::ZERO;
            frame.orig_len = p.original_len;
            frame.linktype = links.first().copied().unwrap_or(1);
            frame.data.clear();
            frame.data.extend_from_slice(&p.data);
            return Some(Ok(()));
        }
        _ => {}
    }
    None
}

/// A sequence of capture files read as one stream of frames, in the order given.
pub struct Capture {
    sources: Vec<PathBuf>,
    next_source: usize,
    read_whole: u64,
    current: Option<(Reader, String)>,
    /// Frames read from the current file.
    in_file: u64,
    /// Frames read in all.
    total: u64,
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
        && matches!(
            m,
            [0x0a, 0x0d, 0x0d, 0x0a]
                | [0xd4, 0xc3, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0xc3, 0xd4]
                | [0x4d, 0x3c, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0x3c, 0x4d]
        )
}

fn err(p: &Path, packet: Option<u64>, message: String) -> CaptureError {
    CaptureError {
        file: p.display().to_string(),
        packet,
        message,
    }
}

impl Capture {
    /// A capture over `inputs` (files, directories, or `-` for standard input). Every
    /// file is opened and checked for a capture header up front, so a typo fails before
    /// any packet is processed.
    pub fn open(inputs: &[PathBuf]) -> Result<Capture, CaptureError> {
        Capture::open_with(inputs, READ_WHOLE)
    }

    /// [`Capture::open`], reading files of up to `read_whole` bytes whole (0: stream
    /// every file).
    pub fn open_with(inputs: &[PathBuf], read_whole: u64) -> Result<Capture, CaptureError> {
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
        let mut c = Capture {
            sources,
            next_source: 0,
            read_whole,
            current: None,
            in_file: 0,
            total: 0,
        };
        c.open_next()?;
        Ok(c)
    }

    fn open_next(&mut self) -> Result<bool, CaptureError> {
        let Some(path) = self.sources.get(self.next_source).cloned() else {
            self.current = None;
            return Ok(false);
        };
        self.next_source += 1;
        self.in_file = 0;
        let name = if path.as_os_str() == "-" {
            "<stdin>".to_string()
        } else {
            path.display().to_string()
        };
        let small = path.as_os_str() != "-"
            && std::fs::metadata(&path).is_ok_and(|m| m.len() <= self.read_whole);
        if small {
            let data = std::fs::read(&path).map_err(|e| err(&path, None, e.to_string()))?;
            let reader = if data.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
                let (rest, p) = PcapNgParser::new(&data)
                    .map_err(|e| err(&path, None, format!("bad pcapng header: {e}")))?;
                let links = p
                    .interfaces()
                    .iter()
                    .map(|i| u32::from(i.linktype))
                    .collect();
                let pos = data.len() - rest.len();
                Reader::PcapNgMem(p, data, pos, links)
            } else {
                let (rest, p) = PcapParser::new(&data)
                    .map_err(|e| err(&path, None, format!("not a pcap or pcapng capture ({e})")))?;
                let pos = data.len() - rest.len();
                Reader::PcapMem(p, data, pos)
            };
            self.current = Some((reader, name));
            return Ok(true);
        }
        let raw: Box<dyn Read + Send> = if path.as_os_str() == "-" {
            Box::new(io::stdin())
        } else {
            Box::new(File::open(&path).map_err(|e| err(&path, None, e.to_string()))?)
        };
        let mut raw = BufReader::with_capacity(1 << 16, raw);
        let mut magic = [0u8; 4];
        raw.read_exact(&mut magic)
            .map_err(|e| err(&path, None, format!("not a capture: {e}")))?;
        let chained: Box<dyn Read + Send> = Box::new(io::Cursor::new(magic).chain(raw));
        let input = BufReader::with_capacity(1 << 16, chained);
        let reader = if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
            let r = PcapNgReader::new(input)
                .map_err(|e| err(&path, None, format!("bad pcapng header: {e}")))?;
            let links = r
                .interfaces()
                .iter()
                .map(|i| u32::from(i.linktype))
                .collect();
            Reader::PcapNg(r, links)
        } else {
            let r = PcapReader::new(input)
                .map_err(|e| err(&path, None, format!("not a pcap or pcapng capture ({e})")))?;
            Reader::Pcap(r)
        };
        self.current = Some((reader, name));
        Ok(true)
    }

    /// The name of the file being read.
    pub fn file_name(&self) -> &str {
        self.current.as_ref().map(|c| c.1.as_str()).unwrap_or("")
    }

    /// Frames read so far, in all files.
    pub fn frames_read(&self) -> u64 {
        self.total
    }

    /// Reads the next frame into `frame`. `Ok(false)` at the end of the last file. An
    /// error ends the damaged file, not the capture: the next call goes on with the
    /// next file.
    pub fn next(&mut self, frame: &mut Frame) -> Result<bool, CaptureError> {
        loop {
            if self.current.is_none() && !self.open_next()? {
                return Ok(false);
            }
            let Some((reader, name)) = self.current.as_mut() else {
                return Ok(false);
            };
            let got = match reader {
                Reader::Pcap(r) => {
                    let link = u32::from(r.header().datalink);
                    match r.next_packet() {
                        None => None,
                        Some(Ok(p)) => {
                            frame.ts = p.timestamp;
                            frame.orig_len = p.orig_len;
                            frame.linktype = link;
                            frame.data.clear();
                            frame.data.extend_from_slice(&p.data);
                            Some(Ok(()))
                        }
                        Some(Err(e)) => Some(Err(e.to_string())),
                    }
                }
                Reader::PcapNg(r, links) => loop {
                    match r.next_block() {
                        None => break None,
                        Some(Err(e)) => break Some(Err(e.to_string())),
                        Some(Ok(b)) => {
                            if let Some(got) = ng_frame(b, links, frame) {
                                break Some(got);
                            }
                        }
                    }
                },
                Reader::PcapMem(p, data, pos) => {
                    if *pos >= data.len() {
                        None
                    } else {
                        match p.next_packet(&data[*pos..]) {
                            Ok((rest, pk)) => {
                                frame.ts = pk.timestamp;
                                frame.orig_len = pk.orig_len;
                                frame.linktype = u32::from(p.header().datalink);
                                frame.data.clear();
                                frame.data.extend_from_slice(&pk.data);
                                *pos = data.len() - rest.len();
                                Some(Ok(()))
                            }
                            Err(e) => Some(Err(e.to_string())),
                        }
                    }
                }
                Reader::PcapNgMem(p, data, pos, links) => loop {
                    if *pos >= data.len() {
                        break None;
                    }
                    match p.next_block(&data[*pos..]) {
                        Ok((rest, b)) => {
                            let consumed = data.len() - rest.len();
                            if consumed <= *pos {
                                break Some(Err("block of length zero".into()));
                            }
                            let got = ng_frame(b, links, frame);
                            *pos = consumed;
                            if let Some(got) = got {
                                break Some(got);
                            }
                        }
                        Err(e) => break Some(Err(e.to_string())),
                    }
                },
            };
            match got {
                Some(Ok(())) => {
                    self.in_file += 1;
                    self.total += 1;
                    return Ok(true);
                }
                Some(Err(message)) => {
                    let e = CaptureError {
                        file: name.clone(),
                        packet: Some(self.in_file + 1),
                        message: format!("capture damaged or truncated: {message}"),
                    };
                    self.current = None;
                    return Err(e);
                }
                None => self.current = None,
            }
        }
    }
}
