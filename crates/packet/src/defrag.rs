//! IPv4 and IPv6 fragment reassembly.
//!
//! Fragments are kept per datagram (source, destination, protocol, identification) until
//! every byte from 0 to the end given by the last fragment is present. Overlaps resolve
//! by one policy: **the first fragment to supply a byte wins** (later copies of the
//! same byte range are ignored), whatever their content. That is the simplest policy to
//! state and the one that cannot be steered by a late, overlapping fragment.
//!
//! Bounds: a datagram is at most 65,535 bytes; at most `max_datagrams` are open at a
//! time and at most `max_bytes` of fragment data is held (the oldest datagram is dropped
//! to make room); a datagram not completed within `timeout` is dropped.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    src: IpAddr,
    dst: IpAddr,
    proto: u8,
    id: u32,
}

#[derive(Debug)]
struct Datagram {
    first_ts: Duration,
    seq: u64,
    /// Reassembly buffer and which bytes of it are filled.
    data: Vec<u8>,
    filled: Vec<bool>,
    /// Total length, once the fragment without "more fragments" arrived.
    total: Option<usize>,
}

/// Open datagrams awaiting fragments.
#[derive(Debug)]
pub struct Defrag {
    open: HashMap<Key, Datagram>,
    next_seq: u64,
    held: usize,
    pub max_datagrams: usize,
    pub max_bytes: usize,
    pub timeout: Duration,
    /// Datagrams dropped for a cap or a timeout.
    pub dropped: u64,
}

impl Default for Defrag {
    fn default() -> Self {
        Defrag {
            open: HashMap::new(),
            next_seq: 0,
            held: 0,
            max_datagrams: 4096,
            max_bytes: 32 << 20,
            timeout: Duration::from_secs(60),
            dropped: 0,
        }
    }
}

const MAX_DATAGRAM: usize = 65_535;

/// One fragment: where its payload goes in the datagram.
pub struct Fragment<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub proto: u8,
    pub id: u32,
    pub offset: usize,
    pub more: bool,
    pub payload: &'a [u8],
    pub ts: Duration,
}

/// What adding a fragment did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Added {
    /// The reassembled transport payload (the datagram without its IP header), when
    /// this fragment completed it.
    pub datagram: Option<Vec<u8>>,
    /// The fragment overlaps bytes an earlier fragment of its datagram gave.
    pub overlap: bool,
    /// The fragment would end past 65,535 bytes (it is dropped).
    pub too_large: bool,
}

impl Defrag {
    /// Adds a fragment: the reassembled datagram if this fragment completes it, and
    /// what was wrong with the fragment.
    pub fn add(&mut self, f: Fragment<'_>) -> Added {
        self.expire(f.ts);
        let end = f.offset + f.payload.len();
        if end > MAX_DATAGRAM {
            return Added {
                too_large: true,
                ..Added::default()
            };
        }
        let key = Key {
            src: f.src,
            dst: f.dst,
            proto: f.proto,
            id: f.id,
        };
        if !self.open.contains_key(&key) {
            while self.open.len() >= self.max_datagrams
                || (self.held + end > self.max_bytes && !self.open.is_empty())
            {
                self.evict_oldest();
            }
            self.next_seq += 1;
            self.open.insert(
                key,
                Datagram {
                    first_ts: f.ts,
                    seq: self.next_seq,
                    data: Vec::new(),
                    filled: Vec::new(),
                    total: None,
                },
            );
        }
        let Some(d) = self.open.get_mut(&key) else {
            return Added::default();
        };
        let mut out = Added::default();
        if !f.more {
            // A second, different end: the first wins.
            d.total.get_or_insert(end);
        }
        if end > d.data.len() {
            self.held += end - d.data.len();
            d.data.resize(end, 0);
            d.filled.resize(end, false);
        }
        for (i, &b) in f.payload.iter().enumerate() {
            let at = f.offset + i;
            if d.filled[at] {
                out.overlap = true;
            } else {
                d.filled[at] = true;
                d.data[at] = b;
            }
        }
        let Some(total) = d.total else { return out };
        if d.filled.len() >= total && d.filled[..total].iter().all(|&x| x) {
            let mut d = self.open.remove(&key).expect("present");
            self.held -= d.data.len();
            d.data.truncate(total);
            out.datagram = Some(d.data);
        }
        out
    }

    fn evict_oldest(&mut self) {
        if let Some((&k, _)) = self.open.iter().min_by_key(|(_, d)| d.seq) {
            let d = self.open.remove(&k).expect("present");
            self.held -= d.data.len();
            self.dropped += 1;
        }
    }

    fn expire(&mut self, now: Duration) {
        let timeout = self.timeout;
        let before = self.open.len();
        let mut freed = 0;
        self.open.retain(|_, d| {
            let keep = now.saturating_sub(d.first_ts) <= timeout;
            if !keep {
                freed += d.data.len();
            }
            keep
        });
        self.held -= freed;
        self.dropped += (before - self.open.len()) as u64;
    }

    /// Datagrams awaiting fragments.
    pub fn open_datagrams(&self) -> usize {
        self.open.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn frag(offset: usize, more: bool, payload: &[u8]) -> Fragment<'_> {
        Fragment {
            src: IpAddr::V4(Ipv4Addr::new(1, 2, 3, 4)),
            dst: IpAddr::V4(Ipv4Addr::new(5, 6, 7, 8)),
            proto: 6,
            id: 9,
            offset,
            more,
            payload,
            ts: Duration::from_secs(1),
        }
    }

    #[test]
    fn out_of_order_and_overlaps_first_wins() {
        let mut d = Defrag::default();
        assert_eq!(d.add(frag(8, false, b"IJKLMNOP")), Added::default());
        // Bytes 8..12 came with the first fragment: an overlap.
        let second = d.add(frag(4, true, b"xxxxyyyy"));
        assert!(second.overlap && second.datagram.is_none());
        let got = d.add(frag(0, true, b"ABCDEFGH"));
        assert!(got.overlap);
        assert_eq!(got.datagram.unwrap(), b"ABCDxxxxIJKLMNOP");
        assert!(d.add(frag(65_530, false, b"12345678")).too_large);
        assert_eq!(d.open_datagrams(), 0);
    }

    #[test]
    fn caps_bound_open_datagrams() {
        let mut d = Defrag {
            max_datagrams: 3,
            ..Defrag::default()
        };
        for id in 0..10 {
            let mut f = frag(0, true, b"12345678");
            f.id = id;
            d.add(f);
        }
        assert_eq!(d.open_datagrams(), 3);
        assert_eq!(d.dropped, 7);
    }
}
