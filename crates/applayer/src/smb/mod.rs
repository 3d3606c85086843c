//! SMB 1, 2 and 3 over TCP (MS-SMB, MS-SMB2), read into transactions as Suricata reads
//! them.
//!
//! Each message travels in a NetBIOS session record: a type byte (0 for a session
//! message) and a 24-bit length. Its header names SMB 1 (`\xffSMB`), SMB 2 and 3
//! (`\xfeSMB`), or an SMB 3 encrypted message (`\xfdSMB`, not read). A request and its
//! response are paired by their message id (SMB 2) or by the user, tree, process and
//! multiplex ids (SMB 1).
//!
//! A transaction is one command with its answer, except for the commands that move data:
//! - writes and reads of a file add to a **file** transaction, one per file and
//!   direction, complete when the file is closed;
//! - writes, reads and transceives on a **named pipe** carry DCE/RPC, read by the
//!   session's [`Dcerpc`] parser; each call is a transaction here.
//!
//! The tree a client connects to is a share or, when the server says so, a named pipe
//! (`IPC$`); `smb.share` and `smb.named_pipe` read it once the answer came. The user and
//! domain of an NTLMSSP authentication come from the session setup.
//!
//! Bounded: a record is read once whole up to [`MAX_RECORD`] bytes (past that its bytes
//! are skipped), 256 transactions, 256 trees, files and pending
//! requests are remembered, and a file keeps its first [`FILE_KEEP`] bytes.

mod ntlmssp;
mod v1;
mod v2;

use crate::dcerpc::{self, Dcerpc};
use crate::frames::Marks;
use crate::txs::{Events, Numbered, Txs};
use netsieve_wire::{AppEvent, Direction, FrameType, PerDir};
pub use ntlmssp::Ntlmssp;

/// Transactions kept per flow.
const MAX_TXS: usize = 256;
/// Trees, open files and requests awaiting their answer, remembered per flow.
const MAX_OPEN: usize = 256;
/// The largest record read; a larger one is skipped.
pub const MAX_RECORD: usize = 1 << 20;
/// A file's bytes kept for inspection (all are counted).
pub const FILE_KEEP: usize = 1 << 20;

/// NT status codes the parser acts on.
pub mod status {
    pub const SUCCESS: u32 = 0;
    /// An interim answer: the real one follows.
    pub const PENDING: u32 = 0x0000_0103;
}

/// A file or pipe handle: SMB 2's 16-byte file id, or SMB 1's 16-bit FID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Handle {
    V1(u16),
    V2([u8; 16]),
}

/// What a transaction is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A command read for its header only.
    Generic,
    /// A session setup, with the NTLMSSP authentication it carried.
    SessionSetup { ntlmssp: Option<Ntlmssp> },
    /// A tree connect: the path asked for, and whether the server answered that it is
    /// a named pipe.
    TreeConnect { share: Vec<u8>, pipe: Option<bool> },
    /// A create or open: the file's name.
    Create { name: Vec<u8> },
    /// The data written to (to the server) or read from (to the client) one file.
    File(File),
    /// A DCE/RPC call over a named pipe: the id of the call in [`Smb::rpc`].
    Rpc { call: u64 },
}

/// A file's data in one direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    pub name: Vec<u8>,
    pub handle: Handle,
    /// To the server (written) or to the client (read).
    pub dir: Direction,
    /// Its first bytes, up to [`FILE_KEEP`].
    pub data: Vec<u8>,
    /// Bytes seen in order.
    pub size: u64,
    /// The file was closed (or the flow ended).
    pub closed: bool,
    /// Data came again for bytes already seen.
    pub overlap: bool,
}

/// One transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    /// 1, or 2 for SMB 2 and 3: the version of the request's header.
    pub version: u8,
    pub command: u16,
    /// The request and its answer are paired by this.
    key: u64,
    pub request: bool,
    /// The final answer came.
    pub response: bool,
    /// The answer's NT status.
    pub status: Option<u32>,
    /// The session and tree ids of the request.
    pub session_id: u64,
    pub tree_id: u32,
    pub kind: Kind,
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

impl Tx {
    /// Transaction `id` of a command (version, command, pairing key), nothing seen yet.
    fn new(id: u64, (version, command, key): (u8, u16, u64), kind: Kind) -> Tx {
        Tx {
            id,
            version,
            command,
            key,
            request: false,
            response: false,
            status: None,
            session_id: 0,
            tree_id: 0,
            kind,
        }
    }

    /// The transaction as a record writes it: without its file's data.
    pub fn without_data(&self) -> Tx {
        let kind = match &self.kind {
            Kind::File(f) => Kind::File(File {
                name: f.name.clone(),
                data: Vec::new(),
                ..*f
            }),
            k => k.clone(),
        };
        Tx { kind, ..*self }
    }

    /// A file transaction's file.
    pub fn file(&self) -> Option<&File> {
        match &self.kind {
            Kind::File(f) => Some(f),
            _ => None,
        }
    }
}

/// A tree connected to.
#[derive(Clone, Debug)]
struct Tree {
    id: u32,
    pipe: bool,
}

/// An open file or pipe.
#[derive(Clone, Debug)]
struct Open {
    handle: Handle,
    name: Vec<u8>,
    pipe: bool,
}

/// The message that carried data to a handle: its version, command and pairing key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Origin {
    pub version: u8,
    pub command: u16,
    pub key: u64,
}

/// A request whose answer carries data to route: a read, or a pipe transceive.
#[derive(Clone, Copy, Debug)]
struct Pending {
    key: u64,
    handle: Handle,
    offset: u64,
}

/// A flow's SMB state.
#[derive(Clone, Debug, Default)]
pub struct Smb {
    pub txs: Txs<Tx, MAX_TXS>,
    /// DCE/RPC over the session's named pipes (one set of bound interfaces, as Suricata
    /// keeps it).
    pub rpc: Dcerpc,
    /// Each direction's partial record, the bytes left of a too-large record being
    /// skipped, and whether the direction lost its framing (read no further).
    held: PerDir<Vec<u8>>,
    skip: PerDir<usize>,
    gave_up: PerDir<bool>,
    trees: Vec<Tree>,
    opens: Vec<Open>,
    pending: Vec<Pending>,
    /// The dialects an SMB 1 negotiation offered, until its answer picks one.
    offered: Vec<Vec<u8>>,
    /// The dialect the server chose.
    pub dialect: Option<Dialect>,
    pub events: Events<AppEvent>,
    /// The SMB 2 messages of the latest feed, as frames (see [`crate::frames`]).
    pub marks: Marks,
}

/// An SMB 2 message's frames: the message, its 64-byte header, its body.
const SMB2_FRAMES: [FrameType; 3] = [
    FrameType::SmbSmb2Pdu,
    FrameType::SmbSmb2Hdr,
    FrameType::SmbSmb2Data,
];

/// A negotiated dialect: SMB 1's by name, SMB 2's by number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dialect {
    V1(Vec<u8>),
    V2(u16),
}

impl Dialect {
    /// As Suricata writes it: `NT LM 0.12`, `2.10`, `3.11`, or `2.??` for SMB 2's
    /// wildcard answer to an SMB 1 negotiation.
    pub fn name(&self) -> String {
        match self {
            Dialect::V1(n) => String::from_utf8_lossy(n).into_owned(),
            Dialect::V2(0x02ff) => "2.??".into(),
            Dialect::V2(d) => format!("{:x}.{:02x}", d >> 8, d & 0xff),
        }
    }
}

/// A little-endian reader over a message; past its end reads as zero or `None`.
#[derive(Clone, Copy)]
pub(crate) struct Le<'a>(pub &'a [u8]);

impl<'a> Le<'a> {
    pub fn u8(self, at: usize) -> u8 {
        self.0.get(at).copied().unwrap_or(0)
    }
    pub fn u16(self, at: usize) -> u16 {
        u16::from_le_bytes(self.array(at))
    }
    pub fn u32(self, at: usize) -> u32 {
        u32::from_le_bytes(self.array(at))
    }
    pub fn u64(self, at: usize) -> u64 {
        u64::from_le_bytes(self.array(at))
    }
    fn array<const N: usize>(self, at: usize) -> [u8; N] {
        let mut b = [0; N];
        if let Some(s) = at.checked_add(N).and_then(|e| self.0.get(at..e)) {
            b.copy_from_slice(s);
        }
        b
    }
    /// `len` bytes at `at`, as far as the message holds them.
    pub fn bytes(self, at: usize, len: usize) -> &'a [u8] {
        let start = at.min(self.0.len());
        let end = at.saturating_add(len).min(self.0.len());
        &self.0[start..end]
    }
}

/// UTF-16LE text as UTF-8, up to its first NUL.
pub(crate) fn utf16(b: &[u8]) -> Vec<u8> {
    let units: Vec<u16> = b
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|&u| u != 0)
        .collect();
    String::from_utf16_lossy(&units).into_bytes()
}

/// Text up to its first NUL.
pub(crate) fn cstr(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

/// Keeps at most [`MAX_OPEN`] entries, dropping the oldest.
fn bounded<T>(v: &mut Vec<T>, item: T) {
    if v.len() == MAX_OPEN {
        v.remove(0);
    }
    v.push(item);
}

impl Smb {
    /// Feeds in-order stream bytes of one direction. Returns whether a transaction made
    /// progress.
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) -> bool {
        if self.gave_up[dir] {
            return false;
        }
        let held = std::mem::take(&mut self.held[dir]);
        // Where `data[0]` lies relative to `bytes[0]`.
        let at = -(held.len() as i64);
        let joined;
        let data: &[u8] = if held.is_empty() {
            bytes
        } else {
            joined = [&held[..], bytes].concat();
            &joined
        };
        let mut progress = false;
        let mut used = 0;
        loop {
            // The rest of a record too large to read.
            let skip = self.skip[dir].min(data.len() - used);
            self.skip[dir] -= skip;
            used += skip;
            let r = &data[used..];
            if r.len() < 4 {
                break;
            }
            let len = (usize::from(r[1]) << 16) | (usize::from(r[2]) << 8) | usize::from(r[3]);
            if r[0] != 0 && !matches!(r[0], 0x81..=0x85) {
                // Not a session record: lost sync, read no further.
                self.gave_up[dir] = true;
                return progress;
            }
            if len > MAX_RECORD {
                self.skip[dir] = len;
                used += 4;
                continue;
            }
            if r.len() < 4 + len {
                break;
            }
            if r[0] == 0 {
                let m = &r[4..4 + len];
                self.mark_smb2(m, at + (used + 4) as i64);
                progress |= self.message(dir, m);
            }
            used += 4 + len;
        }
        self.held[dir] = data[used..].to_vec();
        progress
    }

    /// The frames of the SMB 2 messages in message `m` (a compound holds several),
    /// which starts at `start` relative to the feed's first byte.
    fn mark_smb2(&mut self, m: &[u8], start: i64) {
        let mut off = 0;
        while let Some(rest) = m.get(off..).filter(|r| r.starts_with(b"\xfeSMB")) {
            let next = rest
                .get(20..24)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
            let len = if next == 0 || next > rest.len() {
                rest.len()
            } else {
                next
            };
            self.marks
                .add_split(SMB2_FRAMES, start + off as i64, v2::HEADER, len);
            if len == rest.len() {
                break;
            }
            off += len;
        }
    }

    /// One SMB message (perhaps a compound of SMB 2 messages).
    fn message(&mut self, dir: Direction, m: &[u8]) -> bool {
        match m.get(..4) {
            Some(b"\xffSMB") => v1::message(self, dir, m),
            Some(b"\xfeSMB") => v2::message(self, dir, m),
            _ => false,
        }
    }

    /// The transaction awaiting the answer paired by `key`, or a new one for a request
    /// (or for an answer whose request was not seen).
    fn tx(&mut self, key: u64, version: u8, command: u16, dir: Direction) -> &mut Tx {
        let open = |t: &Tx| {
            t.key == key
                && t.command == command
                && !t.response
                && !matches!(t.kind, Kind::File(_) | Kind::Rpc { .. })
                && (dir == Direction::ToClient || !t.request)
        };
        if let Some(i) = self.txs.iter().rposition(open) {
            return self.txs.iter_mut().nth(i).expect("found above");
        }
        self.txs
            .begin(|id| Tx::new(id, (version, command, key), Kind::Generic))
    }

    /// A request: its transaction begins.
    fn request(&mut self, key: u64, version: u8, command: u16, ids: (u64, u32), kind: Kind) {
        let tx = self.tx(key, version, command, Direction::ToServer);
        tx.request = true;
        (tx.session_id, tx.tree_id) = ids;
        tx.kind = kind;
    }

    /// A final answer with status `st`: its transaction completes. Returns it.
    fn response(&mut self, key: u64, version: u8, command: u16, st: u32) -> &mut Tx {
        let tx = self.tx(key, version, command, Direction::ToClient);
        tx.status = Some(st);
        tx.response |= st != status::PENDING;
        tx
    }

    /// An SMB 1 negotiation awaits its answer.
    fn v1_negotiation_open(&self) -> bool {
        self.txs
            .iter()
            .any(|t| t.version == 1 && t.command == v1::cmd::NEGOTIATE.into() && !t.response)
    }

    /// The SMB 1 negotiation was answered (by SMB 2) with status `st`.
    fn negotiated_v1(&mut self, st: u32) {
        for t in self.txs.iter_mut() {
            if t.version == 1 && t.command == u16::from(v1::cmd::NEGOTIATE) && !t.response {
                t.status = Some(st);
                t.response = true;
            }
        }
    }

    fn tree_connected(&mut self, id: u32, pipe: bool) {
        self.trees.retain(|t| t.id != id);
        bounded(&mut self.trees, Tree { id, pipe });
    }

    fn is_pipe_tree(&self, id: u32) -> bool {
        self.trees.iter().any(|t| t.id == id && t.pipe)
    }

    fn opened(&mut self, handle: Handle, name: Vec<u8>, pipe: bool) {
        self.opens.retain(|o| o.handle != handle);
        bounded(&mut self.opens, Open { handle, name, pipe });
    }

    fn open(&self, handle: Handle) -> Option<&Open> {
        self.opens.iter().rev().find(|o| o.handle == handle)
    }

    fn await_data(&mut self, key: u64, handle: Handle, offset: u64) {
        self.pending.retain(|p| p.key != key);
        bounded(
            &mut self.pending,
            Pending {
                key,
                handle,
                offset,
            },
        );
    }

    fn take_pending(&mut self, key: u64) -> Option<Pending> {
        let i = self.pending.iter().position(|p| p.key == key)?;
        Some(self.pending.remove(i))
    }

    /// Data written to (`ToServer`) or read from (`ToClient`) a handle at `offset` by
    /// command `cmd` (version, command): to the pipe's DCE/RPC parser, or to the file's
    /// transaction.
    fn data(
        &mut self,
        dir: Direction,
        handle: Handle,
        offset: u64,
        bytes: &[u8],
        o: Origin,
    ) -> bool {
        let (name, pipe) = match self.open(handle) {
            Some(o) => (o.name.clone(), o.pipe),
            None => (Vec::new(), false),
        };
        if pipe {
            return self.pipe(dir, bytes, o);
        }
        if bytes.is_empty() {
            return false;
        }
        let found = self.txs.iter().rposition(|t| {
            t.file()
                .is_some_and(|f| f.handle == handle && f.dir == dir && !f.closed)
        });
        let tx = match found {
            Some(i) => self.txs.iter_mut().nth(i).expect("found above"),
            None => {
                let file = File {
                    name,
                    handle,
                    dir,
                    data: Vec::new(),
                    size: 0,
                    closed: false,
                    overlap: false,
                };
                self.txs.begin(|id| Tx {
                    request: true,
                    ..Tx::new(id, (o.version, o.command, o.key), Kind::File(file))
                })
            }
        };
        let Kind::File(f) = &mut tx.kind else {
            return false;
        };
        if offset < f.size {
            f.overlap = true;
            self.events.raise(AppEvent::SmbFileOverlap);
            return false;
        }
        // A gap before the data: the bytes go on where they are, uncounted (an offset
        // near the end of the 64-bit range stays there).
        f.size = offset.saturating_add(bytes.len() as u64);
        let room = FILE_KEEP.saturating_sub(f.data.len());
        f.data.extend_from_slice(&bytes[..bytes.len().min(room)]);
        true
    }

    /// Bytes of DCE/RPC on a named pipe: each call the parser begins gets a transaction.
    fn pipe(&mut self, dir: Direction, bytes: &[u8], o: Origin) -> bool {
        let before = self.rpc.txs.begun();
        // Pipes that carry something else leave the parser lost: a message that opens
        // with a PDU header starts it again.
        if bytes.first() == Some(&5) {
            self.rpc.resync(dir);
        }
        let progress = self.rpc.feed(dir, bytes);
        for call in before..self.rpc.txs.begun() {
            self.txs.begin(|id| Tx {
                request: true,
                ..Tx::new(id, (o.version, o.command, o.key), Kind::Rpc { call })
            });
        }
        progress
    }

    /// The answer to a message that carried data (a write, a pipe transceive): its
    /// status goes to the file or call transactions it began.
    fn answered(&mut self, key: u64, st: u32) {
        for t in self.txs.iter_mut() {
            if t.key == key && matches!(t.kind, Kind::File(_) | Kind::Rpc { .. }) {
                t.status = Some(st);
            }
        }
    }

    /// A handle was closed: its files are complete.
    fn closed(&mut self, handle: Handle) {
        for t in self.txs.iter_mut() {
            if let Kind::File(f) = &mut t.kind
                && f.handle == handle
            {
                f.closed = true;
            }
        }
    }

    /// The DCE/RPC call of a transaction over a pipe.
    pub fn call(&self, tx: &Tx) -> Option<&dcerpc::Tx> {
        let Kind::Rpc { call } = tx.kind else {
            return None;
        };
        self.rpc.txs.iter().find(|c| c.id == call)
    }

    /// Drops the transactions before id `keep`, and the calls only they named.
    pub fn prune(&mut self, keep: u64) {
        self.txs.prune(keep);
        let first_call = self
            .txs
            .iter()
            .filter_map(|t| match t.kind {
                Kind::Rpc { call } => Some(call),
                _ => None,
            })
            .min()
            .unwrap_or(self.rpc.txs.begun());
        self.rpc.txs.prune(first_call);
    }

    /// The flow ended: open files and calls count as complete.
    pub fn finish(&mut self) {
        self.rpc.finish();
        for t in self.txs.iter_mut() {
            if let Kind::File(f) = &mut t.kind {
                f.closed = true;
            }
            t.response = true;
        }
    }
}

#[cfg(test)]
mod tests;
