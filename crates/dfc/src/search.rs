//! The search: initial filtering, progressive filtering and verification (paper Alg. 1).
//!
//! # Windows
//!
//! A *window* is a text position `i`. Its 2 bytes (`i`, `i+1`) index the initial direct
//! filter (or 1 or 3 bytes, see [`crate::DirectFilter`]). Every length class `c` placed its
//! patterns' fragment at offset `o_c`, so a pattern of class `c` can only start at
//! `s = i - o_c` if window `i` passes. For a passing window we read one byte of *class
//! bits* (the classifying filters, merged), and for each class whose bit is set we test
//! its additional filters and then look its key up in the class's table.
//!
//! # One code path for blocks and streams
//!
//! All reads go through [`Input`], a view of the text as *history* (a few bytes kept from
//! earlier chunks) followed by the current *chunk*. A read past the end of the chunk answers
//! [`Got::Later`] in a stream (the bytes may come) or [`Got::Never`] at the end of a block
//! search. Work that needs a byte that has not arrived yet is kept as a [`Pending`] item and
//! resumed by the next chunk from exactly where it stopped:
//!
//! - a window whose second byte is in the next chunk ([`Pending::Window`]);
//! - a table lookup whose key is incomplete ([`Pending::Table`]);
//! - a pattern compared up to the end of the chunk ([`Pending::Verify`]).
//!
//! Each window, each table lookup and each candidate comparison is done exactly once, so no
//! match is lost across a chunk boundary and none is reported twice; and every match is
//! reported by the call that delivers its last byte. A plain block search is the same code
//! with an empty history and `fin` set, where no pending item can arise.

use std::ops::ControlFlow;

use crate::Match;
use crate::filter::Filter2;
use crate::fold::{eq_nocase, lower_u64};
use crate::long::{LONG, Run};
use crate::matcher::{Class, Matcher};
use crate::table::{LEN, MULTI, NESTED, NOCASE, Table, fold_key, key_mask};

/// The result of reading bytes that may not be there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Got<T> {
    Yes(T),
    /// Past the end of the chunk, in a stream: the bytes may still come.
    Later,
    /// Past the end of the data, or before its start: the bytes will never exist.
    Never,
}

/// A view of the text: `hist` holds the bytes `[hist_start, start)` kept from earlier
/// chunks, `chunk` holds `[start, end)`. Positions are absolute stream offsets.
pub(crate) struct Input<'a> {
    pub hist: &'a [u8],
    pub hist_start: usize,
    pub chunk: &'a [u8],
    pub start: usize,
    pub end: usize,
    /// No byte will follow `end`.
    pub fin: bool,
}

impl<'a> Input<'a> {
    /// A whole haystack searched at once.
    pub(crate) fn block(haystack: &'a [u8]) -> Input<'a> {
        Input {
            hist: &[],
            hist_start: 0,
            chunk: haystack,
            start: 0,
            end: haystack.len(),
            fin: true,
        }
    }

    #[inline(always)]
    fn missing<T>(&self) -> Got<T> {
        if self.fin { Got::Never } else { Got::Later }
    }

    #[inline(always)]
    pub(crate) fn byte(&self, x: usize) -> Got<u8> {
        if x >= self.start {
            match self.chunk.get(x - self.start) {
                Some(&b) => Got::Yes(b),
                None => self.missing(),
            }
        } else if x >= self.hist_start {
            Got::Yes(self.hist[x - self.hist_start])
        } else {
            // Only bytes before the stream's start are never kept; the stream keeps every
            // byte that pending work still needs.
            debug_assert!(false, "read of dropped history at {x}");
            Got::Never
        }
    }

    /// Bytes `x` and `x+1`, little-endian.
    #[inline(always)]
    pub(crate) fn pair(&self, x: usize) -> Got<u16> {
        if x >= self.start && x + 2 <= self.end {
            let r = x - self.start;
            return Got::Yes(u16::from_le_bytes([self.chunk[r], self.chunk[r + 1]]));
        }
        match self.gather(x, 2) {
            Got::Yes(v) => Got::Yes(v as u16),
            Got::Later => Got::Later,
            Got::Never => Got::Never,
        }
    }

    /// `len` (1 to 8) bytes from `x`, little-endian, zero above `len`.
    #[inline(always)]
    pub(crate) fn key(&self, x: usize, len: usize) -> Got<u64> {
        match self.head(x) {
            Some(raw) => Got::Yes(raw & key_mask(len)),
            None => self.gather(x, len),
        }
    }

    /// The 8 bytes from `x`, little-endian, when they are all in the chunk.
    #[inline(always)]
    pub(crate) fn head(&self, x: usize) -> Option<u64> {
        if x >= self.start && x + 8 <= self.end {
            let r = x - self.start;
            return Some(u64::from_le_bytes(self.chunk[r..r + 8].try_into().unwrap()));
        }
        None
    }

    #[cold]
    fn gather(&self, x: usize, len: usize) -> Got<u64> {
        let mut v = 0u64;
        for k in 0..len {
            match self.byte(x + k) {
                Got::Yes(b) => v |= (b as u64) << (8 * k),
                Got::Later => return Got::Later,
                Got::Never => return Got::Never,
            }
        }
        Got::Yes(v)
    }
}

/// Which table a [`Pending::Table`] lookup is for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TableRef {
    Class(u32),
    Sub { node: u32, sub: u32 },
}

/// Work that waits for bytes of the next chunk.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Pending {
    /// Window `i` (its first byte seen, one-byte patterns reported) whose classes in `mask`
    /// still need byte `i+1`.
    Window { i: usize, mask: u8 },
    /// A lookup of a candidate starting at `s`, whose key is not complete yet.
    Table { t: TableRef, s: usize },
    /// Pattern `p` starting at `s`, equal to the text on `[s, from)`.
    Verify { p: u32, s: usize, from: usize },
}

impl Pending {
    /// The first position this work may still read.
    pub(crate) fn needs_from(&self, max_offset: usize) -> usize {
        match *self {
            Pending::Window { i, .. } => i.saturating_sub(max_offset),
            Pending::Table { s, .. } => s,
            Pending::Verify { from, .. } => from,
        }
    }
}

/// Initial-filter bits of the first `n` (at most 64) windows of `text`, which holds at
/// least `n + W - 1` bytes (and 2 more when `n` is 64, see [`df_bit`]).
#[inline(always)]
fn df_bits<const W: usize, const N: usize>(df: &[u64; N], text: &[u8], n: usize) -> u64 {
    if let Some(block) = text.get(..66) {
        let block: &[u8; 66] = block.try_into().unwrap();
        if n == 64 {
            let mut bits = 0u64;
            for k in 0..64 {
                bits |= df_bit::<W, N>(df, block, k) << k;
            }
            return bits;
        }
    }
    let mut bits = 0u64;
    for k in 0..n {
        let index = match W {
            1 => text[k] as usize,
            2 => text[k] as usize | (text[k + 1] as usize) << 8,
            _ => text[k] as usize | (text[k + 1] as usize) << 8 | (text[k + 2] as usize) << 16,
        };
        bits |= (df[(index >> 6) % N] >> (index & 63) & 1) << k;
    }
    bits
}

/// The initial-filter bit of window `k` of a block.
#[inline(always)]
fn df_bit<const W: usize, const N: usize>(df: &[u64; N], block: &[u8; 66], k: usize) -> u64 {
    let index = match W {
        1 => block[k] as usize,
        2 => block[k] as usize | (block[k + 1] as usize) << 8,
        _ => block[k] as usize | (block[k + 1] as usize) << 8 | (block[k + 2] as usize) << 16,
    };
    // `% N` is a mask (N is a power of two), which also proves the index in range.
    df[(index >> 6) % N] >> (index & 63) & 1
}

/// Whether the first 8 bytes of a candidate, `head`, pass a class's `K` additional
/// filters, tested together (one branch). `K` is a constant, so that the test is
/// straight-line code.
#[inline(always)]
fn passes<const K: usize>(filters: &[(u32, Filter2); K], head: u64) -> bool {
    let bit = |(off, filter): &(u32, Filter2)| {
        let w = (head >> (8 * off)) as u16;
        filter[w as usize >> 6] >> (w & 63)
    };
    filters.iter().fold(1, |pass, f| pass & bit(f)) & 1 != 0
}

/// A class's additional filters as an array of `K`, their number.
#[inline(always)]
fn filters_of<const K: usize>(class: &Class) -> &[(u32, Filter2); K] {
    class.filters[..]
        .try_into()
        .expect("a class has at most one additional filter")
}

/// Counters of how far windows get, for profiling (see [`crate::Profile`]).
pub(crate) trait Probe {
    /// `n` windows passed the initial filter.
    fn windows(&mut self, n: usize) {
        let _ = n;
    }
    /// `n` (window, class) pairs selected by the class bits.
    fn classes(&mut self, n: usize) {
        let _ = n;
    }
    fn lookup(&mut self) {}
    fn candidate(&mut self) {}
    /// At most `n` text bytes compared with a pattern (verification, or a long
    /// pattern's run).
    fn compared(&mut self, n: usize) {
        let _ = n;
    }
}

/// The probe that counts nothing and compiles away.
pub(crate) struct NoProbe;
impl Probe for NoProbe {}

/// Everything a search threads through its calls.
pub(crate) struct Ctx<'a, F, P> {
    pub f: F,
    pub pending: &'a mut Vec<Pending>,
    pub probe: P,
    /// The runs of long patterns (see [`crate::long`]).
    pub long: &'a mut Vec<Run>,
}

enum Verdict {
    Match,
    NoMatch,
    Partial(usize),
}

impl Matcher {
    /// Visits windows `[lo, hi)` of the chunk (a sub-range of `[inp.start, inp.end)`).
    pub(crate) fn scan<F, P, B>(
        &self,
        inp: &Input,
        lo: usize,
        hi: usize,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        debug_assert!(inp.start <= lo && hi <= inp.end);
        // The batched pipeline needs every read of every class in the chunk: the earliest
        // candidate start (`i - max_offset`) and 8 bytes of key after it.
        let b_lo = lo.max(inp.start + self.max_offset);
        let b_hi = hi.min(inp.end.saturating_sub(8));
        if b_lo + 64 <= b_hi {
            self.scan_windows(inp, lo, b_lo, cx)?;
            match self.width {
                1 => self.scan_batched::<1, 4, F, P, B>(inp, b_lo, b_hi, cx)?,
                2 => self.scan_batched::<2, 1024, F, P, B>(inp, b_lo, b_hi, cx)?,
                _ => self.scan_batched::<3, 262_144, F, P, B>(inp, b_lo, b_hi, cx)?,
            }
            self.scan_windows(inp, b_hi, hi, cx)
        } else {
            self.scan_windows(inp, lo, hi, cx)
        }
    }

    /// Visits windows `[lo, hi)` one at a time: the path for the edges of a chunk, where
    /// reads may fall into the history or past the end.
    fn scan_windows<F, P, B>(
        &self,
        inp: &Input,
        lo: usize,
        hi: usize,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        // Windows whose filter index lies wholly in the chunk take the fast loop.
        let whole = inp.end.saturating_sub(self.window_span() - 1);
        let fast_hi = hi.min(whole).max(lo);
        match self.width {
            1 => self.scan_df::<1, 4, F, P, B>(inp, lo, fast_hi, cx)?,
            2 => self.scan_df::<2, 1024, F, P, B>(inp, lo, fast_hi, cx)?,
            _ => self.scan_df::<3, 262_144, F, P, B>(inp, lo, fast_hi, cx)?,
        }
        for i in fast_hi..hi {
            self.first_visit(inp, i, cx)?;
        }
        ControlFlow::Continue(())
    }

    /// The middle of a chunk, 64 windows at a time: the class bits of the 64 windows become
    /// one bit mask per class (and one for one-byte patterns) in a single step (AVX2 gathers
    /// where available); then, class by class, each window with its bit passes the class's
    /// additional filters (tested together, one branch) before its key is looked up.
    ///
    /// `[lo, hi)` holds at least 64 windows, and every one must have all its reads in the
    /// chunk (see [`scan`]).
    ///
    /// [`scan`]: Matcher::scan
    #[inline(always)]
    fn scan_batched<const W: usize, const N: usize, F, P, B>(
        &self,
        inp: &Input,
        lo: usize,
        hi: usize,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        let df = self.initial_words::<N>();
        let text = inp.chunk;
        // The masks' element for one-byte patterns, if the set has any.
        let one = (self.one_bit != 0).then(|| self.one_bit.trailing_zeros() as usize);
        let mut next = lo - inp.start;
        let r_end = hi - inp.start;
        debug_assert!(next + 64 <= r_end);
        while next < r_end {
            // A short last block is read as the 64 windows that end the range, with those
            // already visited dropped, so that every block takes the full-width path.
            let r = next.min(r_end - 64);
            let block = text[r..r + 66].try_into().unwrap();
            let mut masks = self.block_classes::<W, N>(df, block);
            let seen = next - r;
            if seen > 0 {
                masks.iter_mut().for_each(|m| *m &= !0 << seen);
            }
            next = r + 64;
            cx.probe
                .windows(masks.iter().fold(0, |a, m| a | m).count_ones() as usize);
            for (c, class) in self.classes.iter().enumerate() {
                let m = masks[c];
                cx.probe.classes(m.count_ones() as usize);
                if m == 0 {
                    continue;
                }
                match class.filters.len() {
                    0 => self.class_block::<0, F, P, B>(inp, class, r, m, cx)?,
                    _ => self.class_block::<1, F, P, B>(inp, class, r, m, cx)?,
                }
            }
            let mut m = one.map_or(0, |b| masks[b]);
            while m != 0 {
                let x = r + m.trailing_zeros() as usize;
                m &= m - 1;
                self.one_byte(inp.start + x, text[x], cx)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The windows of class `class` in the batched block at `r` (relative to the chunk)
    /// whose bits `m` are set, with the class's `K` additional filters.
    #[inline(always)]
    fn class_block<const K: usize, F, P, B>(
        &self,
        inp: &Input,
        class: &Class,
        r: usize,
        mut m: u64,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        let filters = filters_of::<K>(class);
        // The candidates' starts are `base + k`; their first 8 bytes, which hold every
        // additional filter's pair and the key, all lie in these 72 bytes.
        let base = r - class.offset as usize;
        let starts: &[u8; 72] = inp.chunk[base..base + 72].try_into().unwrap();
        let head = |k: usize| u64::from_le_bytes(starts[k..k + 8].try_into().unwrap());
        if K > 0 {
            // Every window's additional filters first, with no branch on their result:
            // the filter words they read (often cache misses) are then loaded together,
            // not one after each mispredicted branch.
            let mut pass = 0u64;
            let mut w = m;
            while w != 0 {
                let k = w.trailing_zeros() as usize & 63;
                w &= w - 1;
                pass |= u64::from(passes(filters, head(k))) << k;
            }
            m = pass;
        }
        // The filters are passed: each window left goes to its lookup.
        while m != 0 {
            let k = m.trailing_zeros() as usize & 63;
            m &= m - 1;
            let s = inp.start + base + k;
            self.filtered::<0, F, P, B>(inp, &[], &class.table, s, head(k), cx)?;
        }
        ControlFlow::Continue(())
    }

    /// Bit masks of the 64 windows of `block`: element `b` has bit `k` set when cell bit `b`
    /// of window `k` is set and the window passes the initial filter.
    ///
    /// With AVX2 and the 2-byte filter, every window's class cell is gathered and split into
    /// masks with SIMD (no per-window work). Otherwise the initial filter's bits come first
    /// (with SIMD gathers for a 3-byte filter) and only the passing windows' cells are read.
    /// Measured on Zen 4 (docs/BENCHMARKS.md): the first way is 5-13% faster on real
    /// payloads with dense rule sets, 10-20% slower on random bytes with sparse ones.
    #[inline(always)]
    fn block_classes<const W: usize, const N: usize>(
        &self,
        df: &[u64; N],
        block: &[u8; 66],
    ) -> [u64; 8] {
        let mut bits = if W >= 2 && self.simd {
            if W == 2 {
                return crate::simd::block_classes(&self.table, block);
            }
            crate::simd::df_bits::<W, N>(df, block)
        } else {
            df_bits::<W, N>(df, block, 64)
        };
        let mut masks = [0u64; 8];
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let mut cell = self.table.get(u16::from_le_bytes([block[k], block[k + 1]]));
            while cell != 0 {
                masks[cell.trailing_zeros() as usize] |= 1 << k;
                cell &= cell - 1;
            }
        }
        masks
    }

    /// Bytes a window needs for the initial filter and the class bits.
    #[inline(always)]
    fn window_span(&self) -> usize {
        (self.width as usize).max(2)
    }

    /// The initial filter over windows `[lo, hi)`, all of whose filter bytes are in the
    /// chunk, 64 windows at a time into a bit mask, then the passing windows one by one. The
    /// filter is an array of `N` words, so that indexing it needs no bounds check.
    #[inline(always)]
    fn scan_df<const W: usize, const N: usize, F, P, B>(
        &self,
        inp: &Input,
        lo: usize,
        hi: usize,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        let df = self.initial_words::<N>();
        let text = inp.chunk;
        let mut r = lo - inp.start;
        let r_end = hi - inp.start;
        while r < r_end {
            let n = (r_end - r).min(64);
            let bits = self.edge_bits::<W, N>(df, &text[r..], n);
            self.passing(inp, inp.start + r, bits, &text[r..], cx)?;
            r += n;
        }
        ControlFlow::Continue(())
    }

    /// Initial-filter bits of the first `n` (at most 64) windows of `text`, all of whose
    /// filter bytes are in `text`: with SIMD over a zero-padded copy of the block where
    /// there is SIMD and a filter of 2 or 3 bytes (the bits of the padding's windows,
    /// past `n`, are dropped), else the scalar loop. Short payloads (most UDP ones) take
    /// only this path.
    #[inline(always)]
    fn edge_bits<const W: usize, const N: usize>(
        &self,
        df: &[u64; N],
        text: &[u8],
        n: usize,
    ) -> u64 {
        if W >= 2 && self.simd {
            let mut block = [0u8; 66];
            let len = text.len().min(66);
            block[..len].copy_from_slice(&text[..len]);
            let bits = crate::simd::df_bits::<W, N>(df, &block);
            return if n == 64 {
                bits
            } else {
                bits & ((1u64 << n) - 1)
            };
        }
        df_bits::<W, N>(df, text, n)
    }

    /// The initial filter's words as a fixed-size array (`N` must match the width).
    #[inline(always)]
    fn initial_words<const N: usize>(&self) -> &[u64; N] {
        self.initial
            .words()
            .try_into()
            .expect("filter size matches its width")
    }

    /// Visits the windows of a block whose bits are set.
    #[inline(always)]
    fn passing<F, P, B>(
        &self,
        inp: &Input,
        at: usize,
        mut bits: u64,
        block: &[u8],
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let pair = u16::from_le_bytes([block[k], block[k + 1]]);
            self.window(inp, at + k, pair, cx)?;
        }
        ControlFlow::Continue(())
    }

    /// A window whose two bytes are known: one-byte patterns, then the classes.
    #[inline(always)]
    fn window<F, P, B>(
        &self,
        inp: &Input,
        i: usize,
        pair: u16,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        cx.probe.windows(1);
        let mask = self.table.get(pair);
        if mask & self.one_bit != 0 {
            self.one_byte(i, pair as u8, cx)?;
        }
        self.classes_at(inp, i, mask & !self.one_bit, cx)
    }

    #[inline(always)]
    fn classes_at<F, P, B>(
        &self,
        inp: &Input,
        i: usize,
        mut mask: u8,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        while mask != 0 {
            let c = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            self.class(inp, c, i, cx)?;
        }
        ControlFlow::Continue(())
    }

    /// The first visit of a window near the end of the chunk, without the fast filter.
    fn first_visit<F, P, B>(&self, inp: &Input, i: usize, cx: &mut Ctx<F, P>) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        let Got::Yes(b0) = inp.byte(i) else {
            return ControlFlow::Continue(());
        };
        match inp.pair(i) {
            Got::Yes(pair) => self.window(inp, i, pair, cx),
            Got::Later => {
                self.one_byte(i, b0, cx)?;
                let mask = self.first_mask[b0 as usize];
                if mask != 0 {
                    cx.pending.push(Pending::Window { i, mask });
                }
                ControlFlow::Continue(())
            }
            Got::Never => self.one_byte(i, b0, cx),
        }
    }

    #[inline(always)]
    fn one_byte<F, P, B>(&self, i: usize, b0: u8, cx: &mut Ctx<F, P>) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        let lo = self.one_offsets[b0 as usize] as usize;
        let hi = self.one_offsets[b0 as usize + 1] as usize;
        for &id in &self.one_ids[lo..hi] {
            (cx.f)(Match {
                pattern: id,
                start: i,
                end: i + 1,
            })?;
        }
        ControlFlow::Continue(())
    }

    /// Progressive filtering of class `c` at window `i`, then verification.
    #[inline(always)]
    fn class<F, P, B>(&self, inp: &Input, c: usize, i: usize, cx: &mut Ctx<F, P>) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        let class = &self.classes[c];
        let Some(s) = i.checked_sub(class.offset as usize) else {
            return ControlFlow::Continue(());
        };
        cx.probe.classes(1);
        if let Some(head) = inp.head(s) {
            let t = &class.table;
            return match class.filters.len() {
                0 => self.filtered(inp, filters_of::<0>(class), t, s, head, cx),
                _ => self.filtered(inp, filters_of::<1>(class), t, s, head, cx),
            };
        }
        for (off, filter) in class.filters.iter() {
            match inp.pair(s + *off as usize) {
                Got::Yes(w) => {
                    if filter[w as usize >> 6] >> (w & 63) & 1 == 0 {
                        return ControlFlow::Continue(());
                    }
                }
                Got::Later => {}
                Got::Never => return ControlFlow::Continue(()),
            }
        }
        self.lookup(inp, TableRef::Class(c as u32), &class.table, s, cx)
    }

    /// A candidate starting at `s`, whose first 8 bytes, `head`, are all in the chunk:
    /// its class's additional filters, then its key's lookup in the class's table.
    #[inline(always)]
    fn filtered<const K: usize, F, P, B>(
        &self,
        inp: &Input,
        filters: &[(u32, Filter2); K],
        table: &Table,
        s: usize,
        head: u64,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        if !passes(filters, head) {
            return ControlFlow::Continue(());
        }
        cx.probe.lookup();
        let key = fold_key(head & table.key_mask);
        self.bucket(inp, table, key, Some(head), s, cx)
    }

    /// Looks the key of a candidate starting at `s` up in `table`, and verifies the
    /// patterns of matching entries.
    #[inline(always)]
    fn lookup<F, P, B>(
        &self,
        inp: &Input,
        t: TableRef,
        table: &Table,
        s: usize,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        let key = match inp.key(s + table.base as usize, table.key_len as usize) {
            Got::Yes(k) => fold_key(k),
            Got::Later => {
                cx.pending.push(Pending::Table { t, s });
                return ControlFlow::Continue(());
            }
            Got::Never => return ControlFlow::Continue(()),
        };
        cx.probe.lookup();
        self.bucket(inp, table, key, inp.head(s), s, cx)
    }

    /// Verifies the entries of `table` under `key` (folded) against a candidate starting at
    /// `s`, whose first 8 bytes are `head` when they are all in the chunk.
    #[inline(always)]
    fn bucket<F, P, B>(
        &self,
        inp: &Input,
        table: &Table,
        key: u64,
        head: Option<u64>,
        s: usize,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        for e in table.bucket(key) {
            if e.key != key {
                continue;
            }
            if e.target & NESTED != 0 {
                self.nested(inp, e.target & !NESTED, s, cx)?;
                continue;
            }
            let Some(head) = head else {
                self.candidate(inp, e.target, s, s, cx)?;
                continue;
            };
            cx.probe.candidate();
            let len = (e.len & LEN) as usize;
            let mut text = head & key_mask(len);
            if e.len & NOCASE != 0 {
                text = lower_u64(text);
            }
            if text != e.head {
                continue;
            }
            if len > LONG {
                self.candidate(inp, e.target, s, s, cx)?;
                continue;
            }
            cx.probe.compared(len);
            if len <= 8 || self.tail_equal(inp, e.target as usize, s) {
                if e.len & MULTI == 0 {
                    (cx.f)(Match {
                        pattern: e.id,
                        start: s,
                        end: s + len,
                    })?;
                } else {
                    self.report(e.target, s, cx)?;
                }
            } else if s + len > inp.end && !inp.fin {
                // Equal so far, but the tail runs into the next chunk.
                self.candidate(inp, e.target, s, s, cx)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Whether bytes `[8, len)` of pattern `p` equal the text at `s + 8`, all in the chunk.
    #[inline(always)]
    fn tail_equal(&self, inp: &Input, p: usize, s: usize) -> bool {
        let pat = self.set.pats[p];
        let len = pat.len as usize;
        let e = s + len;
        if e > inp.end {
            return false;
        }
        let text = &inp.chunk[s + 8 - inp.start..e - inp.start];
        let bytes = &self.set.bytes_of(p)[8..len];
        if pat.nocase {
            eq_nocase(text, bytes)
        } else {
            text == bytes
        }
    }

    /// The second stage of a crowded key group.
    #[inline(never)]
    fn nested<F, P, B>(
        &self,
        inp: &Input,
        node: u32,
        s: usize,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        let n = &self.nested[node as usize];
        for &p in n.exact.iter() {
            self.candidate(inp, p, s, s, cx)?;
        }
        for (j, sub) in n.subs.iter().enumerate() {
            match inp.byte(s + sub.table.base as usize) {
                Got::Yes(b) if !sub.admits(b) => continue,
                Got::Never => continue,
                _ => {}
            }
            let t = TableRef::Sub {
                node,
                sub: j as u32,
            };
            self.lookup(inp, t, &sub.table, s, cx)?;
        }
        ControlFlow::Continue(())
    }

    /// Compares pattern `p` at `s` (known equal on `[s, from)`) and reports it.
    #[inline]
    fn candidate<F, P, B>(
        &self,
        inp: &Input,
        p: u32,
        s: usize,
        from: usize,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        cx.probe.candidate();
        cx.probe.compared(self.set.head_len(p as usize));
        match self.verify(inp, p as usize, s, from) {
            Verdict::Match if self.set.pats[p as usize].len as usize > LONG => {
                self.long_candidate(inp, p, s, cx)
            }
            Verdict::Match => self.report(p, s, cx),
            Verdict::NoMatch => ControlFlow::Continue(()),
            Verdict::Partial(upto) => {
                cx.pending.push(Pending::Verify { p, s, from: upto });
                ControlFlow::Continue(())
            }
        }
    }

    /// Compares the head of pattern `p` (all of it, unless it is long) at `s`.
    #[inline]
    fn verify(&self, inp: &Input, p: usize, s: usize, from: usize) -> Verdict {
        let pat = self.set.pats[p];
        let bytes = &self.set.bytes_of(p)[..self.set.head_len(p)];
        let e = s + bytes.len();
        if from == s && s >= inp.start && e <= inp.end {
            let text = &inp.chunk[s - inp.start..e - inp.start];
            let equal = if pat.nocase {
                eq_nocase(text, bytes)
            } else {
                text == bytes
            };
            return if equal {
                Verdict::Match
            } else {
                Verdict::NoMatch
            };
        }
        self.verify_slow(inp, p, s, from)
    }

    #[cold]
    fn verify_slow(&self, inp: &Input, p: usize, s: usize, from: usize) -> Verdict {
        let pat = self.set.pats[p];
        let bytes = &self.set.bytes_of(p)[..self.set.head_len(p)];
        let e = s + bytes.len();
        for x in from..e.min(inp.end) {
            let Got::Yes(b) = inp.byte(x) else {
                return Verdict::NoMatch;
            };
            let b = if pat.nocase {
                b.to_ascii_lowercase()
            } else {
                b
            };
            if b != bytes[x - s] {
                return Verdict::NoMatch;
            }
        }
        if e <= inp.end {
            Verdict::Match
        } else if inp.fin {
            Verdict::NoMatch
        } else {
            Verdict::Partial(inp.end.max(from))
        }
    }

    #[inline(always)]
    pub(crate) fn report<F, P, B>(&self, p: u32, s: usize, cx: &mut Ctx<F, P>) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
    {
        let end = s + self.set.pats[p as usize].len as usize;
        for &id in self.set.ids_of(p as usize) {
            (cx.f)(Match {
                pattern: id,
                start: s,
                end,
            })?;
        }
        ControlFlow::Continue(())
    }

    /// Resumes one piece of pending work with the bytes of a new chunk.
    pub(crate) fn resume<F, P, B>(
        &self,
        inp: &Input,
        work: Pending,
        cx: &mut Ctx<F, P>,
    ) -> ControlFlow<B>
    where
        F: FnMut(Match) -> ControlFlow<B>,
        P: Probe,
    {
        match work {
            Pending::Window { i, mask } => match inp.pair(i) {
                Got::Yes(pair) => self.classes_at(inp, i, self.table.get(pair) & mask, cx),
                Got::Later => {
                    cx.pending.push(work);
                    ControlFlow::Continue(())
                }
                Got::Never => ControlFlow::Continue(()),
            },
            Pending::Table { t, s } => {
                let table = match t {
                    TableRef::Class(c) => &self.classes[c as usize].table,
                    TableRef::Sub { node, sub } => {
                        &self.nested[node as usize].subs[sub as usize].table
                    }
                };
                self.lookup(inp, t, table, s, cx)
            }
            Pending::Verify { p, s, from } => self.candidate(inp, p, s, from, cx),
        }
    }
}
