//! Direct filters: bitmaps indexed directly by one, two or three bytes of text.
//!
//! A direct filter (DF) answers "could a pattern have these bytes at this place?" with one
//! memory load and no hashing. The 2-byte DF is 65,536 bits (8 KB) and stays in L1; the
//! 3-byte DF is 16 Mbit (2 MB) and lives in L2/L3; the 1-byte DF is 256 bits.
//!
//! Text is indexed little-endian: the window `b0 b1 b2` has index
//! `b0 | b1 << 8 | b2 << 16`, which is what an unaligned little-endian load gives.

use crate::fold::for_each_variant;

/// A 2-byte direct filter as a fixed-size array, so that a 16-bit index needs no bounds
/// check.
pub(crate) type Filter2 = [u64; 1024];

/// Class bits of every 2-byte window: the initial filter and the classifying filters of
/// the paper merged into one direct table. Each window has a *cell* of 4 bits (when the
/// length classes of 2+ bytes, and the one-byte bit if there are one-byte patterns, need
/// at most four) or 8 bits: bit `c` says a pattern of class `c` may have its fragment
/// here, the cell's top bit (when there are one-byte patterns) that one starts here. A
/// window passes the initial 2-byte filter exactly when its cell is not zero.
///
/// The cells are read for every window of the text, so their size counts: 32 KB of
/// 4-bit cells stay in L2 where 64 KB of 8-bit ones share it with the rest.
///
/// Cells are packed into 32-bit words so that AVX2 can gather eight windows' cells at once:
/// a gather reads the 4 bytes at the cell's byte, so one word of padding follows the cells.
#[derive(Clone, Debug)]
pub(crate) struct ClassTable {
    words: Box<[u32]>,
    /// log2 of the bits per cell: 2 (4-bit cells) or 3 (8-bit cells).
    log2_bits: u32,
    /// Whether the top bit of a cell marks one-byte patterns.
    ones: bool,
}

impl ClassTable {
    /// A table with room for `classes` classes (at most 7), and the one-byte bit when
    /// `ones`.
    pub(crate) fn new(classes: usize, ones: bool) -> ClassTable {
        debug_assert!(classes <= 7);
        let log2_bits = if classes + usize::from(ones) <= 4 {
            2
        } else {
            3
        };
        ClassTable {
            words: vec![0u32; (1 << 16 << log2_bits) / 32 + 1].into_boxed_slice(),
            log2_bits,
            ones,
        }
    }

    /// Bits per cell, 4 or 8.
    pub(crate) fn cell_bits(&self) -> u32 {
        1 << self.log2_bits
    }

    /// The bit of a cell that marks one-byte patterns (none without them).
    pub(crate) fn one_bit(&self) -> u8 {
        if self.ones {
            1 << (self.cell_bits() - 1)
        } else {
            0
        }
    }

    #[inline(always)]
    pub(crate) fn get(&self, window: u16) -> u8 {
        let w = window as usize;
        let word = w >> (5 - self.log2_bits);
        let shift = (w << self.log2_bits) & 31;
        (self.words[word] >> shift) as u8 & (0xffu32 >> (8 - self.cell_bits())) as u8
    }

    pub(crate) fn set(&mut self, window: usize, bits: u8) {
        let word = window >> (5 - self.log2_bits);
        let shift = (window << self.log2_bits) & 31;
        self.words[word] |= (bits as u32) << shift;
    }

    pub(crate) fn words(&self) -> &[u32] {
        &self.words
    }

    pub(crate) fn log2_bits(&self) -> u32 {
        self.log2_bits
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.words.len() * 4
    }
}

/// A fixed-size bitmap.
#[derive(Clone, Debug)]
pub(crate) struct Bitmap {
    words: Box<[u64]>,
}

impl Bitmap {
    pub(crate) fn new(bits: usize) -> Bitmap {
        Bitmap {
            words: vec![0u64; bits.div_ceil(64)].into_boxed_slice(),
        }
    }

    #[inline(always)]
    pub(crate) fn get(&self, index: usize) -> bool {
        self.words[index >> 6] >> (index & 63) & 1 == 1
    }

    /// Sets a bit; returns whether it was clear before.
    pub(crate) fn set(&mut self, index: usize) -> bool {
        let word = &mut self.words[index >> 6];
        let mask = 1u64 << (index & 63);
        let was_clear = *word & mask == 0;
        *word |= mask;
        was_clear
    }

    pub(crate) fn clear(&mut self, index: usize) {
        self.words[index >> 6] &= !(1u64 << (index & 63));
    }

    pub(crate) fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub(crate) fn len_bits(&self) -> usize {
        self.words.len() * 64
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }

    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// The bitmap of a 2-byte filter as a [`Filter2`].
    pub(crate) fn into_filter2(self) -> Box<Filter2> {
        self.words
            .try_into()
            .expect("a 2-byte filter has 65,536 bits")
    }
}

/// Calls `f` with the index of every `width`-byte text window that the fragment could be.
///
/// `fragment` holds the pattern bytes at the fragment's place; when it is shorter than
/// `width` (a short pattern near its end), the missing bytes are wildcards: every value of
/// them is set. For a case-insensitive pattern every letter-case variant is set.
pub(crate) fn for_each_index(
    fragment: &[u8],
    width: usize,
    nocase: bool,
    f: &mut impl FnMut(usize),
) {
    debug_assert!((1..=3).contains(&width));
    let known = fragment.len().min(width);
    let wild = width - known;
    for_each_variant(&fragment[..known], nocase, &mut |v| {
        let mut base = 0usize;
        for (k, &b) in v.iter().enumerate() {
            base |= (b as usize) << (8 * k);
        }
        for w in 0..(1usize << (8 * wild)) {
            f(base | w << (8 * known));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_set_get_count() {
        let mut b = Bitmap::new(65536);
        assert!(b.set(0x4142));
        assert!(!b.set(0x4142));
        assert!(b.get(0x4142));
        assert!(!b.get(0x4241));
        assert_eq!(b.count_ones(), 1);
        assert_eq!(b.heap_bytes(), 8192);
    }

    #[test]
    fn class_table_cells() {
        for classes in [1, 3, 4, 7] {
            let none = ClassTable::new(classes, false);
            assert_eq!(none.one_bit(), 0);
            assert_eq!(none.cell_bits(), if classes <= 4 { 4 } else { 8 });
            let mut t = ClassTable::new(classes, true);
            let one = t.one_bit();
            assert_eq!(one, if classes <= 3 { 8 } else { 0x80 });
            t.set(0x4142, 1);
            t.set(0x4142, one);
            t.set(0x4143, 2);
            t.set(0xffff, one | 1);
            assert_eq!(t.get(0x4142), one | 1);
            assert_eq!(t.get(0x4143), 2);
            assert_eq!(t.get(0x4141), 0);
            assert_eq!(t.get(0x4144), 0);
            assert_eq!(t.get(0xffff), one | 1);
            // The cells, and one word of padding for the byte-wise gathers.
            assert_eq!(t.heap_bytes(), 65536 * t.cell_bits() as usize / 8 + 4);
        }
    }

    #[test]
    fn fragment_indices_cover_cases_and_wildcards() {
        let mut got = Vec::new();
        for_each_index(b"aB", 2, true, &mut |i| got.push(i));
        got.sort();
        let mut want: Vec<usize> = [(b'a', b'b'), (b'a', b'B'), (b'A', b'b'), (b'A', b'B')]
            .iter()
            .map(|&(x, y)| x as usize | (y as usize) << 8)
            .collect();
        want.sort();
        assert_eq!(got, want);

        let mut n = 0;
        for_each_index(b"x", 2, false, &mut |i| {
            assert_eq!(i & 0xff, b'x' as usize);
            n += 1;
        });
        assert_eq!(n, 256, "a 1-byte fragment sets a bit for every second byte");
    }
}
