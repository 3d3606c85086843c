//! SMB 2 and 3 messages (MS-SMB2 2.2): a 64-byte header, then the command's structure.
//! Offsets in a structure count from the header's start.

use super::{Handle, Kind, Le, Ntlmssp, Origin, Smb, status, utf16};
use netsieve_wire::Direction;

pub(super) const HEADER: usize = 64;
const FLAG_RESPONSE: u32 = 0x1;
const FLAG_ASYNC: u32 = 0x2;
const FSCTL_PIPE_TRANSCEIVE: u32 = 0x0011_c017;
const SHARE_TYPE_PIPE: u8 = 2;

/// Commands read beyond their header.
pub mod cmd {
    pub const NEGOTIATE: u16 = 0x00;
    pub const SESSION_SETUP: u16 = 0x01;
    pub const TREE_CONNECT: u16 = 0x03;
    pub const CREATE: u16 = 0x05;
    pub const CLOSE: u16 = 0x06;
    pub const READ: u16 = 0x08;
    pub const WRITE: u16 = 0x09;
    pub const IOCTL: u16 = 0x0b;
    pub const GET_INFO: u16 = 0x10;
    pub const SET_INFO: u16 = 0x11;
}

/// A header's fields.
#[derive(Clone, Copy, Debug)]
struct Header {
    status: u32,
    command: u16,
    flags: u32,
    next: usize,
    message_id: u64,
    tree_id: u32,
    session_id: u64,
}

impl Header {
    fn parse(m: &[u8]) -> Option<Header> {
        if m.len() < HEADER {
            return None;
        }
        let r = Le(m);
        let flags = r.u32(16);
        Some(Header {
            status: r.u32(8),
            command: r.u16(12),
            flags,
            next: r.u32(20) as usize,
            message_id: r.u64(24),
            tree_id: if flags & FLAG_ASYNC != 0 {
                0
            } else {
                r.u32(36)
            },
            session_id: r.u64(40),
        })
    }

    /// The pairing key: the message id, apart from SMB 1's keys.
    fn key(&self) -> u64 {
        self.message_id & !(1 << 63)
    }

    fn origin(&self) -> Origin {
        Origin {
            version: 2,
            command: self.command,
            key: self.key(),
        }
    }
}

/// One message, and those compounded after it. Returns whether a transaction made
/// progress.
pub fn message(s: &mut Smb, dir: Direction, mut m: &[u8]) -> bool {
    let mut progress = false;
    // A compound chain ends at a zero offset; each offset moves forward.
    for _ in 0..64 {
        let Some(h) = Header::parse(m) else { break };
        let end = if h.next >= HEADER && h.next <= m.len() {
            h.next
        } else {
            m.len()
        };
        let one = &m[..end];
        progress |= if h.flags & FLAG_RESPONSE != 0 {
            dir == Direction::ToClient && response(s, &h, one)
        } else {
            dir == Direction::ToServer && request(s, &h, one)
        };
        if end == m.len() {
            break;
        }
        m = &m[end..];
    }
    progress
}

/// The file id at `at` in a structure.
fn handle(r: Le<'_>, at: usize) -> Handle {
    let mut id = [0; 16];
    let b = r.bytes(at, 16);
    id[..b.len()].copy_from_slice(b);
    Handle::V2(id)
}

fn request(s: &mut Smb, h: &Header, m: &[u8]) -> bool {
    let r = Le(m);
    let b = HEADER;
    let ids = (h.session_id, h.tree_id);
    let key = h.key();
    match h.command {
        cmd::SESSION_SETUP => {
            let blob = r.bytes(usize::from(r.u16(b + 12)), usize::from(r.u16(b + 14)));
            let ntlmssp = Ntlmssp::find(blob);
            s.request(key, 2, h.command, ids, Kind::SessionSetup { ntlmssp });
        }
        cmd::TREE_CONNECT => {
            let path = r.bytes(usize::from(r.u16(b + 4)), usize::from(r.u16(b + 6)));
            let share = utf16(path);
            s.request(
                key,
                2,
                h.command,
                ids,
                Kind::TreeConnect { share, pipe: None },
            );
        }
        cmd::CREATE => {
            let name = r.bytes(usize::from(r.u16(b + 44)), usize::from(r.u16(b + 46)));
            let name = utf16(name);
            s.request(key, 2, h.command, ids, Kind::Create { name });
        }
        cmd::CLOSE => {
            s.request(key, 2, h.command, ids, Kind::Generic);
            s.closed(handle(r, b + 8));
        }
        cmd::READ => {
            s.await_data(key, handle(r, b + 16), r.u64(b + 8));
            return false;
        }
        cmd::WRITE => {
            let data = r.bytes(usize::from(r.u16(b + 2)), r.u32(b + 4) as usize);
            return s.data(
                Direction::ToServer,
                handle(r, b + 16),
                r.u64(b + 8),
                data,
                h.origin(),
            );
        }
        cmd::IOCTL if r.u32(b + 4) == FSCTL_PIPE_TRANSCEIVE => {
            let input = r.bytes(r.u32(b + 24) as usize, r.u32(b + 28) as usize);
            let hd = handle(r, b + 8);
            s.await_data(key, hd, 0);
            return s.data(Direction::ToServer, hd, 0, input, h.origin());
        }
        // Neither these nor plain reads and writes are transactions of their own.
        cmd::GET_INFO | cmd::SET_INFO => return false,
        _ => s.request(key, 2, h.command, ids, Kind::Generic),
    }
    true
}

fn response(s: &mut Smb, h: &Header, m: &[u8]) -> bool {
    let r = Le(m);
    let b = HEADER;
    let key = h.key();
    let st = h.status;
    match h.command {
        cmd::READ => {
            let Some(p) = s.take_pending(key) else {
                return false;
            };
            if st != status::SUCCESS {
                return false;
            }
            let data = r.bytes(usize::from(r.u8(b + 2)), r.u32(b + 4) as usize);
            return s.data(Direction::ToClient, p.handle, p.offset, data, h.origin());
        }
        cmd::WRITE => {
            s.answered(key, st);
            return false;
        }
        cmd::IOCTL => {
            if let Some(p) = s.take_pending(key) {
                s.answered(key, st);
                let out = r.bytes(r.u32(b + 32) as usize, r.u32(b + 36) as usize);
                return s.data(Direction::ToClient, p.handle, 0, out, h.origin());
            }
        }
        // SMB 2's answer to an SMB 1 negotiation (a client offering both) completes it.
        cmd::NEGOTIATE if st != status::PENDING && s.v1_negotiation_open() => {
            s.dialect = Some(super::Dialect::V2(r.u16(b + 4)));
            s.negotiated_v1(st);
            return true;
        }
        _ => {}
    }
    if st == status::PENDING {
        return false;
    }
    if h.command == cmd::NEGOTIATE && st == status::SUCCESS {
        s.dialect = Some(super::Dialect::V2(r.u16(b + 4)));
    }
    if matches!(h.command, cmd::GET_INFO | cmd::SET_INFO) {
        return false;
    }
    let tree_id = h.tree_id;
    let tx = s.response(key, 2, h.command, st);
    let mut connected = None;
    let mut created = None;
    match &mut tx.kind {
        Kind::TreeConnect { pipe, .. } if st == status::SUCCESS => {
            let p = r.u8(b + 2) == SHARE_TYPE_PIPE;
            *pipe = Some(p);
            connected = Some(p);
        }
        Kind::Create { name } if st == status::SUCCESS => {
            created = Some((name.clone(), tx.tree_id));
        }
        _ => {}
    }
    if let Some(p) = connected {
        s.tree_connected(tree_id, p);
    }
    if let Some((name, tree)) = created {
        let pipe = s.is_pipe_tree(tree);
        s.opened(handle(r, b + 64), name, pipe);
    }
    true
}
