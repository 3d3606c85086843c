//! Tuple space search with merged tuples: the fast path for large rule sets and IPv6.
//!
//! Every header test of a simple rule becomes an *entry* with the rule's position as its
//! priority (lower wins). Entries are grouped into hash tables by a *tuple*: how many bits
//! of each address the table hashes on, and whether it hashes the exact ports and
//! protocol. An entry can go into any table whose tuple is no more specific than its own;
//! the table hashes the packet's fields masked to the tuple and keeps, per hash bucket,
//! the entries sorted by priority, each verified in full. Merging (TupleMerge, Daly and
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
    fn key(&self, k: &Key) -> MaskedKey {
        MaskedKey {
            src: k.src & mask(self.src),
            dst: k.dst & mask(self.dst),
            sport: if self.sport { k.sport } else { 0 },
            dport: if self.dport { k.dport } else { 0 },
            proto: if self.proto { k.proto } else { 0 },
        }
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct MaskedKey {
    src: u128,
    dst: u128,
    sport: u16,
    dport: u16,
    proto: u8,
}

#[derive(Clone, Debug)]
struct Entry {
    prio: u32,
    h: Header,
}

#[derive(Clone, Debug)]
struct Table {
    tuple: Tuple,
    best: u32,
    buckets: HashMap<MaskedKey, Vec<Entry>, Fx>,
}

/// Tuple space search over a set of (priority, header) entries.
#[derive(Clone, Debug, Default)]
pub struct TupleSpace {
    tables: Vec<Table>,
    entries: usize,
}

/// Size figures of a built fast path.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    pub entries: usize,
    pub tables: usize,
    pub largest_bucket: usize,
    /// Heap bytes held (hash tables and buckets), estimated from capacities.
    pub heap_bytes: usize,
}

impl TupleSpace {
    /// Builds from entries given in any order; equal priorities are allowed (alternatives
    /// of one rule).
    pub fn build(entries: impl IntoIterator<Item = (u32, Header)>) -> TupleSpace {
        let mut es: Vec<(u32, Header)> = entries.into_iter().collect();
        es.sort_by_key(|e| e.0);
        let mut tables: Vec<Table> = Vec::new();
        // Tables by specificity, most specific first, as indices into `tables`.
        let mut order: Vec<usize> = Vec::new();
        for (prio, h) in &es {
            let t = Tuple::of(h);
            let mut placed = false;
            for &ti in &order {
                let table = &mut tables[ti];
                if !table.tuple.admits(&t) {
                    continue;
                }
                let key = table.tuple.entry_key(h);
                let bucket = table.buckets.entry(key).or_default();
                if bucket.len() < BUCKET_LIMIT {
                    // Entries arrive in priority order, so the bucket stays sorted.
                    bucket.push(Entry { prio: *prio, h: *h });
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
                        tables.push(Table {
                            tuple,
                            best: *prio,
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
                    .entry(table.tuple.entry_key(h))
                    .or_default()
                    .push(Entry { prio: *prio, h: *h });
            }
        }
        tables.retain(|t| !t.buckets.is_empty());
        for t in &mut tables {
            t.best = t.buckets.values().map(|b| b[0].prio).min().unwrap_or(NONE);
        }
        tables.sort_by_key(|t| t.best);
        TupleSpace {
            tables,
            entries: es.len(),
        }
    }

    /// The best (lowest) priority whose entry matches `k`, or [`NONE`].
    #[inline]
    pub fn lookup(&self, k: &Key) -> u32 {
        let mut best = NONE;
        for t in &self.tables {
            if t.best >= best {
                break;
            }
            if let Some(bucket) = t.buckets.get(&t.tuple.key(k)) {
                for e in bucket {
                    if e.prio >= best {
                        break;
                    }
                    if e.h.matches(k) {
                        best = e.prio;
                        break;
                    }
                }
            }
        }
        best
    }

    pub fn stats(&self) -> Stats {
        let mut heap = self.tables.capacity() * std::mem::size_of::<Table>();
        let mut largest = 0;
        for t in &self.tables {
            // hashbrown: one control byte and one slot per bucket of capacity.
            heap += t.buckets.capacity() * (std::mem::size_of::<(MaskedKey, Vec<Entry>)>() + 1);
            for b in t.buckets.values() {
                heap += b.capacity() * std::mem::size_of::<Entry>();
                largest = largest.max(b.len());
            }
        }
        Stats {
            entries: self.entries,
            tables: self.tables.len(),
            largest_bucket: largest,
            heap_bytes: heap,
        }
    }
}
