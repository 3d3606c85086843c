//! The compiled matcher and its search API.

use std::collections::VecDeque;
use std::fmt;
use std::ops::ControlFlow;

use crate::Match;
use crate::filter::{Bitmap, ClassTable, Filter2};
use crate::long::Run;
use crate::search::{Ctx, Input, NoProbe, Probe};
use crate::set::PatternSet;
use crate::stream::Stream;
use crate::table::{Nested, Table};

/// A length class of patterns of two bytes or more.
#[derive(Clone, Debug)]
pub(crate) struct Class {
    /// Where the class's fragment sits in its patterns (and so `i - offset` is the start).
    pub offset: u32,
    /// Bytes of key: the class's minimum pattern length, at most 8.
    pub key_len: u32,
    pub max_len: u32,
    /// The additional 2-byte filter `(offset from the start, bitmap)`, within the key:
    /// none or one (the search takes them as an array of their number).
    pub filters: Box<[(u32, Filter2)]>,
    pub table: Table,
}

/// A compiled set of literal patterns.
///
/// Built by [`crate::Builder`]. Immutable, `Send + Sync`: share one across threads; each
/// search keeps its state on the stack (and a [`Stream`] keeps its own).
#[derive(Clone)]
pub struct Matcher {
    /// The initial filter runs with AVX2 gathers (see `simd`).
    pub(crate) simd: bool,
    pub(crate) set: PatternSet,
    pub(crate) added: usize,
    /// Bytes that index the initial filter: 1, 2 or 3.
    pub(crate) width: u8,
    pub(crate) initial: Bitmap,
    /// Class bits per 2-byte window (bit `c` for class `c`, the top bit for one-byte
    /// patterns); a cell is non-zero exactly where the 2-byte initial filter passes.
    pub(crate) table: ClassTable,
    /// The cell bit of one-byte patterns.
    pub(crate) one_bit: u8,
    /// For each first byte, the classes some second byte could select.
    pub(crate) first_mask: [u8; 256],
    /// For each byte value `b`, `one_ids[one_offsets[b]..one_offsets[b + 1]]` are the
    /// ids of the one-byte patterns it completes.
    pub(crate) one_offsets: Box<[u32; 257]>,
    pub(crate) one_ids: Box<[u32]>,
    pub(crate) classes: Box<[Class]>,
    pub(crate) nested: Box<[Nested]>,
    /// The largest class offset: how far back of a window a candidate may start.
    pub(crate) max_offset: usize,
    /// Distinguishes matchers, so a [`crate::StreamState`] knows which one it belongs to.
    pub(crate) id: u64,
}

impl Matcher {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        simd: bool,
        set: PatternSet,
        added: usize,
        width: usize,
        initial: Bitmap,
        table: ClassTable,
        first_mask: [u8; 256],
        one_offsets: Box<[u32; 257]>,
        one_ids: Box<[u32]>,
        classes: Box<[Class]>,
        nested: Box<[Nested]>,
    ) -> Matcher {
        let max_offset = classes.iter().map(|c| c.offset as usize).max().unwrap_or(0);
        Matcher {
            simd,
            set,
            added,
            width: width as u8,
            initial,
            one_bit: table.one_bit(),
            table,
            first_mask,
            one_offsets,
            one_ids,
            classes,
            nested,
            max_offset,
            id: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
        }
    }

    /// Calls `f` for every occurrence of every pattern, overlapping ones included, until
    /// `f` breaks. Matches come in the order their windows are examined: grouped by start
    /// position roughly, not sorted; sort them if you need an order.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// let mut b = dfc::Builder::new();
    /// b.add(1, "he", false).add(2, "hers", false).add(3, "she", true);
    /// let m = b.build().unwrap();
    /// let mut first = None;
    /// m.try_for_each_match(b"uSHErs", |x| {
    ///     first = Some(x);
    ///     ControlFlow::Break(())
    /// });
    /// assert!(first.is_some());
    /// ```
    pub fn try_for_each_match<B>(
        &self,
        haystack: &[u8],
        f: impl FnMut(Match) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let input = Input::block(haystack);
        let mut pending = Vec::new();
        let mut long = Vec::new();
        let mut cx = Ctx {
            f,
            pending: &mut pending,
            probe: NoProbe,
            long: &mut long,
        };
        let r = self.scan(&input, 0, haystack.len(), &mut cx);
        debug_assert!(pending.is_empty());
        r
    }

    /// Calls `f` for every occurrence of every pattern, overlapping ones included.
    ///
    /// ```
    /// let mut b = dfc::Builder::new();
    /// b.add(1, "he", false).add(2, "hers", false).add(3, "she", true);
    /// let m = b.build().unwrap();
    /// let mut found = Vec::new();
    /// m.for_each_match(b"uSHErs", |x| found.push((x.pattern, x.start, x.end)));
    /// found.sort();
    /// assert_eq!(found, vec![(3, 1, 4)]);
    /// ```
    pub fn for_each_match(&self, haystack: &[u8], mut f: impl FnMut(Match)) {
        let _ = self.try_for_each_match(haystack, |m| {
            f(m);
            ControlFlow::<()>::Continue(())
        });
    }

    /// An iterator over every occurrence of every pattern, in the order of
    /// [`Matcher::for_each_match`].
    ///
    /// ```
    /// let mut b = dfc::Builder::new();
    /// b.add(0, "abra", false).add(1, "cad", false);
    /// let m = b.build().unwrap();
    /// let spans: Vec<_> = m.find_iter(b"abracadabra").map(|x| (x.start, x.end)).collect();
    /// assert_eq!(spans.len(), 3);
    /// ```
    pub fn find_iter<'m, 'h>(&'m self, haystack: &'h [u8]) -> FindIter<'m, 'h> {
        FindIter {
            matcher: self,
            haystack,
            next_window: 0,
            buffer: VecDeque::new(),
            long: Vec::new(),
        }
    }

    /// The number of occurrences in `haystack`.
    pub fn count(&self, haystack: &[u8]) -> usize {
        let mut n = 0;
        self.for_each_match(haystack, |_| n += 1);
        n
    }

    /// Whether any pattern occurs in `haystack`; stops at the first match.
    pub fn is_match(&self, haystack: &[u8]) -> bool {
        self.try_for_each_match(haystack, |_| ControlFlow::Break(()))
            .is_break()
    }

    /// A stream that searches data fed to it in chunks; see [`Stream`].
    pub fn stream(&self) -> Stream<'_> {
        Stream::new(self)
    }

    /// The number of patterns added, duplicates included.
    pub fn pattern_count(&self) -> usize {
        self.added
    }

    /// The number of distinct patterns (same bytes and case flag counted once).
    pub fn distinct_patterns(&self) -> usize {
        self.set.pats.len()
    }

    /// The length of the longest pattern.
    pub fn max_pattern_len(&self) -> usize {
        self.set
            .pats
            .iter()
            .map(|p| p.len as usize)
            .max()
            .unwrap_or(0)
    }

    /// Heap memory owned by the matcher, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.set.heap_bytes()
            + self.initial.heap_bytes()
            + self.table.heap_bytes()
            + (self.one_offsets.len() + self.one_ids.len()) * 4
            + self.classes.len() * size_of::<Class>()
            + self
                .classes
                .iter()
                .map(|c| c.table.heap_bytes() + c.filters.len() * (size_of::<Filter2>() + 8))
                .sum::<usize>()
            + self.nested.len() * size_of::<Nested>()
            + self.nested.iter().map(|n| n.heap_bytes()).sum::<usize>()
    }

    /// How the matcher was laid out: filter sizes and fill, classes, tables.
    pub fn info(&self) -> Info {
        let ones: Vec<u8> = (0..=255u8)
            .filter(|&b| self.one_offsets[b as usize] < self.one_offsets[b as usize + 1])
            .collect();
        Info {
            direct_filter_bytes: self.width as usize,
            vectorized: self.simd,
            direct_filter_fill: self.initial.count_ones() as f64 / self.initial.len_bits() as f64,
            one_byte_values: ones.len(),
            classes: self
                .classes
                .iter()
                .map(|c| ClassInfo {
                    key_len: c.key_len as usize,
                    max_len: c.max_len as usize,
                    offset: c.offset as usize,
                    filter_offsets: c.filters.iter().map(|f| f.0 as usize).collect(),
                    filter_fill: c
                        .filters
                        .iter()
                        .map(|f| f.1.iter().map(|w| w.count_ones()).sum::<u32>() as f64 / 65536.0)
                        .collect(),
                    table_entries: c.table.len(),
                })
                .collect(),
            nested_nodes: self.nested.len(),
            heap_bytes: self.heap_bytes(),
        }
    }

    /// The windows the initial filter lets through, as indices (`b0 | b1 << 8 | ...`).
    /// Text made only of these windows is the paper's pathological input.
    pub fn initial_filter_windows(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for (w, &word) in self.initial.words().iter().enumerate() {
            let mut word = word;
            while word != 0 {
                out.push((w * 64) as u32 + word.trailing_zeros());
                word &= word - 1;
            }
        }
        out
    }

    /// Searches `haystack` and counts how far windows get through the stages.
    pub fn profile(&self, haystack: &[u8]) -> Profile {
        let mut counts = Counting::default();
        let input = Input::block(haystack);
        let mut pending = Vec::new();
        let mut long = Vec::new();
        let mut matches = 0usize;
        let mut cx = Ctx {
            f: |_m: Match| {
                matches += 1;
                ControlFlow::<()>::Continue(())
            },
            pending: &mut pending,
            probe: &mut counts,
            long: &mut long,
        };
        let _ = self.scan(&input, 0, haystack.len(), &mut cx);
        Profile {
            windows: haystack.len(),
            passed_initial: counts.windows,
            class_checks: counts.classes,
            lookups: counts.lookups,
            candidates: counts.candidates,
            compared_bytes: counts.compared,
            matches,
        }
    }
}

#[derive(Default)]
struct Counting {
    windows: usize,
    classes: usize,
    lookups: usize,
    candidates: usize,
    compared: usize,
}

impl Probe for &mut Counting {
    fn windows(&mut self, n: usize) {
        self.windows += n;
    }
    fn classes(&mut self, n: usize) {
        self.classes += n;
    }
    fn lookup(&mut self) {
        self.lookups += 1;
    }
    fn candidate(&mut self) {
        self.candidates += 1;
    }
    fn compared(&mut self, n: usize) {
        self.compared += n;
    }
}

/// How many windows reached each stage of a search (see [`Matcher::profile`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// Windows examined: one per haystack byte.
    pub windows: usize,
    /// Windows that passed the initial direct filter.
    pub passed_initial: usize,
    /// (window, class) pairs selected by the classifying filters.
    pub class_checks: usize,
    /// Hash-table lookups: class checks that passed the additional filters, plus
    /// second-stage lookups.
    pub lookups: usize,
    /// Patterns compared with the text.
    pub candidates: usize,
    /// Text bytes compared with patterns, at most: verifications, and the runs of long
    /// patterns. Linear in the text whatever the patterns (see `long.rs`).
    pub compared_bytes: usize,
    /// Matches reported.
    pub matches: usize,
}

/// Layout of a compiled matcher (see [`Matcher::info`]).
#[derive(Clone, Debug)]
pub struct Info {
    /// Bytes indexing the initial direct filter: 1, 2 or 3.
    pub direct_filter_bytes: usize,
    /// Whether the initial filter runs with SIMD instructions.
    pub vectorized: bool,
    /// Fraction of the initial filter's bits set.
    pub direct_filter_fill: f64,
    /// Byte values that complete a one-byte pattern.
    pub one_byte_values: usize,
    /// The length classes of two bytes or more, shortest first.
    pub classes: Vec<ClassInfo>,
    /// Second-stage nodes.
    pub nested_nodes: usize,
    /// Heap memory in bytes.
    pub heap_bytes: usize,
}

/// One length class (see [`Info`]).
#[derive(Clone, Debug)]
pub struct ClassInfo {
    /// Key bytes hashed, the class's shortest pattern up to 8.
    pub key_len: usize,
    /// The class's longest pattern.
    pub max_len: usize,
    /// Offset of the fragment in the initial and classifying filters.
    pub offset: usize,
    /// Offsets of the additional filters, in the order tested.
    pub filter_offsets: Vec<usize>,
    /// Fraction of bits set in each additional filter.
    pub filter_fill: Vec<f64>,
    /// Entries in the class table.
    pub table_entries: usize,
}

impl fmt::Debug for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Matcher")
            .field("patterns", &self.added)
            .field("distinct", &self.set.pats.len())
            .field("direct_filter_bytes", &self.width)
            .field("classes", &self.classes.len())
            .field("heap_bytes", &self.heap_bytes())
            .finish()
    }
}

/// Iterator over the matches in a haystack; see [`Matcher::find_iter`].
///
/// It searches a block of windows at a time and buffers that block's matches.
#[derive(Debug)]
pub struct FindIter<'m, 'h> {
    matcher: &'m Matcher,
    haystack: &'h [u8],
    next_window: usize,
    buffer: VecDeque<Match>,
    /// Long patterns' runs, carried from one block of windows to the next.
    long: Vec<Run>,
}

impl Iterator for FindIter<'_, '_> {
    type Item = Match;

    fn next(&mut self) -> Option<Match> {
        const BLOCK: usize = 4096;
        loop {
            if let Some(m) = self.buffer.pop_front() {
                return Some(m);
            }
            if self.next_window >= self.haystack.len() {
                return None;
            }
            let lo = self.next_window;
            let hi = (lo + BLOCK).min(self.haystack.len());
            let input = Input::block(self.haystack);
            let mut pending = Vec::new();
            let buffer = &mut self.buffer;
            let mut cx = Ctx {
                f: |m: Match| {
                    buffer.push_back(m);
                    ControlFlow::<()>::Continue(())
                },
                pending: &mut pending,
                probe: NoProbe,
                long: &mut self.long,
            };
            let _ = self.matcher.scan(&input, lo, hi, &mut cx);
            self.next_window = hi;
        }
    }
}
