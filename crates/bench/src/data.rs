//! The shared corpora: pattern sets and real packet payloads.
//!
//! The data lives outside the repository (`../shared/data` next to the checkout, see its
//! README). [`data_dir`] finds it; everything else takes the directory as an argument.

use std::fs;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use dfc::patfile::{self, Format};

/// A named list of patterns; a pattern's index in the list is its id.
#[derive(Clone, Debug)]
pub struct PatternSet {
    pub name: String,
    pub patterns: Vec<(Vec<u8>, bool)>,
}

impl PatternSet {
    /// The same patterns, all case-sensitive (for engines without per-pattern nocase).
    pub fn case_sensitive(&self) -> PatternSet {
        PatternSet {
            name: format!("{} (case-sensitive)", self.name),
            patterns: self
                .patterns
                .iter()
                .map(|(p, _)| (p.clone(), false))
                .collect(),
        }
    }

    /// A random sample of `n` patterns (all of them if `n` is larger), deterministic in
    /// `seed`.
    pub fn sample(&self, n: usize, seed: u64) -> PatternSet {
        let mut rng = Rng::new(seed);
        let mut idx: Vec<usize> = (0..self.patterns.len()).collect();
        let n = n.min(idx.len());
        for k in 0..n {
            let j = k + rng.below(idx.len() - k);
            idx.swap(k, j);
        }
        idx.truncate(n);
        idx.sort_unstable();
        PatternSet {
            name: format!("{} sample {}", self.name, short_count(n)),
            patterns: idx.into_iter().map(|k| self.patterns[k].clone()).collect(),
        }
    }

    pub fn total_bytes(&self) -> usize {
        self.patterns.iter().map(|p| p.0.len()).sum()
    }
}

/// `20000` as `20K`.
pub fn short_count(n: usize) -> String {
    if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}K", n / 1000)
    } else {
        n.to_string()
    }
}

/// Finds the shared data directory: `explicit` if given, else `$NETSIEVE_DATA`, else
/// `../shared/data` from the working directory or from the repository root.
pub fn data_dir(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let mut tried = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = explicit {
        candidates.push(p.to_path_buf());
    } else {
        if let Some(p) = std::env::var_os("NETSIEVE_DATA") {
            candidates.push(PathBuf::from(p));
        }
        candidates.push(PathBuf::from("../shared/data"));
        candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    }
    for c in candidates {
        if c.join("patterns").is_dir() {
            return Ok(c);
        }
        tried.push(c.display().to_string());
    }
    Err(format!(
        "shared data not found (tried {}); pass --data DIR or set NETSIEVE_DATA to the folder holding patterns/ and pcaps/",
        tried.join(", ")
    ))
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// A `hex<TAB>nocase` file of `patterns/` (ET Open, Snort 3 community).
pub fn load_tsv(dir: &Path, file: &str, name: &str) -> Result<PatternSet, String> {
    let path = dir.join("patterns").join(file);
    let pats = patfile::parse(&read(&path)?, Format::Tsv)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(PatternSet {
        name: name.to_string(),
        patterns: pats.into_iter().map(|p| (p.bytes, p.nocase)).collect(),
    })
}

/// The OWASP CRS phrase lists (`crs/*.data`), case-insensitive as `@pmFromFile` is.
pub fn load_crs(dir: &Path) -> Result<PatternSet, String> {
    let crs = dir.join("crs");
    let mut files: Vec<PathBuf> = fs::read_dir(&crs)
        .map_err(|e| format!("{}: {e}", crs.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "data"))
        .collect();
    files.sort();
    let mut patterns = Vec::new();
    for f in files {
        for line in read(&f)?.split(|&b| b == b'\n') {
            let line = line.trim_ascii();
            if !line.is_empty() && line[0] != b'#' {
                patterns.push((line.to_vec(), true));
            }
        }
    }
    Ok(PatternSet {
        name: "OWASP CRS phrases".into(),
        patterns,
    })
}

/// The nDPI gambling-domain list, one domain per line (case-insensitive, as host names).
pub fn load_ndpi_domains(dir: &Path) -> Result<PatternSet, String> {
    let path = dir.join("patterns/ndpi-gambling-domains.list");
    let patterns = read(&path)?
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| !l.is_empty())
        .map(|l| (l.to_vec(), true))
        .collect();
    Ok(PatternSet {
        name: "nDPI domains".into(),
        patterns,
    })
}

/// Packet payloads, stored back to back.
#[derive(Clone, Debug, Default)]
pub struct Payloads {
    pub data: Vec<u8>,
    pub ends: Vec<usize>,
}

impl Payloads {
    pub fn push(&mut self, p: &[u8]) {
        self.data.extend_from_slice(p);
        self.ends.push(self.data.len());
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&e| {
            let p = &self.data[start..e];
            start = e;
            p
        })
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn bytes(&self) -> usize {
        self.data.len()
    }
}

/// TCP and UDP payloads of every capture in `pcaps/ndpi/`, in file-name order. A file
/// that is truncated or corrupt contributes the packets read before the damage; link
/// types other than Ethernet, raw IP, Linux cooked and null/loopback are skipped.
pub fn load_ndpi_payloads(dir: &Path) -> Result<Payloads, String> {
    let pcaps = dir.join("pcaps/ndpi");
    let mut files: Vec<PathBuf> = fs::read_dir(&pcaps)
        .map_err(|e| format!("{}: {e}", pcaps.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let mut out = Payloads::default();
    for f in files {
        let _ = read_capture_payloads(&f, &mut out);
    }
    Ok(out)
}

/// Appends the TCP/UDP payloads of one capture (pcap or pcapng).
pub fn read_capture_payloads(path: &Path, out: &mut Payloads) -> Result<(), String> {
    let mut file = BufReader::new(fs::File::open(path).map_err(|e| e.to_string())?);
    let mut magic = [0u8; 4];
    file.read_exact(&mut magic).map_err(|e| e.to_string())?;
    let file = BufReader::new(std::io::Cursor::new(magic).chain(file));
    if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
        let mut r = pcap_file::pcapng::PcapNgReader::new(file).map_err(|e| e.to_string())?;
        // Link types of the interfaces of the current section, by interface id.
        let mut links: Vec<u32> = Vec::new();
        while let Some(block) = r.next_block() {
            match block {
                Ok(pcap_file::pcapng::Block::SectionHeader(_)) => links.clear(),
                Ok(pcap_file::pcapng::Block::InterfaceDescription(i)) => {
                    links.push(u32::from(i.linktype))
                }
                Ok(pcap_file::pcapng::Block::EnhancedPacket(p)) => {
                    if let Some(&link) = links.get(p.interface_id as usize) {
                        push_payload(link, &p.data, out);
                    }
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    } else {
        let mut r = pcap_file::pcap::PcapReader::new(file).map_err(|e| e.to_string())?;
        let link = u32::from(r.header().datalink);
        while let Some(p) = r.next_packet() {
            let Ok(p) = p else { break };
            push_payload(link, &p.data, out);
        }
    }
    Ok(())
}

fn push_payload(link: u32, frame: &[u8], out: &mut Payloads) {
    use etherparse::{SlicedPacket, TransportSlice};
    let sliced = match link {
        1 => SlicedPacket::from_ethernet(frame),
        12 | 101 | 228 | 229 => SlicedPacket::from_ip(frame),
        113 => SlicedPacket::from_linux_sll(frame),
        0 | 108 if frame.len() > 4 => SlicedPacket::from_ip(&frame[4..]),
        _ => return,
    };
    let Ok(sliced) = sliced else { return };
    let payload = match &sliced.transport {
        Some(TransportSlice::Tcp(t)) => t.payload(),
        Some(TransportSlice::Udp(u)) => u.payload(),
        _ => return,
    };
    if !payload.is_empty() {
        out.push(payload);
    }
}

/// A small deterministic generator (xorshift64*), so workloads are the same every run.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}
