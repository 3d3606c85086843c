//! TLS handshakes (SSL 3.0 to TLS 1.3): what is sent in the clear before encryption
//! starts. The ClientHello gives the server name (SNI), the offered version and the
//! JA3 fingerprint string; the ServerHello the chosen version and JA3S; the Certificate
//! message (before TLS 1.3 only) the server certificate's subject, issuer and serial.
//!
//! Records are read per direction; handshake messages may span records and records may
//! span segments. Parsing of a direction stops at its ChangeCipherSpec or first
//! application data, at a malformed record, or when a handshake message would exceed
//! [`MAX_MESSAGE`].

use netsieve_wire::{Direction, PerDir};

/// The largest handshake message kept (a certificate chain fits).
pub const MAX_MESSAGE: usize = 256 << 10;

/// What the ClientHello says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientHello {
    /// The legacy version field (0x0303 for TLS 1.2 and 1.3).
    pub version: u16,
    pub sni: Option<Vec<u8>>,
    /// JA3: version, ciphers, extensions, groups, point formats (GREASE left out).
    pub ja3: String,
    /// The 32 random bytes (the first four were once the sender's clock).
    pub random: [u8; 32],
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerHello {
    /// The version chosen (the supported_versions extension's, if present).
    pub version: u16,
    pub ja3s: String,
    /// The 32 random bytes.
    pub random: [u8; 32],
}

/// A certificate, as far as rules and EVE look at it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cert {
    pub der: Vec<u8>,
    /// `C=US, O=Example, CN=example.com`, attributes in certificate order.
    pub subject: String,
    pub issuer: String,
    /// Upper-case hex bytes joined by `:`.
    pub serial: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    InvalidRecord,
    InvalidHandshake,
    MessageTooLong,
    InvalidCertificate,
}

#[derive(Clone, Debug, Default)]
struct Side {
    /// Bytes of an incomplete record.
    rec: Vec<u8>,
    /// Handshake bytes of an incomplete message.
    hs: Vec<u8>,
    done: bool,
}

/// A flow's TLS state.
#[derive(Clone, Debug, Default)]
pub struct Tls {
    pub client_hello: Option<ClientHello>,
    pub server_hello: Option<ServerHello>,
    /// The server's chain, leaf first.
    pub certs: Vec<Cert>,
    /// The certificate message was seen (inspection of certificate buffers can start).
    pub certs_done: bool,
    pub events: Vec<Event>,
    sides: PerDir<Side>,
}

fn u16at(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?]))
}

fn u24at(b: &[u8], i: usize) -> Option<usize> {
    Some(((*b.get(i)? as usize) << 16) | ((*b.get(i + 1)? as usize) << 8) | *b.get(i + 2)? as usize)
}

/// GREASE values (RFC 8701) are left out of JA3.
fn grease(v: u16) -> bool {
    v & 0x0f0f == 0x0a0a && v >> 8 == v & 0xff
}

fn join(v: &[u16]) -> String {
    v.iter()
        .filter(|&&x| !grease(x))
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("-")
}

impl Tls {
    /// Feeds in-order bytes of one direction. Returns whether a handshake message
    /// completed (an inspection point).
    pub fn feed(&mut self, dir: Direction, data: &[u8]) -> bool {
        let d = dir;
        if self.sides[d].done {
            return false;
        }
        self.sides[d].rec.extend_from_slice(data);
        let mut any = false;
        loop {
            let r = &self.sides[d].rec;
            if r.len() < 5 {
                break;
            }
            let (ctype, len) = (r[0], u16at(r, 3).unwrap_or(0) as usize);
            if r[1] != 3 || !(20..=24).contains(&ctype) || len > (1 << 14) + 2048 {
                self.fail(d, Event::InvalidRecord);
                break;
            }
            if r.len() < 5 + len {
                break;
            }
            let body = r[5..5 + len].to_vec();
            self.sides[d].rec.drain(..5 + len);
            match ctype {
                22 => {
                    self.sides[d].hs.extend_from_slice(&body);
                    any |= self.handshake(d);
                }
                // ChangeCipherSpec, application data: the rest is encrypted.
                20 | 23 => {
                    self.sides[d].done = true;
                    break;
                }
                _ => {}
            }
            if self.sides[d].done {
                break;
            }
        }
        if self.sides[d].done {
            self.sides[d].rec = Vec::new();
            self.sides[d].hs = Vec::new();
        }
        any
    }

    fn fail(&mut self, d: Direction, e: Event) {
        self.events.push(e);
        self.sides[d].done = true;
    }

    fn handshake(&mut self, d: Direction) -> bool {
        let mut any = false;
        loop {
            let h = &self.sides[d].hs;
            let Some(len) = u24at(h, 1) else { break };
            if len > MAX_MESSAGE {
                self.fail(d, Event::MessageTooLong);
                break;
            }
            if h.len() < 4 + len {
                break;
            }
            let (mtype, msg) = (h[0], h[4..4 + len].to_vec());
            self.sides[d].hs.drain(..4 + len);
            let ok = match mtype {
                1 if d == Direction::ToServer => {
                    client_hello(&msg).map(|c| self.client_hello = Some(c))
                }
                2 if d == Direction::ToClient => {
                    server_hello(&msg).map(|s| self.server_hello = Some(s))
                }
                11 if d == Direction::ToClient => self.certificate(&msg),
                _ => Some(()),
            };
            match ok {
                Some(()) => any |= matches!(mtype, 1 | 2 | 11),
                None => {
                    self.fail(d, Event::InvalidHandshake);
                    break;
                }
            }
        }
        any
    }

    fn certificate(&mut self, m: &[u8]) -> Option<()> {
        let total = u24at(m, 0)?;
        let list = m.get(3..3 + total)?;
        let mut at = 0;
        while at < list.len() {
            let n = u24at(list, at)?;
            let der = list.get(at + 3..at + 3 + n)?;
            match parse_cert(der) {
                Some(c) => self.certs.push(c),
                None => {
                    self.events.push(Event::InvalidCertificate);
                    self.certs.push(Cert {
                        der: der.to_vec(),
                        ..Cert::default()
                    });
                }
            }
            at += 3 + n;
        }
        self.certs_done = true;
        Some(())
    }
}

/// Extensions as (type, data).
fn extensions(b: &[u8]) -> Option<Vec<(u16, &[u8])>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 4 <= b.len() {
        let t = u16at(b, at)?;
        let n = u16at(b, at + 2)? as usize;
        out.push((t, b.get(at + 4..at + 4 + n)?));
        at += 4 + n;
    }
    Some(out)
}

fn u16_list(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect()
}

fn client_hello(m: &[u8]) -> Option<ClientHello> {
    let version = u16at(m, 0)?;
    let mut at = 34;
    at += 1 + *m.get(at)? as usize;
    let nc = u16at(m, at)? as usize;
    let ciphers = u16_list(m.get(at + 2..at + 2 + nc)?);
    at += 2 + nc;
    at += 1 + *m.get(at)? as usize;
    let mut c = ClientHello {
        version,
        random: m.get(2..34)?.try_into().ok()?,
        ..ClientHello::default()
    };
    let (mut exts, mut groups, mut formats) = (Vec::new(), Vec::new(), Vec::new());
    if let Some(n) = u16at(m, at) {
        let block = m.get(at + 2..at + 2 + n as usize)?;
        for (t, data) in extensions(block)? {
            exts.push(t);
            match t {
                0
                    // server_name list: type 0 (host_name), length, name.
                    if data.get(2) == Some(&0) => {
                        let n = u16at(data, 3)? as usize;
                        c.sni = Some(data.get(5..5 + n)?.to_vec());
                    }
                10 => groups = u16_list(data.get(2..)?),
                11 => formats = data.get(1..)?.iter().map(|&x| x as u16).collect(),
                _ => {}
            }
        }
    }
    c.ja3 = format!(
        "{},{},{},{},{}",
        version,
        join(&ciphers),
        join(&exts),
        join(&groups),
        join(&formats)
    );
    Some(c)
}

fn server_hello(m: &[u8]) -> Option<ServerHello> {
    let legacy = u16at(m, 0)?;
    let mut at = 34;
    at += 1 + *m.get(at)? as usize;
    let cipher = u16at(m, at)?;
    at += 3;
    let mut version = legacy;
    let mut exts = Vec::new();
    if let Some(n) = u16at(m, at) {
        let block = m.get(at + 2..at + 2 + n as usize)?;
        for (t, data) in extensions(block)? {
            exts.push(t);
            if t == 43 {
                version = u16at(data, 0)?;
            }
        }
    }
    Some(ServerHello {
        version,
        ja3s: format!("{},{},{}", legacy, cipher, join(&exts)),
        random: m.get(2..34)?.try_into().ok()?,
    })
}

/// One DER element at `at`: (tag, content, offset after it).
fn der(b: &[u8], at: usize) -> Option<(u8, &[u8], usize)> {
    let tag = *b.get(at)?;
    let l0 = *b.get(at + 1)? as usize;
    let (len, hdr) = if l0 < 0x80 {
        (l0, 2)
    } else {
        let n = l0 & 0x7f;
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = (len << 8) | *b.get(at + 2 + i)? as usize;
        }
        (len, 2 + n)
    };
    let start = at + hdr;
    let content = b.get(start..start.checked_add(len)?)?;
    Some((tag, content, start + len))
}

/// The children of a constructed element.
fn children(b: &[u8]) -> Option<Vec<(u8, &[u8])>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let (t, c, next) = der(b, at)?;
        out.push((t, c));
        at = next;
    }
    Some(out)
}

/// Parses the parts of an X.509 certificate rules look at.
pub fn parse_cert(der_bytes: &[u8]) -> Option<Cert> {
    let (_, cert, _) = der(der_bytes, 0)?;
    let (_, tbs, _) = der(cert, 0)?;
    let mut f = children(tbs)?.into_iter();
    let mut serial = f.next()?;
    if serial.0 == 0xa0 {
        serial = f.next()?;
    }
    let _sigalg = f.next()?;
    let issuer = f.next()?;
    let _validity = f.next()?;
    let subject = f.next()?;
    Some(Cert {
        der: der_bytes.to_vec(),
        subject: name(subject.1)?,
        issuer: name(issuer.1)?,
        serial: serial
            .1
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect::<Vec<_>>()
            .join(":"),
    })
}

/// An X.509 Name as `C=US, O=Example, CN=example.com`.
fn name(b: &[u8]) -> Option<String> {
    let mut parts = Vec::new();
    for (_, set) in children(b)? {
        for (_, atv) in children(set)? {
            let kids = children(atv)?;
            let (oid, val) = (kids.first()?.1, kids.get(1)?.1);
            let key = match oid {
                [0x55, 4, 3] => "CN".to_string(),
                [0x55, 4, 6] => "C".to_string(),
                [0x55, 4, 7] => "L".to_string(),
                [0x55, 4, 8] => "ST".to_string(),
                [0x55, 4, 10] => "O".to_string(),
                [0x55, 4, 11] => "OU".to_string(),
                [0x55, 4, 5] => "serialNumber".to_string(),
                [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 9, 1] => "emailAddress".to_string(),
                _ => oid_string(oid),
            };
            parts.push(format!("{key}={}", String::from_utf8_lossy(val)));
        }
    }
    Some(parts.join(", "))
}

fn oid_string(oid: &[u8]) -> String {
    let mut out = Vec::new();
    if let Some(&f) = oid.first() {
        out.push((f / 40) as u64);
        out.push((f % 40) as u64);
    }
    let mut v = 0u64;
    for &b in oid.iter().skip(1) {
        v = (v << 7) | (b & 0x7f) as u64;
        if b & 0x80 == 0 {
            out.push(v);
            v = 0;
        }
    }
    out.iter().map(u64::to_string).collect::<Vec<_>>().join(".")
}

/// The TLS version as Suricata names it in EVE (`TLS 1.2`).
pub fn version_name(v: u16) -> String {
    match v {
        0x0300 => "SSLv3".into(),
        0x0301 => "TLS 1.0".into(),
        0x0302 => "TLS 1.1".into(),
        0x0303 => "TLS 1.2".into(),
        0x0304 => "TLS 1.3".into(),
        v => format!("0x{v:04x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello record with SNI `example.com` and a GREASE cipher.
    pub fn client_hello_record() -> Vec<u8> {
        let mut ch = vec![3, 3];
        ch.extend((0..32).map(|i| 0xa0 + i as u8));
        ch.push(0);
        ch.extend_from_slice(&[0, 6, 0x0a, 0x0a, 0xc0, 0x2f, 0x00, 0x35]);
        ch.extend_from_slice(&[1, 0]);
        let name = b"example.com";
        let mut sni = vec![0, 0];
        let list_len = (3 + name.len()) as u16;
        let ext_len = 2 + list_len;
        sni.extend_from_slice(&ext_len.to_be_bytes());
        sni.extend_from_slice(&list_len.to_be_bytes());
        sni.push(0);
        sni.extend_from_slice(&(name.len() as u16).to_be_bytes());
        sni.extend_from_slice(name);
        let groups = [0, 10, 0, 4, 0, 2, 0, 23];
        let formats = [0, 11, 0, 2, 1, 0];
        let exts: Vec<u8> = [&sni[..], &groups[..], &formats[..]].concat();
        ch.extend_from_slice(&(exts.len() as u16).to_be_bytes());
        ch.extend_from_slice(&exts);
        let mut hs = vec![1, 0, (ch.len() >> 8) as u8, ch.len() as u8];
        hs.extend_from_slice(&ch);
        let mut rec = vec![22, 3, 1, (hs.len() >> 8) as u8, hs.len() as u8];
        rec.extend_from_slice(&hs);
        rec
    }

    #[test]
    fn client_hello_sni_and_ja3_in_any_split() {
        let rec = client_hello_record();
        for cut in 0..rec.len() {
            let mut t = Tls::default();
            let a = t.feed(Direction::ToServer, &rec[..cut]);
            let b = t.feed(Direction::ToServer, &rec[cut..]);
            assert!(!a && b, "cut {cut}");
            let c = t.client_hello.unwrap();
            assert_eq!(c.sni.as_deref(), Some(&b"example.com"[..]));
            assert_eq!(c.ja3, "771,49199-53,0-10-11,23,0");
            assert_eq!(c.random[..4], [0xa0, 0xa1, 0xa2, 0xa3]);
            assert_eq!(c.random[31], 0xbf);
        }
    }

    #[test]
    fn garbage_stops_the_direction() {
        let mut t = Tls::default();
        assert!(!t.feed(Direction::ToServer, &[22, 9, 9, 0, 1, 0]));
        assert_eq!(t.events, vec![Event::InvalidRecord]);
        assert!(!t.feed(Direction::ToServer, &client_hello_record()));
    }
}
