//! Application-layer parsing: which protocol a flow speaks, and for HTTP/1.x the
//! transactions its streams carry.
//!
//! Detection rules inspect *buffers* (the request URI, the headers, the response body,
//! ...) rather than raw stream bytes. This crate produces them, from the in-order bytes
//! of each direction of a TCP flow as reassembly delivers them:
//!
//! - [`probe`] names the protocol from the first bytes a direction sends (an HTTP
//!   request line or status line, a TLS handshake record), whatever the port.
//! - [`http::Http`] parses HTTP/1.0 and 1.1 incrementally: pipelined requests,
//!   responses paired with their requests in order (each pair a [`http::Tx`] with an
//!   id), headers split across segments and folded lines, `Content-Length` and chunked
//!   bodies, gzip and deflate response bodies decoded for `file.data`.
//! - [`http2::Http2`] reads HTTP/2 frames and HPACK header blocks into streams.
//! - [`uri::normalize`] gives `http.uri` from the raw request target.
//! - [`smtp::Smtp`] reads SMTP sessions into mails (envelope and message), and
//!   [`mime::Mime`] decodes a message's headers and attachments.
//! - [`ftp::Ftp`] pairs FTP commands and replies; [`ssh::Ssh`] reads SSH's
//!   identification lines.
//! - [`sip::Sip`] reads SIP requests and responses over UDP and TCP, and [`sdp`] the
//!   session descriptions in their bodies.
//! - [`mqtt::Mqtt`] reads MQTT 3.1 to 5.0 control packets into exchanges.
//! - [`krb5::Krb5`] reads Kerberos 5 messages over UDP and TCP, [`snmp::Snmp`] SNMP
//!   and [`ntp::Ntp`] NTP messages over UDP.
//! - [`tftp::Tftp`] reads TFTP's requests over UDP.
//! - [`ldap::Ldap`] reads LDAP over TCP and UDP into operations (a request and its
//!   responses).
//! - [`dcerpc::Dcerpc`] reads DCE/RPC over TCP into calls (binds and requests).
//! - [`smb::Smb`] reads SMB 1, 2 and 3 into commands, files and DCE/RPC calls over
//!   named pipes.
//! - [`websocket::WebSocket`] reads WebSocket frames after an HTTP/1 upgrade.
//!
//! Hostile input is expected. Every buffer has a limit (head size, header count, body
//! bytes kept, open transactions, decoded size), and input that cannot be parsed ends
//! the parsing of that direction with an [`http::Event`]; nothing panics and memory
//! stays bounded by the limits.

pub use netsieve_wire::Direction;
pub mod dcerpc;
pub mod dns;
pub mod frames;
pub mod ftp;
pub mod ftpdata;
pub mod held;
pub mod http;
pub mod http2;
pub mod krb5;
pub mod ldap;
pub mod lines;
pub mod mime;
pub mod mqtt;
pub mod ntp;
pub mod sdp;
pub mod session;
pub mod sip;
pub mod smb;
pub mod smtp;
pub mod snmp;
pub mod ssh;
pub mod tftp;
pub mod tls;
pub mod txs;
pub mod uri;
pub mod websocket;

pub use session::{Encryption, Parser, Session};

/// An application protocol netsieve parses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AppProto {
    Http,
    Tls,
    Dns,
    Smtp,
    Ssh,
    Ftp,
    /// SIP over UDP or TCP.
    Sip,
    /// MQTT, on its port (1883).
    Mqtt,
    /// Kerberos 5, on its port (88) over UDP and TCP.
    Krb5,
    /// SNMP, on its ports (161, 162) over UDP.
    Snmp,
    /// NTP, on its port (123) over UDP.
    Ntp,
    /// LDAP, on its port (389) over TCP and UDP.
    Ldap,
    /// TFTP's requests, on its port (69) over UDP.
    Tftp,
    /// Recognised by its greeting only: no parser yet (rules on its payload apply).
    Pop3,
    /// Recognised by its greeting only, as POP3.
    Imap,
    /// SMB 1, 2 and 3 over TCP.
    Smb,
    /// DCE/RPC over TCP, recognised by its first bind.
    Dcerpc,
    /// An FTP data channel, recognised by its control flow's announcement.
    FtpData,
    /// HTTP/2 over cleartext TCP, recognised by the client's preface.
    Http2,
    /// DNS over HTTP/2 (RFC 8484): an HTTP/2 flow once a stream carried DNS.
    Doh2,
    /// WebSocket, on an HTTP/1 connection that switched to it.
    WebSocket,
}

impl AppProto {
    /// Every protocol netsieve parses.
    pub const ALL: &'static [AppProto] = &[
        AppProto::Http,
        AppProto::Tls,
        AppProto::Dns,
        AppProto::Smtp,
        AppProto::Ssh,
        AppProto::Ftp,
        AppProto::Sip,
        AppProto::Mqtt,
        AppProto::Krb5,
        AppProto::Snmp,
        AppProto::Ntp,
        AppProto::Ldap,
        AppProto::Tftp,
        AppProto::Pop3,
        AppProto::Imap,
        AppProto::Smb,
        AppProto::Dcerpc,
        AppProto::FtpData,
        AppProto::Http2,
        AppProto::Doh2,
        AppProto::WebSocket,
    ];

    /// Its server speaks first (a greeting that names no protocol by itself): the
    /// greeting is held until the client's first words name the protocol.
    pub fn server_greets(self) -> bool {
        matches!(self, AppProto::Smtp | AppProto::Ftp)
    }

    /// A flow of this protocol speaks protocol `p` too: its own, DCE/RPC over SMB's
    /// named pipes (so `alert dcerpc` rules apply to SMB flows, as in Suricata), and
    /// HTTP in HTTP/2 (`alert http` rules apply to both versions).
    pub fn carries(self, p: AppProto) -> bool {
        self.spoken().contains(&p)
    }

    /// The protocols a flow of this one speaks: its own, then those it carries
    /// (DCE/RPC in SMB, HTTP in HTTP/2, and in DNS over HTTP/2 both and DNS).
    pub fn spoken(self) -> &'static [AppProto] {
        use AppProto::*;
        match self {
            Smb => &[Smb, Dcerpc],
            Http2 => &[Http2, Http],
            Doh2 => &[Doh2, Http2, Http, Dns],
            Http => &[Http],
            Tls => &[Tls],
            Dns => &[Dns],
            Smtp => &[Smtp],
            Ssh => &[Ssh],
            Ftp => &[Ftp],
            Sip => &[Sip],
            Mqtt => &[Mqtt],
            Krb5 => &[Krb5],
            Snmp => &[Snmp],
            Ntp => &[Ntp],
            Ldap => &[Ldap],
            Tftp => &[Tftp],
            Pop3 => &[Pop3],
            Imap => &[Imap],
            Dcerpc => &[Dcerpc],
            FtpData => &[FtpData],
            WebSocket => &[WebSocket],
        }
    }

    /// It runs over UDP as well as over TCP.
    pub fn over_udp(self) -> bool {
        matches!(
            self,
            AppProto::Dns
                | AppProto::Sip
                | AppProto::Krb5
                | AppProto::Snmp
                | AppProto::Ntp
                | AppProto::Ldap
                | AppProto::Tftp
        )
    }

    /// The name of its records and objects in EVE (`ftp_data`; the others' `name`).
    pub fn record_name(self) -> &'static str {
        match self {
            AppProto::FtpData => "ftp_data",
            // An HTTP/2 stream is written as an `http` record.
            AppProto::Http2 | AppProto::Doh2 => "http",
            p => p.name(),
        }
    }

    /// The name EVE and rule headers use.
    pub fn name(self) -> &'static str {
        match self {
            AppProto::Http => "http",
            AppProto::Tls => "tls",
            AppProto::Dns => "dns",
            AppProto::Smtp => "smtp",
            AppProto::Ssh => "ssh",
            AppProto::Ftp => "ftp",
            AppProto::Sip => "sip",
            AppProto::Mqtt => "mqtt",
            AppProto::Krb5 => "krb5",
            AppProto::Snmp => "snmp",
            AppProto::Ntp => "ntp",
            AppProto::Ldap => "ldap",
            AppProto::Tftp => "tftp",
            AppProto::Pop3 => "pop3",
            AppProto::Imap => "imap",
            AppProto::Smb => "smb",
            AppProto::Dcerpc => "dcerpc",
            AppProto::FtpData => "ftp-data",
            AppProto::Http2 => "http2",
            AppProto::Doh2 => "doh2",
            AppProto::WebSocket => "websocket",
        }
    }
}

/// What the first bytes of a direction say about its protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// This protocol.
    Is(AppProto),
    /// Too few bytes to tell yet.
    NeedMore,
    /// None that netsieve parses.
    Unknown,
}

/// First words that name a line protocol.
const LINE_PROTOCOLS: &[(&[u8], AppProto)] = &[
    (b"EHLO ", AppProto::Smtp),
    (b"HELO ", AppProto::Smtp),
    (b"USER ", AppProto::Ftp),
    (b"PASS ", AppProto::Ftp),
    (b"PORT ", AppProto::Ftp),
    (b"FEAT\r\n", AppProto::Ftp),
    (b"SYST\r\n", AppProto::Ftp),
    (b"AUTH TLS", AppProto::Ftp),
    (b"AUTH SSL", AppProto::Ftp),
    (b"+OK", AppProto::Pop3),
    (b"* OK", AppProto::Imap),
    (b"SSH-", AppProto::Ssh),
];

/// Names the protocol of a direction from its first bytes (`data` is everything the
/// direction sent so far, from its start).
pub fn probe(data: &[u8]) -> Probe {
    if data.is_empty() {
        return Probe::NeedMore;
    }
    let mut more = false;
    // SIP before HTTP: `OPTIONS` opens requests of both, told apart by the version at
    // the end of the line; a whole first word of SIP's waits for it.
    match sip::probe(data) {
        Probe::Unknown => {}
        Probe::NeedMore if !data.contains(&b' ') => more = true,
        p => return p,
    }
    // HTTP/2: the client's preface (before HTTP/1's methods: it starts as a request
    // line would).
    let n = http2::PREFACE.len().min(data.len());
    if data[..n] == http2::PREFACE[..n] {
        if n == http2::PREFACE.len() {
            return Probe::Is(AppProto::Http2);
        }
        more = true;
    }
    // HTTP: a known method and a space, or a status line.
    let status: &[u8] = b"HTTP/";
    // SEARCH (WebDAV's) is not a method libhtp knows, but it is HTTP.
    let search: &[u8] = b"SEARCH";
    for &m in http::METHODS.iter().chain([&search, &status]) {
        let space: &[u8] = if m == status { b"" } else { b" " };
        let want = m.len() + space.len();
        if m.iter().chain(space).zip(data).all(|(a, b)| a == b) {
            if data.len() >= want {
                return Probe::Is(AppProto::Http);
            }
            more = true;
        }
    }
    // TLS: a handshake record (type 22) of version 3.x whose first message is a
    // ClientHello or ServerHello.
    if data[0] == 0x16 {
        match data {
            [_, 3, v, _, _, hs, ..] if *v <= 4 && matches!(hs, 1 | 2) => {
                return Probe::Is(AppProto::Tls);
            }
            [_, 3, v, ..] if data.len() < 6 && *v <= 4 => more = true,
            [_, 3] | [_] => more = true,
            _ => {}
        }
    }
    // SMB: a NetBIOS session message holding an SMB 1 (`\xffSMB`), SMB 2 (`\xfeSMB`) or
    // SMB 3 transform (`\xfdSMB`) header.
    if data[0] == 0 {
        match data {
            [0, _, _, _, 0xfd..=0xff, b'S', b'M', b'B', ..] => {
                return Probe::Is(AppProto::Smb);
            }
            _ if data.len() < 8 => more = true,
            _ => {}
        }
    }
    // DCE/RPC: a connection-oriented bind or alter-context, or their answers (version
    // 5.0 or 5.1). Suricata also takes a request (`05 01 00`, which is SOCKS 5's greeting
    // too); on the nDPI captures that names as many flows wrongly as rightly, so it is
    // left out.
    if data[0] == 5 {
        match data {
            [5, 0 | 1, 11..=15, ..] => return Probe::Is(AppProto::Dcerpc),
            _ if data.len() < 3 => more = true,
            _ => {}
        }
    }
    // Line protocols by a first word (case-insensitive): SMTP and FTP by the client's
    // (their servers' `220` greetings are alike), POP3 and IMAP by the server's (their
    // clients' `USER` is FTP's too; the greeting comes first), SSH by either's.
    for (word, proto) in LINE_PROTOCOLS {
        let n = word.len().min(data.len());
        if data[..n].eq_ignore_ascii_case(&word[..n]) {
            if n == word.len() {
                return Probe::Is(*proto);
            }
            more = true;
        }
    }
    if more {
        Probe::NeedMore
    } else {
        Probe::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_by_content() {
        assert_eq!(probe(b"GET / HTTP/1.1\r\n"), Probe::Is(AppProto::Http));
        assert_eq!(probe(b"HTTP/1.0 200 OK\r\n"), Probe::Is(AppProto::Http));
        assert_eq!(probe(b"PROPFIND /x"), Probe::Is(AppProto::Http));
        assert_eq!(probe(b"GE"), Probe::NeedMore);
        assert_eq!(probe(b"GET"), Probe::NeedMore);
        assert_eq!(probe(b"GET "), Probe::Is(AppProto::Http));
        assert_eq!(probe(b"HTTP/"), Probe::Is(AppProto::Http));
        assert_eq!(probe(b"HTTP"), Probe::NeedMore);
        assert_eq!(probe(b"GETX"), Probe::Unknown);
        assert_eq!(probe(b"SSH-2.0-OpenSSH"), Probe::Is(AppProto::Ssh));
        assert_eq!(
            probe(&[0x16, 3, 1, 0, 0x50, 1, 0]),
            Probe::Is(AppProto::Tls)
        );
        assert_eq!(probe(&[0x16, 3]), Probe::NeedMore);
        assert_eq!(probe(&[0x16, 3, 1, 0, 0x50, 9]), Probe::Unknown);
        assert_eq!(probe(b""), Probe::NeedMore);
        assert_eq!(probe(b"ehlo mx\r\n"), Probe::Is(AppProto::Smtp));
        assert_eq!(probe(b"HEL"), Probe::NeedMore);
        assert_eq!(probe(b"220 mx ESMTP\r\n"), Probe::Unknown);
        assert_eq!(probe(b"user anonymous\r\n"), Probe::Is(AppProto::Ftp));
        assert_eq!(probe(b"+OK POP3 ready\r\n"), Probe::Is(AppProto::Pop3));
        assert_eq!(probe(b"SSH-2.0-OpenSSH_9.6\r\n"), Probe::Is(AppProto::Ssh));
        assert_eq!(probe(b"SS"), Probe::NeedMore);
        assert_eq!(
            probe(b"\x00\x00\x00\x2f\xffSMBr\x00"),
            Probe::Is(AppProto::Smb)
        );
        assert_eq!(probe(b"\x00\x00\x00\x2f\xfeSM"), Probe::NeedMore);
        assert_eq!(probe(b"\x00\x00\x00\x2f\x01\x02\x03\x04"), Probe::Unknown);
        assert_eq!(probe(b"\x05\x00\x0b\x03"), Probe::Is(AppProto::Dcerpc));
        assert_eq!(probe(b"\x05\x00\x03\x03"), Probe::Unknown);
        assert_eq!(
            probe(b"OPTIONS sip:a SIP/2.0\r\n"),
            Probe::Is(AppProto::Sip)
        );
        assert_eq!(probe(b"OPTIONS sip:a"), Probe::NeedMore);
        assert_eq!(probe(b"OPTIONS / HTTP/1.1\r\n"), Probe::Is(AppProto::Http));
        assert_eq!(probe(b"SI"), Probe::NeedMore);
    }
}
