//! The `smb` object: one SMB transaction as Suricata's `smb` logger writes it (its
//! command and status, the session and tree, and what the command was about: a share or
//! named pipe, a file's name, an NTLMSSP login, a DCE/RPC call over a pipe). `smb`
//! records and alerts on SMB flows carry it.

use super::dcerpc::{Fragments, Iface};
use netsieve_applayer::dcerpc::{self, ptype_name};
use netsieve_applayer::smb::{Kind, Ntlmssp};
use netsieve_detect::log::SmbMeta;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// EVE's `smb` object.
pub(super) struct Object<'a>(pub &'a SmbMeta);

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let SmbMeta {
            tx: t,
            call,
            dialect,
            ..
        } = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &(t.id + 1))?;
        let dialect = dialect
            .as_ref()
            .map_or_else(|| "unknown".into(), |d| d.name());
        m.serialize_entry("dialect", &dialect)?;
        m.serialize_entry("command", &command_name(t.version, t.command))?;
        if let Some(st) = t.status {
            m.serialize_entry("status", &status_name(st))?;
            m.serialize_entry("status_code", &format!("{st:#x}"))?;
        }
        m.serialize_entry("session_id", &t.session_id)?;
        m.serialize_entry("tree_id", &t.tree_id)?;
        match &t.kind {
            Kind::TreeConnect { share, pipe } => {
                let text = String::from_utf8_lossy(share);
                match pipe {
                    Some(true) => {
                        m.serialize_entry("named_pipe", &text)?;
                        m.serialize_entry("share_type", "PIPE")?;
                    }
                    _ => m.serialize_entry("share", &text)?,
                }
            }
            // An empty name opens the share's root.
            Kind::Create { name } if name.is_empty() => {
                m.serialize_entry("filename", "<share_root>")?;
            }
            Kind::Create { name } => {
                m.serialize_entry("filename", &String::from_utf8_lossy(name))?;
            }
            Kind::File(f) => {
                m.serialize_entry("filename", &String::from_utf8_lossy(&f.name))?;
            }
            Kind::SessionSetup { ntlmssp: Some(n) } => m.serialize_entry("ntlmssp", &Login(n))?,
            _ => {}
        }
        if let Some(c) = call {
            m.serialize_entry("dcerpc", &Call(c))?;
        }
        m.end()
    }
}

struct Login<'a>(&'a Ntlmssp);

impl Serialize for Login<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("domain", &String::from_utf8_lossy(&n.domain))?;
        m.serialize_entry("user", &String::from_utf8_lossy(&n.user))?;
        m.serialize_entry("host", &String::from_utf8_lossy(&n.host))?;
        if let Some((major, minor, build)) = n.version {
            m.serialize_entry("version", &format!("{major}.{minor} build {build} rev 15"))?;
        }
        m.end()
    }
}

/// The DCE/RPC call of a transaction over a named pipe.
struct Call<'a>(&'a dcerpc::Tx);

impl Serialize for Call<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut m = s.serialize_map(None)?;
        if let Some(p) = t.request.ptype {
            m.serialize_entry("request", ptype_name(p))?;
        }
        m.serialize_entry("response", t.response.ptype.map_or("UNREPLIED", ptype_name))?;
        if t.is_request() {
            m.serialize_entry("opnum", &t.opnum.unwrap_or(0))?;
            m.serialize_entry("req", &Fragments(&t.request))?;
        }
        let ifaces: Vec<_> = t.interfaces.iter().map(|i| Iface(i, true)).collect();
        if !ifaces.is_empty() {
            m.serialize_entry("interfaces", &ifaces)?;
        }
        if t.is_request() && t.response.ptype.is_some() {
            m.serialize_entry("res", &Fragments(&t.response))?;
        }
        m.serialize_entry("call_id", &t.call_id)?;
        m.end()
    }
}

/// A command's name, as Suricata writes it.
fn command_name(version: u8, c: u16) -> String {
    let (prefix, name) = if version == 1 {
        ("SMB1_COMMAND_", smb1_command(c))
    } else {
        ("SMB2_COMMAND_", smb2_command(c))
    };
    match name {
        Some(n) => format!("{prefix}{n}"),
        None => "UNKNOWN_COMMAND".into(),
    }
}

fn smb1_command(c: u16) -> Option<&'static str> {
    Some(match c {
        0x00 => "CREATE_DIRECTORY",
        0x01 => "DELETE_DIRECTORY",
        0x02 => "OPEN",
        0x03 => "CREATE",
        0x04 => "CLOSE",
        0x05 => "FLUSH",
        0x06 => "DELETE",
        0x07 => "RENAME",
        0x08 => "QUERY_INFORMATION",
        0x09 => "SET_INFORMATION",
        0x0a => "READ",
        0x0b => "WRITE",
        0x0c => "LOCK_BYTE_RANGE",
        0x0d => "UNLOCK_BYTE_RANGE",
        0x10 => "CHECK_DIRECTORY",
        0x12 => "SEEK",
        0x24 => "LOCKING_ANDX",
        0x25 => "TRANS",
        0x26 => "TRANS_SECONDARY",
        0x2b => "ECHO",
        0x2d => "OPEN_ANDX",
        0x2e => "READ_ANDX",
        0x2f => "WRITE_ANDX",
        0x32 => "TRANS2",
        0x33 => "TRANS2_SECONDARY",
        0x34 => "FIND_CLOSE2",
        0x70 => "TREE_CONNECT",
        0x71 => "TREE_DISCONNECT",
        0x72 => "NEGOTIATE_PROTOCOL",
        0x73 => "SESSION_SETUP_ANDX",
        0x74 => "LOGOFF_ANDX",
        0x75 => "TREE_CONNECT_ANDX",
        0x80 => "QUERY_INFO_DISK",
        0xa0 => "NT_TRANS",
        0xa1 => "NT_TRANS_SECONDARY",
        0xa2 => "NT_CREATE_ANDX",
        0xa4 => "NT_CANCEL",
        0xa5 => "NT_RENAME",
        _ => return None,
    })
}

fn smb2_command(c: u16) -> Option<&'static str> {
    const NAMES: [&str; 19] = [
        "NEGOTIATE_PROTOCOL",
        "SESSION_SETUP",
        "SESSION_LOGOFF",
        "TREE_CONNECT",
        "TREE_DISCONNECT",
        "CREATE",
        "CLOSE",
        "FLUSH",
        "READ",
        "WRITE",
        "LOCK",
        "IOCTL",
        "CANCEL",
        "KEEPALIVE",
        "FIND",
        "CHANGE_NOTIFY",
        "GET_INFO",
        "SET_INFO",
        "OPLOCK_BREAK",
    ];
    NAMES.get(usize::from(c)).copied()
}

/// An NT status's name; one this table lacks is written as its number.
fn status_name(st: u32) -> String {
    let name = match st {
        0x0000_0000 => "STATUS_SUCCESS",
        0x0000_0103 => "STATUS_PENDING",
        0x0000_010b => "STATUS_NOTIFY_CLEANUP",
        0x0000_010c => "STATUS_NOTIFY_ENUM_DIR",
        0x8000_0005 => "STATUS_BUFFER_OVERFLOW",
        0x8000_0006 => "STATUS_NO_MORE_FILES",
        0xc000_0001 => "STATUS_UNSUCCESSFUL",
        0xc000_0002 => "STATUS_NOT_IMPLEMENTED",
        0xc000_0003 => "STATUS_INVALID_INFO_CLASS",
        0xc000_0004 => "STATUS_INFO_LENGTH_MISMATCH",
        0xc000_0008 => "STATUS_INVALID_HANDLE",
        0xc000_000d => "STATUS_INVALID_PARAMETER",
        0xc000_000f => "STATUS_NO_SUCH_FILE",
        0xc000_0010 => "STATUS_INVALID_DEVICE_REQUEST",
        0xc000_0011 => "STATUS_END_OF_FILE",
        0xc000_0016 => "STATUS_MORE_PROCESSING_REQUIRED",
        0xc000_0022 => "STATUS_ACCESS_DENIED",
        0xc000_0023 => "STATUS_BUFFER_TOO_SMALL",
        0xc000_0033 => "STATUS_OBJECT_NAME_INVALID",
        0xc000_0034 => "STATUS_OBJECT_NAME_NOT_FOUND",
        0xc000_0035 => "STATUS_OBJECT_NAME_COLLISION",
        0xc000_003a => "STATUS_OBJECT_PATH_NOT_FOUND",
        0xc000_0043 => "STATUS_SHARING_VIOLATION",
        0xc000_006d => "STATUS_LOGON_FAILURE",
        0xc000_00ba => "STATUS_FILE_IS_A_DIRECTORY",
        0xc000_00bb => "STATUS_NOT_SUPPORTED",
        0xc000_00c9 => "STATUS_NETWORK_NAME_DELETED",
        0xc000_00cc => "STATUS_BAD_NETWORK_NAME",
        0xc000_0101 => "STATUS_DIRECTORY_NOT_EMPTY",
        0xc000_0103 => "STATUS_NOT_A_DIRECTORY",
        0xc000_0120 => "STATUS_CANCELLED",
        0xc000_0128 => "STATUS_FILE_CLOSED",
        0xc000_0225 => "STATUS_NOT_FOUND",
        0xc000_0184 => "STATUS_INVALID_DEVICE_STATE",
        0xc000_014b => "STATUS_PIPE_BROKEN",
        0xc000_00b0 => "STATUS_PIPE_DISCONNECTED",
        0xc000_00b1 => "STATUS_PIPE_CLOSING",
        0xc000_00ad => "STATUS_INVALID_PIPE_STATE",
        0xc000_00ae => "STATUS_PIPE_BUSY",
        0xc000_0203 => "STATUS_USER_SESSION_DELETED",
        0xc000_035c => "STATUS_NETWORK_SESSION_EXPIRED",
        _ => return format!("{st}"),
    };
    name.into()
}
