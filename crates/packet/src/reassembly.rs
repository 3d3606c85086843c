//! TCP stream reassembly for one direction of a connection.
//!
//! Segments are placed by sequence number relative to the first byte of the stream and
//! delivered in order. What happens when segments overlap with different bytes is the
//! stream's [`OverlapPolicy`], chosen by the receiving host as targets differ (Suricata's
//! `host-os-policy`): **first wins** by default, or **last wins** for Linux-like
//! targets. Either way, bytes already inspected ([`Reassembler::freeze`]) never change,
//! so an attacker cannot rewrite what detection has seen by retransmitting.
//!
//! Limits: bytes beyond `depth` (stream offset) are not reassembled; out-of-order data
//! waiting for a hole is capped at `max_pending`. A hole is declared a *gap* and skipped
//! when the receiver acknowledges data past it (it will never be resent), when the
//! waiting data reaches its cap, or when the flow ends ([`Reassembler::flush`]).
//! Delivery then resumes after the hole. Delivered bytes are kept as *runs*, contiguous
//! pieces with their true stream offsets; a gap separates two runs, and a pattern never
//! matches across it.

use std::collections::BTreeMap;
use std::ops::Range;

/// Which bytes a stream keeps when segments overlap with different content.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OverlapPolicy {
    /// The bytes received first stay (BSD, Windows, Solaris, ... and Suricata's default).
    #[default]
    First,
    /// A later segment replaces bytes not yet inspected (Linux and old Linux stacks).
    Last,
}

impl OverlapPolicy {
    /// The policy of one of Suricata's `host-os-policy` names.
    pub fn from_os(name: &str) -> Option<OverlapPolicy> {
        Some(match name {
            "linux" | "old-linux" | "last" => OverlapPolicy::Last,
            "bsd" | "bsd-right" | "old-solaris" | "solaris" | "hpux10" | "hpux11" | "irix"
            | "macos" | "vista" | "windows" | "windows2k3" | "first" => OverlapPolicy::First,
            _ => return None,
        })
    }
}

/// What a waiting piece costs beyond its bytes (map entry and allocation), counted
/// against [`Reassembler::max_pending`].
const PIECE_OVERHEAD: usize = 64;

/// A contiguous piece of delivered stream: it starts at stream offset `off`, and its
/// bytes start at `idx` in the kept data (it ends where the next run's bytes start).
#[derive(Clone, Copy, Debug)]
struct Run {
    off: u64,
    idx: usize,
}

/// A run of the stream as seen up to some offset: its bytes are `Reassembler::bytes(idx)`
/// and start at stream offset `off`; `new` are the offsets of the part not seen before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunView {
    pub off: u64,
    pub idx: Range<usize>,
    pub new: Range<u64>,
}

/// One direction's reassembly state.
#[derive(Debug, Clone)]
pub struct Reassembler {
    /// Sequence number of stream offset 0, once known.
    isn: Option<u32>,
    /// Urgent bytes taken out of the stream ([`Reassembler::insert_without`]): the
    /// sequence numbers after each map to one stream offset less.
    removed: u32,
    /// Stream offset of the next byte to deliver.
    next: u64,
    /// Out-of-order pieces by stream offset; they never overlap each other.
    pending: BTreeMap<u64, Vec<u8>>,
    pending_bytes: usize,
    /// Every delivered byte, run after run (the bytes of gaps are not there).
    data: Vec<u8>,
    /// The runs, in stream order; never empty.
    runs: Vec<Run>,
    /// Highest stream offset the receiver acknowledged.
    acked: u64,
    /// Bytes before this stream offset were inspected and do not change.
    frozen: u64,
    /// Which copy of overlapping bytes wins.
    policy: OverlapPolicy,
    /// Bytes reassembled at most.
    depth: u64,
    /// Out-of-order bytes waiting at most.
    max_pending: usize,
    /// Holes skipped.
    gaps: u64,
    /// Stream offset of the FIN, once seen (the sequence number it takes).
    fin: Option<u64>,
    /// Waiting pieces visited while adding segments: a measure of the work done, for
    /// tests that it stays proportional to the segments.
    examined: u64,
}

impl Reassembler {
    /// A stream that reassembles `depth` bytes at most ([`Reassembler::at_depth`]).
    pub fn with(depth: u64, policy: OverlapPolicy, max_pending: usize) -> Reassembler {
        Reassembler {
            policy,
            max_pending,
            ..Reassembler::new(depth)
        }
    }

    /// Holes skipped so far.
    pub fn gaps(&self) -> u64 {
        self.gaps
    }

    pub fn new(depth: u64) -> Reassembler {
        Reassembler {
            isn: None,
            removed: 0,
            next: 0,
            pending: BTreeMap::new(),
            pending_bytes: 0,
            data: Vec::new(),
            runs: vec![Run { off: 0, idx: 0 }],
            acked: 0,
            frozen: 0,
            policy: OverlapPolicy::First,
            depth,
            max_pending: 1 << 18,
            gaps: 0,
            fin: None,
            examined: 0,
        }
    }

    /// Sets the sequence number that comes just before stream offset 0 (the SYN's),
    /// or, picked up midstream, the first data byte's minus one.
    pub fn set_isn(&mut self, isn: u32) {
        if self.isn.is_none() {
            self.isn = Some(isn);
        }
    }

    /// Replaces the initial sequence number of a stream that holds no data yet (the
    /// handshake answered another of the client's SYNs).
    pub fn reset_isn(&mut self, isn: u32) {
        if self.next == 0 {
            self.isn = Some(isn);
        }
    }

    pub fn isn(&self) -> Option<u32> {
        self.isn
    }

    /// The stream offset of sequence number `seq`, taken as the nearest to `next`
    /// (sequence numbers wrap).
    fn offset_of(&self, seq: u32) -> Option<i64> {
        let isn = self.isn?;
        let next_seq = isn
            .wrapping_add(1)
            .wrapping_add(self.next as u32)
            .wrapping_add(self.removed);
        let delta = seq.wrapping_sub(next_seq) as i32 as i64;
        Some(self.next as i64 + delta)
    }

    /// Which copy of overlapping bytes the stream keeps. With [`OverlapPolicy::First`]
    /// bytes in order never change; with `Last` they may until inspected.
    pub fn policy(&self) -> OverlapPolicy {
        self.policy
    }

    /// Adds a segment; returns the stream offsets of bytes that became in order (read
    /// them with [`Reassembler::runs`]).
    pub fn insert(&mut self, seq: u32, payload: &[u8]) -> Range<u64> {
        let before = self.next;
        let Some(start) = self.offset_of(seq) else {
            return before..before;
        };
        let end = start + payload.len() as i64;
        if self.policy == OverlapPolicy::Last {
            // Delivered bytes not yet inspected take the new content.
            let lo = start.max(self.frozen as i64).max(0) as u64;
            let hi = end.min(self.next as i64);
            for off in lo..hi.max(lo as i64) as u64 {
                if let Some(i) = self.index_of(off) {
                    self.data[i] = payload[(off as i64 - start) as usize];
                }
            }
        }
        let lo = start.max(self.next as i64);
        let hi = end.min(self.depth.min(i64::MAX as u64) as i64);
        if lo < hi {
            let piece = &payload[(lo - start) as usize..(hi - start) as usize];
            if lo as u64 == self.next && self.pending.is_empty() && self.max_pending > 0 {
                // The next bytes, with nothing waiting: straight into the stream (what
                // the waiting pieces would do, without a piece to allocate).
                self.next += piece.len() as u64;
                self.data.extend_from_slice(piece);
            } else {
                self.add_pending(lo as u64, piece);
                self.drain();
            }
        }
        before..self.next
    }

    /// Adds a segment without its byte `k` (an urgent byte read out of band, RFC 6093
    /// section 3.1): the bytes after it follow the bytes before it in the stream, and so
    /// do later segments. A segment whose byte `k` was already delivered (a
    /// retransmission) takes out nothing again.
    pub fn insert_without(&mut self, seq: u32, payload: &[u8], k: usize) -> Range<u64> {
        let before = self.next;
        let Some(k) = (k < payload.len()).then_some(k) else {
            return self.insert(seq, payload);
        };
        let urgent = seq.wrapping_add(k as u32);
        self.insert(seq, &payload[..k]);
        if self
            .offset_of(urgent)
            .is_some_and(|o| o >= self.next as i64)
        {
            self.removed = self.removed.wrapping_add(1);
        }
        self.insert(urgent.wrapping_add(1), &payload[k + 1..]);
        before..self.next
    }

    /// What the stream already holds for a segment: the payload with every byte the
    /// stream has (delivered or waiting) in place of the segment's own, if any differs
    /// and the policy keeps the old bytes. An IPS forwards this instead of the segment,
    /// so the receiver gets what was inspected.
    pub fn held_view(&self, seq: u32, payload: &[u8]) -> Option<Vec<u8>> {
        if self.policy == OverlapPolicy::Last {
            return None;
        }
        let start = self.offset_of(seq)?;
        let mut out: Option<Vec<u8>> = None;
        for (i, &b) in payload.iter().enumerate() {
            let off = start + i as i64;
            if off < 0 {
                continue;
            }
            let off = off as u64;
            let held = if off < self.next {
                self.index_of(off).map(|k| self.data[k])
            } else {
                self.pending
                    .range(..=off)
                    .next_back()
                    .and_then(|(s, v)| v.get((off - s) as usize).copied())
            };
            if let Some(h) = held
                && h != b
            {
                out.get_or_insert_with(|| payload.to_vec())[i] = h;
            }
        }
        out
    }

    /// The stream offsets a segment covers (clipped at 0).
    pub fn span(&self, seq: u32, len: usize) -> Range<u64> {
        match self.offset_of(seq) {
            Some(s) => s.max(0) as u64..(s + len as i64).max(0) as u64,
            None => 0..0,
        }
    }

    /// Where the byte at stream offset `off` is kept, if it was delivered.
    fn index_of(&self, off: u64) -> Option<usize> {
        let r = self.runs.partition_point(|r| r.off <= off).checked_sub(1)?;
        let run = self.runs[r];
        let end = self.runs.get(r + 1).map_or(self.data.len(), |n| n.idx);
        let i = run.idx + (off - run.off) as usize;
        (i < end).then_some(i)
    }

    /// Stores `[at, at + piece.len())`: the parts not already waiting, and with
    /// [`OverlapPolicy::Last`] the new content of the parts that are. Only the waiting
    /// pieces that overlap it are visited (they never overlap each other, so they are
    /// the one that starts before `at` and those that start inside), and a part that
    /// continues the piece before it is appended to that piece: a storm of tiny
    /// in-order segments behind a hole grows one piece, at constant cost per segment.
    fn add_pending(&mut self, at: u64, piece: &[u8]) {
        let end = at + piece.len() as u64;
        let before = self
            .pending
            .range(..at)
            .next_back()
            .filter(|(s, v)| **s + v.len() as u64 > at)
            .map(|(s, _)| *s);
        let inside = self.pending.range(at..end).map(|(s, _)| *s);
        let keys: Vec<u64> = before.into_iter().chain(inside).collect();
        self.examined += keys.len() as u64;
        let mut cur = at;
        let mut fresh = Vec::new();
        for s in keys {
            let v = self.pending.get_mut(&s).expect("present");
            let e = s + v.len() as u64;
            if self.policy == OverlapPolicy::Last {
                let (lo, hi) = (s.max(at), e.min(end));
                v[(lo - s) as usize..(hi - s) as usize]
                    .copy_from_slice(&piece[(lo - at) as usize..(hi - at) as usize]);
            }
            if s > cur {
                fresh.push((cur, s));
            }
            cur = cur.max(e);
        }
        if cur < end {
            fresh.push((cur, end));
        }
        for (s, e) in fresh {
            if self.pending_cost() >= self.max_pending {
                break;
            }
            let bytes = &piece[(s - at) as usize..(e - at) as usize];
            self.pending_bytes += bytes.len();
            match self.pending.range_mut(..s).next_back() {
                Some((p, v)) if *p + v.len() as u64 == s => v.extend_from_slice(bytes),
                _ => {
                    self.pending.insert(s, bytes.to_vec());
                }
            }
        }
        if self.pending_cost() >= self.max_pending {
            self.skip_gap();
        }
    }

    /// What the waiting pieces cost against `max_pending`: their bytes, and for each a
    /// share for its bookkeeping (many tiny pieces hold more memory than their bytes).
    fn pending_cost(&self) -> usize {
        self.pending_bytes + self.pending.len() * PIECE_OVERHEAD
    }

    fn drain(&mut self) {
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() != self.next {
                break;
            }
            let bytes = entry.remove();
            self.pending_bytes -= bytes.len();
            self.next += bytes.len() as u64;
            self.data.extend_from_slice(&bytes);
        }
    }

    /// Gives up on the hole before the first waiting piece: a new run starts there.
    fn skip_gap(&mut self) {
        if let Some((&s, _)) = self.pending.first_key_value()
            && s > self.next
        {
            self.gaps += 1;
            let last = self.runs.last_mut().expect("never empty");
            if last.idx == self.data.len() {
                // The current run is empty (a leading gap): it starts later instead.
                last.off = s;
            } else {
                self.runs.push(Run {
                    off: s,
                    idx: self.data.len(),
                });
            }
            self.next = s;
            self.drain();
        }
    }

    /// The receiver acknowledged everything before `ack`: a hole before it will not be
    /// filled any more. Returns newly in-order offsets, as [`Reassembler::insert`].
    pub fn acked(&mut self, ack: u32) -> Range<u64> {
        let before = self.next;
        if let Some(off) = self.offset_of(ack) {
            self.acked = self.acked.max(off.max(0) as u64);
            if off > self.next as i64 && !self.pending.is_empty() {
                self.skip_gap();
            }
        }
        before..self.next
    }

    /// The stream ends: every hole is skipped and all waiting data delivered. Returns
    /// newly in-order offsets. The holes are not counted in [`Reassembler::gaps`]:
    /// Suricata counts a gap only where reassembly gives up on it while the stream goes
    /// on, not the unacknowledged data it inspects at the end (tcp-rst-unacked-stream-*).
    pub fn flush(&mut self) -> Range<u64> {
        let before = self.next;
        let gaps = self.gaps;
        while !self.pending.is_empty() {
            self.skip_gap();
        }
        self.gaps = gaps;
        before..self.next
    }

    /// Bytes before stream offset `off` were inspected: no policy may change them.
    pub fn freeze(&mut self, off: u64) {
        self.frozen = self.frozen.max(off);
    }

    /// The runs that overlap stream offsets `range`, each cut at `range.end` (and
    /// starting at the run's start, so rules see the stream as it was up to there).
    pub fn runs(&self, range: Range<u64>) -> Vec<RunView> {
        self.runs_iter(range).collect()
    }

    /// [`Reassembler::runs`] into a vector of the caller's (which is cleared first).
    pub fn runs_into(&self, range: Range<u64>, out: &mut Vec<RunView>) {
        out.clear();
        out.extend(self.runs_iter(range));
    }

    /// [`Reassembler::runs`], one at a time.
    pub fn runs_iter(&self, range: Range<u64>) -> impl Iterator<Item = RunView> + '_ {
        // Runs that end before the range are skipped by binary search.
        let first = self
            .runs
            .partition_point(|r| r.off <= range.start)
            .saturating_sub(1);
        let runs = self.runs.iter().enumerate().skip(first);
        runs.take_while(move |(_, run)| run.off < range.end)
            .filter_map(move |(k, run)| {
                let idx_end = self.runs.get(k + 1).map_or(self.data.len(), |n| n.idx);
                let run_end = run.off + (idx_end - run.idx) as u64;
                let lo = range.start.max(run.off);
                let hi = range.end.min(run_end);
                (lo < hi).then(|| RunView {
                    off: run.off,
                    idx: run.idx..run.idx + (hi - run.off) as usize,
                    new: lo..hi,
                })
            })
    }

    /// Kept bytes by index (from a [`RunView`]).
    pub fn bytes(&self, idx: Range<usize>) -> &[u8] {
        let e = idx.end.min(self.data.len());
        &self.data[idx.start.min(e)..e]
    }

    /// The stream up to offset `upto`, with each gap written as `[N bytes missing]`,
    /// at most `limit` bytes (for logging).
    pub fn render(&self, upto: u64, limit: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut prev = 0u64;
        for v in self.runs_iter(0..upto) {
            if out.len() >= limit {
                break;
            }
            if v.off > prev {
                out.extend_from_slice(format!("[{} bytes missing]", v.off - prev).as_bytes());
            }
            out.extend_from_slice(self.bytes(v.idx.clone()));
            prev = v.new.end;
        }
        out.truncate(limit);
        out
    }

    /// Stream offset of the next in-order byte: bytes reassembled so far.
    pub fn offset(&self) -> u64 {
        self.next
    }

    /// The highest stream offset the receiver acknowledged (it may lie past the data:
    /// a FIN takes a sequence number, and data may be missing).
    pub fn acked_offset(&self) -> u64 {
        self.acked
    }

    /// A FIN arrived on a segment at `seq` with `len` payload bytes.
    pub fn set_fin(&mut self, seq: u32, len: usize) {
        if let Some(off) = self.offset_of(seq) {
            let at = (off.max(0) as u64).saturating_add(len as u64);
            self.fin = Some(self.fin.map_or(at, |f| f.min(at)));
        }
    }

    /// Where the stream ends, if its FIN was seen.
    pub fn fin_offset(&self) -> Option<u64> {
        self.fin
    }

    /// Reassembly stopped at the depth limit.
    pub fn at_depth(&self) -> bool {
        self.next >= self.depth
    }

    /// Heap bytes held.
    pub fn held_bytes(&self) -> usize {
        self.data.capacity() + self.pending_cost() + self.runs.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: &Reassembler) -> Vec<u8> {
        r.render(u64::MAX, usize::MAX)
    }

    fn r() -> Reassembler {
        let mut r = Reassembler::new(1 << 20);
        r.set_isn(999);
        r
    }

    #[test]
    fn in_order_out_of_order_and_retransmission() {
        let mut r = r();
        assert_eq!(r.insert(1000, b"abc"), 0..3);
        assert_eq!(r.insert(1006, b"ghi"), 3..3);
        assert_eq!(r.insert(1003, b"def"), 3..9);
        assert_eq!(text(&r), b"abcdefghi");
        // A retransmission with other bytes changes nothing.
        assert_eq!(r.insert(1000, b"XYZ"), 9..9);
        assert_eq!(text(&r), b"abcdefghi");
    }

    #[test]
    fn overlap_first_wins_in_pending_data() {
        let mut r = r();
        r.insert(1004, b"EFGH");
        r.insert(1002, b"xxyyzz"); // covers 2..8; 4..8 already waiting
        r.insert(1000, b"AB");
        assert_eq!(text(&r), b"ABxxEFGH");
    }

    #[test]
    fn the_end_delivers_past_holes_without_counting_them() {
        let mut r = Reassembler::new(u64::MAX);
        r.set_isn(0);
        r.insert(1, b"abcd");
        r.insert(7, b"zz");
        assert_eq!(r.flush(), 4..8);
        assert_eq!(text(&r), b"abcd[2 bytes missing]zz");
        assert_eq!(r.gaps(), 0, "unacknowledged holes at the end are not gaps");
    }

    #[test]
    fn depth_limits_and_ack_skips_gap() {
        let mut r = Reassembler::new(10);
        r.set_isn(0);
        assert_eq!(r.insert(1, b"abcd"), 0..4);
        assert_eq!(r.insert(7, b"zz"), 4..4);
        // Bytes 4..6 were lost; the peer acknowledges past them.
        assert_eq!(r.acked(9), 4..8);
        assert_eq!(r.gaps, 1);
        assert_eq!(text(&r), b"abcd[2 bytes missing]zz");
        assert_eq!(r.insert(9, b"more"), 8..10, "cut at the depth");
        assert_eq!(r.insert(11, b"x"), 10..10);
    }

    /// An urgent byte read out of band leaves the stream, later segments close up on
    /// it, acknowledgements and the FIN count it, and a retransmission takes out nothing
    /// more.
    #[test]
    fn urgent_byte_out_of_band() {
        let mut r = r();
        r.insert(1000, b"GET /malic");
        assert_eq!(r.insert_without(1010, b"XY", 1), 10..11);
        assert_eq!(text(&r), b"GET /malicX");
        r.insert(1012, b"ious");
        assert_eq!(text(&r), b"GET /malicXious");
        r.insert_without(1010, b"XY", 1);
        r.insert(1016, b"!");
        assert_eq!(text(&r), b"GET /malicXious!");
        r.acked(1017);
        assert_eq!(r.acked_offset(), 16);
        r.set_fin(1017, 0);
        assert_eq!(r.fin_offset(), Some(16));
    }

    #[test]
    fn sequence_wraps() {
        let mut r = Reassembler::new(1 << 20);
        r.set_isn(u32::MAX - 1);
        assert_eq!(r.insert(u32::MAX, b"ab"), 0..2);
        assert_eq!(r.insert(1, b"cd"), 2..4);
        assert_eq!(text(&r), b"abcd");
    }

    #[test]
    fn runs_split_at_gaps_and_views_stop_at_the_end() {
        let mut r = r();
        r.insert(1000, b"VERY");
        r.insert(1008, b"DATA");
        assert_eq!(r.offset(), 4);
        assert_eq!(r.flush(), 4..12);
        assert_eq!(text(&r), b"VERY[4 bytes missing]DATA");
        let v = r.runs(2..10);
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].off, v[0].new.clone()), (0, 2..4));
        assert_eq!(r.bytes(v[0].idx.clone()), b"VERY");
        assert_eq!((v[1].off, v[1].new.clone()), (8, 8..10));
        assert_eq!(r.bytes(v[1].idx.clone()), b"DA");
        assert_eq!(r.render(10, 100), b"VERY[4 bytes missing]DA");
        assert_eq!(r.render(u64::MAX, 6), b"VERY[4");
    }

    #[test]
    fn leading_gap_is_skipped_when_acknowledged() {
        let mut r = r();
        r.insert(1004, b"GOOD");
        r.insert(1008, b"DATA");
        assert_eq!(r.offset(), 0);
        assert_eq!(r.acked(1012), 0..12, "the range spans the gap");
        assert_eq!(r.acked_offset(), 12);
        assert_eq!(text(&r), b"[4 bytes missing]GOODDATA");
        assert_eq!(r.runs(0..12).len(), 1);
    }

    #[test]
    fn last_policy_replaces_what_was_not_inspected() {
        let mut r = r();
        r.policy = OverlapPolicy::Last;
        r.insert(1000, b"GOOD");
        r.insert(1000, b"EVIL");
        assert_eq!(text(&r), b"EVIL");
        // Waiting data is replaced too.
        r.insert(1006, b"abcd");
        r.insert(1007, b"XY");
        r.insert(1004, b"..");
        assert_eq!(text(&r), b"EVIL..aXYd");
        // Inspected bytes stay.
        r.freeze(4);
        r.insert(1000, b"ZZZZZZ");
        assert_eq!(text(&r), b"EVILZZaXYd");
        let mut f = self::r();
        f.insert(1000, b"GOOD");
        f.insert(1000, b"EVIL");
        assert_eq!(text(&f), b"GOOD", "first wins by default");
    }

    /// The stream as runs of (offset, bytes).
    fn runs_of(r: &Reassembler) -> Vec<(u64, Vec<u8>)> {
        r.runs(0..u64::MAX)
            .into_iter()
            .filter(|v| !v.idx.is_empty())
            .map(|v| (v.off, r.bytes(v.idx.clone()).to_vec()))
            .collect()
    }

    /// The reference: every byte received by offset (the policy decides which copy
    /// stays), delivered from `next` while contiguous, holes skipped to the first byte
    /// held beyond them.
    struct Model {
        held: BTreeMap<u64, u8>,
        next: u64,
        frozen: u64,
        runs: Vec<(u64, u64)>,
        policy: OverlapPolicy,
    }

    impl Model {
        fn insert(&mut self, off: u64, bytes: &[u8]) -> Range<u64> {
            let before = self.next;
            for (i, &b) in bytes.iter().enumerate() {
                let o = off + i as u64;
                let fixed =
                    o < self.next && (self.policy == OverlapPolicy::First || o < self.frozen);
                match self.held.get(&o) {
                    Some(_) if fixed || self.policy == OverlapPolicy::First => {}
                    _ if o < self.next && self.policy == OverlapPolicy::First => {}
                    _ => {
                        // Before `next`, only bytes of a delivered run are kept (gap
                        // bytes are not).
                        if o < self.next && !self.runs.iter().any(|r| (r.0..r.1).contains(&o)) {
                            continue;
                        }
                        self.held.insert(o, b);
                    }
                }
            }
            self.deliver();
            before..self.next
        }

        fn deliver(&mut self) {
            while self.held.contains_key(&self.next) {
                self.next += 1;
            }
            if let Some(last) = self.runs.last_mut() {
                last.1 = self.next;
            }
        }

        fn skip_gap(&mut self) {
            if let Some((&s, _)) = self.held.range(self.next..).next() {
                self.runs.push((s, s));
                self.next = s;
                self.deliver();
            }
        }

        fn runs(&self) -> Vec<(u64, Vec<u8>)> {
            self.runs
                .iter()
                .filter(|r| r.1 > r.0)
                .map(|&(a, b)| (a, (a..b).map(|o| self.held[&o]).collect()))
                .collect()
        }
    }

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// Random segments (holes, overlaps with other bytes, retransmissions), acks past
    /// holes, freezes and a final flush, against the reference, for both policies.
    #[test]
    fn matches_the_reference_on_random_segments() {
        let mut rng = Rng(0x5eed_0001);
        for round in 0..3000 {
            let policy = if round % 2 == 0 {
                OverlapPolicy::First
            } else {
                OverlapPolicy::Last
            };
            let mut r = Reassembler::new(1 << 20);
            r.set_isn(999);
            r.policy = policy;
            let mut m = Model {
                held: BTreeMap::new(),
                next: 0,
                frozen: 0,
                runs: vec![(0, 0)],
                policy,
            };
            for _ in 0..rng.below(40) + 1 {
                match rng.below(10) {
                    0 => {
                        let ack = rng.below(300);
                        r.acked(1000 + ack as u32);
                        if ack > m.next && m.held.range(m.next..).next().is_some() {
                            m.skip_gap();
                        }
                    }
                    1 => {
                        r.freeze(r.offset());
                        m.frozen = m.frozen.max(m.next);
                    }
                    _ => {
                        let off = rng.below(200);
                        let len = rng.below(30) + 1;
                        let fill = rng.below(256) as u8;
                        let bytes: Vec<u8> = (0..len).map(|i| fill.wrapping_add(i as u8)).collect();
                        let got = r.insert(1000 + off as u32, &bytes);
                        let want = m.insert(off, &bytes);
                        assert_eq!(got, want, "round {round}: insert {off}+{len}");
                    }
                }
                assert_eq!(runs_of(&r), m.runs(), "round {round}");
            }
            r.flush();
            while m.held.range(m.next..).next().is_some() {
                m.skip_gap();
            }
            assert_eq!(runs_of(&r), m.runs(), "round {round} after flush");
        }
    }

    /// Behind a hole, 200,000 one-byte segments in order, then the same after each
    /// other in descending order, then 1000-byte segments stepping by one byte: the
    /// waiting pieces visited stay proportional to the segments (they grew with what
    /// was held, 87 s for the first storm).
    #[test]
    fn segment_storms_cost_constant_work_per_segment() {
        let n = 200_000u32;
        let mut r = Reassembler::new(u64::MAX);
        r.set_isn(999);
        r.max_pending = 1 << 30;
        for k in 0..n {
            r.insert(1001 + k, b"A");
        }
        assert!(r.examined <= u64::from(n), "{} pieces visited", r.examined);
        assert_eq!(
            r.pending.len(),
            1,
            "in-order bytes behind a hole are one piece"
        );
        assert_eq!(r.insert(1000, b"G"), 0..u64::from(n) + 1);

        let mut r = Reassembler::new(u64::MAX);
        r.set_isn(999);
        r.max_pending = 1 << 30;
        for k in (0..n).rev() {
            r.insert(1001 + k, b"A");
        }
        assert!(
            r.examined <= 2 * u64::from(n),
            "{} pieces visited",
            r.examined
        );
        assert_eq!(r.insert(1000, b"G"), 0..u64::from(n) + 1);

        let mut r = Reassembler::new(u64::MAX);
        r.set_isn(999);
        r.max_pending = 1 << 30;
        let seg = [b'B'; 1000];
        for k in 0..n / 4 {
            r.insert(1001 + k, &seg);
        }
        assert!(
            r.examined <= 2 * u64::from(n / 4),
            "{} pieces visited",
            r.examined
        );
        assert_eq!(r.pending.len(), 1);
    }

    /// The cap on waiting data counts each piece's bookkeeping, so a storm of tiny
    /// pieces that cannot be joined ends in a gap rather than in a million entries.
    #[test]
    fn tiny_pieces_count_against_the_cap() {
        let mut r = Reassembler::new(u64::MAX);
        r.set_isn(999);
        // Every other byte: no piece continues another.
        for k in 0..100_000u32 {
            r.insert(1001 + 2 * k, b"A");
        }
        assert!(
            r.pending.len() * PIECE_OVERHEAD <= r.max_pending,
            "{} pieces",
            r.pending.len()
        );
        assert!(r.gaps > 0);
    }
}
