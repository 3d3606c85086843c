//! The NTLMSSP authentication a session setup carries (MS-NLMP 2.2.1.3), found in its
//! security blob (usually wrapped in SPNEGO) by its signature.

use super::{Le, utf16};

const SIGNATURE: &[u8] = b"NTLMSSP\0";
const AUTHENTICATE: u32 = 3;
const NEGOTIATE_UNICODE: u32 = 0x1;
const NEGOTIATE_VERSION: u32 = 0x0200_0000;

/// The names of an NTLMSSP `AUTHENTICATE` message, as text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ntlmssp {
    pub user: Vec<u8>,
    pub domain: Vec<u8>,
    pub host: Vec<u8>,
    /// The client's Windows version (major, minor, build), when it sent one.
    pub version: Option<(u8, u8, u16)>,
}

impl Ntlmssp {
    /// The `AUTHENTICATE` message in a security blob, if it holds one.
    pub fn find(blob: &[u8]) -> Option<Ntlmssp> {
        let at = blob.windows(SIGNATURE.len()).position(|w| w == SIGNATURE)?;
        let m = Le(&blob[at..]);
        if m.u32(8) != AUTHENTICATE {
            return None;
        }
        let flags = m.u32(60);
        // Each field: its length, its allocated length, and its offset in the message.
        let field = |at: usize| {
            let b = m.bytes(m.u32(at + 4) as usize, usize::from(m.u16(at)));
            if flags & NEGOTIATE_UNICODE != 0 {
                utf16(b)
            } else {
                b.to_vec()
            }
        };
        // The payload starts after the fixed fields: the version is there when the
        // first payload offset leaves room for it.
        let first = [28, 36, 44]
            .iter()
            .map(|&f| m.u32(f + 4))
            .min()
            .unwrap_or(0);
        let version = (flags & NEGOTIATE_VERSION != 0 && first >= 72)
            .then(|| (m.u8(64), m.u8(65), m.u16(66)));
        Some(Ntlmssp {
            domain: field(28),
            user: field(36),
            host: field(44),
            version,
        })
    }
}
