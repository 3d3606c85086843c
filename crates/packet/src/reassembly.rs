//! TCP stream reassembly for one direction of a connection.
//!
//! Segments are placed by sequence number relative to the first byte of the stream and
//! delivered in order. The policy for overlaps and retransmissions is **first wins**: a
//! byte, once received (whether already delivered or still waiting out of order), is never
//! replaced by a later segment that covers it with different content. This is the policy
//! of BSD-style stacks for data already queued, and it means an attacker cannot rewrite
//! what was inspected by retransmitting.
//!
//! Limits: bytes beyond `depth` (stream offset) are not reassembled; out-of-order data
//! waiting for a hole is capped at `max_pending`. A hole is declared a *gap* and skipped
//! when the receiver acknowledges data past it (it will never be resent), or when the
//! waiting data reaches its cap. Delivery then resumes after the hole; the gap is counted
//! and the delivered bytes keep their true stream offsets.

use std::collections::BTreeMap;
use std::ops::Range;

/// One direction's reassembly state.
#[derive(Debug, Clone)]
pub struct Reassembler {
    /// Sequence number of stream offset 0, once known.
    isn: Option<u32>,
    /// Stream offset of the next byte to deliver.
    next: u64,
    /// Out-of-order pieces by stream offset; they never overlap each other.
    pending: BTreeMap<u64, Vec<u8>>,
    pending_bytes: usize,
    /// Delivered bytes kept for inspection: stream offsets `[kept_from, next)`.
    data: Vec<u8>,
    kept_from: u64,
    pub depth: u64,
    pub max_pending: usize,
    /// Holes skipped.
    pub gaps: u64,
}

impl Reassembler {
    pub fn new(depth: u64) -> Reassembler {
        Reassembler {
            isn: None,
            next: 0,
            pending: BTreeMap::new(),
            pending_bytes: 0,
            data: Vec::new(),
            kept_from: 0,
            depth,
            max_pending: 1 << 18,
            gaps: 0,
        }
    }

    /// Sets the sequence number that comes just before stream offset 0 (the SYN's),
    /// or, picked up midstream, the first data byte's minus one.
    pub fn set_isn(&mut self, isn: u32) {
        if self.isn.is_none() {
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
        let next_seq = isn.wrapping_add(1).wrapping_add(self.next as u32);
        let delta = seq.wrapping_sub(next_seq) as i32 as i64;
        Some(self.next as i64 + delta)
    }

    /// Adds a segment; returns the stream offsets of bytes that became in order (read
    /// them with [`Reassembler::data`]).
    pub fn insert(&mut self, seq: u32, payload: &[u8]) -> Range<u64> {
        let before = self.next;
        let Some(start) = self.offset_of(seq) else {
            return before..before;
        };
        let end = start + payload.len() as i64;
        let lo = start.max(self.next as i64);
        let hi = end.min(self.depth as i64);
        if lo < hi {
            let piece = &payload[(lo - start) as usize..(hi - start) as usize];
            self.add_pending(lo as u64, piece);
            self.drain();
        }
        before..self.next
    }

    /// Stores the parts of `[at, at + piece.len())` not already waiting.
    fn add_pending(&mut self, at: u64, piece: &[u8]) {
        let end = at + piece.len() as u64;
        let mut cur = at;
        // Existing pieces that overlap, in order.
        let overlapping: Vec<(u64, u64)> = self
            .pending
            .range(..end)
            .filter(|(s, v)| **s + v.len() as u64 > at)
            .map(|(s, v)| (*s, *s + v.len() as u64))
            .collect();
        let mut fresh = Vec::new();
        for (s, e) in overlapping {
            if s > cur {
                fresh.push((cur, s));
            }
            cur = cur.max(e);
        }
        if cur < end {
            fresh.push((cur, end));
        }
        for (s, e) in fresh {
            if self.pending_bytes >= self.max_pending {
                break;
            }
            let bytes = piece[(s - at) as usize..(e - at) as usize].to_vec();
            self.pending_bytes += bytes.len();
            self.pending.insert(s, bytes);
        }
        if self.pending_bytes >= self.max_pending {
            self.skip_gap();
        }
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

    /// Gives up on the hole before the first waiting piece.
    fn skip_gap(&mut self) {
        if let Some((&s, _)) = self.pending.first_key_value()
            && s > self.next
        {
            self.gaps += 1;
            // Keep offsets true: inspection data restarts after the hole.
            self.data.clear();
            self.kept_from = s;
            self.next = s;
            self.drain();
        }
    }

    /// The receiver acknowledged everything before `ack`: a hole before it will not be
    /// filled any more. Returns newly in-order offsets, as [`Reassembler::insert`].
    pub fn acked(&mut self, ack: u32) -> Range<u64> {
        let before = self.next;
        if let Some(off) = self.offset_of(ack)
            && off > self.next as i64
            && !self.pending.is_empty()
        {
            self.skip_gap();
        }
        before..self.next
    }

    /// In-order bytes at stream offsets `range` (which must lie within what is kept).
    pub fn data(&self, range: Range<u64>) -> &[u8] {
        let s = range.start.saturating_sub(self.kept_from) as usize;
        let e = (range.end.saturating_sub(self.kept_from) as usize).min(self.data.len());
        &self.data[s.min(e)..e]
    }

    /// The stream offset of the first byte kept and all kept bytes.
    pub fn kept(&self) -> (u64, &[u8]) {
        (self.kept_from, &self.data)
    }

    /// Stream offset of the next in-order byte: bytes reassembled so far.
    pub fn offset(&self) -> u64 {
        self.next
    }

    /// Heap bytes held.
    pub fn held_bytes(&self) -> usize {
        self.data.capacity() + self.pending_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(r.data(0..9), b"abcdefghi");
        // A retransmission with other bytes changes nothing.
        assert_eq!(r.insert(1000, b"XYZ"), 9..9);
        assert_eq!(r.data(0..9), b"abcdefghi");
    }

    #[test]
    fn overlap_first_wins_in_pending_data() {
        let mut r = r();
        r.insert(1004, b"EFGH");
        r.insert(1002, b"xxyyzz"); // covers 2..8; 4..8 already waiting
        r.insert(1000, b"AB");
        assert_eq!(r.data(0..8), b"ABxxEFGH");
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
        assert_eq!(r.data(4..8), b"zz");
        assert_eq!(r.insert(9, b"more"), 8..10, "cut at the depth");
        assert_eq!(r.insert(11, b"x"), 10..10);
    }

    #[test]
    fn sequence_wraps() {
        let mut r = Reassembler::new(1 << 20);
        r.set_isn(u32::MAX - 1);
        assert_eq!(r.insert(u32::MAX, b"ab"), 0..2);
        assert_eq!(r.insert(1, b"cd"), 2..4);
        assert_eq!(r.data(0..4), b"abcd");
    }
}
