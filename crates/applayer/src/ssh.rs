//! SSH (RFC 4253): each side's identification line, `SSH-protoversion-softwareversion
//! [comments]`, and its first binary packet, the key exchange offer (`SSH_MSG_KEXINIT`),
//! whose algorithm lists give HASSH (Salesforce's fingerprint). A server may send
//! other lines before its identification (section 4.2); of the packets after the offer
//! only the message types are read, up to `SSH_MSG_NEWKEYS`: encrypted after it.
//!
//! A flow holds one transaction (id 0), as in Suricata: it is complete in a direction
//! once that side identified itself.

use crate::frames::Marks;
use netsieve_wire::{Direction, FrameType, PerDir};

/// The longest identification line kept (RFC 4253 allows 255 bytes).
pub const MAX_BANNER: usize = 255;
/// Lines a server may send before its identification (then the side is given up).
const MAX_PRE_LINES: usize = 64;
/// The largest binary packet read (RFC 4253 section 6.1 asks for 35,000 bytes).
const MAX_PACKET: usize = 35_000;
/// `SSH_MSG_KEXINIT`.
const KEXINIT: u8 = 20;
/// `SSH_MSG_NEWKEYS`: the packets after it are encrypted.
const NEWKEYS: u8 = 21;

/// What one side said of itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Banner {
    /// `2.0`, `1.99`, `1.5`.
    pub proto_version: Vec<u8>,
    /// `OpenSSH_8.9p1` (the comments after a space are left out).
    pub software_version: Vec<u8>,
}

/// A side's HASSH string: its key exchange, encryption, MAC and compression
/// algorithms (those for its own direction), `;`-separated.
pub type Hassh = Vec<u8>;

/// A flow's SSH state.
#[derive(Debug, Default)]
pub struct Ssh {
    pub banner: PerDir<Option<Banner>>,
    /// Each side's HASSH string, once its key exchange offer was read.
    pub hassh: PerDir<Option<Hassh>>,
    /// Each side's first binary packet so far.
    packet: PerDir<Vec<u8>>,
    /// Each side's line so far, while it has not identified itself.
    line: PerDir<Vec<u8>>,
    /// Lines a side sent before identifying itself.
    pre_lines: PerDir<usize>,
    /// The side sent something that is not SSH: nothing more is read from it.
    gave_up: PerDir<bool>,
    /// After the offer, the packets' first bytes (length, padding, message type) until
    /// `SSH_MSG_NEWKEYS`; `skip` bytes are left of the packet being passed over.
    head: PerDir<Vec<u8>>,
    skip: PerDir<usize>,
    /// The side sent `SSH_MSG_NEWKEYS`: what follows is encrypted.
    newkeys: PerDir<bool>,
    /// The clear binary packets of the latest feed, as frames (see [`crate::frames`]).
    pub marks: Marks,
}

impl Ssh {
    /// Feeds in-order bytes of one direction. Returns whether that side identified
    /// itself with these bytes.
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) -> bool {
        let mut rest = bytes;
        while self.banner[dir].is_none() && !self.gave_up[dir] && !rest.is_empty() {
            let (take, eol) = match rest.iter().position(|&c| c == b'\n') {
                Some(i) => (i + 1, true),
                None => (rest.len(), false),
            };
            let line = &mut self.line[dir];
            line.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if line.len() > MAX_BANNER + 2 {
                self.give_up(dir);
            } else if eol {
                let line = std::mem::take(&mut self.line[dir]);
                self.line_done(dir, &line);
            }
        }
        let named = self.banner[dir].is_some() && rest.len() < bytes.len();
        // Where `rest[0]` lies in `bytes`.
        let at = (bytes.len() - rest.len()) as i64;
        if self.banner[dir].is_some() && self.hassh[dir].is_none() && !self.gave_up[dir] {
            let start = at - self.packet[dir].len() as i64;
            let (done, after) = self.offer(dir, rest);
            let end = (bytes.len() - after.len()) as i64;
            if done {
                self.mark(start, (end - start) as usize);
                self.skim(dir, after, end);
            }
            return done || named;
        }
        if self.hassh[dir].is_some() {
            self.skim(dir, rest, at);
        }
        named
    }

    /// A binary packet of `len` bytes from `start` (relative to the feed's first byte):
    /// its frames, as Suricata numbers them (header, data, packet).
    fn mark(&mut self, start: i64, len: usize) {
        self.marks
            .add(FrameType::SshRecordHdr, start, 6.min(len), Some(0));
        if len > 6 {
            self.marks
                .add(FrameType::SshRecordData, start + 6, len - 6, Some(0));
        }
        self.marks.add(FrameType::SshRecordPdu, start, len, Some(0));
    }

    /// The clear packets after the offer (the key exchange), read up to the side's
    /// `SSH_MSG_NEWKEYS`: their first six bytes, the rest passed over.
    /// `bytes[0]` lies at `at` relative to the feed's first byte.
    fn skim(&mut self, dir: Direction, mut bytes: &[u8], mut at: i64) {
        while !self.newkeys[dir] && !self.gave_up[dir] && !bytes.is_empty() {
            if self.skip[dir] > 0 {
                let n = self.skip[dir].min(bytes.len());
                self.skip[dir] -= n;
                bytes = &bytes[n..];
                at += n as i64;
                continue;
            }
            let head = &mut self.head[dir];
            let start = at - head.len() as i64;
            let n = (6 - head.len()).min(bytes.len());
            head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            at += n as i64;
            if head.len() < 6 {
                return;
            }
            let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
            let msg = head[5];
            head.clear();
            if !(2..=MAX_PACKET).contains(&len) {
                self.give_up(dir);
                return;
            }
            // The packet's length counts the padding length byte and the message type.
            self.skip[dir] = len - 2;
            self.mark(start, 4 + len);
            self.newkeys[dir] = msg == NEWKEYS;
        }
    }

    /// The side sent `SSH_MSG_NEWKEYS`: it is encrypted from there on.
    pub fn newkeys(&self, dir: Direction) -> bool {
        self.newkeys[dir]
    }

    /// Bytes after the identification: the first binary packet, the key exchange
    /// offer. Returns whether it completed, and the bytes after it.
    fn offer<'b>(&mut self, dir: Direction, bytes: &'b [u8]) -> (bool, &'b [u8]) {
        let p = &mut self.packet[dir];
        let want = |p: &[u8]| {
            p.get(..4)
                .map(|l| 4 + u32::from_be_bytes([l[0], l[1], l[2], l[3]]) as usize)
        };
        let need = want(p).unwrap_or(4).saturating_sub(p.len());
        p.extend_from_slice(&bytes[..need.min(bytes.len())]);
        let mut rest = &bytes[need.min(bytes.len())..];
        // The length is known once four bytes are in: read the rest of the packet.
        if let Some(total) = want(p) {
            if total > MAX_PACKET + 4 {
                self.give_up(dir);
                return (false, &[]);
            }
            let more = total.saturating_sub(p.len()).min(rest.len());
            p.extend_from_slice(&rest[..more]);
            rest = &rest[more..];
            if p.len() == total {
                let packet = std::mem::take(&mut self.packet[dir]);
                match hassh(&packet[4..], dir) {
                    Some(h) => self.hassh[dir] = Some(h),
                    None => self.give_up(dir),
                }
                return (self.hassh[dir].is_some(), rest);
            }
        }
        (false, &[])
    }

    fn line_done(&mut self, dir: Direction, line: &[u8]) {
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if let Some(b) = parse_banner(text) {
            self.banner[dir] = Some(b);
            return;
        }
        self.pre_lines[dir] += 1;
        // Only a server may say something first, and not forever.
        if dir == Direction::ToServer || self.pre_lines[dir] > MAX_PRE_LINES {
            self.give_up(dir);
        }
    }

    fn give_up(&mut self, dir: Direction) {
        self.gave_up[dir] = true;
        self.line[dir] = Vec::new();
        self.packet[dir] = Vec::new();
        self.head[dir] = Vec::new();
    }

    /// Both sides identified themselves.
    pub fn both(&self) -> bool {
        self.banner.values().all(Option::is_some)
    }
}

/// The HASSH string of a binary packet's body (after its length) that is a key
/// exchange offer: its key exchange algorithms, then the encryption, MAC and
/// compression algorithms of direction `dir` (the sender's own).
fn hassh(body: &[u8], dir: Direction) -> Option<Hassh> {
    let (&pad, body) = body.split_first()?;
    let payload = body.get(..body.len().checked_sub(pad as usize)?)?;
    let (&msg, rest) = payload.split_first()?;
    if msg != KEXINIT {
        return None;
    }
    let mut rest = rest.get(16..)?; // the cookie
    let mut lists = Vec::with_capacity(10);
    for _ in 0..10 {
        let len = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        lists.push(rest.get(4..4 + len)?);
        rest = &rest[4 + len..];
    }
    // kex, host key, enc c->s, enc s->c, mac c->s, mac s->c, comp c->s, comp s->c, ...
    let own = usize::from(dir == Direction::ToClient);
    let parts = [lists[0], lists[2 + own], lists[4 + own], lists[6 + own]];
    Some(parts.join(&b";"[..]))
}

/// `SSH-2.0-OpenSSH_8.9p1 Ubuntu-3` -> (`2.0`, `OpenSSH_8.9p1`).
fn parse_banner(text: &[u8]) -> Option<Banner> {
    let rest = text.strip_prefix(b"SSH-")?;
    let dash = rest.iter().position(|&c| c == b'-')?;
    let proto = &rest[..dash];
    let soft = &rest[dash + 1..];
    let soft = &soft[..soft.iter().position(|&c| c == b' ').unwrap_or(soft.len())];
    if proto.is_empty() {
        return None;
    }
    Some(Banner {
        proto_version: proto.to_vec(),
        software_version: soft.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ToClient, ToServer};

    #[test]
    fn banners_in_any_split() {
        let server = b"Welcome\r\nSSH-1.99-OpenSSH_4.3\r\n\x00\x00\x01";
        let client = b"SSH-2.0-OpenSSH_6.1 Debian-4\r\n\x00\x00";
        for cut in 0..client.len() {
            let mut s = Ssh::default();
            s.feed(ToServer, &client[..cut]);
            s.feed(ToServer, &client[cut..]);
            s.feed(ToClient, &server[..cut.min(server.len())]);
            s.feed(ToClient, &server[cut.min(server.len())..]);
            let c = s.banner[ToServer].as_ref().unwrap();
            assert_eq!(c.proto_version, b"2.0");
            assert_eq!(c.software_version, b"OpenSSH_6.1");
            let v = s.banner[ToClient].as_ref().unwrap();
            assert_eq!(v.proto_version, b"1.99");
            assert_eq!(v.software_version, b"OpenSSH_4.3");
            assert!(s.both());
        }
    }

    /// A key exchange offer with these name lists, as a binary packet.
    fn kexinit(lists: [&str; 10]) -> Vec<u8> {
        let mut payload = vec![KEXINIT];
        payload.extend_from_slice(&[7; 16]);
        for l in lists {
            payload.extend_from_slice(&(l.len() as u32).to_be_bytes());
            payload.extend_from_slice(l.as_bytes());
        }
        payload.extend_from_slice(&[0, 0, 0, 0, 0]);
        packet(&payload)
    }

    #[test]
    fn hassh_of_each_side_in_any_split() {
        let lists = ["kx", "hk", "e1", "e2", "m1", "m2", "c1", "c2", "", ""];
        let mut client = b"SSH-2.0-x\r\n".to_vec();
        client.extend_from_slice(&kexinit(lists));
        let mut server = b"SSH-2.0-y\r\n".to_vec();
        server.extend_from_slice(&kexinit(lists));
        for cut in 0..client.len() {
            let mut s = Ssh::default();
            s.feed(ToServer, &client[..cut]);
            s.feed(ToServer, &client[cut..]);
            s.feed(ToClient, &server);
            assert_eq!(
                s.hassh[ToServer].as_deref(),
                Some(&b"kx;e1;m1;c1"[..]),
                "{cut}"
            );
            assert_eq!(s.hassh[ToClient].as_deref(), Some(&b"kx;e2;m2;c2"[..]));
        }
        // A packet that claims to be huge is not waited for.
        let mut s = Ssh::default();
        s.feed(ToServer, b"SSH-2.0-x\r\n\xff\xff\xff\xff");
        assert!(s.gave_up[ToServer] && s.packet[ToServer].is_empty());
    }

    /// A binary packet around `payload` (message type first).
    fn packet(payload: &[u8]) -> Vec<u8> {
        let mut p = ((payload.len() + 1 + 4) as u32).to_be_bytes().to_vec();
        p.push(4);
        p.extend_from_slice(payload);
        p.extend_from_slice(&[0; 4]);
        p
    }

    #[test]
    fn newkeys_of_each_side_in_any_split() {
        let lists = ["kx", "hk", "e1", "e2", "m1", "m2", "c1", "c2", "", ""];
        let mut client = b"SSH-2.0-x\r\n".to_vec();
        client.extend_from_slice(&kexinit(lists));
        client.extend_from_slice(&packet(&[30; 40]));
        let before = client.len();
        client.extend_from_slice(&packet(&[NEWKEYS]));
        client.extend_from_slice(b"encrypted bytes");
        for cut in 0..client.len() {
            let mut s = Ssh::default();
            s.feed(ToServer, &client[..cut]);
            // The message type is the packet's sixth byte.
            assert_eq!(s.newkeys(ToServer), cut >= before + 6, "{cut}");
            s.feed(ToServer, &client[cut..]);
            assert!(s.newkeys(ToServer) && !s.newkeys(ToClient), "{cut}");
            assert!(s.hassh[ToServer].is_some());
        }
        // A packet length past the limit ends the reading.
        let mut s = Ssh::default();
        s.feed(ToServer, b"SSH-2.0-x\r\n");
        s.feed(ToServer, &kexinit(lists));
        s.feed(ToServer, &[0x7f, 0xff, 0xff, 0xff, 0, NEWKEYS]);
        assert!(!s.newkeys(ToServer) && s.gave_up[ToServer]);
    }

    #[test]
    fn a_client_that_is_not_ssh_is_given_up() {
        let mut s = Ssh::default();
        s.feed(ToServer, b"GET / HTTP/1.1\r\nSSH-2.0-x\r\n");
        assert!(s.banner[ToServer].is_none());
        s.feed(ToClient, &[b'a'; 1000]);
        assert!(s.banner[ToClient].is_none() && s.line[ToClient].is_empty());
    }
}
