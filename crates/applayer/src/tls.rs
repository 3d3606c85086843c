//! TLS handshakes (SSL 3.0 to TLS 1.3): what is sent in the clear before encryption
//! starts. The ClientHello gives the server name (SNI), the offered version, the
//! protocols offered (ALPN) and the JA3 and JA4 fingerprints; the ServerHello the chosen
//! version and protocol and JA3S; the Certificate message (before TLS 1.3 only) the
//! server's chain, each certificate read with `x509-parser` (the parser Suricata uses,
//! so subjects and issuers are written as Suricata writes them).
//!
//! Records are read per direction; handshake messages may span records and records may
//! span segments. Parsing of a direction stops at its ChangeCipherSpec or first
//! application data, at a malformed record, or when a handshake message would exceed
//! [`MAX_MESSAGE`].

use crate::frames::Marks;
use netsieve_wire::FrameType;
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
    pub session_id: Vec<u8>,
    /// The cipher suites offered, in order (GREASE included).
    pub ciphers: Vec<u16>,
    /// The extension types, in order (GREASE included).
    pub extensions: Vec<u16>,
    /// The signature_algorithms extension's list, in order.
    pub sig_algs: Vec<u16>,
    /// The supported_versions extension's list.
    pub versions: Vec<u16>,
    /// The protocols offered (ALPN), in order.
    pub alpns: Vec<Vec<u8>>,
}

impl ClientHello {
    /// The JA4 fingerprint (FoxIO's JA4 for TLS over TCP): `t`, the highest version
    /// offered, `d` with an SNI or `i`, the cipher and extension counts, the first
    /// ALPN's first and last characters; then the first 12 hex digits of the SHA-256 of
    /// the sorted ciphers, and of the sorted extensions (SNI and ALPN left out) with the
    /// signature algorithms in order. GREASE values are left out throughout.
    pub fn ja4(&self) -> String {
        let clean = |v: &[u16]| {
            v.iter()
                .copied()
                .filter(|&x| !grease(x))
                .collect::<Vec<_>>()
        };
        let ciphers = clean(&self.ciphers);
        let exts = clean(&self.extensions);
        // Drafts of TLS 1.3 count as TLS 1.3.
        let version = clean(&self.versions)
            .into_iter()
            .map(|v| if is_tls13(v) { 0x0304 } else { v })
            .max()
            .unwrap_or(self.version);
        let version = match version {
            0x0304 => "13",
            0x0303 => "12",
            0x0302 => "11",
            0x0301 => "10",
            0x0300 => "s3",
            0x0002 => "s2",
            _ => "00",
        };
        let sni = if self.extensions.contains(&0) {
            'd'
        } else {
            'i'
        };
        let alpn = match self.alpns.first() {
            Some(a) if !a.is_empty() => {
                let (f, l) = (a[0], a[a.len() - 1]);
                if f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric() {
                    format!("{}{}", f as char, l as char)
                } else {
                    let h = format!("{f:02x}{l:02x}");
                    format!("{}{}", &h[..1], &h[3..])
                }
            }
            _ => "00".into(),
        };
        let hex = |v: &[u16]| {
            v.iter()
                .map(|x| format!("{x:04x}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let hash12 = |text: &str| -> String {
            use sha2::Digest;
            let d = sha2::Sha256::digest(text.as_bytes());
            netsieve_wire::hex::lower(&d[..6])
        };
        let mut sorted = ciphers.clone();
        sorted.sort_unstable();
        let b = if sorted.is_empty() {
            "000000000000".to_string()
        } else {
            hash12(&hex(&sorted))
        };
        let mut ext_sorted: Vec<u16> = exts
            .iter()
            .copied()
            .filter(|&e| e != 0 && e != 16)
            .collect();
        ext_sorted.sort_unstable();
        let c = if exts.is_empty() {
            "000000000000".to_string()
        } else {
            let sigs = clean(&self.sig_algs);
            hash12(&format!("{}_{}", hex(&ext_sorted), hex(&sigs)))
        };
        format!(
            "t{version}{sni}{:02}{:02}{alpn}_{b}_{c}",
            ciphers.len().min(99),
            exts.len().min(99)
        )
    }
}

impl ClientHello {
    /// The highest version offered: its supported_versions' (GREASE left out), else
    /// the legacy field.
    pub fn offered_version(&self) -> u16 {
        self.versions
            .iter()
            .copied()
            .filter(|&v| v & 0x0f0f != 0x0a0a)
            .map(final_version)
            .max()
            .unwrap_or(self.version)
    }
}

/// A TLS 1.3 draft (IETF `0x7fNN`, Facebook's `0x7eNN` and `0xfbNN`) as 1.3.
pub fn final_version(v: u16) -> u16 {
    match v >> 8 {
        0x7f | 0x7e | 0xfb => 0x0304,
        _ => v,
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerHello {
    /// The version chosen (the supported_versions extension's, if present).
    pub version: u16,
    pub ja3s: String,
    /// The 32 random bytes.
    pub random: [u8; 32],
    pub session_id: Vec<u8>,
    /// The protocol chosen (ALPN).
    pub alpn: Option<Vec<u8>>,
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
    /// The subject alternative names: DNS names as they are, others as `x509-parser`
    /// writes them (`DirectoryName(...)`), as Suricata writes them.
    pub san: Vec<String>,
    /// The validity period, `YYYY-MM-DDTHH:MM:SS` (UTC).
    pub not_before: String,
    pub not_after: String,
}

impl Cert {
    /// The SHA-1 of the certificate, lower-case hex bytes joined by `:`.
    pub fn fingerprint(&self) -> String {
        use sha1::Digest;
        let d = sha1::Sha1::digest(&self.der);
        netsieve_wire::hex::lower_sep(&d, ':')
    }
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
    /// Past the clear part, record headers are still read (bodies skipped) until
    /// application data shows: `skip` body bytes are left of the current record.
    skim: bool,
    skip: usize,
    /// Record headers are read to the stream's end, for frames.
    tail: bool,
}

/// A flow's TLS state.
#[derive(Clone, Debug, Default)]
pub struct Tls {
    pub client_hello: Option<ClientHello>,
    pub server_hello: Option<ServerHello>,
    /// The server's chain, leaf first.
    pub certs: Vec<Cert>,
    /// The client's chain (client authentication), leaf first.
    pub client_certs: Vec<Cert>,
    /// The certificate message was seen (inspection of certificate buffers can start).
    pub certs_done: bool,
    /// The server resumed the session the client named (the same session id in both
    /// hellos).
    pub resumed: bool,
    pub events: Vec<Event>,
    sides: PerDir<Side>,
    /// Each direction sent an application data record: what follows is encrypted.
    app_data: PerDir<bool>,
    /// How far each side's handshake has come (see [`Tls::progress`]).
    progress: PerDir<Option<u8>>,
    /// Records of the latest feed, as frames (see [`crate::frames`]).
    pub marks: Marks,
    /// The protocol whose StartTLS began it (EVE's `from_proto`).
    pub from: Option<crate::AppProto>,
    /// Its one transaction's id: 0, or after a StartTLS the number of the transactions
    /// before it (as an upgraded HTTP/2 connection numbers its streams on).
    pub tx_id: u64,
}

/// A record's frames: the record, its 5-byte header, its fragment.
const FRAMES: [FrameType; 3] = [FrameType::TlsPdu, FrameType::TlsHdr, FrameType::TlsData];

/// The `early_data` extension (RFC 8446).
const EARLY_DATA: u16 = 42;

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

/// The values that are not GREASE, in decimal, joined by `-` (JA3's lists).
fn join(v: &[u16]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(6 * v.len());
    for x in v.iter().filter(|&&x| !grease(x)) {
        if !s.is_empty() {
            s.push('-');
        }
        let _ = write!(s, "{x}");
    }
    s
}

impl Tls {
    /// Feeds in-order bytes of one direction. Returns whether a handshake message or
    /// a ChangeCipherSpec was read: an inspection point of the stream, as Suricata
    /// inspects a TLS stream after each.
    pub fn feed(&mut self, dir: Direction, data: &[u8]) -> bool {
        let d = dir;
        self.advance(d, 0);
        if self.sides[d].done {
            if self.sides[d].skim || self.sides[d].tail {
                self.skim(d, data, 0);
            }
            return false;
        }
        // Where `rec[0]` lies relative to `data[0]`.
        let mut at = -(self.sides[d].rec.len() as i64);
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
            self.marks.add_split(FRAMES, at, 5, 5 + len);
            let side = &mut self.sides[d];
            if ctype == 22 {
                side.hs.extend_from_slice(&side.rec[5..5 + len]);
            }
            side.rec.drain(..5 + len);
            at += (5 + len) as i64;
            match ctype {
                22 => any |= self.handshake(d),
                // ChangeCipherSpec, application data: the rest is encrypted; its
                // records are skimmed for the first application data.
                20 | 23 => {
                    self.advance(d, if d == Direction::ToServer { 3 } else { 4 });
                    if ctype == 23 {
                        self.saw_application_data(d);
                    }
                    let frames = self.marks.on();
                    let side = &mut self.sides[d];
                    side.done = true;
                    side.skim = !self.app_data[d];
                    side.tail = frames;
                    side.hs = Vec::new();
                    let rest = std::mem::take(&mut side.rec);
                    self.skim(d, &rest, at);
                    return any || ctype == 20;
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

    /// Rules inspect frames: records are read to the stream's end.
    pub fn want_frames(&mut self) {
        self.marks.enable();
    }

    /// Encrypted records of direction `d`: their headers are read and their bodies
    /// skipped, until one is application data (or the stream is not TLS); for frames,
    /// to the stream's end. `data[0]` lies at `at` relative to the feed's first byte.
    fn skim(&mut self, d: Direction, mut data: &[u8], mut at: i64) {
        while (self.sides[d].skim || self.sides[d].tail) && !data.is_empty() {
            let side = &mut self.sides[d];
            if side.skip > 0 {
                let n = side.skip.min(data.len());
                side.skip -= n;
                data = &data[n..];
                at += n as i64;
                continue;
            }
            let start = at - side.rec.len() as i64;
            let n = (5 - side.rec.len()).min(data.len());
            side.rec.extend_from_slice(&data[..n]);
            data = &data[n..];
            at += n as i64;
            if side.rec.len() < 5 {
                return;
            }
            let (ctype, len) = (side.rec[0], u16at(&side.rec, 3).unwrap_or(0) as usize);
            let valid = side.rec[1] == 3 && (20..=24).contains(&ctype);
            side.rec.clear();
            side.skip = len;
            if !valid {
                side.skim = false;
                side.tail = false;
                continue;
            }
            if side.tail {
                self.marks.add_split(FRAMES, start, 5, 5 + len);
            }
            if ctype == 23 && self.sides[d].skim {
                self.saw_application_data(d);
                self.sides[d].skim = !self.app_data[d];
            }
        }
    }

    /// An application data record in direction `d`. It means the handshake is over,
    /// unless it is a client's early data (TLS 1.3 0-RTT: offered in its hello) before
    /// the server's hello, as Suricata reads it.
    fn saw_application_data(&mut self, d: Direction) {
        let early = d == Direction::ToServer
            && self.server_hello.is_none()
            && self
                .client_hello
                .as_ref()
                .is_some_and(|c| c.extensions.contains(&EARLY_DATA));
        self.app_data[d] |= !early;
    }

    /// Direction `d` sent application data: it is encrypted from there on.
    pub fn application_data(&self, d: Direction) -> bool {
        self.app_data[d]
    }

    /// Direction `d` is past the clear part of the handshake (encrypted, ended or
    /// given up).
    pub fn side_done(&self, d: Direction) -> bool {
        self.sides[d].done
    }

    /// Both directions are past the clear part of the handshake (encrypted, ended or
    /// given up).
    pub fn handshake_done(&self) -> bool {
        self.sides[Direction::ToServer].done && self.sides[Direction::ToClient].done
    }

    /// How far direction `d`'s handshake has come, as the firewall's TLS states count
    /// (`client_in_progress`, `client_hello_done`, `client_cert_done`,
    /// `client_handshake_done`; `server_in_progress`, `server_hello`, `server_cert_done`,
    /// `server_hello_done`, `server_handshake_done`): `None` before its first byte. The
    /// server's handshake counts as done at its ServerHelloDone, as Suricata 8's does.
    pub fn progress(&self, d: Direction) -> Option<u8> {
        self.progress[d]
    }

    /// Direction `d` holds part of a record or handshake message, waiting for the rest.
    pub fn pending(&self, d: Direction) -> bool {
        let s = &self.sides[d];
        !s.rec.is_empty() || !s.hs.is_empty() || (s.skim && s.skip > 0)
    }

    /// Direction `d` ended: its side is finished (`client_finished`, `server_finished`).
    pub fn close(&mut self, d: Direction) {
        self.advance(d, if d == Direction::ToServer { 4 } else { 5 });
    }

    fn advance(&mut self, d: Direction, to: u8) {
        let p = &mut self.progress[d];
        *p = Some(p.map_or(to, |x| x.max(to)));
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
            // Hello 1, certificate or key exchange 2, ServerHelloDone 4.
            match mtype {
                1 | 2 => self.advance(d, 1),
                11 | 16 => self.advance(d, 2),
                14 => self.advance(d, 4),
                _ => {}
            }
            let ok = match mtype {
                1 if d == Direction::ToServer => {
                    client_hello(&msg).map(|c| self.client_hello = Some(c))
                }
                2 if d == Direction::ToClient => server_hello(&msg).map(|s| {
                    // TLS 1.3 echoes the client's session id whether it resumes or not.
                    self.resumed = !is_tls13(s.version)
                        && self.client_hello.as_ref().is_some_and(|c| {
                            !c.session_id.is_empty() && c.session_id == s.session_id
                        });
                    self.server_hello = Some(s);
                }),
                11 => self.certificate(d, &msg),
                _ => Some(()),
            };
            match ok {
                Some(()) => any = true,
                None => {
                    self.fail(d, Event::InvalidHandshake);
                    break;
                }
            }
        }
        any
    }

    /// A Certificate message of direction `d`: the server's chain, or the client's.
    fn certificate(&mut self, d: Direction, m: &[u8]) -> Option<()> {
        let total = u24at(m, 0)?;
        let list = m.get(3..3 + total)?;
        let mut chain = Vec::new();
        let mut at = 0;
        while at < list.len() {
            let n = u24at(list, at)?;
            let der = list.get(at + 3..at + 3 + n)?;
            // Rules and EVE read the leaf (the first); the rest of the chain is kept as
            // sent.
            let parsed = if chain.is_empty() {
                parse_cert(der)
            } else {
                None
            };
            match parsed {
                Some(c) => chain.push(c),
                None => {
                    if chain.is_empty() {
                        self.events.push(Event::InvalidCertificate);
                    }
                    chain.push(Cert {
                        der: der.to_vec(),
                        ..Cert::default()
                    });
                }
            }
            at += 3 + n;
        }
        match d {
            Direction::ToClient => {
                self.certs = chain;
                self.certs_done = true;
            }
            Direction::ToServer => self.client_certs = chain,
        }
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
    let sid = m.get(at + 1..at + 1 + *m.get(at)? as usize)?.to_vec();
    at += 1 + *m.get(at)? as usize;
    let nc = u16at(m, at)? as usize;
    let ciphers = u16_list(m.get(at + 2..at + 2 + nc)?);
    at += 2 + nc;
    at += 1 + *m.get(at)? as usize;
    let mut c = ClientHello {
        version,
        random: m.get(2..34)?.try_into().ok()?,
        session_id: sid,
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
                13 => c.sig_algs = u16_list(data.get(2..)?),
                16 => c.alpns = alpn_list(data)?,
                43 => c.versions = u16_list(data.get(1..)?),
                _ => {}
            }
        }
    }
    c.extensions = exts.clone();
    c.ja3 = format!(
        "{},{},{},{},{}",
        version,
        join(&ciphers),
        join(&exts),
        join(&groups),
        join(&formats)
    );
    c.ciphers = ciphers;
    Some(c)
}

/// An ALPN extension's protocol list.
fn alpn_list(data: &[u8]) -> Option<Vec<Vec<u8>>> {
    let list = data.get(2..2 + u16at(data, 0)? as usize)?;
    let mut out = Vec::new();
    let mut at = 0;
    while at < list.len() {
        let n = list[at] as usize;
        out.push(list.get(at + 1..at + 1 + n)?.to_vec());
        at += 1 + n;
    }
    Some(out)
}

fn server_hello(m: &[u8]) -> Option<ServerHello> {
    let legacy = u16at(m, 0)?;
    let mut at = 34;
    let session_id = m.get(at + 1..at + 1 + *m.get(at)? as usize)?.to_vec();
    at += 1 + *m.get(at)? as usize;
    let cipher = u16at(m, at)?;
    at += 3;
    let mut version = legacy;
    let mut exts = Vec::new();
    let mut alpn = None;
    if let Some(n) = u16at(m, at) {
        let block = m.get(at + 2..at + 2 + n as usize)?;
        for (t, data) in extensions(block)? {
            exts.push(t);
            match t {
                43 => version = u16at(data, 0)?,
                16 => alpn = alpn_list(data)?.into_iter().next(),
                _ => {}
            }
        }
    }
    Some(ServerHello {
        version,
        ja3s: format!("{},{},{}", legacy, cipher, join(&exts)),
        random: m.get(2..34)?.try_into().ok()?,
        session_id,
        alpn,
    })
}

/// Parses the parts of an X.509 certificate that rules and EVE look at.
pub fn parse_cert(der: &[u8]) -> Option<Cert> {
    use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};
    let (_, x) = X509Certificate::from_der(der).ok()?;
    let time = |t: x509_parser::time::ASN1Time| {
        let d = t.to_datetime();
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            d.year(),
            u8::from(d.month()),
            d.day(),
            d.hour(),
            d.minute(),
            d.second()
        )
    };
    let san = match x.subject_alternative_name() {
        Ok(Some(ext)) => ext
            .value
            .general_names
            .iter()
            .map(|n| match n {
                GeneralName::DNSName(s) => s.to_string(),
                // An address as a list of its bytes (`[10, 0, 0, 1]`).
                GeneralName::IPAddress(b) => format!("{b:?}"),
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    };
    Some(Cert {
        der: der.to_vec(),
        subject: x.subject().to_string(),
        issuer: x.issuer().to_string(),
        serial: serial_hex(x.raw_serial()),
        san,
        not_before: time(x.validity().not_before),
        not_after: time(x.validity().not_after),
    })
}

/// A serial number as Suricata writes it: upper-case hex bytes joined by colons.
fn serial_hex(raw: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(raw.len() * 3);
    for (i, b) in raw.iter().enumerate() {
        if i > 0 {
            out.push(':');
        }
        let _ = write!(out, "{b:02X}");
    }
    out
}

/// The TLS version as Suricata names it in EVE (`TLS 1.2`, `TLSv1`, and the drafts of
/// TLS 1.3: `TLS 1.3 draft-28`, Facebook's `TLS 1.3 draft-26-fb`).
pub fn version_name(v: u16) -> String {
    match v {
        0x0002 | 0x0200 => "SSLv2".into(),
        0x0300 => "SSLv3".into(),
        0x0301 => "TLSv1".into(),
        0x0302 => "TLS 1.1".into(),
        0x0303 => "TLS 1.2".into(),
        0x0304 => "TLS 1.3".into(),
        0x7f00..=0x7fff => format!("TLS 1.3 draft-{}", v & 0xff),
        0xfb00..=0xfbff => format!("TLS 1.3 draft-{}-fb", v & 0xff),
        v => v.to_string(),
    }
}

/// A version of TLS 1.3 or one of its drafts.
pub fn is_tls13(v: u16) -> bool {
    v == 0x0304 || (0x7f00..=0x7fff).contains(&v) || (0xfb00..=0xfbff).contains(&v)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_a_client_offers() {
        let mut c = ClientHello {
            version: 0x0301,
            ..ClientHello::default()
        };
        assert_eq!(c.offered_version(), 0x0301);
        c.versions = vec![0x3a3a, 0x0304, 0x0303];
        assert_eq!(c.offered_version(), 0x0304);
        c.versions = vec![0x7e02, 0x0303];
        assert_eq!(c.offered_version(), 0x0304);
    }

    use super::*;

    #[test]
    fn a_serial_is_upper_case_hex_bytes_joined_by_colons() {
        assert_eq!(serial_hex(&[]), "");
        assert_eq!(serial_hex(&[0x0a]), "0A");
        assert_eq!(serial_hex(&[0x00, 0xff, 0x3c]), "00:FF:3C");
    }

    /// A ClientHello record with SNI `example.com` and a GREASE cipher.
    pub fn client_hello_record() -> Vec<u8> {
        client_hello_with(&[])
    }

    /// The same with `more` extensions (type, length, body) after the others.
    fn client_hello_with(more: &[u8]) -> Vec<u8> {
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
        let exts: Vec<u8> = [&sni[..], &groups[..], &formats[..], more].concat();
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
            // GREASE left out; no signature algorithms (the trailing `_` stays, as
            // Suricata hashes it); no ALPN (`00`).
            assert_eq!(c.ja4(), "t12d020300_1584f0a67932_c2f961105e84");
            assert!(c.alpns.is_empty() && c.session_id.is_empty());
            assert_eq!(c.random[..4], [0xa0, 0xa1, 0xa2, 0xa3]);
            assert_eq!(c.random[31], 0xbf);
        }
    }

    /// A record of type `ctype` with `len` bytes of body.
    fn record(ctype: u8, len: usize) -> Vec<u8> {
        let mut r = vec![ctype, 3, 3, (len >> 8) as u8, len as u8];
        r.resize(5 + len, 0x5a);
        r
    }

    #[test]
    fn the_flow_is_encrypted_from_the_first_application_data_in_any_split() {
        // The client's hello, then ChangeCipherSpec, an encrypted Finished (a
        // handshake record), and application data: encrypted once that record's
        // header is in.
        let mut to_server = client_hello_record();
        let before = [record(20, 1), record(22, 40)].concat();
        to_server.extend_from_slice(&before);
        let clear = to_server.len();
        to_server.extend_from_slice(&record(23, 300));
        for cut in 0..to_server.len() {
            let mut t = Tls::default();
            t.feed(Direction::ToServer, &to_server[..cut]);
            assert_eq!(
                t.application_data(Direction::ToServer),
                cut >= clear + 5,
                "cut {cut}"
            );
            t.feed(Direction::ToServer, &to_server[cut..]);
            assert!(t.application_data(Direction::ToServer), "cut {cut}");
        }
        // Records after ChangeCipherSpec that are not TLS end the skimming.
        let mut t = Tls::default();
        t.feed(Direction::ToServer, &client_hello_record());
        t.feed(Direction::ToServer, &record(20, 1));
        t.feed(Direction::ToServer, b"GET / HTTP/1.1\r\n");
        t.feed(Direction::ToServer, &record(23, 10));
        assert!(!t.application_data(Direction::ToServer));
    }

    #[test]
    fn early_data_before_the_server_hello_is_not_the_end_of_the_handshake() {
        // The client offers early data (an empty extension 42) and sends some.
        let rec = client_hello_with(&[0, 42, 0, 0]);
        let mut t = Tls::default();
        t.feed(Direction::ToServer, &rec);
        assert!(
            t.client_hello
                .as_ref()
                .is_some_and(|c| c.extensions.contains(&EARLY_DATA))
        );
        t.feed(Direction::ToServer, &record(23, 30));
        assert!(!t.application_data(Direction::ToServer));
    }

    #[test]
    fn garbage_stops_the_direction() {
        let mut t = Tls::default();
        assert!(!t.feed(Direction::ToServer, &[22, 9, 9, 0, 1, 0]));
        assert_eq!(t.events, vec![Event::InvalidRecord]);
        assert!(!t.feed(Direction::ToServer, &client_hello_record()));
    }
}
