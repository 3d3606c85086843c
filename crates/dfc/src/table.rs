//! Verification: compact hash tables, with a second stage for crowded buckets (paper 3.3).
//!
//! Each length class has a [`Table`] keyed on the first `key_len` bytes of its patterns
//! (the class's minimum length, at most 8), folded ([`fold_key`]) so that case-sensitive
//! and case-insensitive patterns share one table. A bucket is a contiguous run of [`Entry`]s
//! (a CSR layout: one `u32` offset per bucket, then the entries), so a lookup touches
//! two cache lines in the common case.
//!
//! Real rule sets share prefixes: ET Open has hundreds of `User-Agent: ...` patterns, all
//! with the same 8-byte key. A key group larger than [`BUCKET_THRESHOLD`] does not become a
//! long list to compare one by one; it becomes one entry pointing at a [`Nested`] node, a
//! second stage that classifies the rest of those patterns by length and filters and hashes
//! the bytes that follow the key. Nesting repeats up to [`MAX_DEPTH`] levels.
//!
//! Filters and keys only ever narrow the candidates: a match is reported only after the
//! whole pattern has been compared with the text.

use crate::filter::Bitmap;
use crate::group::Groups;
use crate::set::PatternSet;

/// A key group larger than this gets a second-stage node.
pub(crate) const BUCKET_THRESHOLD: usize = 8;
/// How many second-stage levels may nest below a class table.
pub(crate) const MAX_DEPTH: usize = 6;
/// Marks an [`Entry::target`] that is a nested node rather than a pattern.
pub(crate) const NESTED: u32 = 1 << 31;
const HASH_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

/// One candidate in a bucket: the folded key and the pattern (or nested node) behind it.
///
/// A pattern entry also carries the pattern's first `min(len, 8)` bytes (lowercased when
/// case-insensitive) and its length, so that a pattern of up to 8 bytes is verified by one
/// masked compare with the text, and a longer one only needs its tail compared.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Entry {
    pub key: u64,
    pub head: u64,
    pub target: u32,
    /// Pattern length, with [`NOCASE`] set for a case-insensitive pattern and [`MULTI`]
    /// for one added under several ids.
    pub len: u32,
    /// The pattern's id, reported without a further lookup (unless [`MULTI`]).
    pub id: u32,
}

/// Marks a case-insensitive pattern in [`Entry::len`].
pub(crate) const NOCASE: u32 = 1 << 31;
/// Marks, in [`Entry::len`], a pattern with several ids, reported from the pattern set.
pub(crate) const MULTI: u32 = 1 << 30;
/// The length bits of [`Entry::len`].
pub(crate) const LEN: u32 = MULTI - 1;

/// A compact hash table over the key bytes `[base, base + key_len)` of its patterns.
#[derive(Clone, Debug)]
pub(crate) struct Table {
    /// Where the key starts, counted from the candidate's start in the text.
    pub base: u32,
    pub key_len: u8,
    /// [`key_mask`] of `key_len`.
    pub key_mask: u64,
    shift: u32,
    buckets: Box<[u32]>,
    entries: Box<[Entry]>,
}

/// A second-stage node: the patterns of one crowded key group, split again by length.
#[derive(Clone, Debug)]
pub(crate) struct Nested {
    /// Patterns that end exactly where the parent key ends.
    pub exact: Box<[u32]>,
    pub subs: Box<[Sub]>,
}

/// A length sub-class of a [`Nested`] node.
#[derive(Clone, Debug)]
pub(crate) struct Sub {
    /// Direct filter on the first byte after the parent key (256 bits).
    pub first: [u64; 4],
    pub table: Table,
}

impl Sub {
    #[inline(always)]
    pub(crate) fn admits(&self, byte: u8) -> bool {
        self.first[(byte >> 6) as usize] >> (byte & 63) & 1 == 1
    }
}

impl Table {
    /// The entries of the bucket that `key` (already folded) hashes to.
    #[inline(always)]
    pub(crate) fn bucket(&self, key: u64) -> &[Entry] {
        let h = (key.wrapping_mul(HASH_MUL) >> self.shift) as usize;
        let lo = self.buckets[h] as usize;
        let hi = self.buckets[h + 1] as usize;
        &self.entries[lo..hi]
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.buckets.len() * 4 + self.entries.len() * size_of::<Entry>()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The key of `bytes[base..base + key_len]`, zero-padded to 8 bytes, as tables hash and
/// compare it (see [`fold_key`]).
pub(crate) fn key_of(bytes: &[u8], base: usize, key_len: usize) -> u64 {
    let mut raw = [0u8; 8];
    raw[..key_len].copy_from_slice(&bytes[base..base + key_len]);
    fold_key(u64::from_le_bytes(raw))
}

/// A key with the case bit (0x20) of every byte set: a letter's cases share it, so that
/// case-sensitive and case-insensitive patterns share one table, in one instruction
/// where lowercasing letters only takes ten. A few other bytes share it too (`@` and
/// `` ` ``, NUL and space): a key only narrows the candidates, and the head or the whole
/// pattern is compared exactly before a match is reported.
#[inline(always)]
pub(crate) fn fold_key(key: u64) -> u64 {
    key | 0x2020_2020_2020_2020
}

/// The low `key_len` bytes set, for masking a wider load down to a key.
#[inline(always)]
pub(crate) fn key_mask(key_len: usize) -> u64 {
    if key_len >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * key_len)) - 1
    }
}

/// Builds tables and the nested nodes below them.
pub(crate) struct TableBuilder<'a> {
    pub set: &'a PatternSet,
    /// Lower bounds of the length classes, used again for suffixes in nested nodes.
    pub bounds: &'a [usize],
    pub nested: Vec<Nested>,
}

impl TableBuilder<'_> {
    /// A table over `members`, keyed on `[base, base + key_len)`; every member must be at
    /// least `base + key_len` bytes long.
    pub(crate) fn table(
        &mut self,
        members: &[u32],
        base: usize,
        key_len: usize,
        depth: usize,
    ) -> Table {
        debug_assert!((1..=8).contains(&key_len));
        // Members grouped by key, in first-seen order.
        let set = self.set;
        let key = |p: u32| {
            let bytes = set.bytes_of(p as usize);
            debug_assert!(bytes.len() >= base + key_len);
            key_of(bytes, base, key_len)
        };
        let groups = Groups::by_key(members.iter().map(|&p| key(p))).map(|i| members[i as usize]);

        let mut flat: Vec<Entry> = Vec::with_capacity(members.len());
        for group in groups.iter() {
            let key = key(group[0]);
            let rest = base + key_len;
            let splittable = group
                .iter()
                .any(|&p| self.set.pats[p as usize].len as usize > rest);
            if group.len() > BUCKET_THRESHOLD && depth < MAX_DEPTH && splittable {
                let node = self.nested(group, rest, depth + 1);
                flat.push(Entry {
                    key,
                    head: 0,
                    target: NESTED | node,
                    len: 0,
                    id: 0,
                });
            } else {
                flat.extend(group.iter().map(|&p| self.leaf(key, p)));
            }
        }

        // About two buckets per distinct key keeps most buckets at zero or one key.
        let bits = (2 * groups.len())
            .next_power_of_two()
            .trailing_zeros()
            .max(1);
        let shift = 64 - bits;
        let nbuckets = 1usize << bits;
        let hash = |key: u64| (key.wrapping_mul(HASH_MUL) >> shift) as usize;
        let mut buckets = vec![0u32; nbuckets + 1];
        for e in &flat {
            buckets[hash(e.key) + 1] += 1;
        }
        for h in 0..nbuckets {
            buckets[h + 1] += buckets[h];
        }
        let mut fill: Vec<u32> = buckets[..nbuckets].to_vec();
        let mut entries = vec![Entry::default(); flat.len()];
        for e in flat {
            let h = hash(e.key);
            entries[fill[h] as usize] = e;
            fill[h] += 1;
        }
        Table {
            base: base as u32,
            key_len: key_len as u8,
            key_mask: key_mask(key_len),
            shift,
            buckets: buckets.into_boxed_slice(),
            entries: entries.into_boxed_slice(),
        }
    }

    fn leaf(&self, key: u64, p: u32) -> Entry {
        let pat = self.set.pats[p as usize];
        let bytes = self.set.bytes_of(p as usize);
        let mut head = [0u8; 8];
        let n = bytes.len().min(8);
        head[..n].copy_from_slice(&bytes[..n]);
        let ids = self.set.ids_of(p as usize);
        Entry {
            key,
            // Case-insensitive bytes are stored lowercased already.
            head: u64::from_le_bytes(head),
            target: p,
            len: pat.len
                | if pat.nocase { NOCASE } else { 0 }
                | if ids.len() > 1 { MULTI } else { 0 },
            id: ids[0],
        }
    }

    /// A second-stage node for patterns that share the key ending at `base`.
    fn nested(&mut self, members: &[u32], base: usize, depth: usize) -> u32 {
        let len = |p: u32| self.set.pats[p as usize].len as usize;
        let exact: Vec<u32> = members
            .iter()
            .copied()
            .filter(|&p| len(p) == base)
            .collect();
        let mut by_class: Vec<Vec<u32>> = vec![Vec::new(); self.bounds.len()];
        for &p in members.iter().filter(|&&p| len(p) > base) {
            let suffix = len(p) - base;
            let class = self.bounds.iter().rposition(|&b| b <= suffix).unwrap_or(0);
            by_class[class].push(p);
        }
        let mut subs = Vec::new();
        for class in by_class.into_iter().filter(|c| !c.is_empty()) {
            let min_suffix = class.iter().map(|&p| len(p) - base).min().unwrap_or(1);
            let mut first = Bitmap::new(256);
            for &p in &class {
                let b = self.set.bytes_of(p as usize)[base];
                first.set(b as usize);
                if self.set.pats[p as usize].nocase {
                    first.set(b.to_ascii_uppercase() as usize);
                }
            }
            let table = self.table(&class, base, min_suffix.min(8), depth);
            let mut words = [0u64; 4];
            words.copy_from_slice(first.words());
            subs.push(Sub {
                first: words,
                table,
            });
        }
        self.nested.push(Nested {
            exact: exact.into_boxed_slice(),
            subs: subs.into_boxed_slice(),
        });
        (self.nested.len() - 1) as u32
    }
}

impl Nested {
    pub(crate) fn heap_bytes(&self) -> usize {
        self.exact.len() * 4
            + self.subs.len() * size_of::<Sub>()
            + self
                .subs
                .iter()
                .map(|s| s.table.heap_bytes())
                .sum::<usize>()
    }
}
