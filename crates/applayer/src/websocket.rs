//! WebSocket (RFC 6455), on an HTTP/1 connection that switched to it (`Upgrade:
//! websocket` answered by `101`). Each frame is a transaction of its own direction, as
//! Suricata 8's are: its FIN and RSV bits, opcode, masking key and payload (unmasked).
//!
//! A fragmented message's last frame holds the whole message's payload (its data
//! frames joined, control frames between them left out), so that a rule sees what the
//! fragments hide between them; a message compressed with `permessage-deflate` (RSV1 on
//! its first frame) is inflated, each direction keeping its window across messages.
//! Payloads are kept up to [`MAX_PAYLOAD`] bytes (Suricata's `max-payload-size`), the
//! rest of a frame passed over.

use flate2::{Decompress, FlushDecompress};
use netsieve_wire::{Direction, FrameType, PerDir};

use crate::frames::Marks;
use crate::txs::{Numbered, Txs};

/// Frames kept per flow.
const MAX_TXS: usize = 256;
/// Payload bytes kept of a frame or message.
pub const MAX_PAYLOAD: usize = 65_535;

pub use netsieve_wire::websocket::opcode_name;

/// One frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    pub dir: Direction,
    /// The first byte's high bits: FIN (0x80) and RSV1 to RSV3 (0x40, 0x20, 0x10).
    pub flags: u8,
    pub opcode: u8,
    pub mask: Option<u32>,
    /// The payload unmasked (inflated when compressed); for the last frame of a
    /// fragmented message, the whole message's.
    pub payload: Vec<u8>,
}

impl Tx {
    pub fn fin(&self) -> bool {
        self.flags & 0x80 != 0
    }
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

/// One direction's reading.
#[derive(Default)]
struct Side {
    /// Header bytes of the frame being read, until its header is whole.
    head: Vec<u8>,
    /// The frame whose payload is being read.
    frame: Option<Reading>,
    /// The data of the fragmented message in progress, and whether it is compressed.
    message: Option<(Vec<u8>, bool)>,
    /// `permessage-deflate`'s window, once a compressed message came.
    inflate: Option<Decompress>,
    /// Bytes read in this direction before the current feed.
    fed: u64,
}

impl std::fmt::Debug for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Side")
            .field("head", &self.head)
            .field("frame", &self.frame)
            .finish_non_exhaustive()
    }
}

/// A frame whose header was read.
#[derive(Clone, Debug)]
struct Reading {
    flags: u8,
    opcode: u8,
    mask: Option<[u8; 4]>,
    header_len: usize,
    /// Payload bytes still to come, and read so far.
    left: u64,
    seen: u64,
    payload: Vec<u8>,
    /// Stream position of its first byte, in this direction.
    start: u64,
}

/// A flow's WebSocket state.
#[derive(Debug, Default)]
pub struct WebSocket {
    pub txs: Txs<Tx, MAX_TXS>,
    sides: PerDir<Side>,
    pub marks: Marks,
}

impl WebSocket {
    /// The state of a connection that switched to WebSocket after `first` HTTP/1
    /// transactions: its frames are numbered from there.
    pub fn upgraded(first: u64) -> WebSocket {
        WebSocket {
            txs: Txs::starting_at(first),
            ..WebSocket::default()
        }
    }

    /// Feeds in-order bytes of one direction; returns whether a frame completed.
    pub fn feed(&mut self, dir: Direction, mut bytes: &[u8]) -> bool {
        let base = self.sides[dir].fed;
        self.sides[dir].fed += bytes.len() as u64;
        let mut pos = base;
        let mut done = false;
        loop {
            let side = &mut self.sides[dir];
            if side.frame.is_none() {
                if bytes.is_empty() {
                    break;
                }
                let n = take_head(side, bytes, pos);
                bytes = &bytes[n..];
                pos += n as u64;
            }
            let Some(f) = side.frame.as_mut() else { break };
            let n = usize::try_from(f.left)
                .unwrap_or(usize::MAX)
                .min(bytes.len());
            let room = MAX_PAYLOAD.saturating_sub(f.payload.len()).min(n);
            for (i, &b) in bytes[..room].iter().enumerate() {
                let k = f.mask.map_or(0, |m| m[((f.seen + i as u64) % 4) as usize]);
                f.payload.push(b ^ k);
            }
            f.left -= n as u64;
            f.seen += n as u64;
            bytes = &bytes[n..];
            pos += n as u64;
            if f.left > 0 {
                break;
            }
            if let Some(f) = side.frame.take() {
                self.complete(dir, f, base);
                done = true;
            }
        }
        done
    }

    /// A frame was read whole: its frames (header, data, PDU) and its transaction.
    fn complete(&mut self, dir: Direction, mut f: Reading, base: u64) {
        let start = f.start as i64 - base as i64;
        let len = f.header_len + usize::try_from(f.seen).unwrap_or(usize::MAX);
        let payload = self.message_payload(dir, &mut f);
        let id = self
            .txs
            .begin(|id| Tx {
                id,
                dir,
                flags: f.flags,
                opcode: f.opcode,
                mask: f.mask.map(u32::from_be_bytes),
                payload,
            })
            .id;
        // Its frames, each naming its transaction (alerts on them carry the frame's).
        let (pdu, head, data) = (
            FrameType::WebsocketPdu,
            FrameType::WebsocketHeader,
            FrameType::WebsocketData,
        );
        self.marks.add(pdu, start, len, Some(id));
        self.marks.add(head, start, f.header_len, Some(id));
        if len > f.header_len {
            let at = start + f.header_len as i64;
            self.marks.add(data, at, len - f.header_len, Some(id));
        }
    }

    /// The payload a frame's transaction holds: its own, or, for the last frame of a
    /// fragmented message, the message's; inflated when the message is compressed.
    fn message_payload(&mut self, dir: Direction, f: &mut Reading) -> Vec<u8> {
        let side = &mut self.sides[dir];
        let fin = f.flags & 0x80 != 0;
        let compressed_start = f.flags & 0x40 != 0;
        let own = std::mem::take(&mut f.payload);
        // Control frames stand alone, even between a message's fragments.
        if f.opcode >= 8 {
            return own;
        }
        if !fin {
            // A fragment: the message so far gets it, and so does its own frame.
            let (mut m, c) = match (f.opcode, side.message.take()) {
                (0, Some(m)) => m,
                _ => (Vec::new(), compressed_start),
            };
            let room = MAX_PAYLOAD.saturating_sub(m.len());
            m.extend_from_slice(&own[..own.len().min(room)]);
            side.message = Some((m, c));
            return own;
        }
        let (data, compressed) = match (f.opcode, side.message.take()) {
            // The last fragment: the message so far, and this part.
            (0, Some((mut m, c))) => {
                let room = MAX_PAYLOAD.saturating_sub(m.len());
                m.extend_from_slice(&own[..own.len().min(room)]);
                (m, c)
            }
            _ => (own, compressed_start),
        };
        if compressed {
            inflate(side, &data).unwrap_or(data)
        } else {
            data
        }
    }
}

/// Reads header bytes of the next frame from `bytes` (at stream position `pos`);
/// starts the frame once its header is whole. Returns the bytes taken.
fn take_head(side: &mut Side, bytes: &[u8], pos: u64) -> usize {
    let held = side.head.len();
    let mut taken = 0;
    loop {
        let need = header_len(&side.head);
        if side.head.len() >= need {
            break;
        }
        let Some(&b) = bytes.get(taken) else {
            return taken;
        };
        side.head.push(b);
        taken += 1;
    }
    let h = std::mem::take(&mut side.head);
    let len7 = h[1] & 0x7f;
    let (left, at) = match len7 {
        126 => (u64::from(u16::from_be_bytes([h[2], h[3]])), 4),
        127 => (
            u64::from_be_bytes(h[2..10].try_into().expect("eight bytes")),
            10,
        ),
        n => (u64::from(n), 2),
    };
    let mask = (h[1] & 0x80 != 0).then(|| [h[at], h[at + 1], h[at + 2], h[at + 3]]);
    side.frame = Some(Reading {
        flags: h[0] & 0xf0,
        opcode: h[0] & 0x0f,
        mask,
        header_len: h.len(),
        left,
        seen: 0,
        payload: Vec::new(),
        start: pos - held as u64,
    });
    taken
}

/// The length of the header that begins with `h` (as much of it as `h` tells).
fn header_len(h: &[u8]) -> usize {
    let Some(&b1) = h.get(1) else {
        return 2;
    };
    let ext = match b1 & 0x7f {
        126 => 2,
        127 => 8,
        _ => 0,
    };
    2 + ext + if b1 & 0x80 != 0 { 4 } else { 0 }
}

/// A compressed message inflated (RFC 7692: the raw DEFLATE data, closed by an empty
/// stored block), in the direction's window; `None` when it does not inflate.
fn inflate(side: &mut Side, data: &[u8]) -> Option<Vec<u8>> {
    let d = side.inflate.get_or_insert_with(|| Decompress::new(false));
    let mut input = data.to_vec();
    input.extend_from_slice(&[0, 0, 0xff, 0xff]);
    let mut out = Vec::with_capacity(MAX_PAYLOAD);
    let mut at = 0;
    // A message inflating past the bound leaves the rest of its input unread (and the
    // window behind it).
    while at < input.len() && out.len() < MAX_PAYLOAD {
        let (i, o) = (d.total_in(), d.total_out());
        d.decompress_vec(&input[at..], &mut out, FlushDecompress::Sync)
            .ok()?;
        at += usize::try_from(d.total_in() - i).unwrap_or(usize::MAX);
        if d.total_in() == i && d.total_out() == o {
            break;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame as a client (masked) or server sends it.
    fn frame(first: u8, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
        let mut f = vec![first];
        let m = if mask.is_some() { 0x80 } else { 0 };
        match payload.len() {
            n if n < 126 => f.push(m | n as u8),
            n if n < 65_536 => {
                f.push(m | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(m | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        if let Some(k) = mask {
            f.extend_from_slice(&k);
        }
        f.extend(
            payload
                .iter()
                .enumerate()
                .map(|(i, b)| b ^ mask.map_or(0, |k| k[i % 4])),
        );
        f
    }

    #[test]
    fn frames_in_pieces_are_read_and_unmasked() {
        let key = [1, 2, 3, 4];
        let mut bytes = frame(0x81, b"hello", Some(key));
        bytes.extend(frame(0x89, b"", None));
        let mut w = WebSocket::default();
        // One byte at a time: the same frames.
        for b in &bytes {
            w.feed(Direction::ToServer, std::slice::from_ref(b));
        }
        assert_eq!(w.txs.len(), 2);
        let t = &w.txs[0];
        assert!(t.fin());
        assert_eq!(
            (t.opcode, t.mask, &t.payload[..]),
            (1, Some(0x01020304), &b"hello"[..])
        );
        assert_eq!((w.txs[1].opcode, w.txs[1].mask), (9, None));
        assert_eq!(opcode_name(9), "ping");
    }

    #[test]
    fn a_fragmented_message_ends_with_its_whole_payload_around_control_frames() {
        let mut bytes = frame(0x01, b"MALWARE_DOWN", None);
        bytes.extend(frame(0x89, b"ping", None));
        bytes.extend(frame(0x80, b"LOAD cmd.exe", None));
        let mut w = WebSocket::default();
        assert!(w.feed(Direction::ToClient, &bytes));
        let p: Vec<&[u8]> = w.txs.iter().map(|t| &t.payload[..]).collect();
        assert_eq!(
            p,
            [&b"MALWARE_DOWN"[..], b"ping", b"MALWARE_DOWNLOAD cmd.exe"]
        );
    }

    #[test]
    fn compressed_messages_inflate_in_one_window() {
        use flate2::{Compress, Compression, FlushCompress};
        let mut c = Compress::new(Compression::default(), false);
        let mut bytes = Vec::new();
        for text in [&b"TOGGLE=5659131662f54334"[..], b"TOGGLE=5659131662f54334!"] {
            let mut out = Vec::with_capacity(256);
            c.compress_vec(text, &mut out, FlushCompress::Sync).unwrap();
            // RFC 7692: the empty stored block's last four bytes are left out.
            assert_eq!(out[out.len() - 4..], [0, 0, 0xff, 0xff]);
            out.truncate(out.len() - 4);
            bytes.extend(frame(0xc1, &out, Some([9, 8, 7, 6])));
        }
        let mut w = WebSocket::default();
        w.feed(Direction::ToServer, &bytes);
        assert_eq!(w.txs[0].payload, b"TOGGLE=5659131662f54334");
        assert_eq!(w.txs[1].payload, b"TOGGLE=5659131662f54334!");
    }

    #[test]
    fn long_payloads_are_kept_up_to_the_bound_and_the_rest_passed_over() {
        let big = vec![b'a'; MAX_PAYLOAD + 1000];
        let mut bytes = frame(0x82, &big, None);
        bytes.extend(frame(0x81, b"next", None));
        let mut w = WebSocket::default();
        for chunk in bytes.chunks(1500) {
            w.feed(Direction::ToClient, chunk);
        }
        assert_eq!(w.txs.len(), 2);
        assert_eq!(w.txs[0].payload.len(), MAX_PAYLOAD);
        assert_eq!(w.txs[1].payload, b"next");
    }
}
