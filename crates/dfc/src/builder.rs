//! Building a [`Matcher`]: the initialisation phase of the paper (sections 3.1 to 3.3).

use std::fmt;

use crate::filter::{Bitmap, ClassTable, Filter2, for_each_index};
use crate::matcher::{Class, Matcher};
use crate::set::PatternSet;
use crate::table::TableBuilder;

/// Which initial direct filter to use.
///
/// The paper (section 3.1, tables 6 and 7) finds the 2-byte filter fastest for rule sets
/// up to tens of thousands of patterns, and the 3-byte filter faster for very large sets of
/// long patterns, where the 2-byte filter fills up and lets most windows through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DirectFilter {
    /// 2-byte filter, or 3-byte when the set is large (at least 50,000 distinct patterns),
    /// the 2-byte filter would be over a quarter full and the 3-byte one at least four
    /// times emptier.
    #[default]
    Auto,
    /// 256-bit filter indexed by one byte. Only useful to reproduce the paper's table.
    OneByte,
    /// 8 KB filter indexed by two bytes.
    TwoByte,
    /// 2 MB filter indexed by three bytes.
    ThreeByte,
}

/// Why a matcher could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// A pattern was empty; empty patterns would match at every position.
    EmptyPattern {
        /// The id it was added with.
        id: u32,
    },
    /// The length classes were not strictly increasing lower bounds starting at 1, or
    /// there were more than 8 (or more than 7 for patterns of two bytes or more).
    InvalidLengthClasses(Vec<usize>),
    /// The patterns do not fit the 32-bit offsets of the compact tables (over 4 GiB of
    /// pattern bytes or 2^31 distinct patterns).
    TooLarge,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::EmptyPattern { id } => write!(f, "pattern {id} is empty"),
            BuildError::InvalidLengthClasses(b) => write!(
                f,
                "length classes {b:?} must be 1 to 8 strictly increasing lower bounds starting at 1"
            ),
            BuildError::TooLarge => write!(f, "pattern set too large for 32-bit tables"),
        }
    }
}

impl std::error::Error for BuildError {}

/// The default length classes: 1, 2-3, 4-7 and 8+ bytes (paper section 3.2).
pub const DEFAULT_LENGTH_CLASSES: [usize; 4] = [1, 2, 4, 8];

/// Collects patterns and settings, then compiles them into a [`Matcher`].
///
/// ```
/// let mut b = dfc::Builder::new();
/// b.add(0, b"attack", false).add(1, b"GET ", true);
/// let m = b.build().unwrap();
/// assert_eq!(m.find_iter(b"get attacked").count(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct Builder {
    /// Each pattern's id, place in `bytes` and case flag.
    patterns: Vec<(u32, std::ops::Range<usize>, bool)>,
    /// The patterns' bytes, one after another.
    bytes: Vec<u8>,
    bounds: Vec<usize>,
    filter: DirectFilter,
    vectorized: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// A builder with no patterns and the default settings.
    pub fn new() -> Builder {
        Builder {
            patterns: Vec::new(),
            bytes: Vec::new(),
            bounds: DEFAULT_LENGTH_CLASSES.to_vec(),
            filter: DirectFilter::Auto,
            vectorized: true,
        }
    }

    /// Adds a pattern with the id to report for it. `nocase` makes it match ASCII letters
    /// of either case (other bytes always match exactly). Ids need not be unique or dense;
    /// the same bytes added twice (with the same `nocase`) are stored once and every id is
    /// reported.
    pub fn add(&mut self, id: u32, pattern: impl AsRef<[u8]>, nocase: bool) -> &mut Builder {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(pattern.as_ref());
        self.patterns.push((id, start..self.bytes.len(), nocase));
        self
    }

    /// Sets the length classes by their lower bounds, which must start at 1 and increase;
    /// the default `[1, 2, 4, 8]` means 1, 2-3, 4-7 and 8+ bytes. One-byte patterns are
    /// always looked up in a direct 256-entry table, whatever the classes.
    pub fn length_classes(&mut self, lower_bounds: &[usize]) -> &mut Builder {
        self.bounds = lower_bounds.to_vec();
        self
    }

    /// Chooses the initial direct filter.
    pub fn direct_filter(&mut self, filter: DirectFilter) -> &mut Builder {
        self.filter = filter;
        self
    }

    /// Whether the initial filter may use SIMD instructions (AVX2 gathers) when the CPU has
    /// them; on by default. Off gives the portable scalar loop, with identical results.
    pub fn vectorized(&mut self, yes: bool) -> &mut Builder {
        self.vectorized = yes;
        self
    }

    /// The number of patterns added so far.
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// Whether no pattern has been added.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Compiles the patterns. Time and memory are linear in the total pattern bytes.
    pub fn build(&self) -> Result<Matcher, BuildError> {
        let b = &self.bounds;
        if b.is_empty() || b[0] != 1 || b.len() > 8 || b.windows(2).any(|w| w[0] >= w[1]) {
            return Err(BuildError::InvalidLengthClasses(b.clone()));
        }
        if let Some((id, _, _)) = self.patterns.iter().find(|p| p.1.is_empty()) {
            return Err(BuildError::EmptyPattern { id: *id });
        }
        let total = self.bytes.len();
        let longest = self.patterns.iter().map(|p| p.1.len()).max().unwrap_or(0);
        if total > u32::MAX as usize || self.patterns.len() >= (1 << 31) || longest >= (1 << 31) {
            return Err(BuildError::TooLarge);
        }
        let input: Vec<(u32, &[u8], bool)> = self
            .patterns
            .iter()
            .map(|(id, at, nocase)| (*id, &self.bytes[at.clone()], *nocase))
            .collect();
        let mut set = PatternSet::new(&input);
        set.shrink();

        // One-byte patterns: a direct table from the byte to the patterns it completes.
        let mut ones_of: Vec<Vec<u32>> = vec![Vec::new(); 256];
        for (p, pat) in set.pats.iter().enumerate().filter(|(_, pat)| pat.len == 1) {
            let byte = set.bytes_of(p)[0];
            ones_of[byte as usize].push(p as u32);
            if pat.nocase && byte.is_ascii_alphabetic() {
                ones_of[byte.to_ascii_uppercase() as usize].push(p as u32);
            }
        }
        let mut one_offsets = Box::new([0u32; 257]);
        let mut one_ids = Vec::new();
        for (b, list) in ones_of.iter().enumerate() {
            one_offsets[b] = one_ids.len() as u32;
            for &p in list {
                one_ids.extend_from_slice(set.ids_of(p as usize));
            }
        }
        one_offsets[256] = one_ids.len() as u32;

        // Multi-byte length classes: the configured ranges, restricted to 2+ bytes, empty
        // ones dropped.
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for (k, &lo) in b.iter().enumerate() {
            let hi = b.get(k + 1).copied().unwrap_or(usize::MAX);
            let lo = lo.max(2);
            if lo < hi {
                ranges.push((lo, hi));
            }
        }
        // Class bits live in cells of at most 8 bits, one of which marks one-byte patterns.
        if ranges.len() > 7 {
            return Err(BuildError::InvalidLengthClasses(b.clone()));
        }
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); ranges.len()];
        for (p, pat) in set.pats.iter().enumerate() {
            let len = pat.len as usize;
            if let Some(c) = ranges.iter().position(|&(lo, hi)| lo <= len && len < hi) {
                members[c].push(p as u32);
            }
        }
        let members: Vec<Vec<u32>> = members.into_iter().filter(|m| !m.is_empty()).collect();
        let shapes: Vec<Shape> = members
            .iter()
            .map(|m| {
                let min_len = m.iter().map(|&p| set.pats[p as usize].len).min().unwrap() as usize;
                let max_len = m.iter().map(|&p| set.pats[p as usize].len).max().unwrap() as usize;
                Shape {
                    key_len: min_len.min(8),
                    max_len,
                }
            })
            .collect();

        // Initial filter: pick each class's fragment offset (paper 3.1).
        let width = match self.filter {
            DirectFilter::OneByte => 1,
            DirectFilter::TwoByte | DirectFilter::Auto => 2,
            DirectFilter::ThreeByte => 3,
        };
        let mut placed = place(&set, &ones_of, &members, &shapes, width);
        if self.filter == DirectFilter::Auto && set.pats.len() >= 50_000 {
            let fill2 = placed.fill();
            if fill2 > 0.25 {
                let three = place(&set, &ones_of, &members, &shapes, 3);
                if three.fill() * 4.0 < fill2 {
                    placed = three;
                }
            }
        }

        // Classifying filters, merged with the one-byte marks into one cell of class bits
        // per 2-byte window.
        let ones = ones_of.iter().any(|l| !l.is_empty());
        let mut table = ClassTable::new(members.len(), ones);
        let one = table.one_bit();
        for (b0, list) in ones_of.iter().enumerate() {
            if !list.is_empty() {
                for b1 in 0..256 {
                    table.set(b0 | b1 << 8, one);
                }
            }
        }
        // With them, per first byte, the classes of the windows that start with it (the
        // cells' class bits, one-byte marks aside, by their low byte).
        let mut first_mask = [0u8; 256];
        for (c, m) in members.iter().enumerate() {
            let o = placed.offsets[c];
            for &p in m {
                let bytes = set.bytes_of(p as usize);
                for_each_index(&bytes[o..o + 2], 2, set.pats[p as usize].nocase, &mut |i| {
                    table.set(i, 1 << c);
                    first_mask[i & 0xff] |= 1 << c;
                });
            }
        }

        // Additional filters and verification tables per class.
        let mut tables = TableBuilder {
            set: &set,
            bounds: b,
            nested: Vec::new(),
        };
        let mut classes = Vec::with_capacity(members.len());
        for (c, m) in members.iter().enumerate() {
            let shape = shapes[c];
            let offset = placed.offsets[c];
            let filters = additional_filters(&set, m, shape.key_len, offset);
            let table = tables.table(m, 0, shape.key_len, 0);
            classes.push(Class {
                offset: offset as u32,
                key_len: shape.key_len as u32,
                max_len: shape.max_len as u32,
                filters: filters.into_boxed_slice(),
                table,
            });
        }
        let nested = tables.nested;

        let simd =
            self.vectorized && placed.initial.len_bits() >= 1 << 16 && crate::simd::available();
        Ok(Matcher::assemble(
            simd,
            set,
            self.patterns.len(),
            placed.width,
            placed.initial,
            table,
            first_mask,
            one_offsets,
            one_ids.into_boxed_slice(),
            classes.into_boxed_slice(),
            nested.into_boxed_slice(),
        ))
    }
}

#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Bytes hashed and filtered: the class's minimum length, at most 8.
    key_len: usize,
    max_len: usize,
}

struct Placement {
    /// Bytes indexing `initial`: 1, 2 or 3.
    width: usize,
    offsets: Vec<usize>,
    initial: Bitmap,
}

impl Placement {
    fn fill(&self) -> f64 {
        self.initial.count_ones() as f64 / self.initial.len_bits() as f64
    }
}

/// Fills the initial filter of `width` bytes: one-byte patterns first, then each class in
/// increasing length order at the fragment offset that sets the fewest new bits.
fn place(
    set: &PatternSet,
    ones_of: &[Vec<u32>],
    members: &[Vec<u32>],
    shapes: &[Shape],
    width: usize,
) -> Placement {
    let bits = 1usize << (8 * width);
    let mut initial = Bitmap::new(bits);
    for (b0, list) in ones_of.iter().enumerate() {
        if !list.is_empty() {
            for_each_index(&[b0 as u8], width, false, &mut |i| {
                initial.set(i);
            });
        }
    }
    let mut scratch = Bitmap::new(bits);
    let mut touched: Vec<usize> = Vec::new();
    let mut offsets = Vec::with_capacity(members.len());
    for (m, shape) in members.iter().zip(shapes) {
        // The fragment must fit in the key and leave room for the 2-byte class filter.
        let span = width.clamp(2, shape.key_len);
        let mut best = (usize::MAX, 0);
        for o in 0..=shape.key_len - span {
            let mut new = 0;
            for &p in m {
                let bytes = set.bytes_of(p as usize);
                let nocase = set.pats[p as usize].nocase;
                for_each_index(&bytes[o..shape.key_len], width, nocase, &mut |i| {
                    if !initial.get(i) && scratch.set(i) {
                        touched.push(i);
                        new += 1;
                    }
                });
            }
            for &i in &touched {
                scratch.clear(i);
            }
            touched.clear();
            if new < best.0 {
                best = (new, o);
            }
        }
        let o = best.1;
        for &p in m {
            let bytes = set.bytes_of(p as usize);
            let nocase = set.pats[p as usize].nocase;
            for_each_index(&bytes[o..shape.key_len], width, nocase, &mut |i| {
                initial.set(i);
            });
        }
        offsets.push(o);
    }
    Placement {
        width,
        offsets,
        initial,
    }
}

/// The additional filter of a class (paper 3.2): the 2-byte filter, at an offset within the
/// key that does not overlap the class fragment, that sets the fewest bits. A class with a
/// key of 4 bytes or more gets one.
///
/// The paper tests more filters on longer keys, and up to three were built here. Measured
/// (docs/BENCHMARKS.md, twenty-fifth session): on real payloads a second and third filter
/// rejected few of the windows the first let through (table lookups 17.7% of windows with
/// one, 16.4% with three, ET Open 2019), and a scan of the nDPI captures ran 3.2% fewer
/// instructions with 4.7% fewer first-level data misses with one.
fn additional_filters(
    set: &PatternSet,
    members: &[u32],
    key_len: usize,
    class_offset: usize,
) -> Vec<(u32, Filter2)> {
    let want = usize::from(key_len >= 4);
    let mut used = vec![false; key_len];
    used[class_offset] = true;
    used[class_offset + 1] = true;
    let mut chosen = Vec::new();
    while chosen.len() < want {
        let mut best: Option<(usize, usize, Bitmap)> = None;
        for o in 0..key_len - 1 {
            if used[o] || used[o + 1] {
                continue;
            }
            let mut f = Bitmap::new(1 << 16);
            for &p in members {
                let bytes = set.bytes_of(p as usize);
                for_each_index(&bytes[o..o + 2], 2, set.pats[p as usize].nocase, &mut |i| {
                    f.set(i);
                });
            }
            let ones = f.count_ones();
            if best.as_ref().is_none_or(|b| ones < b.0) {
                best = Some((ones, o, f));
            }
        }
        let Some((_, o, f)) = best else { break };
        used[o] = true;
        used[o + 1] = true;
        chosen.push((o as u32, *f.into_filter2()));
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The first-byte masks, gathered while the cells are set, are what reading
        /// every cell of the table gives.
        #[test]
        fn first_byte_masks_match_the_table(
            pats in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 1..12), any::<bool>()),
                1..200,
            )
        ) {
            let mut b = Builder::new();
            for (id, (p, nocase)) in pats.iter().enumerate() {
                b.add(id as u32, p, *nocase);
            }
            let m = b.build().expect("patterns are not empty");
            let mut want = [0u8; 256];
            for w in 0..1usize << 16 {
                want[w & 0xff] |= m.table.get(w as u16) & !m.one_bit;
            }
            prop_assert_eq!(m.first_mask, want);
        }
    }
}
