//! The fast path for small IPv4 rule sets: Recursive Flow Classification (Gupta and
//! McKeown, SIGCOMM 1999).
//!
//! A lookup is a fixed chain of table reads, with no search and, until the last step, no
//! branch that depends on the packet, so the reads of consecutive packets overlap in the
//! processor.
//!
//! **Phase 0.** The header is cut into chunks: the two 16-bit halves of each address, the
//! two ports, the protocol and the TCP flags. Two values of a chunk are *equivalent* when
//! the same entries accept them; each chunk has a table from value to the number of its
//! equivalence class (its *class*). An address prefix splits exactly into a test on each
//! half (a `/n` with `n <= 16` leaves the low half free; a longer one fixes the high
//! half), so an entry matches a header exactly when it accepts every chunk.
//!
//! **Later phases.** Two classes are combined by a table indexed by the pair: the class of
//! the pair is that of the intersection of their entry sets. The halves of each address
//! are combined, then the ports, then protocol and flags (phase 1); then the addresses
//! together and the port/protocol/flags classes together (phase 2). That is 16 reads
//! (phase 0 takes 10: the flags are first compressed to the bits some entry tests), none
//! of them behind a comparison.
//!
//! **The last step.** Classic RFC would combine the two phase-2 classes in one more
//! table holding the answer. On the ClassBench 1k sets that table has 0.24 to 10 million
//! cells (fw1_1k: 10,111 address classes by 583 others), 1 to 40 MB, while the rest of
//! the structure is under 1 MB. So the last step keeps the two classes' entry sets as
//! bitmaps (at most 64 words, so up to 4,096 entries) with a summary word each, ANDs the
//! summaries and then the words they point at: the first common bit is the answer. On
//! the 1k sets this runs at 65 to 71% of the speed of the full table, in 1 to 2 MiB
//! instead of 1.8 to 40 MiB (docs/BENCHMARKS.md).
//!
//! **Decisive entries.** An entry that accepts every value of the chunks a class does not
//! cover decides every packet that reaches that class, so the entries after it are
//! dropped from the class's set (`Classes::add`); classes that differ only there merge
//! (up to 10% less memory on the 1k sets).
//!
//! **Memory.** A combining table has one cell per pair of classes, so its size is the
//! product of two class counts, and the counts grow with the number of distinct rule
//! boundaries: RFC is the fastest lookup for small sets and explodes for large ones. The
//! build gives up (returns `None`) above a memory cap, a bound on build work, or 4,096
//! entries, and [`crate::fast`] then takes the bit vectors.

use crate::bv::FlagBits;
use crate::rule::{Header, Key};
use crate::tss::NONE;
use std::collections::HashMap;

/// The most classes a chunk or a combination may have (class numbers are `u16`).
const MAX_CLASSES: usize = 1 << 16;
/// Bound on the words ANDed while building (a few tens of milliseconds; the 1k
/// ClassBench sets take at most 3.2 million).
const MAX_WORK: usize = 1 << 26;

/// Equivalence classes over the chunks of `covers` (bit i: chunk i): each class's set of
/// entries, as a bitmap of `words` words.
struct Classes {
    words: usize,
    covers: u8,
    /// The entries that accept every value of every chunk outside `covers`.
    decisive: Vec<u64>,
    bits: Vec<u64>,
    index: HashMap<Box<[u64]>, u16>,
}

impl Classes {
    fn new(covers: u8, wild: &[u8]) -> Classes {
        let words = wild.len().div_ceil(64).max(1);
        let mut decisive = vec![0u64; words];
        for (e, &w) in wild.iter().enumerate() {
            if w | covers == 0xff {
                set(&mut decisive, e);
            }
        }
        Classes {
            words,
            covers,
            decisive,
            bits: Vec::new(),
            index: HashMap::new(),
        }
    }
    /// The class of entry set `v`, added if new; `None` past [`MAX_CLASSES`].
    ///
    /// Entries after the first *decisive* one of `v` are dropped first: a packet whose
    /// chunks fall in this class matches that entry whatever its other chunks are, so no
    /// later entry can be its first match. Dropping them merges classes that differ only
    /// there. (Every entry left in a class still accepts the packet's chunks, so the
    /// first match `m` is never dropped: that would need a decisive entry before `m`,
    /// which would match the packet.)
    fn add(&mut self, v: &mut [u64]) -> Option<u16> {
        if let Some(w) = v.iter().zip(&self.decisive).position(|(x, d)| x & d != 0) {
            let first = (v[w] & self.decisive[w]).trailing_zeros();
            v[w] &= u64::MAX >> (63 - first);
            v[w + 1..].fill(0);
        }
        if let Some(&c) = self.index.get(&*v) {
            return Some(c);
        }
        let c = self.len();
        if c >= MAX_CLASSES {
            return None;
        }
        self.bits.extend_from_slice(v);
        self.index.insert(v.into(), c as u16);
        Some(c as u16)
    }
    fn len(&self) -> usize {
        self.bits.len() / self.words
    }
    /// By class, bit i set when word i of its set is not zero (at most 64 words).
    fn summaries(&self) -> Vec<u64> {
        self.bits
            .chunks(self.words)
            .map(|v| {
                v.iter()
                    .enumerate()
                    .fold(0, |s, (i, &x)| s | ((x != 0) as u64) << i)
            })
            .collect()
    }
    fn get(&self, c: usize) -> &[u64] {
        &self.bits[c * self.words..(c + 1) * self.words]
    }
}

/// A combining table: the class of the pair (a, b) is `cells[a * width + b]`.
#[derive(Clone, Debug, Default)]
struct Table {
    width: usize,
    cells: Vec<u16>,
}

impl Table {
    #[inline]
    fn get(&self, a: u16, b: u16) -> u16 {
        self.cells[a as usize * self.width + b as usize]
    }
}

#[derive(Clone, Debug)]
pub struct Rfc {
    entries: usize,
    /// Phase 0 for the 16-bit chunks, 65,536 cells each: source high and low halves,
    /// destination high and low halves, source port, destination port.
    chunks: Vec<u16>,
    /// Phase 0 for the protocol: by protocol number, its class.
    proto: Vec<u16>,
    /// Phase 0 for the flags: the bits any entry tests, compressed as in [`crate::bv`],
    /// and by combination its class.
    flag_bits: FlagBits,
    flags: Vec<u16>,
    /// Phase 1: source, destination, ports, protocol and flags.
    p1: [Table; 4],
    /// Phase 2: the addresses, the ports with protocol and flags.
    p2: [Table; 2],
    /// The last step: the entry sets of the two phase-2 classes, `words` words each,
    /// and the priority of each entry.
    words: usize,
    addresses: Vec<u64>,
    rest: Vec<u64>,
    prio: Vec<u32>,
    sums: [Vec<u64>; 2],
}

fn v4_of(a: u128) -> Option<u32> {
    (a >> 32 == 0xffff).then_some(a as u32)
}

/// Sets bit `e` of `v`.
fn set(v: &mut [u64], e: usize) {
    v[e / 64] |= 1 << (e % 64);
}

/// The classes of 16-bit chunk `i` whose entries accept the ranges `ranges[e]`, and the
/// table from value to class.
fn chunk(i: usize, ranges: &[(u16, u16)], wild: &[u8]) -> Option<(Vec<u16>, Classes)> {
    // Events: at `lo` an entry starts to accept, after `hi` it stops.
    let mut events: Vec<(u32, bool, usize)> = Vec::with_capacity(2 * ranges.len());
    for (e, &(lo, hi)) in ranges.iter().enumerate() {
        events.push((lo as u32, true, e));
        events.push((hi as u32 + 1, false, e));
    }
    events.sort_unstable_by_key(|e| e.0);
    let mut classes = Classes::new(1 << i, wild);
    let mut table = vec![0u16; 1 << 16];
    let mut cur = vec![0u64; classes.words];
    let mut v = cur.clone();
    let mut i = 0;
    let mut at = 0u32;
    while at < 1 << 16 {
        while i < events.len() && events[i].0 == at {
            let (_, start, e) = events[i];
            if start {
                set(&mut cur, e);
            } else {
                cur[e / 64] &= !(1 << (e % 64));
            }
            i += 1;
        }
        let end = events.get(i).map_or(1 << 16, |e| e.0.min(1 << 16));
        v.copy_from_slice(&cur);
        let c = classes.add(&mut v)?;
        table[at as usize..end as usize].fill(c);
        at = end;
    }
    Some((table, classes))
}

/// The classes of small chunk `i` given which values each entry accepts.
fn small_chunk(
    i: usize,
    values: usize,
    accepts: impl Fn(usize, usize) -> bool,
    wild: &[u8],
) -> Option<(Vec<u16>, Classes)> {
    let mut classes = Classes::new(1 << i, wild);
    let mut table = Vec::with_capacity(values);
    let mut v = vec![0u64; classes.words];
    for value in 0..values {
        v.fill(0);
        for e in 0..wild.len() {
            if accepts(value, e) {
                set(&mut v, e);
            }
        }
        table.push(classes.add(&mut v)?);
    }
    Some((table, classes))
}

/// Budget of a build: table bytes left and words of work left.
struct Budget {
    bytes: usize,
    work: usize,
}

impl Budget {
    /// Takes a table of `cells` cells of `size` bytes, built by ANDing `words` words per
    /// cell; `None` when it does not fit.
    fn take(&mut self, cells: usize, size: usize, words: usize) -> Option<()> {
        let bytes = cells.checked_mul(size)?;
        let work = cells.checked_mul(words)?;
        self.bytes = self.bytes.checked_sub(bytes)?;
        self.work = self.work.checked_sub(work)?;
        Some(())
    }
}

/// Combines two class sets: the table and the classes of the intersections.
fn combine(a: &Classes, b: &Classes, wild: &[u8], budget: &mut Budget) -> Option<(Table, Classes)> {
    let words = a.words;
    budget.take(a.len() * b.len(), 2, words)?;
    let mut out = Classes::new(a.covers | b.covers, wild);
    let mut cells = Vec::with_capacity(a.len() * b.len());
    let mut v = vec![0u64; words];
    for i in 0..a.len() {
        let x = a.get(i);
        for j in 0..b.len() {
            for ((o, p), q) in v.iter_mut().zip(x).zip(b.get(j)) {
                *o = p & q;
            }
            cells.push(out.add(&mut v)?);
        }
    }
    Some((
        Table {
            width: b.len(),
            cells,
        },
        out,
    ))
}

impl Rfc {
    /// Builds over entries sorted by priority; `None` when an entry is not IPv4, tests
    /// too many distinct flag bits, or the tables would take more than `max_bytes` or
    /// too long to build.
    pub fn build(entries: &[(u32, Header)], max_bytes: usize) -> Option<Rfc> {
        let n = entries.len();
        let words = n.div_ceil(64).max(1);
        if words > 64 {
            return None;
        }
        let mut ranges: [Vec<(u16, u16)>; 6] = Default::default();
        for (_, h) in entries {
            let (Some(src), Some(dst)) = (v4_of(h.src.addr), v4_of(h.dst.addr)) else {
                return None;
            };
            if h.src.len < 96 || h.dst.len < 96 {
                return None;
            }
            for (f, (a, len)) in [(src, h.src.len), (dst, h.dst.len)].into_iter().enumerate() {
                let hi = a | u32::MAX.checked_shr((len - 96) as u32).unwrap_or(0);
                ranges[2 * f].push(((a >> 16) as u16, (hi >> 16) as u16));
                ranges[2 * f + 1].push((a as u16, hi as u16));
            }
            ranges[4].push((h.sport.lo, h.sport.hi));
            ranges[5].push((h.dport.lo, h.dport.hi));
        }
        // Bit i of wild[e]: entry e accepts every value of chunk i.
        let wild: Vec<u8> = (0..n)
            .map(|e| {
                let h = &entries[e].1;
                let mut w = 0u8;
                for (i, r) in ranges.iter().enumerate() {
                    if r[e] == (0, u16::MAX) {
                        w |= 1 << i;
                    }
                }
                if h.proto.lo == 0 && h.proto.hi >= 255 {
                    w |= 1 << 6;
                }
                if h.flags_mask == 0 {
                    w |= 1 << 7;
                }
                w
            })
            .collect();
        let flag_bits = FlagBits::new(entries)?;
        let mut budget = Budget {
            bytes: max_bytes,
            work: MAX_WORK,
        };
        budget.take(6 << 16, 2, 0)?;
        let mut chunks = Vec::with_capacity(6 << 16);
        let mut classes = Vec::with_capacity(8);
        for (i, r) in ranges.iter().enumerate() {
            let (table, c) = chunk(i, r, &wild)?;
            chunks.extend_from_slice(&table);
            classes.push(c);
        }
        let (proto, c) = small_chunk(6, 256, |p, e| entries[e].1.proto.contains(p as u16), &wild)?;
        classes.push(c);
        let (flags, c) = small_chunk(
            7,
            flag_bits.combinations(),
            |c, e| flag_bits.value(c) & entries[e].1.flags_mask == entries[e].1.flags,
            &wild,
        )?;
        classes.push(c);
        let mut p1: [Table; 4] = Default::default();
        let mut c1 = Vec::with_capacity(4);
        for (t, pair) in p1.iter_mut().zip(classes.chunks(2)) {
            let (table, c) = combine(&pair[0], &pair[1], &wild, &mut budget)?;
            *t = table;
            c1.push(c);
        }
        let mut p2: [Table; 2] = Default::default();
        let mut c2 = Vec::with_capacity(2);
        for (t, pair) in p2.iter_mut().zip(c1.chunks(2)) {
            let (table, c) = combine(&pair[0], &pair[1], &wild, &mut budget)?;
            *t = table;
            c2.push(c);
        }
        budget.take(c2[0].len() + c2[1].len(), 8 * words, 0)?;
        Some(Rfc {
            entries: n,
            chunks,
            proto,
            flag_bits,
            flags,
            p1,
            p2,
            words,
            prio: entries.iter().map(|e| e.0).collect(),
            addresses: c2[0].bits.clone(),
            rest: c2[1].bits.clone(),
            sums: [c2[0].summaries(), c2[1].summaries()],
        })
    }

    /// The best priority whose entry matches `k`, or [`NONE`].
    #[inline]
    pub fn lookup(&self, k: &Key) -> u32 {
        let (Some(src), Some(dst)) = (v4_of(k.src), v4_of(k.dst)) else {
            return NONE;
        };
        let c = |chunk: usize, v: u32| self.chunks[chunk << 16 | (v & 0xffff) as usize];
        let f = self.flag_bits.index(k.flags);
        let s = self.p1[0].get(c(0, src >> 16), c(1, src));
        let d = self.p1[1].get(c(2, dst >> 16), c(3, dst));
        let p = self.p1[2].get(c(4, k.sport as u32), c(5, k.dport as u32));
        let q = self.p1[3].get(self.proto[k.proto as usize], self.flags[f]);
        let w = self.words;
        let x = self.p2[0].get(s, d) as usize * w;
        let y = self.p2[1].get(p, q) as usize * w;
        let (a, b) = (&self.addresses[x..x + w], &self.rest[y..y + w]);
        let mut cand = self.sums[0][x / w] & self.sums[1][y / w];
        while cand != 0 {
            let i = cand.trailing_zeros() as usize;
            let m = a[i] & b[i];
            if m != 0 {
                return self.prio[i * 64 + m.trailing_zeros() as usize];
            }
            cand &= cand - 1;
        }
        NONE
    }

    /// [`Rfc::lookup`] for each of `keys` into `out`.
    pub fn lookup_batch(&self, keys: &[Key], out: &mut [u32]) {
        for (o, k) in out.iter_mut().zip(keys) {
            *o = self.lookup(k);
        }
    }

    pub fn entries(&self) -> usize {
        self.entries
    }

    pub fn heap_bytes(&self) -> usize {
        let tables = self.p1.iter().chain(&self.p2);
        self.chunks.capacity() * 2
            + (self.proto.capacity() + self.flags.capacity()) * 2
            + self.flag_bits.heap_bytes()
            + tables.map(|t| t.cells.capacity() * 2).sum::<usize>()
            + (self.addresses.capacity() + self.rest.capacity()) * 8
            + self.prio.capacity() * 4
    }

    /// Cells per table, phase 1 and phase 2, then the classes of phase 2 (for reports).
    pub fn table_cells(&self) -> [usize; 8] {
        [
            self.p1[0].cells.len(),
            self.p1[1].cells.len(),
            self.p1[2].cells.len(),
            self.p1[3].cells.len(),
            self.p2[0].cells.len(),
            self.p2[1].cells.len(),
            self.addresses.len() / self.words,
            self.rest.len() / self.words,
        ]
    }
}
