//! Frames: where a parser's records lie in its stream (a TLS record, an SMB 2 message,
//! an HTTP request), for rules' `frame:` keyword (see [`netsieve_wire::FrameType`]).
//!
//! A parser marks each record it completes in its [`Marks`], by where the record starts
//! relative to the first byte of the bytes it was just fed (negative when the record
//! began in bytes it held from an earlier feed). The [`Session`](crate::Session), which
//! knows where those bytes lie in the stream, turns the marks into [`Frame`]s with
//! stream offsets, numbered per direction, and keeps them until detection takes them.

use netsieve_wire::{Direction, FrameType, PerDir};
use std::collections::VecDeque;

/// One record of a stream (or of a datagram).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub ty: FrameType,
    pub dir: Direction,
    /// Its number in its direction, from 1.
    pub id: u64,
    /// Stream offset of its first byte (in a datagram: offset in the payload).
    pub start: u64,
    pub len: u64,
    /// The transaction it belongs to, where the protocol says (HTTP, SSH).
    pub tx: Option<u64>,
    /// It lies in the datagram just parsed, not in a stream.
    pub datagram: bool,
}

/// A record a parser completed, relative to the bytes of its latest feed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    ty: FrameType,
    start: i64,
    len: u64,
    tx: Option<u64>,
}

/// The records a parser completed during one feed; none are kept until rules inspect
/// frames ([`Marks::enable`]).
#[derive(Clone, Debug, Default)]
pub struct Marks {
    on: bool,
    list: Vec<Mark>,
}

impl Marks {
    /// Rules inspect frames: records are marked from now on.
    pub fn enable(&mut self) {
        self.on = true;
    }

    /// Records are marked.
    pub fn on(&self) -> bool {
        self.on
    }

    /// A record of type `ty`, `len` bytes from `start` (relative to the feed's first
    /// byte; negative in bytes held from before).
    pub fn add(&mut self, ty: FrameType, start: i64, len: usize, tx: Option<u64>) {
        if !self.on {
            return;
        }
        self.list.push(Mark {
            ty,
            start,
            len: len as u64,
            tx,
        });
    }

    /// A record and its header and body frames: `hdr` bytes of header, the rest body
    /// (no body frame when it is empty).
    pub fn add_split(&mut self, types: [FrameType; 3], start: i64, hdr: usize, len: usize) {
        let [pdu, head, data] = types;
        self.add(pdu, start, len, None);
        self.add(head, start, hdr.min(len), None);
        if len > hdr {
            self.add(data, start + hdr as i64, len - hdr, None);
        }
    }

    fn clear(&mut self) {
        self.list.clear();
    }
}

/// Frames a flow's parser found and detection has not taken yet, per direction.
#[derive(Clone, Debug, Default)]
pub struct Frames {
    waiting: PerDir<VecDeque<Frame>>,
    last_id: PerDir<u64>,
}

/// Frames kept waiting at most per direction (a flow of tiny records that detection
/// is not taking stays bounded).
const MAX_WAITING: usize = 4096;

impl Frames {
    /// Turns `marks` of direction `dir`, made while the parser read bytes starting at
    /// stream offset `base`, into frames; clears `marks`.
    pub fn absorb(&mut self, marks: &mut Marks, dir: Direction, base: u64, datagram: bool) {
        for m in &marks.list {
            let Some(start) = base.checked_add_signed(m.start) else {
                continue;
            };
            self.last_id[dir] += 1;
            let q = &mut self.waiting[dir];
            if q.len() >= MAX_WAITING {
                q.pop_front();
            }
            q.push_back(Frame {
                ty: m.ty,
                dir,
                id: self.last_id[dir],
                start,
                len: m.len,
                tx: m.tx,
                datagram,
            });
        }
        marks.clear();
    }

    /// The frames of direction `dir` that end by stream offset `upto` (and those of
    /// datagrams), oldest first; the others wait on.
    pub fn take(&mut self, dir: Direction, upto: u64) -> impl Iterator<Item = Frame> + '_ {
        let q = &mut self.waiting[dir];
        let ready = |f: &Frame| f.datagram || f.start.saturating_add(f.len) <= upto;
        let (now, later): (VecDeque<Frame>, VecDeque<Frame>) = q.drain(..).partition(ready);
        *q = later;
        now.into_iter()
    }

    /// Whether frames of direction `dir` wait.
    pub fn any(&self, dir: Direction) -> bool {
        !self.waiting[dir].is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_become_numbered_frames_at_stream_offsets() {
        let mut m = Marks::default();
        m.add(FrameType::TlsPdu, 0, 1, None);
        assert!(m.list.is_empty(), "marked before frames were wanted");
        m.enable();
        let t = [FrameType::TlsPdu, FrameType::TlsHdr, FrameType::TlsData];
        m.add_split(t, -3, 5, 8);
        let mut f = Frames::default();
        let d = Direction::ToClient;
        f.absorb(&mut m, d, 100, false);
        assert!(f.any(d) && !f.any(Direction::ToServer));
        // Only what ended by the offset is taken.
        assert_eq!(f.take(d, 102).count(), 1);
        let got: Vec<_> = f
            .take(d, u64::MAX)
            .map(|x| (x.ty, x.id, x.start, x.len))
            .collect();
        assert_eq!(
            got,
            [
                (FrameType::TlsPdu, 1, 97, 8),
                (FrameType::TlsData, 3, 102, 3)
            ]
        );
        // A mark before the stream's start is dropped; marks are cleared.
        m.add(FrameType::TlsPdu, -1, 1, None);
        f.absorb(&mut m, d, 0, false);
        assert!(!f.any(d));
        f.absorb(&mut m, d, 0, false);
        assert!(!f.any(d));
    }
}
