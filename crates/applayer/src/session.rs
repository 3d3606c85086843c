//! One flow's application layer: which protocol it speaks (found by [`crate::probe`]
//! from either direction's first bytes, whatever the ports) and that protocol's parser.

use crate::frames::{Frame, Frames, Marks};
use crate::http::{Http, Limits, Progress, Switch};
use crate::{AppProto, Probe, probe};
use netsieve_wire::{Direction, PerDir};

/// Bytes of a direction kept while its protocol is undecided; past this the direction
/// counts as unknown.
const PROBE_BYTES: usize = 4096;

/// The parser of a flow whose protocol is known.
#[derive(Debug)]
pub enum Parser {
    Http(Box<Http>),
    Tls(Box<crate::tls::Tls>),
    Dns(Box<crate::dns::Dns>),
    Smtp(Box<crate::smtp::Smtp>),
    Ssh(Box<crate::ssh::Ssh>),
    Ftp(Box<crate::ftp::Ftp>),
    FtpData(Box<crate::ftpdata::FtpData>),
    Sip(Box<crate::sip::Sip>),
    Mqtt(Box<crate::mqtt::Mqtt>),
    Krb5(Box<crate::krb5::Krb5>),
    Snmp(Box<crate::snmp::Snmp>),
    Ntp(Box<crate::ntp::Ntp>),
    Ldap(Box<crate::ldap::Ldap>),
    Tftp(Box<crate::tftp::Tftp>),
    Dcerpc(Box<crate::dcerpc::Dcerpc>),
    Smb(Box<crate::smb::Smb>),
    Http2(Box<crate::http2::Http2>),
    WebSocket(Box<crate::websocket::WebSocket>),
}

impl Parser {
    /// The marks of the frames it found in its latest feed, for parsers that mark
    /// frames (see [`crate::frames`]).
    fn marks(&mut self) -> Option<&mut Marks> {
        match self {
            Parser::Http(h) => Some(&mut h.marks),
            Parser::Tls(t) => Some(&mut t.marks),
            Parser::Dcerpc(x) => Some(&mut x.marks),
            Parser::Ssh(x) => Some(&mut x.marks),
            Parser::Smb(x) => Some(&mut x.marks),
            Parser::Mqtt(x) => Some(&mut x.marks),
            Parser::Sip(x) => Some(&mut x.marks),
            Parser::WebSocket(x) => Some(&mut x.marks),
            _ => None,
        }
    }

    /// Rules inspect frames: a parser that reads less than the whole stream without
    /// them (TLS stops at application data) reads on.
    fn want_frames(&mut self) {
        if let Some(m) = self.marks() {
            m.enable();
        }
        if let Parser::Tls(t) = self {
            t.want_frames();
        }
    }
}

/// A flow's application-layer state.
#[derive(Debug, Default)]
pub struct Session {
    pub proto: Option<AppProto>,
    pub parser: Option<Parser>,
    /// Bytes each direction sent while the protocol was undecided.
    pending: PerDir<Vec<u8>>,
    /// The direction's first bytes name no protocol netsieve parses.
    unknown: PerDir<bool>,
    /// The direction had a gap: its parser stopped.
    gap: PerDir<bool>,
    /// The direction's bytes went to the parser: its protocol is known there.
    parsed: PerDir<bool>,
    /// Limits for an HTTP parser.
    limits: Limits,
    /// The protocol to parse when probing finds none (DNS on TCP port 53).
    fallback: Option<AppProto>,
    /// Bytes of each direction given to the parser: the stream offset of the next.
    given: PerDir<u64>,
    /// Bytes of the direction never reached the parser (held while probing and
    /// dropped): its frames' offsets would be wrong, so it has none.
    unframed: PerDir<bool>,
    /// The frames the parser marked, when rules inspect frames.
    frames: Option<Box<Frames>>,
    /// The protocol before a switch (HTTP, upgraded to HTTP/2).
    orig: Option<AppProto>,
}

/// How far a session went encrypted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encryption {
    Clear,
    /// TLS: the client sent application data, the server not yet.
    ClientData,
    /// TLS: the server sent application data.
    ServerData,
    /// SSH: both sides sent `SSH_MSG_NEWKEYS`.
    NewKeys,
}

impl Session {
    /// Probing gave up on both directions: nothing will be parsed.
    pub fn given_up(&self) -> bool {
        self.proto.is_none() && self.unknown.values().all(|&u| u)
    }

    /// A session that will find its protocol by probing; an HTTP parser gets `limits`.
    pub fn new(limits: Limits) -> Session {
        Session {
            limits,
            ..Session::default()
        }
    }

    /// A session that probes, and parses `fallback` when the bytes name no protocol (a
    /// TCP flow on DNS's port: an HTTP request there is still HTTP, as Suricata's
    /// detection by content finds it before its detection by port).
    pub fn probing_or(limits: Limits, fallback: AppProto) -> Session {
        Session {
            limits,
            fallback: Some(fallback),
            ..Session::default()
        }
    }

    /// A session whose protocol is fixed in advance (DNS by its port).
    pub fn with(proto: AppProto) -> Session {
        let mut s = Session::default();
        s.start(proto);
        s
    }

    fn start(&mut self, proto: AppProto) {
        self.proto = Some(proto);
        self.parser = match proto {
            AppProto::Http => Some(Parser::Http(Box::new(Http::new(self.limits)))),
            AppProto::Tls => Some(Parser::Tls(Box::default())),
            AppProto::Dns => Some(Parser::Dns(Box::default())),
            AppProto::Smtp => Some(Parser::Smtp(Box::default())),
            AppProto::Ssh => Some(Parser::Ssh(Box::default())),
            AppProto::Ftp => Some(Parser::Ftp(Box::new(crate::ftp::Ftp::new(
                self.limits.ftp_open_txs,
            )))),
            AppProto::Sip => Some(Parser::Sip(Box::default())),
            AppProto::Mqtt => Some(Parser::Mqtt(Box::default())),
            AppProto::Krb5 => Some(Parser::Krb5(Box::default())),
            AppProto::Snmp => Some(Parser::Snmp(Box::default())),
            AppProto::Ntp => Some(Parser::Ntp(Box::default())),
            AppProto::Ldap => Some(Parser::Ldap(Box::default())),
            AppProto::Tftp => Some(Parser::Tftp(Box::default())),
            AppProto::Dcerpc => Some(Parser::Dcerpc(Box::default())),
            AppProto::Smb => Some(Parser::Smb(Box::default())),
            AppProto::FtpData => Some(Parser::FtpData(Box::default())),
            AppProto::Http2 => Some(Parser::Http2(Box::default())),
            // Named once a stream carried DNS, never probed for.
            AppProto::Doh2 => Some(Parser::Http2(Box::default())),
            // Named by an HTTP/1 upgrade, never probed for.
            AppProto::WebSocket => Some(Parser::WebSocket(Box::default())),
            AppProto::Pop3 | AppProto::Imap => None,
        };
        if let (Some(_), Some(p)) = (&self.frames, &mut self.parser) {
            p.want_frames();
        }
    }

    /// Feeds in-order stream bytes of one direction. Returns whether a message of that
    /// direction completed (an inspection point for its raw stream).
    pub fn feed(&mut self, dir: Direction, data: &[u8]) -> bool {
        let d = dir;
        if data.is_empty() || self.gap[d] {
            return false;
        }
        if self.proto.is_none() {
            if self.unknown[d] {
                // Held while the other side may still name a protocol that greets
                // first, up to the probe's limit (past it, the side is lost).
                if self.pending[d].len() + data.len() > PROBE_BYTES {
                    self.pending[d] = Vec::new();
                    self.gap[d] = true;
                } else {
                    self.pending[d].extend_from_slice(data);
                }
                return false;
            }
            self.pending[d].extend_from_slice(data);
            let found = match probe(&self.pending[d]) {
                // HTTP/2 not parsed: its preface names nothing.
                Probe::Is(AppProto::Http2) if !self.limits.http2 => Probe::Unknown,
                p => p,
            };
            match (found, self.fallback) {
                (Probe::Is(p), _) => self.start(p),
                (Probe::NeedMore, _) if self.pending[d].len() < PROBE_BYTES => return false,
                (_, Some(p)) => self.start(p),
                (_, None) => {
                    // Kept: a server's greeting names no protocol, its client's
                    // first command does.
                    self.unknown[d] = true;
                    if self.given_up() {
                        self.pending = PerDir::default();
                    }
                    return false;
                }
            }
            // Both directions' held bytes go to the new parser: for a protocol whose
            // server greets first, the greeting first (an HTTP/2 server's SETTINGS
            // too, sent before the client's preface); otherwise requests first, and
            // the bytes of a side that named no protocol are dropped.
            let greets = self.proto.is_some_and(AppProto::server_greets);
            // An HTTP/2 server may send its SETTINGS before the client's preface.
            let keep_both = greets || self.proto == Some(AppProto::Http2);
            let order = if keep_both {
                [d.reverse(), d]
            } else {
                Direction::BOTH
            };
            let mut done = false;
            for dd in order {
                let held = std::mem::take(&mut self.pending[dd]);
                if !held.is_empty() && (!self.unknown[dd] || keep_both) {
                    let r = self.parse(dd, &held);
                    done |= r && dd == d;
                } else if !held.is_empty() {
                    self.unframed[dd] = true;
                }
            }
            self.pending = PerDir::default();
            return done;
        }
        self.parse(dir, data)
    }

    /// A datagram (DNS, SIP, Kerberos, SNMP or NTP over UDP): one message.
    pub fn datagram(&mut self, dir: Direction, data: &[u8]) -> bool {
        self.parsed[dir] |= self.parser.is_some();
        let r = match &mut self.parser {
            Some(Parser::Dns(d)) => d.datagram(dir, data),
            Some(Parser::Sip(s)) => s.datagram(dir, data),
            Some(Parser::Krb5(k)) => k.datagram(dir, data),
            Some(Parser::Snmp(s)) => s.datagram(dir, data),
            Some(Parser::Ntp(n)) => n.datagram(dir, data),
            Some(Parser::Ldap(l)) => l.datagram(dir, data),
            Some(Parser::Tftp(t)) => t.datagram(dir, data),
            _ => false,
        };
        self.mark_frames(dir, 0, true);
        r
    }

    /// The protocol is known in direction `d`: bytes of it went to the parser (Suricata
    /// detects the protocol of each direction on its own data).
    pub fn parsed(&self, d: Direction) -> bool {
        self.parsed[d]
    }

    fn parse(&mut self, dir: Direction, data: &[u8]) -> bool {
        self.start_tls();
        self.parsed[dir] |= self.parser.is_some();
        let base = self.given[dir];
        self.given[dir] += data.len() as u64;
        let r = match &mut self.parser {
            Some(Parser::Http(h)) => h
                .feed(dir, data)
                .iter()
                .any(|p| matches!(p, Progress::RequestDone(_) | Progress::ResponseDone(_))),
            Some(Parser::Tls(t)) => t.feed(dir, data),
            Some(Parser::Dns(d)) => d.stream(dir, data),
            Some(Parser::Smtp(s)) => s.feed(dir, data),
            Some(Parser::Ssh(s)) => s.feed(dir, data),
            Some(Parser::Ftp(f)) => f.feed(dir, data),
            Some(Parser::FtpData(f)) => {
                f.feed(dir, data);
                false
            }
            Some(Parser::Sip(s)) => s.feed(dir, data),
            Some(Parser::Mqtt(m)) => m.feed(dir, data),
            Some(Parser::Http2(h)) => h.feed(dir, data),
            Some(Parser::Krb5(k)) => k.feed(dir, data),
            Some(Parser::WebSocket(w)) => w.feed(dir, data),
            // SNMP, NTP and TFTP run over UDP only.
            Some(Parser::Snmp(_) | Parser::Ntp(_) | Parser::Tftp(_)) => false,
            Some(Parser::Ldap(l)) => l.feed(dir, data),
            Some(Parser::Dcerpc(x)) => x.feed(dir, data),
            // Suricata's SMB parser asks for no inspection of the raw stream when a
            // message completes (measured: smb-eicar-file's payload alerts once).
            Some(Parser::Smb(x)) => {
                x.feed(dir, data);
                false
            }
            None => false,
        };
        self.mark_frames(dir, base, false);
        self.switch_protocols();
        self.name_doh();
        r
    }

    /// An HTTP/2 flow whose stream carried DNS is DNS over HTTP/2 from then on.
    fn name_doh(&mut self) {
        if let Some(Parser::Http2(h)) = &self.parser
            && h.doh
            && self.proto == Some(AppProto::Http2)
        {
            self.orig = self.orig.or(self.proto);
            self.proto = Some(AppProto::Doh2);
        }
    }

    /// An HTTP/1 connection that switched protocols (`Upgrade: h2c` or `websocket`
    /// answered by `101`) goes on with the new protocol's parser, given the bytes that
    /// followed the switch; its transactions are numbered after HTTP/1's.
    fn switch_protocols(&mut self) {
        let Some(Parser::Http(h)) = &mut self.parser else {
            return;
        };
        let Some((id, to, rest)) = h.take_handover() else {
            return;
        };
        let Some(Parser::Http(h)) = self.parser.take() else {
            return;
        };
        let (parser, proto) = match to {
            Switch::Http2 => (
                Parser::Http2(Box::new(crate::http2::Http2::upgraded(h, id))),
                AppProto::Http2,
            ),
            Switch::WebSocket => {
                let mut w = crate::websocket::WebSocket::upgraded(h.tx_count());
                if self.frames.is_some() {
                    w.marks.enable();
                }
                (Parser::WebSocket(Box::new(w)), AppProto::WebSocket)
            }
        };
        self.parser = Some(parser);
        self.orig = self.proto;
        self.proto = Some(proto);
        // The server's bytes came with its answer; the client's follow. They lie at the
        // end of what each direction gave.
        for d in [Direction::ToClient, Direction::ToServer] {
            let bytes = &rest[d];
            match &mut self.parser {
                Some(Parser::Http2(h2)) => {
                    h2.feed(d, bytes);
                }
                Some(Parser::WebSocket(w)) => {
                    w.feed(d, bytes);
                }
                _ => {}
            }
            self.mark_frames(d, self.given[d].saturating_sub(bytes.len() as u64), false);
        }
    }

    /// A connection whose StartTLS the server agreed to (LDAP's) goes on as TLS, given
    /// the bytes that followed the exchange. Done on the feed after the one that ended
    /// the exchange, so that its transaction was inspected and logged first.
    fn start_tls(&mut self) {
        let Some(Parser::Ldap(l)) = &mut self.parser else {
            return;
        };
        let Some(rest) = l.take_handover() else {
            return;
        };
        let mut tls = Box::<crate::tls::Tls>::default();
        tls.from = self.proto;
        tls.tx_id = l.txs.begun();
        if self.frames.is_some() {
            tls.marks.enable();
        }
        for d in [Direction::ToServer, Direction::ToClient] {
            tls.feed(d, &rest[d]);
        }
        self.parser = Some(Parser::Tls(tls));
        self.orig = self.proto;
        self.proto = Some(AppProto::Tls);
    }

    /// The protocol the flow spoke before it switched to its present one (HTTP before
    /// HTTP/2), if it did.
    pub fn orig(&self) -> Option<AppProto> {
        self.orig
    }

    /// Rules inspect frames: the parser marks them from now on, and the session keeps
    /// them until [`Session::take_frames`].
    pub fn want_frames(&mut self) {
        if self.frames.is_none() {
            self.frames = Some(Box::default());
            if let Some(p) = &mut self.parser {
                p.want_frames();
            }
        }
    }

    /// The parser's marks of its latest feed of direction `dir` (which began at stream
    /// offset `base`) become frames.
    fn mark_frames(&mut self, dir: Direction, base: u64, datagram: bool) {
        let (Some(frames), Some(marks)) = (
            self.frames.as_mut(),
            self.parser.as_mut().and_then(Parser::marks),
        ) else {
            return;
        };
        frames.absorb(marks, dir, base, datagram);
        if self.unframed[dir] {
            frames.take(dir, u64::MAX).for_each(drop);
        }
    }

    /// The frames of direction `dir` whose bytes all reached the parser (all of them
    /// when `end`: the flow ends), oldest first; they are not given again.
    pub fn take_frames(&mut self, dir: Direction, end: bool) -> Vec<Frame> {
        let upto = if end { u64::MAX } else { self.given[dir] };
        match self.frames.as_mut() {
            Some(f) => f.take(dir, upto).collect(),
            None => Vec::new(),
        }
    }

    /// Frames of direction `dir` wait for detection.
    pub fn frames_waiting(&self, dir: Direction) -> bool {
        self.frames.as_ref().is_some_and(|f| f.any(dir))
    }

    /// Bytes of direction `dir` given to the parser (the stream offset it reached).
    pub fn given(&self, dir: Direction) -> u64 {
        self.given[dir]
    }

    /// Transactions begun since the flow began (a TLS or SSH flow's one state counts
    /// as one, as Suricata's `tx_cnt` counts it).
    pub fn tx_count(&self) -> u64 {
        match &self.parser {
            Some(Parser::Http(h)) => h.tx_count(),
            Some(Parser::Dns(x)) => x.txs.begun(),
            Some(Parser::Smtp(x)) => x.txs.begun(),
            Some(Parser::Ftp(x)) => x.txs.begun(),
            Some(Parser::FtpData(x)) => x.txs.begun(),
            Some(Parser::Sip(x)) => x.txs.begun(),
            Some(Parser::Mqtt(x)) => x.txs.begun(),
            Some(Parser::Krb5(x)) => x.txs.begun(),
            Some(Parser::Snmp(x)) => x.txs.begun(),
            Some(Parser::Ntp(x)) => x.txs.begun(),
            Some(Parser::Ldap(x)) => x.txs.begun(),
            Some(Parser::Tftp(x)) => x.txs.begun(),
            Some(Parser::Dcerpc(x)) => x.txs.begun(),
            Some(Parser::Smb(x)) => x.txs.begun(),
            Some(Parser::Http2(x)) => x.txs.begun(),
            Some(Parser::WebSocket(x)) => x.txs.begun(),
            Some(Parser::Tls(_) | Parser::Ssh(_)) => 1,
            None => 0,
        }
    }

    /// Drops the transactions before id `keep` (a TLS or SSH flow's one state stays).
    pub fn prune(&mut self, keep: u64) {
        match &mut self.parser {
            Some(Parser::Http(h)) => h.prune(keep),
            Some(Parser::Dns(x)) => x.txs.prune(keep),
            Some(Parser::Smtp(x)) => x.txs.prune(keep),
            Some(Parser::Ftp(x)) => x.txs.prune(keep),
            Some(Parser::FtpData(x)) => x.txs.prune(keep),
            Some(Parser::Sip(x)) => x.txs.prune(keep),
            Some(Parser::Mqtt(x)) => x.txs.prune(keep),
            Some(Parser::Krb5(x)) => x.txs.prune(keep),
            Some(Parser::Snmp(x)) => x.txs.prune(keep),
            Some(Parser::Ntp(x)) => x.txs.prune(keep),
            Some(Parser::Ldap(x)) => x.txs.prune(keep),
            Some(Parser::Tftp(x)) => x.txs.prune(keep),
            Some(Parser::Dcerpc(x)) => x.txs.prune(keep),
            Some(Parser::Smb(x)) => x.prune(keep),
            Some(Parser::Http2(x)) => x.prune(keep),
            Some(Parser::WebSocket(x)) => x.txs.prune(keep),
            Some(Parser::Tls(_) | Parser::Ssh(_)) | None => {}
        }
    }

    /// Bytes are missing in this direction: its parser stops there.
    pub fn gap(&mut self, dir: Direction) {
        let d = dir;
        self.gap[d] = true;
        if self.proto.is_none() {
            self.unknown[d] = true;
            self.pending[d] = Vec::new();
        }
    }

    /// The direction ended (its FIN was acknowledged, or the flow ended). Returns
    /// whether that completed a message.
    pub fn close(&mut self, dir: Direction) -> bool {
        let r = match &mut self.parser {
            Some(Parser::Http(h)) => !h.close(dir).is_empty(),
            Some(Parser::Tls(t)) => {
                t.close(dir);
                false
            }
            Some(Parser::FtpData(f)) => {
                f.close(dir);
                false
            }
            _ => false,
        };
        self.mark_frames(dir, self.given[dir], false);
        r
    }

    /// The flow ended: whatever is half-parsed counts as complete.
    pub fn finish(&mut self) {
        match &mut self.parser {
            Some(Parser::Http(h)) => {
                h.finish_all();
            }
            Some(Parser::Smtp(s)) => s.finish(),
            Some(Parser::Mqtt(m)) => m.finish(),
            Some(Parser::Dcerpc(x)) => x.finish(),
            Some(Parser::Smb(x)) => x.finish(),
            Some(Parser::FtpData(x)) => x.finish(),
            Some(Parser::Http2(x)) => x.finish(),
            _ => {}
        }
    }

    /// Application-layer events the parser raised since the flow began, as a count:
    /// [`Session::events_since`] gives those after an earlier count.
    pub fn events_raised(&self) -> u64 {
        match &self.parser {
            Some(Parser::Dns(d)) => d.events.raised(),
            Some(Parser::Http(h)) => h.events.raised(),
            Some(Parser::Mqtt(m)) => m.events.raised(),
            Some(Parser::Ftp(f)) => f.events.raised(),
            Some(Parser::Smtp(s)) => s.events.raised(),
            Some(Parser::Smb(s)) => s.events.raised(),
            Some(Parser::Http2(h)) => h.events.raised(),
            _ => 0,
        }
    }

    /// The events (as rules name them) raised after `count` were, as far as they are
    /// kept.
    pub fn events_since(&self, count: u64, out: &mut Vec<netsieve_wire::AppEvent>) {
        match &self.parser {
            Some(Parser::Dns(d)) => out.extend(d.events.since(count).filter_map(|e| e.app_event())),
            Some(Parser::Http(h)) => {
                out.extend(h.events.since(count).filter_map(|e| e.app_event()))
            }
            Some(Parser::Mqtt(m)) => out.extend(m.events.since(count)),
            Some(Parser::Ftp(f)) => out.extend(f.events.since(count)),
            Some(Parser::Smtp(s)) => out.extend(s.events.since(count)),
            Some(Parser::Smb(s)) => out.extend(s.events.since(count)),
            Some(Parser::Http2(h)) => out.extend(h.events.since(count)),
            _ => {}
        }
    }

    /// How far the session went encrypted (the detector then stops inspecting the
    /// flow's payload, as Suricata's default `encryption-handling: track-only` does).
    pub fn encryption(&self) -> Encryption {
        match &self.parser {
            Some(Parser::Tls(t)) if t.application_data(Direction::ToClient) => {
                Encryption::ServerData
            }
            Some(Parser::Tls(t)) if t.application_data(Direction::ToServer) => {
                Encryption::ClientData
            }
            Some(Parser::Ssh(s)) if Direction::BOTH.iter().all(|&d| s.newkeys(d)) => {
                Encryption::NewKeys
            }
            _ => Encryption::Clear,
        }
    }

    pub fn dns(&self) -> Option<&crate::dns::Dns> {
        match &self.parser {
            Some(Parser::Dns(d)) => Some(d),
            _ => None,
        }
    }

    pub fn smtp(&self) -> Option<&crate::smtp::Smtp> {
        match &self.parser {
            Some(Parser::Smtp(s)) => Some(s),
            _ => None,
        }
    }

    pub fn ftp(&self) -> Option<&crate::ftp::Ftp> {
        match &self.parser {
            Some(Parser::Ftp(f)) => Some(f),
            _ => None,
        }
    }

    pub fn ftp_data_mut(&mut self) -> Option<&mut crate::ftpdata::FtpData> {
        match &mut self.parser {
            Some(Parser::FtpData(f)) => Some(f),
            _ => None,
        }
    }

    pub fn sip(&self) -> Option<&crate::sip::Sip> {
        match &self.parser {
            Some(Parser::Sip(s)) => Some(s),
            _ => None,
        }
    }

    pub fn mqtt(&self) -> Option<&crate::mqtt::Mqtt> {
        match &self.parser {
            Some(Parser::Mqtt(m)) => Some(m),
            _ => None,
        }
    }

    pub fn http(&self) -> Option<&Http> {
        match &self.parser {
            Some(Parser::Http(h)) => Some(h),
            _ => None,
        }
    }

    pub fn http_mut(&mut self) -> Option<&mut Http> {
        match &mut self.parser {
            Some(Parser::Http(h)) => Some(h),
            _ => None,
        }
    }
}
