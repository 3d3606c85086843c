//! What a transaction says in the log: owned, typed copies of the fields EVE writes for
//! an HTTP, DNS or TLS transaction and for a file, taken when an alert names the
//! transaction ([`meta`]) or when the transaction is logged on its own ([`TxLog`]).
//!
//! This module decides *what* a record holds; the engine decides *when* (a
//! transaction is complete, or its flow ends), and the EVE writer how it is written.
//! The flow's state is borrowed only here, while the packet is inspected: what leaves
//! the detector is owned, so the records can be written on another thread.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use netsieve_applayer::http::{self, Message};
use netsieve_applayer::http2;
use netsieve_applayer::{
    AppProto, Direction, dcerpc, dns, ftp, ftpdata, krb5, ldap, mqtt, ntp, sdp, sip, smb, smtp,
    snmp, tftp, tls, uri, websocket,
};
use netsieve_packet::PerDir;
use netsieve_packet::{AppEvent, StreamEvent};

use crate::app::TxRef;
use crate::digest::Hash;

/// A transaction as an alert or a transaction record writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxMeta {
    pub tx_id: u64,
    pub app: AppMeta,
}

/// A transaction's fields, by protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppMeta {
    Http(Box<HttpMeta>),
    Dns(Box<DnsMeta>),
    Tls(Box<TlsMeta>),
    Smtp(Box<SmtpMeta>),
    Ssh(Box<SshMeta>),
    Ftp(Box<FtpMeta>),
    Sip(Box<SipMeta>),
    /// An MQTT exchange: its control packets as parsed.
    Mqtt(Box<mqtt::Tx>),
    /// A Kerberos message.
    Krb5(Box<krb5::Tx>),
    /// An SNMP message.
    Snmp(Box<snmp::Tx>),
    /// An NTP message.
    Ntp(Box<ntp::Tx>),
    /// An LDAP operation.
    Ldap(Box<ldap::Tx>),
    /// A TFTP request.
    Tftp(Box<tftp::Tx>),
    /// A WebSocket frame, without its payload.
    WebSocket(Box<websocket::Tx>),
    /// A DCE/RPC call, without its stub data.
    Dcerpc(Box<dcerpc::Tx>),
    Smb(Box<SmbMeta>),
    /// An FTP data channel's transfer (EVE's `ftp_data`).
    FtpData(Box<FtpDataMeta>),
    /// An HTTP/2 stream or stream-0 frame (EVE's `http` object with version 2).
    Http2(Box<Http2Meta>),
}

/// EVE's `http` object of an HTTP/2 transaction: the fields its headers give, the
/// header lists as decoded, and the `http2` object (stream and frame details).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Http2Meta {
    pub stream_id: u32,
    pub method: Option<String>,
    pub url: Option<String>,
    pub user_agent: Option<String>,
    pub status: Option<u16>,
    /// The response body's length, once the response began.
    pub length: Option<u64>,
    /// Each side's header block entries (size updates included), and frame details.
    pub sides: PerDir<Http2Side>,
    /// Per side, its body once the side ended, as `fileinfo` writes it (an alert lists
    /// its own direction's).
    pub files: PerDir<Vec<FileMeta>>,
    /// Per side, its DNS message (DNS over HTTP/2; an alert writes its direction's).
    pub dns: PerDir<Option<Box<DnsMeta>>>,
}

/// One side of an HTTP/2 transaction as EVE writes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Http2Side {
    pub headers: Vec<netsieve_applayer::http2::Field>,
    pub settings: Vec<(u16, u32)>,
    pub error_code: Option<u32>,
    pub priority: Option<u8>,
}

impl Http2Meta {
    /// There is something to write: headers, settings or an error code (a stream-0
    /// PING or WINDOW_UPDATE has nothing, and Suricata writes no record of it).
    pub fn says_anything(&self) -> bool {
        self.sides
            .values()
            .any(|s| !s.headers.is_empty() || !s.settings.is_empty() || s.error_code.is_some())
    }
}

/// EVE's `ftp_data` object: the command that opened an FTP data channel and the file
/// it names, with that file as `fileinfo` writes it once complete.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FtpDataMeta {
    pub command: Option<String>,
    pub filename: Option<String>,
    pub files: Vec<FileMeta>,
}

/// EVE's `smb` object: the transaction without its file's data, its DCE/RPC call
/// without stub data, and the session's dialect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmbMeta {
    pub tx: smb::Tx,
    pub call: Option<dcerpc::Tx>,
    pub dialect: Option<smb::Dialect>,
    /// A file transaction's file, as `fileinfo` writes it.
    pub files: Vec<FileMeta>,
}

impl AppMeta {
    /// The files an alert on the transaction lists (an SMTP mail's attachments, an SMB
    /// transaction's file; an HTTP transaction's or HTTP/2 stream's of the alert's
    /// direction `dir`).
    pub fn files(&self, dir: Option<Direction>) -> &[FileMeta] {
        match self {
            AppMeta::Http(m) => &m.files[dir.unwrap_or(Direction::ToServer)],
            AppMeta::Http2(m) => &m.files[dir.unwrap_or(Direction::ToServer)],
            AppMeta::Smtp(m) => &m.files,
            AppMeta::Smb(m) => &m.files,
            AppMeta::FtpData(m) => &m.files,
            _ => &[],
        }
    }

    pub fn proto(&self) -> AppProto {
        match self {
            AppMeta::Http(_) => AppProto::Http,
            AppMeta::Dns(_) => AppProto::Dns,
            AppMeta::Tls(_) => AppProto::Tls,
            AppMeta::Smtp(_) => AppProto::Smtp,
            AppMeta::Ssh(_) => AppProto::Ssh,
            AppMeta::Ftp(_) => AppProto::Ftp,
            AppMeta::Sip(_) => AppProto::Sip,
            AppMeta::Mqtt(_) => AppProto::Mqtt,
            AppMeta::Krb5(_) => AppProto::Krb5,
            AppMeta::Snmp(_) => AppProto::Snmp,
            AppMeta::Ntp(_) => AppProto::Ntp,
            AppMeta::Ldap(_) => AppProto::Ldap,
            AppMeta::Tftp(_) => AppProto::Tftp,
            AppMeta::WebSocket(_) => AppProto::WebSocket,
            AppMeta::Dcerpc(_) => AppProto::Dcerpc,
            AppMeta::Smb(_) => AppProto::Smb,
            AppMeta::FtpData(_) => AppProto::FtpData,
            AppMeta::Http2(_) => AppProto::Http2,
        }
    }
}

/// EVE's `http` object (the extended one of Suricata's stock configuration).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpMeta {
    /// The Host header's host, lower case.
    pub hostname: Option<String>,
    /// The Host header's port, when it names one.
    pub port: Option<u16>,
    pub url: Option<String>,
    pub user_agent: Option<String>,
    /// The response's Content-Type, without parameters.
    pub content_type: Option<String>,
    pub referer: Option<String>,
    pub method: Option<String>,
    pub protocol: Option<String>,
    pub status: Option<u16>,
    /// The response's Content-Range header.
    pub content_range: Option<ContentRange>,
    /// The response's Location header.
    pub redirect: Option<String>,
    /// The response body's length as sent (chunk framing included).
    pub length: u64,
    /// The request's X-Forwarded-For header, as sent (for EVE's `xff` options).
    pub xff: Option<String>,
    /// Per side, its files so far (an alert lists its own direction's).
    pub files: PerDir<Vec<FileMeta>>,
}

/// A Content-Range header (`bytes START-END/SIZE`); the numbers it does not give are
/// None.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContentRange {
    pub raw: String,
    pub start: Option<u64>,
    pub end: Option<u64>,
    pub size: Option<u64>,
}

impl ContentRange {
    fn parse(v: &[u8]) -> ContentRange {
        let raw = text(v);
        let spec = raw.trim().strip_prefix("bytes").unwrap_or("").trim_start();
        let (range, size) = spec.split_once('/').unwrap_or((spec, ""));
        let (start, end) = range.split_once('-').unwrap_or(("", ""));
        // A range that does not parse is written as sent only.
        let (start, end) = match (start.trim().parse(), end.trim().parse()) {
            (Ok(s), Ok(e)) => (Some(s), Some(e)),
            _ => {
                return ContentRange {
                    raw,
                    ..ContentRange::default()
                };
            }
        };
        ContentRange {
            start,
            end,
            size: size.trim().parse().ok(),
            raw,
        }
    }
}

/// A DNS message (EVE's `dns` object, version 3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DnsMeta {
    pub response: bool,
    pub id: u16,
    /// The header's flags word.
    pub flags: u16,
    pub opcode: u8,
    /// The response code's name (`NXDOMAIN`).
    pub rcode: String,
    /// Questions: (name, type name, the name was cut).
    pub queries: Vec<(String, String, bool)>,
    pub answers: Vec<DnsRecord>,
    pub authorities: Vec<DnsRecord>,
    pub additionals: Vec<DnsRecord>,
}

/// A resource record of a DNS message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DnsRecord {
    pub name: String,
    /// The type's name (`AAAA`).
    pub rtype: String,
    pub ttl: u32,
    pub data: DnsData,
}

/// What a resource record's data is written as.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DnsData {
    /// An address, a name or text (`rdata`).
    Text(String),
    Soa(Box<dns::Soa>),
    /// An OPT record's options: (code, data as hex).
    Opt(Vec<(u16, String)>),
    /// Not written.
    #[default]
    None,
}

/// A TLS handshake (EVE's `tls` object, extended).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsMeta {
    pub subject: Option<String>,
    pub issuer: Option<String>,
    pub san: Vec<String>,
    pub serial: Option<String>,
    pub fingerprint: Option<String>,
    pub sni: Option<String>,
    pub version: Option<String>,
    pub not_before: Option<String>,
    pub not_after: Option<String>,
    pub ja4: Option<String>,
    /// JA3 and JA3S: (MD5 in hex, the string hashed).
    pub ja3: Option<(String, String)>,
    pub ja3s: Option<(String, String)>,
    pub client_alpns: Vec<String>,
    pub server_alpns: Vec<String>,
    pub resumed: bool,
    /// The protocol whose StartTLS began it (EVE's `from_proto`).
    pub from_proto: Option<AppProto>,
}

/// An SMTP mail: EVE's `smtp` object (its envelope) and `email` object (its message).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SmtpMeta {
    pub helo: Option<String>,
    pub mail_from: Option<String>,
    pub rcpt_to: Vec<String>,
    /// Once the message began.
    pub email: Option<EmailMeta>,
    /// Its attachments, once the mail ended (alerts list them).
    pub files: Vec<FileMeta>,
}

/// A mail's message, as EVE's `email` object gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmailMeta {
    pub from: Option<String>,
    /// The To and Cc headers' addresses.
    pub to: Vec<String>,
    pub cc: Vec<String>,
    /// The message was read to its end.
    pub done: bool,
    /// The URLs of its text parts (`email.url`).
    pub url: Vec<String>,
    /// The attachments' names.
    pub attachment: Vec<String>,
    /// The values of the headers of [`EMAIL_FIELDS`] the message has, in that order
    /// (EVE writes those its `extended` or `custom` setting asks for).
    pub fields: Vec<(&'static str, Vec<String>)>,
}

/// The message headers an `email` object may add (Suricata's `smtp` logger's
/// `extended` fields, each also a `custom` name): under its name with `-` as `_`;
/// `received` and `references` as lists, the others as their first value.
pub const EMAIL_FIELDS: &[&str] = &[
    "reply-to",
    "bcc",
    "message-id",
    "subject",
    "x-mailer",
    "user-agent",
    "received",
    "x-originating-ip",
    "in-reply-to",
    "references",
    "importance",
    "priority",
    "sensitivity",
    "organization",
    "content-md5",
    "date",
];

/// An SSH flow's identifications: (proto_version, software_version) of each side.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SshMeta {
    pub client: Option<(String, String)>,
    pub server: Option<(String, String)>,
}

/// An FTP command and its reply (EVE's `ftp` object).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FtpMeta {
    pub command: Option<String>,
    pub command_data: Option<String>,
    pub completion_code: Vec<String>,
    pub reply: Vec<String>,
    pub dynamic_port: Option<u16>,
    /// `passive` or `active`, with the port.
    pub mode: Option<&'static str>,
    pub reply_received: bool,
    pub command_truncated: bool,
    pub reply_truncated: bool,
}

/// A SIP message (EVE's `sip` object): a request's method and URI, or a response's
/// code and reason, and the session description it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SipMeta {
    pub start: sip::Start,
    pub version: String,
    pub line: String,
    pub sdp: Option<sdp::Sdp>,
}

/// A file a transaction carried (EVE's `fileinfo` object). Its state is always
/// Suricata's `CLOSED`: a body cut short by the end of its flow is closed as it is, as
/// Suricata closes it; `TRUNCATED` (a stream gap, the stream depth) is not told apart
/// yet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileMeta {
    pub name: String,
    /// Bytes of the file (content coding removed).
    pub size: u64,
    /// The part of a larger file a response carries (its Content-Range): first and last
    /// byte.
    pub range: Option<(u64, u64)>,
    pub tx_id: u64,
    /// The digests `force-hash` asks for, of a file kept whole.
    pub hashes: FileHashes,
    /// Its bytes, when `file-store` stores it (EVE's `stored`): a file kept whole,
    /// of a direction [`FileWants::store`] names.
    pub stored: Option<Arc<[u8]>>,
    /// The sids of the `filestore` rules that marked it (EVE's `sid`).
    pub sids: Vec<u32>,
    /// Its number among the files stored, counted from 1 as records are written in
    /// order (EVE's `file_id`).
    pub file_id: Option<u64>,
}

impl FileMeta {
    /// A file of transaction `tx_id` whose first bytes were kept (`data`, of `size` seen
    /// in all), carried in direction `d`, made as `wants` asks.
    fn kept(
        name: String,
        (data, size): (&[u8], u64),
        (tx_id, d): (u64, Direction),
        wants: FileWants,
    ) -> FileMeta {
        let whole = data.len() as u64 == size;
        FileMeta::new(name, size, tx_id, wants.content(d, whole.then_some(data)))
    }

    fn new(name: String, size: u64, tx_id: u64, (hashes, stored): FileContent) -> FileMeta {
        FileMeta {
            name,
            size,
            range: None,
            tx_id,
            hashes,
            stored,
            sids: Vec::new(),
            file_id: None,
        }
    }
}

/// What a file record carries of the file's bytes: its digests, and the bytes to store.
type FileContent = (FileHashes, Option<Arc<[u8]>>);

/// How file records are made: the digests asked for (`force-hash`, and SHA-256 for
/// `file-store`), and the directions whose files `file-store` stores (every file with
/// `force-filestore`, else those a `filestore` rule matched).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileWants {
    /// [`Hash::bit`]s.
    pub hashes: u8,
    pub store: PerDir<bool>,
}

impl FileWants {
    /// The digests and stored bytes of a file of direction `d`, whose bytes are `data`
    /// when it was kept whole (one cut at a limit gets neither, rather than wrong ones).
    fn content(self, d: Direction, data: Option<&[u8]>) -> FileContent {
        let stored = data.filter(|_| self.store[d]).map(Arc::from);
        (FileHashes::of(self.hashes, data), stored)
    }
}

/// A file's digests, in hex.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileHashes {
    pub md5: Option<String>,
    pub sha1: Option<String>,
    pub sha256: Option<String>,
}

impl FileHashes {
    /// The digests `want` ([`Hash::bit`]s) asks for of `data`, a file kept whole
    /// (`None`: one cut at a limit, which gets none rather than a wrong one).
    pub fn of(want: u8, data: Option<&[u8]>) -> FileHashes {
        let Some(d) = data.filter(|_| want != 0) else {
            return FileHashes::default();
        };
        let hex = |h: Hash| (want & h.bit() != 0).then(|| h.hex(d));
        FileHashes {
            md5: hex(Hash::Md5),
            sha1: hex(Hash::Sha1),
            sha256: hex(Hash::Sha256),
        }
    }
}

/// A record a flow's application layer made: a transaction or a file, with the packet
/// and the addresses it is logged under.
#[derive(Clone, Debug)]
pub struct TxLog {
    /// The packet it is logged on (for a flow's end, the packet before which it ended).
    pub packet: u64,
    /// Logged at the flow's end: the flow's first packet (it has no packet of its own).
    pub pseudo: Option<u64>,
    pub ts: Duration,
    pub flow_id: u64,
    pub src: (IpAddr, u16),
    pub dst: (IpAddr, u16),
    pub proto: u8,
    /// The tunnel the flow's packets come out of.
    pub tunnel: Option<netsieve_packet::Tunnel>,
    /// The flow's variables when it was logged (EVE's `metadata`).
    pub metadata: Option<Arc<crate::vars::Metadata>>,
    pub record: Logged,
}

/// What a [`TxLog`] holds.
#[derive(Clone, Debug)]
pub enum Logged {
    Tx(TxMeta),
    /// A file, and the transaction that carried it.
    File(Box<FileMeta>, TxMeta),
    /// An event the packet raised (EVE's `anomaly` record).
    Anomaly(Anomaly),
}

/// An anomaly record's event, by the layer that raised it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anomaly {
    /// An application-layer parser's event, on the packet whose bytes it parsed, with
    /// the flow's latest transaction then.
    App {
        proto: AppProto,
        event: AppEvent,
        tx_id: Option<u64>,
    },
    /// A stream (TCP tracking and reassembly) event.
    Stream(StreamEvent),
}

impl TxLog {
    /// The key that orders it among alerts and other records, as [`crate::Alert::order`]
    /// orders alerts (a flow's end before the packet that ended it).
    pub fn order(&self) -> (u64, bool, u64, u64) {
        match self.pseudo {
            Some(first) => (self.packet, false, first, self.flow_id),
            None => (self.packet, true, 0, 0),
        }
    }
}

/// What protocol detection made of a flow, as EVE's `app_proto` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppName {
    Proto(AppProto),
    /// The flow's bytes name no protocol netsieve parses (Suricata's `failed`).
    Failed,
}

impl AppName {
    pub fn name(self) -> &'static str {
        match self {
            AppName::Proto(p) => p.name(),
            AppName::Failed => "failed",
        }
    }
}

/// Which records of transactions the detector makes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogTypes {
    pub http: bool,
    /// HTTP/2 transactions' `http` records (Suricata's `http2` logger).
    pub http2: bool,
    pub dns: bool,
    pub tls: bool,
    pub smtp: bool,
    pub ssh: bool,
    pub ftp: bool,
    pub sip: bool,
    pub mqtt: bool,
    pub krb5: bool,
    pub snmp: bool,
    /// Off in Suricata's stock configuration.
    pub ntp: bool,
    pub ldap: bool,
    pub tftp: bool,
    pub dcerpc: bool,
    pub smb: bool,
    pub websocket: bool,
    /// The digests `fileinfo` records carry ([`Hash::bit`]s; `files.force-hash`).
    pub file_hashes: u8,
    /// `anomaly` records of application-layer events (Suricata's `anomaly.types`
    /// `applayer`, on by default) and of stream events (`stream`, off by default).
    pub anomaly_applayer: bool,
    pub anomaly_stream: bool,
    /// `fileinfo`: the files HTTP and SMTP transactions carry.
    pub files: bool,
    /// Which files `file-store` stores.
    pub store: StoreFiles,
}

/// Which files `file-store` stores (suricata.yaml's `outputs.file-store`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StoreFiles {
    #[default]
    Off,
    /// Those of the transactions (or flows) a rule with `filestore` matched.
    Matched,
    /// Every file (`force-filestore`).
    All,
}

impl LogTypes {
    pub fn any(self) -> bool {
        self.http
            || self.http2
            || self.dns
            || self.tls
            || self.smtp
            || self.ssh
            || self.ftp
            || self.sip
            || self.mqtt
            || self.krb5
            || self.snmp
            || self.ntp
            || self.ldap
            || self.tftp
            || self.dcerpc
            || self.smb
            || self.websocket
            || self.anomaly_applayer
            || self.file_records()
    }

    /// How a transaction's files are made: with the digests asked for, stored in both
    /// directions with `force-filestore`, else in those `filestore` rules `marked`.
    pub fn file_wants(self, marked: PerDir<bool>) -> FileWants {
        let store = match self.store {
            StoreFiles::Off => PerDir::splat(false),
            StoreFiles::Matched => marked,
            StoreFiles::All => PerDir::splat(true),
        };
        FileWants {
            hashes: self.file_hashes,
            store,
        }
    }

    /// File records are made: for `fileinfo` records, or for `file-store`.
    pub fn file_records(self) -> bool {
        self.files || self.store != StoreFiles::Off
    }

    /// Records of this protocol's transactions are made.
    pub fn of(self, p: AppProto) -> bool {
        let files = self.file_records();
        match p {
            AppProto::Http => self.http || files,
            AppProto::Dns => self.dns,
            AppProto::Tls => self.tls,
            AppProto::Smtp => self.smtp || files,
            AppProto::Ssh => self.ssh,
            AppProto::Ftp => self.ftp,
            AppProto::Sip => self.sip,
            AppProto::Mqtt => self.mqtt,
            AppProto::Krb5 => self.krb5,
            AppProto::Snmp => self.snmp,
            AppProto::Ntp => self.ntp,
            AppProto::Ldap => self.ldap,
            AppProto::Tftp => self.tftp,
            AppProto::Dcerpc => self.dcerpc,
            AppProto::Smb => self.smb || files,
            // Suricata's `ftp` logger writes the data channels' `ftp_data` records too.
            AppProto::FtpData => self.ftp || files,
            AppProto::Http2 => self.http2 || files,
            AppProto::Doh2 => self.http2 || self.dns || files,
            AppProto::WebSocket => self.websocket,
            AppProto::Pop3 | AppProto::Imap => false,
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The fields of a transaction, for an alert or a record.
pub fn meta(tx: TxRef<'_>) -> TxMeta {
    let app = match tx {
        TxRef::Http(t) => AppMeta::Http(Box::new(http_meta(t))),
        TxRef::Http2(t) => AppMeta::Http2(Box::new(http2_meta(t))),
        TxRef::Dns(t) => AppMeta::Dns(Box::new(dns_meta(&t.msg))),
        TxRef::Tls(t) => AppMeta::Tls(Box::new(tls_meta(t))),
        TxRef::Smtp(t) => AppMeta::Smtp(Box::new(smtp_meta(t))),
        TxRef::Ssh(t) => {
            let side = |d: Direction| {
                t.banner[d]
                    .as_ref()
                    .map(|b| (text(&b.proto_version), text(&b.software_version)))
            };
            AppMeta::Ssh(Box::new(SshMeta {
                client: side(Direction::ToServer),
                server: side(Direction::ToClient),
            }))
        }
        TxRef::Ftp(t) => AppMeta::Ftp(Box::new(ftp_meta(t))),
        TxRef::Sip(t) => AppMeta::Sip(Box::new(SipMeta {
            start: t.msg.start.clone(),
            version: text(&t.msg.version),
            line: text(&t.msg.line),
            sdp: t.msg.sdp.clone(),
        })),
        TxRef::Mqtt(t) => AppMeta::Mqtt(Box::new(t.clone())),
        TxRef::Krb5(t) => AppMeta::Krb5(Box::new(t.clone())),
        TxRef::Snmp(t) => AppMeta::Snmp(Box::new(t.clone())),
        TxRef::Ntp(t) => AppMeta::Ntp(Box::new(t.clone())),
        TxRef::Ldap(t) => AppMeta::Ldap(Box::new(t.clone())),
        TxRef::Tftp(t) => AppMeta::Tftp(Box::new(t.clone())),
        TxRef::WebSocket(t) => AppMeta::WebSocket(Box::new(websocket::Tx {
            payload: Vec::new(),
            ..t.clone()
        })),
        TxRef::Dcerpc(t) => AppMeta::Dcerpc(Box::new(t.without_stub())),
        TxRef::FtpData(t) => AppMeta::FtpData(Box::new(FtpDataMeta {
            command: t.command.as_deref().map(text),
            filename: t.filename.as_deref().map(text),
            files: ftpdata_file(t, FileWants::default()).into_iter().collect(),
        })),
        TxRef::Smb(s, t) => AppMeta::Smb(Box::new(SmbMeta {
            tx: t.without_data(),
            call: s.call(t).map(dcerpc::Tx::without_stub),
            dialect: s.dialect.clone(),
            files: smb_file(t, FileWants::default()).into_iter().collect(),
        })),
    };
    TxMeta {
        tx_id: tx.id(),
        app,
    }
}

fn ftp_meta(t: &ftp::Tx) -> FtpMeta {
    FtpMeta {
        command: t.command.as_deref().map(text),
        command_data: (!t.command_data.is_empty()).then(|| text(&t.command_data)),
        completion_code: t.completion_codes.iter().map(|c| text(c)).collect(),
        reply: t.replies.iter().map(|r| text(r)).collect(),
        dynamic_port: t.dynamic_port.map(|(p, _)| p),
        mode: t.dynamic_port.map(|(_, m)| match m {
            ftp::Mode::Passive => "passive",
            ftp::Mode::Active => "active",
        }),
        reply_received: t.complete,
        command_truncated: t.command_truncated,
        reply_truncated: t.reply_truncated,
    }
}

fn smtp_meta(t: &smtp::Tx) -> SmtpMeta {
    let list = |v: Option<&[u8]>| -> Vec<String> {
        v.map(|v| {
            v.split(|&c| c == b',')
                .map(|a| text(a.trim_ascii()))
                .filter(|a| !a.is_empty())
                .collect()
        })
        .unwrap_or_default()
    };
    SmtpMeta {
        helo: t.helo.as_deref().map(text),
        mail_from: t.mail_from.as_deref().map(text),
        rcpt_to: t.rcpt_to.iter().map(|r| text(r)).collect(),
        email: t.mime.as_deref().map(|m| EmailMeta {
            from: m.header("from").map(text),
            to: list(m.header("to")),
            cc: list(m.header("cc")),
            done: m.done,
            url: m.urls.iter().map(|u| text(u)).collect(),
            attachment: m.files.iter().map(|f| text(&f.name)).collect(),
            fields: EMAIL_FIELDS
                .iter()
                .map(|&name| (name, m.headers_named(name).map(text).collect::<Vec<_>>()))
                .filter(|(_, v)| !v.is_empty())
                .collect(),
        }),
        files: smtp_files(t, FileWants::default()),
    }
}

/// The file of an SMB file transaction, made as `wants` asks.
pub fn smb_file(t: &smb::Tx, wants: FileWants) -> Option<FileMeta> {
    let f = t.file()?;
    let name = text(&f.name);
    Some(FileMeta::kept(
        name,
        (&f.data, f.size),
        (t.id, f.dir),
        wants,
    ))
}

/// An FTP data channel's file, once complete and if the command named it, made as
/// `wants` asks.
pub fn ftpdata_file(t: &ftpdata::Tx, wants: FileWants) -> Option<FileMeta> {
    let name = t.filename.as_deref().filter(|_| t.closed)?;
    let d = ftpdata_dir(t);
    Some(FileMeta::kept(
        text(name),
        (&t.data, t.size),
        (t.id, d),
        wants,
    ))
}

/// The direction an FTP data channel's file goes (to the server before the channel
/// saw bytes).
pub fn ftpdata_dir(t: &ftpdata::Tx) -> Direction {
    t.dir.unwrap_or(Direction::ToServer)
}

/// The attachments of an SMTP mail, once it ended, made as `wants` asks.
pub fn smtp_files(t: &smtp::Tx, wants: FileWants) -> Vec<FileMeta> {
    let Some(m) = t.mime.as_deref().filter(|_| t.complete) else {
        return Vec::new();
    };
    let at = (t.id, Direction::ToServer);
    m.files
        .iter()
        .map(|f| FileMeta::kept(text(&f.name), (&f.data, f.size), at, wants))
        .collect()
}

fn http2_meta(t: &netsieve_applayer::http2::Tx) -> Http2Meta {
    use netsieve_applayer::http2::Detail;
    let side = |d: Direction| {
        let mut s = Http2Side {
            headers: t.fields[d].clone(),
            ..Http2Side::default()
        };
        for f in &t.frames[d] {
            match &f.detail {
                Detail::Settings(list) => s.settings.extend_from_slice(list),
                Detail::Error(e) => s.error_code = Some(*e),
                Detail::Priority(p) => s.priority = Some(*p),
                Detail::Window(_) | Detail::None => {}
            }
        }
        s
    };
    Http2Meta {
        stream_id: t.stream_id,
        method: t.method().map(text),
        url: t.path().map(text),
        user_agent: t.header(Direction::ToServer, "user-agent").map(text),
        status: t
            .status()
            .and_then(|s| std::str::from_utf8(s).ok()?.parse().ok()),
        // The response's Content-Length, else the request's (as Suricata writes it).
        length: [Direction::ToClient, Direction::ToServer]
            .iter()
            .find_map(|&d| t.header(d, "content-length"))
            .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse().ok()),
        sides: PerDir::new(side(Direction::ToServer), side(Direction::ToClient)),
        dns: t.dns.clone().map(|x| x.map(|x| Box::new(dns_meta(&x.msg)))),
        files: {
            let mut files = PerDir::<Vec<FileMeta>>::default();
            for (d, f) in http2_files(t, PerDir::default(), false, FileWants::default()) {
                files[d].push(f);
            }
            files
        },
    }
}

fn http_meta(t: &http::Tx) -> HttpMeta {
    let mut m = HttpMeta::default();
    for (d, f) in http_files(t, PerDir::default(), true, FileWants::default()) {
        m.files[d].push(f);
    }
    if let Some(r) = &t.request {
        if let Some(h) = r.msg.header("host") {
            let (host, port) = host_port(h);
            m.hostname = Some(text(&host));
            m.port = port;
        }
        m.url = Some(text(&r.uri));
        m.user_agent = r.msg.header("user-agent").map(text);
        m.referer = r.msg.header("referer").map(text);
        m.method = Some(text(&r.method));
        m.protocol = (!r.protocol.is_empty()).then(|| text(&r.protocol));
        m.xff = r.msg.header("x-forwarded-for").map(text);
    }
    if let Some(r) = &t.response {
        m.content_type = r.msg.header("content-type").map(|v| {
            let v = v.split(|&c| c == b';').next().unwrap_or(v);
            text(v.trim_ascii())
        });
        m.content_range = r.msg.header("content-range").map(ContentRange::parse);
        m.redirect = r.msg.header("location").map(text);
        m.status = r.code();
        m.length = r.msg.sent_len();
    }
    m
}

/// A Host header's host (lower case) and port, if it names one.
pub(crate) fn host_port(v: &[u8]) -> (Vec<u8>, Option<u16>) {
    if v.starts_with(b"[") {
        return (v.to_ascii_lowercase(), None);
    }
    match v.iter().rposition(|&c| c == b':') {
        Some(i) if v[i + 1..].iter().all(u8::is_ascii_digit) => {
            let port = std::str::from_utf8(&v[i + 1..])
                .ok()
                .and_then(|p| p.parse().ok());
            (v[..i].to_ascii_lowercase(), port)
        }
        _ => (v.to_ascii_lowercase(), None),
    }
}

fn dns_meta(msg: &dns::Message) -> DnsMeta {
    // An OPT record without options is not written.
    let records = |rs: &[dns::Record]| {
        rs.iter()
            .map(dns_record)
            .filter(|r| r.data != DnsData::Opt(Vec::new()))
            .collect()
    };
    DnsMeta {
        response: msg.response,
        id: msg.id,
        flags: msg.flags,
        opcode: msg.opcode,
        rcode: dns::rcode_name(msg.rcode),
        queries: msg
            .questions
            .iter()
            .map(|q| (escaped(&q.name), dns::rtype_name(q.rtype), q.truncated))
            .collect(),
        answers: records(&msg.answers),
        authorities: records(&msg.authorities),
        additionals: records(&msg.additionals),
    }
}

fn dns_record(r: &dns::Record) -> DnsRecord {
    let d = &r.data;
    let data = match r.rtype {
        1 if d.len() == 4 => {
            DnsData::Text(IpAddr::from(<[u8; 4]>::try_from(&d[..]).unwrap_or_default()).to_string())
        }
        28 if d.len() == 16 => DnsData::Text(
            d.chunks(2)
                .map(|g| format!("{:02x}{:02x}", g[0], g[1]))
                .collect::<Vec<_>>()
                .join(":"),
        ),
        2 | 5 | 12 | 15 => DnsData::Text(escaped(d)),
        // TXT: the strings, each behind its length, joined.
        16 => {
            let mut out = Vec::new();
            let mut at = 0;
            while at < d.len() {
                let n = d[at] as usize;
                out.extend_from_slice(d.get(at + 1..(at + 1 + n).min(d.len())).unwrap_or(&[]));
                at += 1 + n;
            }
            DnsData::Text(escaped(&out))
        }
        10 => DnsData::Text(escaped(d)),
        6 => r.soa.clone().map_or(DnsData::None, DnsData::Soa),
        41 => {
            let mut opts = Vec::new();
            let mut at = 0;
            while at + 4 <= d.len() {
                let code = u16::from_be_bytes([d[at], d[at + 1]]);
                let n = u16::from_be_bytes([d[at + 2], d[at + 3]]) as usize;
                let v = d.get(at + 4..(at + 4 + n).min(d.len())).unwrap_or(&[]);
                opts.push((code, v.iter().map(|b| format!("{b:02x}")).collect()));
                at += 4 + n;
            }
            DnsData::Opt(opts)
        }
        _ => DnsData::None,
    };
    DnsRecord {
        name: escaped(&r.name),
        rtype: dns::rtype_name(r.rtype),
        ttl: r.ttl,
        data,
    }
}

/// Bytes as text, those that are not ASCII as `\xNN`.
pub fn escaped(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        if c.is_ascii() {
            s.push(c as char);
        } else {
            s.push_str(&format!("\\x{c:02x}"));
        }
    }
    s
}

fn tls_meta(t: &tls::Tls) -> TlsMeta {
    let ch = t.client_hello.as_ref();
    let sh = t.server_hello.as_ref();
    let leaf = t
        .certs
        .first()
        .filter(|c| !c.subject.is_empty() || !c.issuer.is_empty());
    let version = sh.map(|s| s.version).or(ch.map(|c| c.version));
    TlsMeta {
        subject: leaf.map(|c| c.subject.clone()),
        issuer: leaf.map(|c| c.issuer.clone()),
        san: leaf.map(|c| c.san.clone()).unwrap_or_default(),
        serial: leaf.map(|c| c.serial.clone()),
        fingerprint: leaf.map(tls::Cert::fingerprint),
        sni: ch.and_then(|c| c.sni.as_deref()).map(text),
        version: version.map(tls::version_name),
        not_before: leaf.map(|c| c.not_before.clone()),
        not_after: leaf.map(|c| c.not_after.clone()),
        ja4: ch.map(tls::ClientHello::ja4),
        ja3: ch.map(|c| (Hash::Md5.hex(c.ja3.as_bytes()), c.ja3.clone())),
        ja3s: sh.map(|s| (Hash::Md5.hex(s.ja3s.as_bytes()), s.ja3s.clone())),
        client_alpns: ch.map_or_else(Vec::new, |c| c.alpns.iter().map(|a| text(a)).collect()),
        server_alpns: sh
            .and_then(|s| s.alpn.as_deref())
            .map(text)
            .into_iter()
            .collect(),
        // Resumed: the same session id, and the server went on to encrypt without a
        // certificate.
        resumed: t.resumed && t.certs.is_empty() && t.side_done(Direction::ToClient),
        from_proto: t.from,
    }
}

/// The files of an HTTP transaction that are ready, the message bodies it has: a
/// request's once it is complete and the response has begun, a response's once it is
/// complete, and at the flow's `end` any.
/// `done[d]` says the file of direction `d` was logged already. Each is (direction,
/// file).
/// The files of an HTTP/2 stream not yet logged: each side's body once that side
/// ended (or the flow did), without a name (Suricata 8 gives none), with the digests
/// `hashes` asks for.
pub fn http2_files(
    t: &http2::Tx,
    done: PerDir<bool>,
    end: bool,
    wants: FileWants,
) -> Vec<(Direction, FileMeta)> {
    let mut out = Vec::new();
    for d in Direction::BOTH {
        let m = &t.msgs[d];
        if done[d] || !t.has_file(d) || !(t.complete(d) || end) {
            continue;
        }
        let data = if d == Direction::ToClient {
            &t.file_data[..]
        } else {
            &m.body[..]
        };
        let whole = m.body.len() as u64 == m.body_len;
        let size = if whole { data.len() as u64 } else { m.body_len };
        let content = wants.content(d, whole.then_some(data));
        out.push((d, FileMeta::new(String::new(), size, t.id, content)));
    }
    out
}

pub fn http_files(
    t: &http::Tx,
    done: PerDir<bool>,
    end: bool,
    wants: FileWants,
) -> Vec<(Direction, FileMeta)> {
    let mut out = Vec::new();
    for d in [Direction::ToServer, Direction::ToClient] {
        let ready = match d {
            Direction::ToServer => t
                .request
                .as_ref()
                .map(|r| r.msg.complete && t.response.is_some()),
            Direction::ToClient => t.response.as_ref().map(|r| r.msg.complete),
        };
        if done[d] || !(ready == Some(true) || end) {
            continue;
        }
        let range = t
            .response
            .as_ref()
            .and_then(|r| r.msg.header("content-range"))
            .map(ContentRange::parse)
            .filter(|_| d == Direction::ToClient)
            .and_then(|r| Some((r.start?, r.end?)));
        for f in http_dir_files(t, d).into_iter().filter(|f| f.size > 0) {
            let content = wants.content(d, f.all());
            let file = FileMeta::new(text(&f.name(t)), f.size, t.id, content);
            out.push((d, FileMeta { range, ..file }));
        }
    }
    out
}

/// One file of an HTTP transaction's direction.
pub struct HttpFile<'a> {
    /// A form part's name; `None` for a message's body, named by [`HttpFile::name`].
    part_name: Option<&'a [u8]>,
    msg: &'a Message,
    /// Its bytes kept (the response's with their content coding removed).
    pub data: &'a [u8],
    /// Its bytes in all.
    pub size: u64,
    /// All of it was kept (so it has digests).
    pub whole: bool,
    /// A body past the body limit kept whole for file-store ([`Message::file`]), where
    /// `data` stops at the limit.
    pub beyond: Option<&'a [u8]>,
}

impl<'a> HttpFile<'a> {
    /// All of its bytes, when they were kept: for its record (digests, file-store).
    pub fn all(&self) -> Option<&'a [u8]> {
        if self.whole {
            Some(self.data)
        } else {
            self.beyond
        }
    }

    /// Its name (a body's is worked out here, only when asked: it normalises the URI).
    pub fn name(&self, t: &http::Tx) -> Cow<'a, [u8]> {
        match self.part_name {
            Some(n) => Cow::Borrowed(n),
            None => Cow::Owned(http_file_name(t, self.msg)),
        }
    }
}

/// The files of an HTTP transaction's direction, as Suricata opens them: a form's
/// parts named as files, else the body (when there is one).
pub fn http_dir_files(t: &http::Tx, d: Direction) -> Vec<HttpFile<'_>> {
    fn body<'a>(m: &'a Message, data: &'a [u8], size: u64) -> HttpFile<'a> {
        HttpFile {
            part_name: None,
            msg: m,
            data,
            size,
            whole: m.body.len() as u64 == m.body_len,
            beyond: m.file.as_deref(),
        }
    }
    match d {
        Direction::ToServer => match &t.request {
            Some(r) if r.form.is_some() => r
                .form
                .iter()
                .flat_map(|f| f.files())
                .map(|f| HttpFile {
                    part_name: Some(&f.name[..]),
                    msg: &r.msg,
                    data: &f.data,
                    size: f.size,
                    whole: f.size == f.data.len() as u64,
                    beyond: None,
                })
                .collect(),
            Some(r) if r.msg.body_len > 0 => vec![body(&r.msg, &r.msg.body, r.msg.body_len)],
            _ => Vec::new(),
        },
        Direction::ToClient => match &t.response {
            Some(r) if r.msg.body_len > 0 => {
                vec![body(&r.msg, &r.file_data, response_file_size(r))]
            }
            _ => Vec::new(),
        },
    }
}

/// The name of an HTTP message's file, as Suricata names it: the `filename` of its
/// Content-Disposition, else the request's normalised path without the query (nor an
/// absolute URI's scheme and authority).
pub fn http_file_name(t: &http::Tx, m: &Message) -> Vec<u8> {
    if let Some(name) = m.header("content-disposition").and_then(disposition_name) {
        return name.to_vec();
    }
    let u = t
        .request
        .as_ref()
        .map(|r| uri::normalize(&r.uri))
        .unwrap_or_default();
    let path = u.split(|&c| c == b'?').next().unwrap_or(&u);
    match path.windows(3).position(|w| w == b"://") {
        Some(i) => {
            let rest = &path[i + 3..];
            rest[rest.iter().position(|&c| c == b'/').unwrap_or(rest.len())..].to_vec()
        }
        None => path.to_vec(),
    }
}

/// The size of a response's file: its body's, or what a compressed body decodes to.
pub fn response_file_size(r: &http::Response) -> u64 {
    let coded = r.msg.header("content-encoding").is_some();
    match (&r.msg.file, coded && r.msg.complete) {
        (Some(whole), true) => whole.len() as u64,
        (None, true) => r.file_data.len() as u64,
        (_, false) => r.msg.body_len,
    }
}

/// The `filename` parameter of a Content-Disposition header, unquoted.
fn disposition_name(v: &[u8]) -> Option<&[u8]> {
    let at = v
        .windows(9)
        .position(|w| w.eq_ignore_ascii_case(b"filename="))?
        + 9;
    let rest = &v[at..];
    let name = match rest.strip_prefix(b"\"") {
        Some(q) => &q[..q.iter().position(|&c| c == b'"').unwrap_or(q.len())],
        None => &rest[..rest.iter().position(|&c| c == b';').unwrap_or(rest.len())],
    };
    Some(name.trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port() {
        assert_eq!(
            host_port(b"Example.COM:8080"),
            (b"example.com".to_vec(), Some(8080))
        );
        assert_eq!(host_port(b"example.com"), (b"example.com".to_vec(), None));
        assert_eq!(host_port(b"[::1]:80"), (b"[::1]:80".to_vec(), None));
    }

    #[test]
    fn disposition_filenames() {
        assert_eq!(
            disposition_name(b"attachment; filename=\"eicar.txt\""),
            Some(&b"eicar.txt"[..])
        );
        assert_eq!(
            disposition_name(b"attachment; FILENAME=a.exe; size=3"),
            Some(&b"a.exe"[..])
        );
        assert_eq!(disposition_name(b"inline"), None);
    }

    #[test]
    fn dns_rdata_as_eve_writes_it() {
        let rec = |rtype, data: &[u8]| dns::Record {
            name: b"x".to_vec(),
            rtype,
            class: 1,
            ttl: 5,
            truncated: false,
            data: data.to_vec(),
            soa: None,
        };
        assert_eq!(
            dns_record(&rec(1, &[10, 0, 0, 1])).data,
            DnsData::Text("10.0.0.1".into())
        );
        let mut v6 = [0u8; 16];
        v6[0] = 0x26;
        v6[15] = 0x0e;
        assert_eq!(
            dns_record(&rec(28, &v6)).data,
            DnsData::Text("2600:0000:0000:0000:0000:0000:0000:000e".into())
        );
        assert_eq!(
            dns_record(&rec(16, b"\x02ab\x01c")).data,
            DnsData::Text("abc".into())
        );
        assert_eq!(
            dns_record(&rec(10, b"V\xc5")).data,
            DnsData::Text("V\\xc5".into())
        );
        assert_eq!(
            dns_record(&rec(41, &[0, 10, 0, 2, 0xab, 0xcd])).data,
            DnsData::Opt(vec![(10, "abcd".into())])
        );
        assert_eq!(dns_record(&rec(48, b"key")).data, DnsData::None);
    }
}
