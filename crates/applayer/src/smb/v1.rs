//! SMB 1 messages (MS-CIFS 2.2.3, MS-SMB): a 32-byte header, then one command's word
//! and byte blocks, or a chain of "AndX" commands each naming where the next begins.
//! Offsets in a command count from the header's start.

use super::{Handle, Kind, Le, Ntlmssp, Origin, Smb, cstr, status, utf16};
use netsieve_wire::Direction;

const HEADER: usize = 32;
const FLAG_REPLY: u8 = 0x80;
const FLAGS2_UNICODE: u16 = 0x8000;
const NO_ANDX: u8 = 0xff;
const TRANSACT_NMPIPE: u16 = 0x26;

/// Commands read beyond their header.
pub mod cmd {
    pub const CLOSE: u8 = 0x04;
    pub const NEGOTIATE: u8 = 0x72;
    pub const TRANS: u8 = 0x25;
    pub const READ_ANDX: u8 = 0x2e;
    pub const WRITE_ANDX: u8 = 0x2f;
    pub const TRANS2: u8 = 0x32;
    pub const SESSION_SETUP_ANDX: u8 = 0x73;
    pub const TREE_CONNECT_ANDX: u8 = 0x75;
    pub const NT_CREATE_ANDX: u8 = 0xa2;
}

/// The header's fields.
#[derive(Clone, Copy, Debug)]
struct Header {
    status: u32,
    reply: bool,
    unicode: bool,
    tid: u16,
    uid: u16,
    /// The request and its answer are paired by the process and multiplex ids (the
    /// user and tree ids may be assigned by the answer).
    key: u64,
}

impl Header {
    fn origin(&self, command: u16) -> Origin {
        Origin {
            version: 1,
            command,
            key: self.key,
        }
    }
}

/// One command of a message: its words and bytes, and where its bytes start.
#[derive(Clone, Copy)]
struct Block<'a> {
    cmd: u8,
    words: Le<'a>,
    bytes: &'a [u8],
    bytes_at: usize,
}

impl<'a> Block<'a> {
    /// The command `cmd` whose word count is at `at` in message `m`.
    fn at(m: &'a [u8], cmd: u8, at: usize) -> Option<Block<'a>> {
        let wct = usize::from(*m.get(at)?);
        let words = m.get(at + 1..at + 1 + 2 * wct)?;
        let bcc_at = at + 1 + 2 * wct;
        let bcc = usize::from(Le(m).u16(bcc_at));
        let bytes_at = bcc_at + 2;
        let bytes = Le(m).bytes(bytes_at, bcc);
        Some(Block {
            cmd,
            words: Le(words),
            bytes,
            bytes_at,
        })
    }

    fn wct(&self) -> usize {
        self.words.0.len() / 2
    }

    /// The next command of an AndX chain, if this one names one.
    fn next(&self, m: &'a [u8], is_andx: bool) -> Option<Block<'a>> {
        if !is_andx || self.wct() < 2 || self.words.u8(0) == NO_ANDX {
            return None;
        }
        let at = usize::from(self.words.u16(2));
        // A chain only moves forward.
        if at <= self.bytes_at.saturating_sub(2) {
            return None;
        }
        Block::at(m, self.words.u8(0), at)
    }
}

fn andx(cmd: u8) -> bool {
    matches!(
        cmd,
        cmd::READ_ANDX
            | cmd::WRITE_ANDX
            | cmd::SESSION_SETUP_ANDX
            | cmd::TREE_CONNECT_ANDX
            | cmd::NT_CREATE_ANDX
            | 0x74 // LOGOFF_ANDX
            | 0x2d // OPEN_ANDX
            | 0x24 // LOCKING_ANDX
    )
}

/// One message with its AndX chain. Returns whether a transaction made progress.
pub fn message(s: &mut Smb, dir: Direction, m: &[u8]) -> bool {
    if m.len() < HEADER + 1 {
        return false;
    }
    let r = Le(m);
    let flags = r.u8(9);
    let h = Header {
        status: r.u32(5),
        reply: flags & FLAG_REPLY != 0,
        unicode: r.u16(10) & FLAGS2_UNICODE != 0,
        tid: r.u16(24),
        uid: r.u16(28),
        key: 1 << 63 | u64::from(r.u16(26)) << 16 | u64::from(r.u16(30)),
    };
    if h.reply != (dir == Direction::ToClient) {
        return false;
    }
    let mut progress = false;
    let mut block = Block::at(m, r.u8(4), HEADER);
    for _ in 0..16 {
        let Some(b) = block else { break };
        progress |= if h.reply {
            response(s, &h, m, &b)
        } else {
            request(s, &h, m, &b)
        };
        block = b.next(m, andx(b.cmd));
    }
    progress
}

/// Text at `at` in message `m` (UTF-16, aligned to two bytes from the header, when the
/// message says so), up to its NUL.
fn text(m: &[u8], h: &Header, mut at: usize) -> Vec<u8> {
    if h.unicode {
        at += at % 2;
        utf16(Le(m).bytes(at, m.len()))
    } else {
        cstr(Le(m).bytes(at, m.len())).to_vec()
    }
}

fn request(s: &mut Smb, h: &Header, m: &[u8], b: &Block<'_>) -> bool {
    let w = b.words;
    let cmd = u16::from(b.cmd);
    let ids = (u64::from(h.uid), u32::from(h.tid));
    match b.cmd {
        cmd::NEGOTIATE => {
            // Each dialect: a format byte (2) and a name.
            s.offered = b
                .bytes
                .split(|&c| c == 0)
                .filter_map(|d| d.strip_prefix(&[2]))
                .take(32)
                .map(<[u8]>::to_vec)
                .collect();
            s.request(h.key, 1, cmd, ids, Kind::Generic);
        }
        cmd::SESSION_SETUP_ANDX => {
            // Extended security (12 words): a security blob.
            let ntlmssp = if b.wct() == 12 {
                Ntlmssp::find(Le(b.bytes).bytes(0, usize::from(w.u16(14))))
            } else {
                None
            };
            s.request(h.key, 1, cmd, ids, Kind::SessionSetup { ntlmssp });
        }
        cmd::TREE_CONNECT_ANDX => {
            let share = text(m, h, b.bytes_at + usize::from(w.u16(6)));
            s.request(h.key, 1, cmd, ids, Kind::TreeConnect { share, pipe: None });
        }
        cmd::NT_CREATE_ANDX => {
            let name = text(m, h, b.bytes_at);
            s.request(h.key, 1, cmd, ids, Kind::Create { name });
        }
        cmd::CLOSE => {
            s.request(h.key, 1, cmd, ids, Kind::Generic);
            s.closed(Handle::V1(w.u16(0)));
        }
        cmd::WRITE_ANDX => {
            let len = usize::from(w.u16(20)) | usize::from(w.u16(18)) << 16;
            let data = Le(m).bytes(usize::from(w.u16(22)), len);
            let high = if b.wct() >= 14 { w.u32(24) } else { 0 };
            let offset = u64::from(w.u32(6)) | u64::from(high) << 32;
            return s.data(
                Direction::ToServer,
                Handle::V1(w.u16(4)),
                offset,
                data,
                h.origin(cmd),
            );
        }
        cmd::READ_ANDX => {
            let high = if b.wct() >= 12 { w.u32(20) } else { 0 };
            let offset = u64::from(w.u32(6)) | u64::from(high) << 32;
            s.await_data(h.key, Handle::V1(w.u16(4)), offset);
            return false;
        }
        cmd::TRANS if b.wct() >= 16 && w.u16(28) == TRANSACT_NMPIPE => {
            let data = Le(m).bytes(usize::from(w.u16(24)), usize::from(w.u16(22)));
            s.await_data(h.key, Handle::V1(w.u16(30)), 0);
            return s.pipe(Direction::ToServer, data, h.origin(cmd));
        }
        // Reads, writes and transactions are no transactions of their own.
        cmd::TRANS | cmd::TRANS2 => return false,
        _ => s.request(h.key, 1, cmd, ids, Kind::Generic),
    }
    true
}

fn response(s: &mut Smb, h: &Header, m: &[u8], b: &Block<'_>) -> bool {
    let w = b.words;
    let cmd = u16::from(b.cmd);
    let st = h.status;
    match b.cmd {
        cmd::READ_ANDX => {
            let Some(p) = s.take_pending(h.key) else {
                return false;
            };
            let len = usize::from(w.u16(10)) | usize::from(w.u16(14) & 1) << 16;
            let data = Le(m).bytes(usize::from(w.u16(12)), len);
            return s.data(Direction::ToClient, p.handle, p.offset, data, h.origin(cmd));
        }
        // A pipe transaction's answer.
        cmd::TRANS if s.take_pending(h.key).is_some() => {
            let data = Le(m).bytes(usize::from(w.u16(14)), usize::from(w.u16(12)));
            return s.pipe(Direction::ToClient, data, h.origin(cmd));
        }
        cmd::WRITE_ANDX | cmd::TRANS | cmd::TRANS2 => return false,
        _ => {}
    }
    if st == status::PENDING {
        return false;
    }
    if b.cmd == cmd::NEGOTIATE
        && let Some(d) = s.offered.get(usize::from(w.u16(0)))
    {
        s.dialect = Some(super::Dialect::V1(d.clone()));
    }
    let tx = s.response(h.key, 1, cmd, st);
    let mut connected = None;
    let mut created = None;
    match &mut tx.kind {
        Kind::TreeConnect { pipe, .. } if st == status::SUCCESS => {
            let p = cstr(b.bytes).starts_with(b"IPC");
            *pipe = Some(p);
            connected = Some(p);
        }
        Kind::Create { name } if st == status::SUCCESS => {
            created = Some((name.clone(), tx.tree_id));
        }
        _ => {}
    }
    if let Some(p) = connected {
        s.tree_connected(u32::from(h.tid), p);
    }
    if let Some((name, tree)) = created {
        let pipe = s.is_pipe_tree(tree);
        s.opened(Handle::V1(w.u16(5)), name, pipe);
    }
    true
}
