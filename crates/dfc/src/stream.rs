//! Searching data that arrives in chunks.

use std::ops::ControlFlow;

use crate::Match;
use crate::long::Run;
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
    state: StreamState,
}

impl<'m> Stream<'m> {
    pub(crate) fn new(matcher: &'m Matcher) -> Stream<'m> {
        Stream {
            matcher,
            state: StreamState::new(),
        }
    }

    /// Searches the next chunk, calling `f` for every match that ends in it.
    pub fn feed(&mut self, chunk: &[u8], f: impl FnMut(Match)) {
        self.matcher.feed(&mut self.state, chunk, f);
    }

    /// Bytes fed so far: the stream offset of the next chunk.
    pub fn offset(&self) -> usize {
        self.state.offset
    }

    /// Forgets everything fed, to search a new stream from offset 0.
    pub fn reset(&mut self) {
        self.state.reset();
    }

    /// Bytes of history and pending work currently held, for memory accounting.
    pub fn held_bytes(&self) -> usize {
        self.state.held_bytes()
    }

    /// Detaches the state from the matcher, to store it where a borrow cannot live (a
    /// flow table); continue with [`Matcher::feed`].
    pub fn into_state(self) -> StreamState {
        self.state
    }
}

/// The state of a stream search without a borrow of its matcher: what a flow table keeps
/// per direction of a connection. Drive it with [`Matcher::feed`].
///
/// A state belongs to the matcher that first fed it. Fed by another matcher (after a rule
/// reload, say), it starts over from offset 0 with that matcher rather than misread the
/// other's pending work.
#[derive(Debug, Clone, Default)]
pub struct StreamState {
    /// The matcher this state was fed by (0: none yet).
    matcher_id: u64,
    /// Bytes fed so far.
    offset: usize,
    /// Bytes `[hist_start, offset)` that pending work may still read.
    hist: Vec<u8>,
    hist_start: usize,
    pending: Vec<Pending>,
    spare: Vec<Pending>,
    /// Long patterns' runs (see `long.rs`): they read each chunk as it comes.
    long: Vec<Run>,
}

impl StreamState {
    /// A state with nothing fed.
    pub fn new() -> StreamState {
        StreamState::default()
    }

    /// Bytes fed so far: the stream offset of the next chunk.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Forgets everything fed, to search a new stream from offset 0.
    pub fn reset(&mut self) {
        self.matcher_id = 0;
        self.offset = 0;
        self.hist.clear();
        self.hist_start = 0;
        self.pending.clear();
        self.long.clear();
    }

    /// Bytes of history and pending work currently held, for memory accounting.
    pub fn held_bytes(&self) -> usize {
        self.hist.capacity()
            + (self.pending.capacity() + self.spare.capacity()) * size_of::<Pending>()
            + self.long.capacity() * size_of::<Run>()
    }
}

impl Matcher {
    /// Searches the next chunk of the stream whose state is `st`, calling `f` for every
    /// match that ends in it. Offsets count from the start of the stream.
    pub fn feed(&self, st: &mut StreamState, chunk: &[u8], mut f: impl FnMut(Match)) {
        if st.matcher_id != self.id {
            st.reset();
            st.matcher_id = self.id;
        }
        if chunk.is_empty() {
            return;
        }
        let m = self;
        let input = Input {
            hist: &st.hist,
            hist_start: st.hist_start,
            chunk,
            start: st.offset,
            end: st.offset + chunk.len(),
            fin: false,
        };
        st.spare.clear();
        let mut cx = Ctx {
            f: |x: Match| {
                f(x);
                ControlFlow::<()>::Continue(())
            },
            pending: &mut st.spare,
            probe: NoProbe,
            long: &mut st.long,
        };
        let _ = m.advance_runs(&input, &mut cx);
        for work in st.pending.drain(..) {
            let _ = m.resume(&input, work, &mut cx);
        }
        let _ = m.scan(&input, input.start, input.end, &mut cx);
        std::mem::swap(&mut st.pending, &mut st.spare);

        // Keep what a window of the next chunk or a pending item may read.
        let (start, end) = (input.start, input.end);
        let keep = st
            .pending
            .iter()
            .map(|p| p.needs_from(m.max_offset))
            .fold(end.saturating_sub(m.max_offset), usize::min);
        if keep >= start {
            st.hist.clear();
            st.hist.extend_from_slice(&chunk[keep - start..]);
        } else {
            st.hist.drain(..keep - st.hist_start);
            st.hist.extend_from_slice(chunk);
        }
        st.hist_start = keep;
        st.offset = end;
    }
}

#[cfg(test)]
mod tests {
    use crate::Builder;

    #[test]
    fn detached_state_continues_and_resets_for_another_matcher() {
        let mut b = Builder::new();
        b.add(1, "split", false);
        let m = b.build().unwrap();
        let mut s = m.stream();
        let mut got = Vec::new();
        s.feed(b"xxsp", |x| got.push(x.end));
        let mut st = s.into_state();
        m.feed(&mut st, b"lit", |x| got.push(x.end));
        assert_eq!(got, vec![7]);
        // The same patterns in another matcher: the state starts over at offset 0.
        let other = b.build().unwrap();
        other.feed(&mut st, b"it split", |x| got.push(x.end));
        assert_eq!(got, vec![7, 8]);
        assert_eq!(st.offset(), 8);
    }
}
