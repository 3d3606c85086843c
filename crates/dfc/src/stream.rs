//! Searching data that arrives in chunks.

use std::ops::ControlFlow;

use crate::Match;
use crate::matcher::Matcher;
use crate::search::{Ctx, Input, NoProbe, Pending};

/// A search over a stream of chunks, for a reassembled TCP stream or a file read piece by
/// piece.
///
/// Offsets in reported matches count from the start of the stream. A match that spans
/// chunks is found and reported once, by the [`Stream::feed`] call that delivers its last
/// byte. Between calls the stream keeps only the bytes that unfinished work still needs
/// (a window or key straddling the boundary, a long pattern compared so far), never a copy
/// of whole chunks.
///
/// ```
/// let mut b = dfc::Builder::new();
/// b.add(7, "needle", true);
/// let m = b.build().unwrap();
/// let mut s = m.stream();
/// let mut found = Vec::new();
/// for chunk in [&b"hay NEE"[..], b"d", b"LE hay"] {
///     s.feed(chunk, |x| found.push((x.pattern, x.start, x.end)));
/// }
/// assert_eq!(found, vec![(7, 4, 10)]);
/// ```
#[derive(Debug, Clone)]
pub struct Stream<'m> {
    matcher: &'m Matcher,
    /// Bytes fed so far.
    offset: usize,
    /// Bytes `[hist_start, offset)` that pending work may still read.
    hist: Vec<u8>,
    hist_start: usize,
    pending: Vec<Pending>,
    spare: Vec<Pending>,
}

impl<'m> Stream<'m> {
    pub(crate) fn new(matcher: &'m Matcher) -> Stream<'m> {
        Stream {
            matcher,
            offset: 0,
            hist: Vec::new(),
            hist_start: 0,
            pending: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// Searches the next chunk, calling `f` for every match that ends in it.
    pub fn feed(&mut self, chunk: &[u8], mut f: impl FnMut(Match)) {
        if chunk.is_empty() {
            return;
        }
        let m = self.matcher;
        let input = Input {
            hist: &self.hist,
            hist_start: self.hist_start,
            chunk,
            start: self.offset,
            end: self.offset + chunk.len(),
            fin: false,
        };
        self.spare.clear();
        let mut cx = Ctx {
            f: |x: Match| {
                f(x);
                ControlFlow::<()>::Continue(())
            },
            pending: &mut self.spare,
            probe: NoProbe,
        };
        for work in self.pending.drain(..) {
            let _ = m.resume(&input, work, &mut cx);
        }
        let _ = m.scan(&input, input.start, input.end, &mut cx);
        std::mem::swap(&mut self.pending, &mut self.spare);

        // Keep what a window of the next chunk or a pending item may read.
        let (start, end) = (input.start, input.end);
        let keep = self
            .pending
            .iter()
            .map(|p| p.needs_from(m.max_offset))
            .fold(end.saturating_sub(m.max_offset), usize::min);
        if keep >= start {
            self.hist.clear();
            self.hist.extend_from_slice(&chunk[keep - start..]);
        } else {
            self.hist.drain(..keep - self.hist_start);
            self.hist.extend_from_slice(chunk);
        }
        self.hist_start = keep;
        self.offset = end;
    }

    /// Bytes fed so far: the stream offset of the next chunk.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Forgets everything fed, to search a new stream from offset 0.
    pub fn reset(&mut self) {
        self.offset = 0;
        self.hist.clear();
        self.hist_start = 0;
        self.pending.clear();
    }

    /// Bytes of history and pending work currently held, for memory accounting.
    pub fn held_bytes(&self) -> usize {
        self.hist.capacity()
            + (self.pending.capacity() + self.spare.capacity()) * size_of::<Pending>()
    }
}
