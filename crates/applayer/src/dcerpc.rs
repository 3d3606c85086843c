//! DCE/RPC over TCP: connection-oriented PDUs (DCE 1.1, chapter 12; MS-RPCE) read into
//! calls, as Suricata reads them.
//!
//! Every PDU starts with a 16-byte header: version 5 (minor 0 or 1), the PDU type, its
//! flags (first and last fragment, object UUID), the data representation (byte order
//! first), the fragment's length, the authenticator's length and the call's id. A
//! `BIND` (or `ALTER_CONTEXT`) offers presentation contexts, each an interface UUID with
//! a version; its `BIND_ACK` accepts or rejects each in order. A `REQUEST` names a
//! context and an operation number, and carries stub data, perhaps over several
//! fragments; its `RESPONSE` carries the answer's.
//!
//! A transaction is one call: a bind with its answer, or a request with its response,
//! paired by call id. The interfaces bound on the connection live with the flow; a
//! request's are those bound to its context. Bounded: a PDU is at most 64 KiB (its length
//! field is 16 bits), 256 calls are kept, and a call keeps at most [`MAX_STUB`] bytes of
//! stub data per direction (the sizes logged count them all).

use crate::frames::Marks;
use crate::held::Held;
use crate::txs::{Numbered, Txs};
use netsieve_wire::{Direction, FrameType};

/// Calls kept per flow.
const MAX_TXS: usize = 256;
/// Interfaces remembered per flow.
const MAX_INTERFACES: usize = 256;
/// Stub data kept per call and direction.
pub const MAX_STUB: usize = 1 << 18;

const HEADER: usize = 16;

/// A PDU's frames: the PDU, its common header, the rest.
const FRAMES: [FrameType; 3] = [
    FrameType::DcerpcPdu,
    FrameType::DcerpcHdr,
    FrameType::DcerpcData,
];
const PFC_FIRST_FRAG: u8 = 0x01;
const PFC_LAST_FRAG: u8 = 0x02;
const PFC_OBJECT_UUID: u8 = 0x80;

/// PDU types this parser reads.
pub mod ptype {
    pub const REQUEST: u8 = 0;
    pub const RESPONSE: u8 = 2;
    pub const FAULT: u8 = 3;
    pub const BIND: u8 = 11;
    pub const BIND_ACK: u8 = 12;
    pub const BIND_NAK: u8 = 13;
    pub const ALTER_CONTEXT: u8 = 14;
    pub const ALTER_CONTEXT_RESP: u8 = 15;
}

/// A PDU type's name, as Suricata's `dcerpc` record writes it.
pub fn ptype_name(t: u8) -> &'static str {
    const NAMES: [&str; 21] = [
        "REQUEST",
        "PING",
        "RESPONSE",
        "FAULT",
        "WORKING",
        "NOCALL",
        "REJECT",
        "ACK",
        "CL_CANCEL",
        "FACK",
        "CANCEL_ACK",
        "BIND",
        "BINDACK",
        "BINDNAK",
        "ALTER_CONTEXT",
        "ALTER_CONTEXT_RESP",
        "AUTH3",
        "SHUTDOWN",
        "CO_CANCEL",
        "ORPHANED",
        "RTS",
    ];
    NAMES.get(usize::from(t)).copied().unwrap_or("UNKNOWN")
}

/// An interface offered in a bind, with its answer once the bind's is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// The UUID in the order it is written as text (`afa8bd80-7d8a-...`).
    pub uuid: [u8; 16],
    pub version: u16,
    pub minor: u16,
    pub context_id: u16,
    /// The bind answer's result for it (0 accepted), once read.
    pub ack_result: Option<u16>,
    /// Its bind had the first-fragment flag (`dcerpc.iface` without `any_frag` needs it).
    pub first_frag: bool,
}

impl Interface {
    /// The UUID as text, lower case.
    pub fn uuid_text(&self) -> String {
        let u = &self.uuid;
        let hex = |r: std::ops::Range<usize>| -> String { netsieve_wire::hex::lower(&u[r]) };
        format!(
            "{}-{}-{}-{}-{}",
            hex(0..4),
            hex(4..6),
            hex(6..8),
            hex(8..10),
            hex(10..16)
        )
    }
}

/// One direction of a call: its PDU type, fragments and stub data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Part {
    /// The PDU type, once a fragment was read.
    pub ptype: Option<u8>,
    pub frags: u32,
    /// Stub bytes seen (all of them, also those past [`MAX_STUB`]).
    pub stub_size: u64,
    /// The stub data kept.
    pub stub: Vec<u8>,
    /// Its last fragment was read.
    pub done: bool,
}

impl Part {
    /// A fragment with stub data `stub`, counted as `counted` bytes.
    fn add(&mut self, h: &Header, stub: &[u8], counted: usize) {
        self.ptype = Some(h.ptype);
        self.frags += 1;
        self.stub_size += counted as u64;
        let room = MAX_STUB.saturating_sub(self.stub.len());
        self.stub.extend_from_slice(&stub[..stub.len().min(room)]);
        self.done |= h.flags & PFC_LAST_FRAG != 0;
    }
}

/// A call: a bind and its answer, or a request and its response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    pub call_id: u32,
    /// The version's minor number of its first PDU (`rpc_version` `5.0` or `5.1`).
    pub minor: u8,
    pub request: Part,
    pub response: Part,
    /// A request's operation number and presentation context.
    pub opnum: Option<u16>,
    pub context_id: u16,
    /// A bind's interfaces; a request's, those bound to its context.
    pub interfaces: Vec<Interface>,
}

impl Tx {
    /// The call is over: its answer's last fragment came (or the flow ended).
    pub fn complete(&self) -> bool {
        self.response.done
    }

    /// A request (not a bind).
    pub fn is_request(&self) -> bool {
        self.request.ptype == Some(ptype::REQUEST)
    }

    /// The call as a record writes it: without its stub data.
    pub fn without_stub(&self) -> Tx {
        let part = |p: &Part| Part {
            stub: Vec::new(),
            ..*p
        };
        Tx {
            id: self.id,
            call_id: self.call_id,
            minor: self.minor,
            request: part(&self.request),
            response: part(&self.response),
            opnum: self.opnum,
            context_id: self.context_id,
            interfaces: self.interfaces.clone(),
        }
    }
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

/// The common header of a PDU.
#[derive(Clone, Copy, Debug)]
struct Header {
    minor: u8,
    ptype: u8,
    flags: u8,
    little: bool,
    frag_len: usize,
    auth_len: usize,
    call_id: u32,
}

impl Header {
    /// The header at the start of `d`: `None` when it is not one, `Some(Err(()))` when
    /// more bytes are needed.
    fn parse(d: &[u8]) -> Result<Option<Header>, ()> {
        if d.len() < HEADER {
            return Err(());
        }
        if d[0] != 5 || d[1] > 1 {
            return Ok(None);
        }
        let little = d[4] & 0x10 != 0;
        let r = Reader { d, little };
        let h = Header {
            minor: d[1],
            ptype: d[2],
            flags: d[3],
            little,
            frag_len: usize::from(r.u16(8)),
            auth_len: usize::from(r.u16(10)),
            call_id: r.u32(12),
        };
        Ok((h.frag_len >= HEADER).then_some(h))
    }

    /// The body's end in the PDU: before the authenticator and its 8-byte trailer.
    fn body_end(&self, pdu: &[u8]) -> usize {
        if self.auth_len == 0 {
            return self.frag_len;
        }
        let trailer = self.frag_len.saturating_sub(self.auth_len + 8);
        // The trailer's second byte is the padding before it.
        let pad = pdu.get(trailer + 1).map_or(0, |&p| usize::from(p));
        trailer.saturating_sub(pad).max(HEADER)
    }
}

/// Reads numbers in a PDU's byte order; past the end reads as zero.
struct Reader<'a> {
    d: &'a [u8],
    little: bool,
}

impl Reader<'_> {
    fn bytes<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut b = [0; N];
        if let Some(s) = self.d.get(at..at + N) {
            b.copy_from_slice(s);
        }
        if !self.little {
            b.reverse();
        }
        b
    }

    fn u16(&self, at: usize) -> u16 {
        u16::from_le_bytes(self.bytes(at))
    }

    fn u32(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.bytes(at))
    }

    /// A UUID in text order: its first three fields in the PDU's byte order.
    fn uuid(&self, at: usize) -> Option<[u8; 16]> {
        let s = self.d.get(at..at + 16)?;
        let mut u = [0; 16];
        u.copy_from_slice(s);
        if self.little {
            u[0..4].reverse();
            u[4..6].reverse();
            u[6..8].reverse();
        }
        Some(u)
    }
}

/// A flow's DCE/RPC state.
#[derive(Clone, Debug, Default)]
pub struct Dcerpc {
    pub txs: Txs<Tx, MAX_TXS>,
    /// The interfaces bound so far, by context.
    bound: Vec<Interface>,
    held: Held,
    /// PDUs of the latest feed, as frames (see [`crate::frames`]).
    pub marks: Marks,
}

impl Dcerpc {
    /// Feeds in-order stream bytes of one direction. Returns whether a call made
    /// progress (a part completed).
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) -> bool {
        // Where `held[0]` lies relative to `bytes[0]`.
        let at = -(self.held.bytes(dir).len() as i64);
        let Some(held) = self.held.take(dir, bytes) else {
            return false;
        };
        let mut used = 0;
        let mut progress = false;
        while used < held.len() {
            let pdu = &held[used..];
            let h = match Header::parse(pdu) {
                Err(()) => break,
                Ok(Some(h)) => h,
                Ok(None) => {
                    // Not DCE/RPC (or lost sync): this direction is read no further.
                    self.held.give_up(dir);
                    return progress;
                }
            };
            if pdu.len() < h.frag_len {
                break;
            }
            self.marks
                .add_split(FRAMES, at + used as i64, HEADER, h.frag_len);
            progress |= self.pdu(dir, &h, &pdu[..h.frag_len]);
            used += h.frag_len;
        }
        self.held.keep(dir, held, used);
        progress
    }

    /// Reads direction `dir` again after it was given up (SMB's pipes: a new message
    /// may start a PDU where the last one carried something else).
    pub fn resync(&mut self, dir: Direction) {
        self.held.resume(dir);
    }

    /// One whole PDU.
    fn pdu(&mut self, dir: Direction, h: &Header, pdu: &[u8]) -> bool {
        let r = Reader {
            d: pdu,
            little: h.little,
        };
        match (dir, h.ptype) {
            (Direction::ToServer, ptype::BIND | ptype::ALTER_CONTEXT) => self.bind(h, &r),
            (Direction::ToClient, ptype::BIND_ACK | ptype::ALTER_CONTEXT_RESP) => {
                self.bind_ack(h, &r)
            }
            (Direction::ToClient, ptype::BIND_NAK) => self.answer(h, &[], 0),
            (Direction::ToServer, ptype::REQUEST) => self.request(h, &r, pdu),
            (Direction::ToClient, ptype::RESPONSE | ptype::FAULT) => {
                // Suricata counts a response's stub from the end of the common header.
                let end = h.body_end(pdu).min(pdu.len());
                let stub = &pdu[HEADER.min(end)..end];
                self.answer(h, stub, stub.len())
            }
            _ => false,
        }
    }

    /// A bind or alter-context: its presentation contexts, remembered for the flow.
    fn bind(&mut self, h: &Header, r: &Reader<'_>) -> bool {
        let n = r.d.get(24).copied().unwrap_or(0);
        let mut interfaces = Vec::new();
        let mut at = 28;
        for _ in 0..n {
            let Some(uuid) = r.uuid(at + 4) else { break };
            let transfers = usize::from(r.d.get(at + 2).copied().unwrap_or(0));
            interfaces.push(Interface {
                uuid,
                version: r.u16(at + 20),
                minor: r.u16(at + 22),
                context_id: r.u16(at),
                ack_result: None,
                first_frag: h.flags & PFC_FIRST_FRAG != 0,
            });
            at += 24 + 20 * transfers;
        }
        for i in &interfaces {
            self.bound.retain(|b| b.context_id != i.context_id);
        }
        self.bound.extend(interfaces.iter().cloned());
        let excess = self.bound.len().saturating_sub(MAX_INTERFACES);
        self.bound.drain(..excess);
        let tx = self.open(h, Direction::ToServer);
        tx.request.add(h, &[], 0);
        tx.request.done = true;
        tx.interfaces = interfaces;
        true
    }

    /// A bind's answer: each context's result, in the bind's order.
    fn bind_ack(&mut self, h: &Header, r: &Reader<'_>) -> bool {
        // After the secondary address (a counted string) and padding to 4 bytes.
        let addr_len = usize::from(r.u16(24));
        let at = (26 + addr_len).next_multiple_of(4);
        let n = usize::from(r.d.get(at).copied().unwrap_or(0));
        let results: Vec<u16> = (0..n)
            .map_while(|i| {
                let p = at + 4 + 24 * i;
                (p + 2 <= r.d.len()).then(|| r.u16(p))
            })
            .collect();
        // The latest bind's contexts, in order, take the results.
        if let Some(tx) = self
            .txs
            .iter_mut()
            .rev()
            .find(|t| t.call_id == h.call_id && !t.response.done && !t.is_request())
        {
            for (i, res) in tx.interfaces.iter_mut().zip(&results) {
                i.ack_result = Some(*res);
                if let Some(b) = self.bound.iter_mut().find(|b| b.context_id == i.context_id) {
                    b.ack_result = Some(*res);
                }
            }
        }
        self.answer(h, &[], 0)
    }

    /// A request fragment: the first opens a call.
    fn request(&mut self, h: &Header, r: &Reader<'_>, pdu: &[u8]) -> bool {
        let context_id = r.u16(20);
        let opnum = r.u16(22);
        let start = if h.flags & PFC_OBJECT_UUID != 0 {
            40
        } else {
            24
        };
        let end = h.body_end(pdu).min(pdu.len());
        let stub = pdu.get(start..end).unwrap_or(&[]);
        // Suricata's size counts an object UUID as stub data; the buffer does not.
        let counted = end.saturating_sub(24);
        let bound: Vec<Interface> = self
            .bound
            .iter()
            .filter(|b| b.context_id == context_id)
            .cloned()
            .collect();
        let tx = self.open(h, Direction::ToServer);
        if tx.opnum.is_none() {
            tx.opnum = Some(opnum);
            tx.context_id = context_id;
            tx.interfaces = bound;
        }
        tx.request.add(h, stub, counted);
        tx.request.done
    }

    /// An answer fragment: to the open call of its id, else a call of its own.
    fn answer(&mut self, h: &Header, stub: &[u8], counted: usize) -> bool {
        let tx = self.open(h, Direction::ToClient);
        tx.response.add(h, stub, counted);
        tx.response.done
    }

    /// The call of `h`'s id still open in direction `dir`, or a new one.
    fn open(&mut self, h: &Header, dir: Direction) -> &mut Tx {
        let open = |t: &Tx| {
            t.call_id == h.call_id
                && match dir {
                    Direction::ToServer => !t.request.done,
                    Direction::ToClient => !t.response.done,
                }
        };
        if let Some(i) = self.txs.iter().rposition(open) {
            return self.txs.iter_mut().nth(i).expect("found above");
        }
        self.txs.begin(|id| Tx {
            id,
            call_id: h.call_id,
            minor: h.minor,
            request: Part::default(),
            response: Part::default(),
            opnum: None,
            context_id: 0,
            interfaces: Vec::new(),
        })
    }

    /// The flow ended: open calls count as complete.
    pub fn finish(&mut self) {
        for t in self.txs.iter_mut() {
            t.request.done = true;
            t.response.done = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PDU: header (little-endian) and body.
    fn pdu(ptype: u8, flags: u8, call_id: u32, body: &[u8]) -> Vec<u8> {
        let mut p = vec![5, 0, ptype, flags, 0x10, 0, 0, 0];
        p.extend_from_slice(&((HEADER + body.len()) as u16).to_le_bytes());
        p.extend_from_slice(&0u16.to_le_bytes());
        p.extend_from_slice(&call_id.to_le_bytes());
        p.extend_from_slice(body);
        p
    }

    /// EPM's UUID, e1af8308-5d1f-11c9-91a4-08002b14a0fa, as a little-endian PDU holds it.
    const EPM: [u8; 16] = [
        0x08, 0x83, 0xaf, 0xe1, 0x1f, 0x5d, 0xc9, 0x11, 0x91, 0xa4, 0x08, 0x00, 0x2b, 0x14, 0xa0,
        0xfa,
    ];

    fn bind(flags: u8) -> Vec<u8> {
        let mut b = vec![0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0];
        b.extend_from_slice(&[7, 0, 1, 0]); // context 7, one transfer syntax
        b.extend_from_slice(&EPM);
        b.extend_from_slice(&[3, 0, 0, 0]); // version 3.0
        b.extend_from_slice(&[0; 20]);
        pdu(ptype::BIND, flags, 1, &b)
    }

    fn bind_ack(result: u16) -> Vec<u8> {
        let mut b = vec![0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0];
        b.extend_from_slice(&[4, 0, b'1', b'3', b'5', 0]); // "135", then 2 bytes padding
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&[1, 0, 0, 0]);
        b.extend_from_slice(&result.to_le_bytes());
        b.extend_from_slice(&[0; 22]);
        pdu(ptype::BIND_ACK, 3, 1, &b)
    }

    fn request(flags: u8, call_id: u32, stub: &[u8]) -> Vec<u8> {
        let mut b = vec![0; 4];
        b.extend_from_slice(&7u16.to_le_bytes());
        b.extend_from_slice(&42u16.to_le_bytes());
        b.extend_from_slice(stub);
        pdu(ptype::REQUEST, flags, call_id, &b)
    }

    #[test]
    fn bind_then_fragmented_request_and_response() {
        let mut d = Dcerpc::default();
        assert!(d.feed(Direction::ToServer, &bind(3)));
        // An answer split across segments is read once whole.
        let ack = bind_ack(0);
        assert!(!d.feed(Direction::ToClient, &ack[..10]));
        assert!(d.feed(Direction::ToClient, &ack[10..]));
        let b = &d.txs[0];
        assert!(b.complete());
        assert_eq!(
            b.interfaces[0].uuid_text(),
            "e1af8308-5d1f-11c9-91a4-08002b14a0fa"
        );
        assert_eq!(
            (b.interfaces[0].version, b.interfaces[0].ack_result),
            (3, Some(0))
        );
        // Two fragments of one request, then the response.
        assert!(!d.feed(Direction::ToServer, &request(1, 2, b"abc")));
        assert!(d.feed(Direction::ToServer, &request(2, 2, b"def")));
        let t = &d.txs[1];
        assert_eq!(
            (t.opnum, t.request.frags, &t.request.stub[..]),
            (Some(42), 2, &b"abcdef"[..])
        );
        assert_eq!(t.interfaces.len(), 1);
        assert!(!t.complete());
        assert!(d.feed(Direction::ToClient, &pdu(ptype::RESPONSE, 3, 2, &[0; 12])));
        assert!(d.txs[1].complete());
        assert_eq!(d.txs[1].response.stub_size, 12);
    }

    #[test]
    fn bind_flags_and_rejection_are_kept() {
        let mut d = Dcerpc::default();
        d.feed(Direction::ToServer, &bind(0));
        d.feed(Direction::ToClient, &bind_ack(2));
        d.feed(Direction::ToServer, &request(3, 2, b""));
        let i = &d.txs[1].interfaces[0];
        assert!(!i.first_frag);
        assert_eq!(i.ack_result, Some(2));
    }

    #[test]
    fn garbage_and_truncation_stop_quietly() {
        let mut d = Dcerpc::default();
        assert!(!d.feed(Direction::ToServer, b"\x04\x00\x0b\x03garbage......."));
        assert!(!d.feed(Direction::ToServer, &bind(3)));
        let mut short = bind(3);
        short[8] = 200; // longer than what follows: held, not read
        let mut e = Dcerpc::default();
        assert!(!e.feed(Direction::ToServer, &short));
        assert!(e.txs.is_empty());
        // A body too short for what it claims reads as zeros, not a panic.
        let mut f = Dcerpc::default();
        f.feed(
            Direction::ToServer,
            &pdu(ptype::BIND, 3, 1, &[0, 0, 0, 0, 0, 0, 0, 0, 9]),
        );
        f.feed(
            Direction::ToClient,
            &pdu(ptype::BIND_ACK, 3, 1, &[0xff; 30]),
        );
        assert_eq!(f.txs.len(), 1);
    }
}
