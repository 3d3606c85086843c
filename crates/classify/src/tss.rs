//! Tuple space search with merged tuples: the fast path for large rule sets and IPv6.
//!
//! Every header test of a simple rule becomes an *entry* with the rule's position as its
//! priority (lower wins). Entries are grouped into hash tables by a *tuple*: how many bits
//! of each address the table hashes on, and whether it hashes the exact ports and
//! protocol. An entry can go into any table whose tuple is no more specific than its own;
//! the table hashes the packet's fields masked to the tuple and keeps, per hash bucket,
//! the entries sorted by priority, each verified in full. A table is a flat
//! open-addressing index of 16-byte slots over one array of entries, so a probe costs
//! one cache line for the slot and one for the entries. Merging (TupleMerge, Daly and
//! Torng 2017) keeps the number of tables small: an entry joins an existing table when its
//! bucket there stays under [`BUCKET_LIMIT`], and a new table relaxes the entry's tuple
//! (prefix lengths cut to multiples of [`RELAX_V4`] bits) so later entries fit it.
//!
//! A lookup probes tables in order of their best priority and stops as soon as no table
//! left can beat the best match found, so the common case probes few tables. Build time
//! and memory are linear in the number of entries. The reference is a linear scan
//! ([`crate::linear`]); `tests/differential.rs` compares the two.

use crate::rule::{Header, Key, mask};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// More entries than this in one bucket of a table send a new entry to another table.
pub const BUCKET_LIMIT: usize = 16;

/// The granularity, in bits, of the IPv4 prefix lengths of new tables. Measured on the
/// ClassBench 10k and 100k sets (`netsieve bench firewall`) for 8, 10, 11, 12, 14 and 16
/// with bucket limits 8 to 32: 12 with 16 was best or near it on all six; against 8 it
/// is 1.5x to 2x faster. It is a trade: coarser tuples mean fewer tables to probe but
/// fuller buckets.
pub const RELAX_V4: u8 = 12;

/// "No simple rule matches."
pub const NONE: u32 = u32::MAX;

/// A multiply-rotate hasher for the masked keys (they are not attacker-chosen lengths, and
/// the bucket limit bounds the work of a collision).
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u128(&mut self, v: u128) {
        self.write_u64(v as u64);
        self.write_u64((v >> 64) as u64);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_u16(&mut self, v: u16) {
        self.write_u64(v as u64);
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64);
    }
}

type Fx = BuildHasherDefault<FxHasher>;

/// Which bits a table hashes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tuple {
    pub src: u8,
    pub dst: u8,
    pub sport: bool,
    pub dport: bool,
    pub proto: bool,
}

impl Tuple {
    fn of(h: &Header) -> Tuple {
        Tuple {
            src: h.src.len,
            dst: h.dst.len,
            sport: h.sport.lo == h.sport.hi,
            dport: h.dport.lo == h.dport.hi,
            proto: h.proto.lo == h.proto.hi,
        }
    }
    /// Whether an entry with tuple `e` can live in a table with this tuple.
    fn admits(&self, e: &Tuple) -> bool {
        self.src <= e.src
            && self.dst <= e.dst
            && (!self.sport || e.sport)
            && (!self.dport || e.dport)
            && (!self.proto || e.proto)
    }
    /// A table tuple for an entry that fits nowhere: IPv4 prefix lengths cut down to a
    /// multiple of [`RELAX_V4`] bits (IPv6 ones to 16), so entries of nearby lengths
    /// share it.
    fn relaxed(e: &Tuple) -> Tuple {
        let cut = |l: u8| {
            if l >= 96 {
                96 + (l - 96) / RELAX_V4 * RELAX_V4
            } else {
                l / 16 * 16
            }
        };
        Tuple {
            src: cut(e.src),
            dst: cut(e.dst),
            ..*e
        }
    }
    fn specificity(&self) -> u32 {
        self.src as u32
            + self.dst as u32
            + 16 * (self.sport as u32 + self.dport as u32)
            + 8 * self.proto as u32
    }
    fn entry_key(&self, h: &Header) -> MaskedKey {
        MaskedKey {
            src: h.src.addr & mask(self.src),
            dst: h.dst.addr & mask(self.dst),
            sport: if self.sport { h.sport.lo } else { 0 },
            dport: if self.dport { h.dport.lo } else { 0 },
            proto: if self.proto { h.proto.lo as u8 } else { 0 },
        }
    }
}

/// A tuple's masks, precomputed so masking a key is five ANDs.
#[derive(Clone, Copy, Debug)]
struct Masks {
    src: u128,
    dst: u128,
    sport: u16,
    dport: u16,
    proto: u8,
}

impl Masks {
    fn of(t: &Tuple) -> Masks {
        let all = |b: bool| if b { u16::MAX } else { 0 };
        Masks {
            src: mask(t.src),
            dst: mask(t.dst),
            sport: all(t.sport),
            dport: all(t.dport),
            proto: all(t.proto) as u8,
        }
    }
    #[inline]
    fn key(&self, k: &Key) -> MaskedKey {
        MaskedKey {
            src: k.src & self.src,
            dst: k.dst & self.dst,
            sport: k.sport & self.sport,
            dport: k.dport & self.dport,
            proto: k.proto & self.proto,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct MaskedKey {
    src: u128,
    dst: u128,
    sport: u16,
    dport: u16,
    proto: u8,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    prio: u32,
    h: Header,
}

/// One slot of a table's open-addressing index: the hash of a masked key and where its
/// entries lie in [`TupleSpace::entries`]. 16 bytes, four to a cache line. `len == 0`
/// marks an empty slot.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    hash: u64,
    start: u32,
    len: u32,
}

/// A table: the masked keys of its entries, hashed into `slots` (a power of two, at most
/// a quarter full, linear probing). A bucket holds the entries of every masked key with the
/// same 64-bit hash (practically always one key); each entry is verified in full, so a
/// hash collision costs a verification, never a wrong answer.
#[derive(Clone, Debug)]
struct Table {
    /// The tuple as masks over a key's fields.
    masks: Masks,
    best: u32,
    slots: Vec<Slot>,
}

impl Table {
    /// The first slot to probe for `hash`.
    #[inline]
    fn home(&self, hash: u64) -> usize {
        (hash >> 32) as usize & (self.slots.len() - 1)
    }

    /// The bucket for `hash`, as a range of entries (empty when none).
    #[inline]
    fn find(&self, hash: u64) -> (usize, usize) {
        let m = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let s = self.slots[i];
            if s.len == 0 {
                return (0, 0);
            }
            if s.hash == hash {
                return (s.start as usize, s.start as usize + s.len as usize);
            }
            i = (i + 1) & m;
        }
    }
}

/// The 64-bit hash of a masked key: two independent 64x64->128-bit multiplies, each
/// folded (the mixing step of wyhash), so all output bits depend on all input bits and
/// the two multiplies overlap in the pipeline.
#[inline]
fn hash_of(k: &MaskedKey) -> u64 {
    #[inline]
    fn mum(a: u64, b: u64) -> u64 {
        let p = a as u128 * b as u128;
        (p as u64) ^ (p >> 64) as u64
    }
    let ports = (k.sport as u64) << 24 | (k.dport as u64) << 8 | k.proto as u64;
    let x = mum(
        k.src as u64 ^ 0xa076_1d64_78bd_642f,
        k.dst as u64 ^ 0xe703_7ed1_a0b4_28db,
    );
    let y = mum(
        (k.src >> 64) as u64 ^ ports ^ 0x8ebc_6af0_9c88_c6e3,
        (k.dst >> 64) as u64 ^ 0x5899_65cc_7537_4cc3,
    );
    mum(x ^ 0x1d8e_4e27_c47d_124f, y ^ 0xa076_1d64_78bd_642f)
}

/// Asks the CPU to fetch the cache line of `r` ahead of its use. In
/// [`TupleSpace::lookup_grouped`] on the 100k sets it is worth 1.3x to 1.4x over the same
/// grouping without it (ipc1: 2.0 -> 2.7-2.8 Mpps, fw1: 3.0 -> 3.8-3.9 Mpps).
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is a hint that never faults, whatever the address; the
    // pointer comes from a reference. SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            r as *const T as *const i8,
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// Tuple space search over a set of (priority, header) entries.
#[derive(Clone, Debug, Default)]
pub struct TupleSpace {
    tables: Vec<Table>,
    /// Every bucket's entries, sorted by priority within a bucket.
    entries: Vec<Entry>,
    /// Whether [`TupleSpace::lookup_batch`] groups packets: only when the tables are
    /// larger than `GROUP_ABOVE`.
    grouped: bool,
}

/// Size figures of a built fast path.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    pub entries: usize,
    pub tables: usize,
    pub largest_bucket: usize,
    /// Heap bytes held (slots and entries), from capacities.
    pub heap_bytes: usize,
}

/// Slots per bucket, at least: a table is at most 1/LOAD full, so a lookup of an absent
/// key probes about 1.2 slots.
const LOAD: usize = 4;

/// Above this many bytes of slots and entries, batches are looked up in groups. Measured
/// on ClassBench (`netsieve bench firewall`, bursts of 64): at 1k and 10k rules (0.1 to
/// 1.7 MiB, in the L2 cache) groups are 25% to 35% slower than one packet after another;
/// at 100k (15 to 18 MiB) they are 1.6x to 1.8x faster.
const GROUP_ABOVE: usize = 4 << 20;

/// Packets looked up together by [`TupleSpace::lookup_batch`].
const GROUP: usize = 16;

impl TupleSpace {
    /// Builds from entries given in any order; equal priorities are allowed (alternatives
    /// of one rule).
    pub fn build(entries: impl IntoIterator<Item = (u32, Header)>) -> TupleSpace {
        let mut es: Vec<(u32, Header)> = entries.into_iter().collect();
        es.sort_by_key(|e| e.0);
        let n = es.len();
        // First by masked key, with the bucket limit deciding where each entry goes.
        struct Building {
            tuple: Tuple,
            buckets: HashMap<MaskedKey, Vec<Entry>, Fx>,
        }
        let mut tables: Vec<Building> = Vec::new();
        // Tables by specificity, most specific first, as indices into `tables`.
        let mut order: Vec<usize> = Vec::new();
        for (prio, h) in es {
            let t = Tuple::of(&h);
            let mut placed = false;
            for &ti in &order {
                let table = &mut tables[ti];
                if !table.tuple.admits(&t) {
                    continue;
                }
                let key = table.tuple.entry_key(&h);
                let bucket = table.buckets.entry(key).or_default();
                if bucket.len() < BUCKET_LIMIT {
                    // Entries arrive in priority order, so the bucket stays sorted.
                    bucket.push(Entry { prio, h });
                    placed = true;
                    break;
                }
            }
            if !placed {
                let tuple = Tuple::relaxed(&t);
                // The relaxed tuple may exist with a full bucket; then use the entry's own.
                let tuple = if tables.iter().any(|x| x.tuple == tuple) {
                    t
                } else {
                    tuple
                };
                let ti = match tables.iter().position(|x| x.tuple == tuple) {
                    Some(i) => i,
                    None => {
                        tables.push(Building {
                            tuple,
                            buckets: HashMap::default(),
                        });
                        let i = tables.len() - 1;
                        let at = order
                            .iter()
                            .position(|&o| tables[o].tuple.specificity() < tuple.specificity())
                            .unwrap_or(order.len());
                        order.insert(at, i);
                        i
                    }
                };
                let table = &mut tables[ti];
                table
                    .buckets
                    .entry(table.tuple.entry_key(&h))
                    .or_default()
                    .push(Entry { prio, h });
            }
        }
        // Then flat: buckets by hash, in open-addressing slots.
        let mut flat = Vec::with_capacity(n);
        let mut out = Vec::new();
        for b in tables {
            if b.buckets.is_empty() {
                continue;
            }
            let mut by_hash: HashMap<u64, Vec<Entry>, Fx> = HashMap::default();
            for (k, v) in b.buckets {
                by_hash.entry(hash_of(&k)).or_default().extend(v);
            }
            let mut t = Table {
                masks: Masks::of(&b.tuple),
                best: NONE,
                slots: vec![Slot::default(); (by_hash.len() * LOAD).next_power_of_two()],
            };
            let mut hashes: Vec<u64> = by_hash.keys().copied().collect();
            hashes.sort_unstable();
            for hash in hashes {
                let mut v = by_hash.remove(&hash).unwrap_or_default();
                v.sort_by_key(|e| e.prio);
                t.best = t.best.min(v[0].prio);
                let m = t.slots.len() - 1;
                let mut i = t.home(hash);
                while t.slots[i].len != 0 {
                    i = (i + 1) & m;
                }
                t.slots[i] = Slot {
                    hash,
                    start: flat.len() as u32,
                    len: v.len() as u32,
                };
                flat.extend(v);
            }
            out.push(t);
        }
        out.sort_by_key(|t| t.best);
        let mut ts = TupleSpace {
            tables: out,
            entries: flat,
            grouped: false,
        };
        ts.grouped = ts.stats().heap_bytes > GROUP_ABOVE;
        ts
    }

    /// The first entry of `entries[range]` that matches `k` and beats `best`.
    #[inline]
    fn verify(&self, (lo, hi): (usize, usize), k: &Key, best: u32) -> u32 {
        for e in &self.entries[lo..hi] {
            if e.prio >= best {
                break;
            }
            if e.h.matches(k) {
                return e.prio;
            }
        }
        best
    }

    /// The best (lowest) priority whose entry matches `k`, or [`NONE`].
    #[inline]
    pub fn lookup(&self, k: &Key) -> u32 {
        let mut best = NONE;
        for t in &self.tables {
            if t.best >= best {
                break;
            }
            let found = t.find(hash_of(&t.masks.key(k)));
            best = self.verify(found, k, best);
        }
        best
    }

    /// [`TupleSpace::lookup`] for each of `keys` into `out` (as many as both hold).
    ///
    /// Above `GROUP_ABOVE` bytes, groups of packets go through the tables together,
    /// each table in three passes (hash and prefetch the slot; find the bucket and
    /// prefetch its entries; verify), so the cache misses of different packets overlap
    /// instead of following each other (group prefetching, Chen et al. 2004). The
    /// answers are [`TupleSpace::lookup`]'s.
    pub fn lookup_batch(&self, keys: &[Key], out: &mut [u32]) {
        if self.grouped {
            self.lookup_grouped(keys, out);
        } else {
            for (o, k) in out.iter_mut().zip(keys) {
                *o = self.lookup(k);
            }
        }
    }

    /// [`TupleSpace::lookup_batch`] in groups, whatever the size of the tables.
    pub fn lookup_grouped(&self, keys: &[Key], out: &mut [u32]) {
        for (ks, os) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            let g = ks.len().min(os.len());
            let mut best = [NONE; GROUP];
            let mut hash = [0u64; GROUP];
            let mut found = [(0usize, 0usize); GROUP];
            for t in &self.tables {
                // The packets this table can still improve.
                let mut live = 0u32;
                for (i, k) in ks[..g].iter().enumerate() {
                    if t.best < best[i] {
                        live |= 1 << i;
                        hash[i] = hash_of(&t.masks.key(k));
                        prefetch(&t.slots[t.home(hash[i])]);
                    }
                }
                if live == 0 {
                    break;
                }
                let mut m = live;
                while m != 0 {
                    let i = m.trailing_zeros() as usize;
                    found[i] = t.find(hash[i]);
                    if found[i].0 < found[i].1 {
                        prefetch(&self.entries[found[i].0]);
                    }
                    m &= m - 1;
                }
                let mut m = live;
                while m != 0 {
                    let i = m.trailing_zeros() as usize;
                    best[i] = self.verify(found[i], &ks[i], best[i]);
                    m &= m - 1;
                }
            }
            os[..g].copy_from_slice(&best[..g]);
        }
    }

    pub fn stats(&self) -> Stats {
        let mut heap = self.tables.capacity() * std::mem::size_of::<Table>()
            + self.entries.capacity() * std::mem::size_of::<Entry>();
        let mut largest = 0;
        for t in &self.tables {
            heap += t.slots.capacity() * std::mem::size_of::<Slot>();
            for s in &t.slots {
                largest = largest.max(s.len as usize);
            }
        }
        Stats {
            entries: self.entries.len(),
            tables: self.tables.len(),
            largest_bucket: largest,
            heap_bytes: heap,
        }
    }
}
