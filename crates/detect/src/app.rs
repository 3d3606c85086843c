//! Application-layer buffers: which protocol and direction provide each, when in a
//! transaction it is ready, and how to get its bytes. (Their names are the rules
//! crate's [`AppBuffer`].)
//!
//! A transaction is inspected per direction in [`Stage`]s. A buffer is ready at a
//! stage; a rule is evaluated once per transaction and direction, when the direction
//! reaches the highest stage its buffers need.

use std::borrow::Cow;
use std::sync::Arc;

use netsieve_applayer::http::{self, Message};
use netsieve_applayer::{
    AppProto, Direction, Parser, dcerpc, dns, ftp, ftpdata, http2, krb5, ldap, mqtt, ntp, sip, smb,
    smtp, snmp, ssh, tftp, tls, uri, websocket,
};
use netsieve_rules::parse::KRB5_WEAK;
use netsieve_rules::{AppBuffer, Base64Mode, Plain, Transform};

use crate::digest::Hash;

/// How far a transaction got in one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Nothing yet.
    #[default]
    None,
    /// The request line: an HTTP request whose headers have not all arrived (its URI,
    /// method and protocol are known).
    Line,
    /// The head: an HTTP request or response head, a TLS ServerHello.
    Head,
    /// Part of an HTTP body: enough of it to inspect before its end (the minimal
    /// inspect size). Rules on the body that did not match are judged again each time
    /// it grows, up to its end ([`TxRef::updates`]).
    Body,
    /// Complete: the body, the certificates; a DNS message or ClientHello at once.
    Done,
}

/// Which message of a transaction a buffer comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Request,
    Response,
    /// The message of the direction being inspected (`http.header`, `file.data`).
    Either,
}

/// An application-layer buffer the engine inspects, with its protocol, side and stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Buf {
    buffer: AppBuffer,
    proto: AppProto,
    side: Side,
    stage: Stage,
}

impl Buf {
    /// The buffer, if the engine inspects it, in a rule whose header names protocol
    /// `header` (`alert smtp`): a buffer that several protocols have (`file.data`) is
    /// that protocol's.
    pub fn new(buffer: AppBuffer, header: Option<AppProto>) -> Option<Buf> {
        let (proto, side, stage) = inspected(buffer, header)?;
        Some(Buf {
            buffer,
            proto,
            side,
            stage,
        })
    }

    pub fn buffer(self) -> AppBuffer {
        self.buffer
    }

    pub fn proto(self) -> AppProto {
        self.proto
    }

    pub fn side(self) -> Side {
        self.side
    }

    /// The stage of its own direction at which the buffer is complete.
    pub fn stage(self) -> Stage {
        self.stage
    }

    /// The buffer that holds the same bytes as this one in direction `d`, if one does:
    /// an HTTP `file.data` is the body of that direction's message, as
    /// `http.request_body` or `http.response_body` gives it (while the body comes, and
    /// usually once it ended). A transaction group searches such twins with one
    /// prefilter, and bytes that both hold once.
    pub fn twin(self, d: Direction) -> Option<Buf> {
        let body = match d {
            Direction::ToServer => AppBuffer::HttpRequestBody,
            Direction::ToClient => AppBuffer::HttpResponseBody,
        };
        let file = Buf::new(AppBuffer::FileData, Some(AppProto::Http))?;
        let body = Buf::new(body, Some(AppProto::Http))?;
        match self {
            b if b == file => Some(body),
            b if b == body => Some(file),
            _ => None,
        }
    }

    /// Inspected in direction `d`, the buffer is the body of that direction's message,
    /// inspected as it grows from a window ([`Stage::Body`]); the other message's body
    /// (`http.request_body` in a to-client rule) is inspected whole.
    pub fn windowed(self, d: Direction) -> bool {
        self.stage == Stage::Body
            && match self.side {
                Side::Either => true,
                Side::Request => d == Direction::ToServer,
                Side::Response => d == Direction::ToClient,
            }
    }
}

/// What the engine knows of each buffer: (protocol, side, stage), or `None` for the
/// buffers that parse and are not inspected yet. A buffer added to the rules crate
/// must be placed here, and given an arm in [`fill`]. `header` is the protocol the
/// rule's header names, which picks the protocol of a buffer several have.
fn inspected(b: AppBuffer, header: Option<AppProto>) -> Option<(AppProto, Side, Stage)> {
    let (proto, side, stage) = inspected_any(b, header)?;
    // HTTP's buffers in a rule for HTTP/2 (`alert http2`) are HTTP/2's only; in any
    // other rule they are both versions' (an HTTP/2 flow carries HTTP).
    let proto = match proto {
        AppProto::Http if header == Some(AppProto::Http2) => AppProto::Http2,
        // In a rule for DNS over HTTP/2 (`alert doh2`), HTTP's and DNS's buffers are
        // its streams'.
        AppProto::Http | AppProto::Http2 | AppProto::Dns if header == Some(AppProto::Doh2) => {
            AppProto::Doh2
        }
        p => p,
    };
    Some((proto, side, stage))
}

fn inspected_any(b: AppBuffer, header: Option<AppProto>) -> Option<(AppProto, Side, Stage)> {
    use AppBuffer::*;
    use AppProto::{
        Dcerpc, Dns, Ftp, FtpData, Http, Krb5, Ldap, Mqtt, Ntp, Sip, Smb, Smtp, Snmp, Ssh, Tls,
    };
    use Side::{Either, Request, Response};
    use Stage::{Body, Done, Head, Line};
    Some(match b {
        HttpUri | HttpUriRaw | HttpMethod | HttpRequestLine => (Http, Request, Line),
        HttpProtocol => (Http, Either, Line),
        HttpStart | HttpHeader | HttpHeaderRaw | HttpHeaderNames | HttpCookie | HttpContentType
        | HttpContentLen | HttpConnection => (Http, Either, Head),
        HttpRequestHeader | HttpHost | HttpHostRaw | HttpUserAgent | HttpReferer | HttpAccept
        | HttpAcceptEnc | HttpAcceptLang => (Http, Request, Head),
        HttpResponseHeader | HttpLocation | HttpServer | HttpStatCode | HttpStatMsg
        | HttpResponseLine => (Http, Response, Head),
        HttpRequestBody => (Http, Request, Body),
        HttpResponseBody => (Http, Response, Body),
        FileData | FileName | FileMd5 | FileSha1 | FileSha256 if header == Some(Smtp) => {
            (Smtp, Request, Done)
        }
        // An SMB file: written to the server or read from it, complete once closed.
        // An FTP data channel's file: complete once its direction ended.
        FileData | FileName | FileMd5 | FileSha1 | FileSha256 | FileSize
            if header == Some(FtpData) =>
        {
            (FtpData, Either, Done)
        }
        // Known once the control flow named the channel's command.
        FtpDataCommand => (FtpData, Either, Head),
        // An HTTP/2 stream's frames, once its side ended (a stream-0 frame's at once).
        Http2FrameType | Http2ErrorCode | Http2Priority | Http2Window | Http2SizeUpdate
        | Http2Settings => (AppProto::Http2, Either, Done),
        Http2HeaderName => (AppProto::Http2, Either, Head),
        FileData | FileName | FileMd5 | FileSha1 | FileSha256 | FileSize if header == Some(Smb) => {
            (Smb, Either, Done)
        }
        // An HTTP body as far as it has come; its name, size and digests once complete.
        FileData => (Http, Either, Body),
        FileName | FileMd5 | FileSha1 | FileSha256 | FileSize => (Http, Either, Done),
        // An SMTP mail: the session's name once given, the sender once given, the rest
        // once the mail ended.
        SmtpHelo => (Smtp, Request, Line),
        SmtpMailFrom => (Smtp, Request, Head),
        SmtpRcptTo | EmailFrom | EmailTo | EmailCc | EmailSubject | EmailDate | EmailMessageId
        | EmailUrl | EmailXMailer | EmailReceived => (Smtp, Request, Done),
        DnsQuery => (Dns, Request, Done),
        DnsQueriesRrname | DnsAnswersRrname | DnsAuthoritiesRrname | DnsAdditionalsRrname
        | DnsOpcode | DnsRcode | DnsRrtype => (Dns, Either, Done),
        DnsResponseRrname => (Dns, Response, Done),
        // The client's hello.
        TlsSni | Ja3Hash | Ja3String => (Tls, Request, Head),
        Ja3sHash | Ja3sString => (Tls, Response, Head),
        // The leaf certificate of the direction's chain: the server's, or the client's
        // (client authentication).
        TlsCertSubject | TlsCertIssuer | TlsCertSerial | TlsCertFingerprint => (Tls, Either, Done),
        TlsCerts | TlsCertChainLen => (Tls, Response, Done),
        TlsRandom | TlsRandomTime | TlsRandomBytes | TlsVersion => (Tls, Either, Head),
        // Each side's identification, inspected in its own direction.
        SshProto | SshSoftware => (Ssh, Either, Head),
        SshHassh | SshHasshString => (Ssh, Request, Done),
        SshHasshServer | SshHasshServerString => (Ssh, Response, Done),
        // An FTP command is known at once, the rest once its reply completed.
        FtpCommand | FtpCommandData => (Ftp, Request, Head),
        FtpReply | FtpCompletionCode => (Ftp, Response, Done),
        FtpDynamicPort | FtpMode => (Ftp, Either, Done),
        FtpReplyReceived => (Ftp, Request, Done),
        // Each SIP message is a transaction of its own direction.
        SipMethod | SipUri | SipRequestLine => (Sip, Request, Done),
        SipStatCode | SipStatMsg | SipResponseLine => (Sip, Response, Done),
        SipProtocol
        | SipFrom
        | SipTo
        | SipVia
        | SipUserAgent
        | SipContentType
        | SipContentLength
        | SdpOrigin
        | SdpSessionName
        | SdpSessionInfo
        | SdpUri
        | SdpEmail
        | SdpPhoneNumber
        | SdpConnectionData
        | SdpBandwidth
        | SdpTime
        | SdpRepeatTime
        | SdpTimezone
        | SdpEncryptionKey
        | SdpAttribute
        | SdpMedia
        | SdpMediaInfo
        | SdpMediaConnectionData
        | SdpMediaEncryptionKey => (Sip, Either, Done),
        // An MQTT exchange is inspected once complete, in either direction.
        MqttType
        | MqttFlags
        | MqttQos
        | MqttReasonCode
        | MqttProtocolVersion
        | MqttConnectFlags
        | MqttConnackSessionPresent
        | MqttConnectClientId
        | MqttConnectUsername
        | MqttConnectPassword
        | MqttConnectProtocolString
        | MqttConnectWillTopic
        | MqttConnectWillMessage
        | MqttPublishTopic
        | MqttPublishMessage
        | MqttSubscribeTopic
        | MqttUnsubscribeTopic => (Mqtt, Either, Done),
        // A DCE/RPC call: the stub data of the direction inspected, once its last
        // fragment came; a request's interface and operation in either direction once
        // the request came (`Line`, see `TxRef::stage`).
        // The same over SMB's named pipes, in a rule for SMB.
        DceStubData => (if header == Some(Smb) { Smb } else { Dcerpc }, Either, Done),
        DcerpcIface | DcerpcOpnum => (if header == Some(Smb) { Smb } else { Dcerpc }, Either, Line),
        // A Kerberos message is a transaction of its own direction; its names are
        // inspected in answers only (measured: krb5-request-frag-log).
        Krb5MsgType | Krb5ErrCode | Krb5TicketEncryption => (Krb5, Either, Done),
        // An SNMP message is a transaction of its own direction.
        SnmpVersion | SnmpPduType | SnmpCommunity | SnmpUsm => (Snmp, Either, Done),
        NtpVersion | NtpMode | NtpStratum | NtpReferenceId => (Ntp, Either, Done),
        // An LDAP operation: its request once read; its responses as they come, each
        // new one inspected again (`TxRef::updates`).
        LdapRequestOperation | LdapRequestDn | LdapRequestAttributeType => (Ldap, Request, Done),
        LdapResponsesOperation
        | LdapResponsesCount
        | LdapResponsesResultCode
        | LdapResponsesDn
        | LdapResponsesMessage
        | LdapResponsesAttributeType => (Ldap, Response, Head),
        // A WebSocket frame is a transaction of its own direction.
        WebsocketPayload | WebsocketOpcode | WebsocketMask | WebsocketFlags => {
            (AppProto::WebSocket, Either, Done)
        }
        Krb5Cname | Krb5Sname => (Krb5, Response, Done),
        // A tree connect's path, once the answer said whether it is a pipe: on the
        // client's side, as Suricata inspects it (measured: smb-version-keyword).
        SmbShare | SmbNamedPipe => (Smb, Request, Done),
        SmbNtlmsspUser | SmbNtlmsspDomain => (Smb, Request, Head),
        // Each side of every transaction.
        SmbVersion => (Smb, Either, Head),
        HttpCookieRaw | HttpParam | HttpTrueIp | SipHeader | Base64Data | JsData => {
            return None;
        }
    })
}

/// Application protocol names of rule headers and `service:` lists.
pub fn proto_by_name(name: &str) -> Option<AppProto> {
    Some(match name {
        "http" | "http1" => AppProto::Http,
        "http2" => AppProto::Http2,
        "doh2" => AppProto::Doh2,
        "tls" | "ssl" => AppProto::Tls,
        "dns" => AppProto::Dns,
        "smtp" => AppProto::Smtp,
        "ssh" => AppProto::Ssh,
        "ftp" => AppProto::Ftp,
        "sip" => AppProto::Sip,
        "mqtt" => AppProto::Mqtt,
        "krb5" => AppProto::Krb5,
        "snmp" => AppProto::Snmp,
        "ntp" => AppProto::Ntp,
        "ldap" => AppProto::Ldap,
        "tftp" => AppProto::Tftp,
        "websocket" => AppProto::WebSocket,
        "pop3" => AppProto::Pop3,
        "imap" => AppProto::Imap,
        "smb" => AppProto::Smb,
        "dcerpc" => AppProto::Dcerpc,
        "ftp-data" => AppProto::FtpData,
        _ => return None,
    })
}

/// A transform as the engine applies it, made once at load (a `pcrexform`'s
/// expression compiled); equal and hashed as its rule text, so that lists that
/// transform a buffer alike share a prefilter.
#[derive(Clone, Debug)]
pub struct Xform {
    spec: Transform,
    re: Option<Arc<regex::bytes::Regex>>,
    /// A `luaxform`'s script.
    lua: Option<Arc<crate::lua::Script>>,
}

impl Xform {
    /// The transform `spec` of a rule read from `rule_file` (where a `luaxform`'s
    /// script is looked for, without `default-rule-path`).
    pub fn new(spec: &Transform, rule_file: &str) -> Result<Xform, String> {
        let lua = match spec {
            Transform::Lua { script, .. } => Some(crate::lua::Script::load(
                script,
                rule_file,
                crate::lua::Kind::Transform,
            )?),
            _ => None,
        };
        let re = match spec {
            Transform::Pcre(src) => {
                // Bytes, not UTF-8 text, as PCRE without its UTF mode reads them.
                let re = regex::bytes::RegexBuilder::new(src)
                    .unicode(false)
                    .build()
                    .map_err(|e| format!("pcrexform: {e}"))?;
                if re.captures_len() < 2 {
                    return Err("pcrexform: the expression captures no group".into());
                }
                Some(Arc::new(re))
            }
            _ => None,
        };
        Ok(Xform {
            spec: spec.clone(),
            re,
            lua,
        })
    }
}

impl PartialEq for Xform {
    fn eq(&self, other: &Xform) -> bool {
        self.spec == other.spec
    }
}

impl Eq for Xform {}

impl std::hash::Hash for Xform {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.spec.hash(h);
    }
}

/// Applies transforms in order.
pub fn transform<'a>(mut b: Cow<'a, [u8]>, ts: &[Xform]) -> Cow<'a, [u8]> {
    for t in ts {
        b = Cow::Owned(match &t.spec {
            Transform::Plain(p) => plain(*p, &b),
            Transform::Pcre(_) => {
                t.re.as_ref()
                    .and_then(|re| re.captures(&b))
                    .and_then(|c| c.get(1))
                    .map_or_else(Vec::new, |g| g.as_bytes().to_vec())
            }
            Transform::Xor(key) => b
                .iter()
                .zip(key.iter().cycle())
                .map(|(x, k)| x ^ k)
                .collect(),
            Transform::FromBase64 {
                offset,
                bytes,
                mode,
            } => {
                let from = (*offset as usize).min(b.len());
                let rest = &b[from..];
                let n = bytes.map_or(rest.len(), |n| (n as usize).min(rest.len()));
                from_base64(&rest[..n], *mode)
            }
            Transform::Gunzip { max } => inflate(flate2::read::GzDecoder::new(&b[..]), *max),
            Transform::ZlibDeflate { max } => inflate(flate2::read::ZlibDecoder::new(&b[..]), *max),
            Transform::Lua { args, .. } => {
                match t.lua.as_ref().and_then(|s| s.transform(&b, args)) {
                    Some(out) => out,
                    None => continue,
                }
            }
        });
    }
    b
}

/// The digest a file-hash buffer (`filemd5` and the like) holds of file `f`.
fn digest<'a>(buf: AppBuffer, f: &[u8]) -> Cow<'a, [u8]> {
    let h = match buf {
        AppBuffer::FileSha1 => Hash::Sha1,
        AppBuffer::FileSha256 => Hash::Sha256,
        _ => Hash::Md5,
    };
    Cow::Owned(h.bytes(f))
}

fn plain(p: Plain, b: &[u8]) -> Vec<u8> {
    match p {
        Plain::DotPrefix => [b".".as_slice(), b].concat(),
        Plain::ToLowercase => b.to_ascii_lowercase(),
        Plain::ToUppercase => b.to_ascii_uppercase(),
        Plain::StripWhitespace => b
            .iter()
            .copied()
            .filter(|c| !c.is_ascii_whitespace())
            .collect(),
        Plain::CompressWhitespace => {
            let mut out: Vec<u8> = Vec::with_capacity(b.len());
            for &c in b {
                if c.is_ascii_whitespace() {
                    if out.last().is_some_and(|l| l.is_ascii_whitespace()) {
                        continue;
                    }
                    out.push(b' ');
                } else {
                    out.push(c);
                }
            }
            out
        }
        Plain::UrlDecode => uri::percent_decode(b),
        Plain::ToMd5 => Hash::Md5.bytes(b),
        Plain::ToSha1 => Hash::Sha1.bytes(b),
        Plain::ToSha256 => Hash::Sha256.bytes(b),
        // Each line is lower-cased up to its first `:` (Suricata 8's documented state
        // machine: lower until a colon, then copy until a line end).
        Plain::HeaderLowercase => {
            let mut name = true;
            b.iter()
                .map(|&c| {
                    let out = if name { c.to_ascii_lowercase() } else { c };
                    name = match c {
                        b':' => false,
                        b'\n' => true,
                        _ => name,
                    };
                    out
                })
                .collect()
        }
        Plain::StripPseudoHeaders => b
            .split_inclusive(|&c| c == b'\n')
            .filter(|line| !line.starts_with(b":"))
            .flatten()
            .copied()
            .collect(),
    }
}

/// `from_base64`'s decoding: RFC 4648 stops at the first byte outside the alphabet (or
/// padding), RFC 2045 skips such bytes, strict gives nothing when there is one.
pub(crate) fn from_base64(text: &[u8], mode: Base64Mode) -> Vec<u8> {
    let valid = |c: &u8| netsieve_applayer::mime::base64_value(*c).is_some();
    match mode {
        Base64Mode::Rfc4648 => crate::eval::base64_decode(text),
        Base64Mode::Rfc2045 => {
            let kept: Vec<u8> = text.iter().copied().filter(valid).collect();
            crate::eval::base64_decode(&kept)
        }
        Base64Mode::Strict => {
            let body = text
                .strip_suffix(b"==")
                .or_else(|| text.strip_suffix(b"="))
                .unwrap_or(text);
            if body.iter().all(valid) && text.len().is_multiple_of(4) {
                crate::eval::base64_decode(body)
            } else {
                Vec::new()
            }
        }
    }
}

/// What a decompressor gives, up to `max` bytes; a stream that breaks off gives what
/// came before the break.
fn inflate(r: impl std::io::Read, max: u32) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    let mut r = r.take(u64::from(max));
    let mut chunk = [0u8; 4096];
    loop {
        match r.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&chunk[..n]),
        }
    }
    out
}

/// One transaction of a flow, whatever its protocol.
#[derive(Clone, Copy)]
pub enum TxRef<'a> {
    Http(&'a http::Tx),
    /// An HTTP/2 stream, or one frame on stream 0.
    Http2(&'a http2::Tx),
    Dns(&'a dns::Tx),
    /// TLS keeps one state per flow: a single transaction, id 0.
    Tls(&'a tls::Tls),
    Smtp(&'a smtp::Tx),
    /// SSH keeps one state per flow: a single transaction, id 0.
    Ssh(&'a ssh::Ssh),
    Ftp(&'a ftp::Tx),
    /// An FTP data channel's one transfer.
    FtpData(&'a ftpdata::Tx),
    Sip(&'a sip::Tx),
    Mqtt(&'a mqtt::Tx),
    Krb5(&'a krb5::Tx),
    Snmp(&'a snmp::Tx),
    Ntp(&'a ntp::Tx),
    /// An LDAP operation: its request and responses.
    Ldap(&'a ldap::Tx),
    /// A TFTP request.
    Tftp(&'a tftp::Tx),
    /// A WebSocket frame.
    WebSocket(&'a websocket::Tx),
    Dcerpc(&'a dcerpc::Tx),
    /// An SMB transaction, with the session it belongs to (its DCE/RPC calls live
    /// there).
    Smb(&'a smb::Smb, &'a smb::Tx),
}

/// The transactions a parser holds, oldest first.
pub fn txs(parser: Option<&Parser>) -> Txs<'_> {
    Txs { parser, at: 0 }
}

/// The transactions of a parser, in order (see [`txs`]): the parser and the position
/// of the next, so that the iterator is two words (a chain of one iterator per
/// protocol was some hundred bytes, copied at every call).
#[derive(Clone)]
pub struct Txs<'a> {
    parser: Option<&'a Parser>,
    at: usize,
}

impl<'a> Iterator for Txs<'a> {
    type Item = TxRef<'a>;

    fn next(&mut self) -> Option<TxRef<'a>> {
        let i = self.at;
        let tx = match self.parser? {
            Parser::Http(h) => h.txs.get(i).map(TxRef::Http),
            Parser::Dns(x) => x.txs.get(i).map(TxRef::Dns),
            Parser::Smtp(x) => x.txs.get(i).map(TxRef::Smtp),
            Parser::Ftp(x) => x.txs.get(i).map(TxRef::Ftp),
            Parser::FtpData(x) => x.txs.get(i).map(TxRef::FtpData),
            Parser::Sip(x) => x.txs.get(i).map(TxRef::Sip),
            Parser::Mqtt(x) => x.txs.get(i).map(TxRef::Mqtt),
            Parser::Dcerpc(x) => x.txs.get(i).map(TxRef::Dcerpc),
            Parser::Smb(x) => x.txs.get(i).map(|t| TxRef::Smb(x, t)),
            Parser::Http2(x) => {
                // An upgraded connection's HTTP/1 transactions come first.
                let http1 = x.http1.as_ref().map_or(0, |h| h.txs.len());
                match x.http1.as_ref().and_then(|h| h.txs.get(i)) {
                    Some(t) => Some(TxRef::Http(t)),
                    None => x.txs.get(i - http1).map(TxRef::Http2),
                }
            }
            Parser::Krb5(x) => x.txs.get(i).map(TxRef::Krb5),
            Parser::Snmp(x) => x.txs.get(i).map(TxRef::Snmp),
            Parser::Ntp(x) => x.txs.get(i).map(TxRef::Ntp),
            Parser::Ldap(x) => x.txs.get(i).map(TxRef::Ldap),
            Parser::Tftp(x) => x.txs.get(i).map(TxRef::Tftp),
            Parser::WebSocket(x) => x.txs.get(i).map(TxRef::WebSocket),
            Parser::Tls(t) => (i == 0).then_some(TxRef::Tls(t)),
            Parser::Ssh(t) => (i == 0).then_some(TxRef::Ssh(t)),
        };
        self.at += 1;
        tx
    }
}

impl TxRef<'_> {
    /// The protocol of the transaction (an HTTP/2 flow's upgrade request is HTTP/1's;
    /// an SMB flow's calls are SMB's, which carries DCE/RPC).
    pub fn proto(&self) -> AppProto {
        match self {
            TxRef::Http(_) => AppProto::Http,
            TxRef::Http2(_) => AppProto::Http2,
            TxRef::Dns(_) => AppProto::Dns,
            TxRef::Tls(_) => AppProto::Tls,
            TxRef::Smtp(_) => AppProto::Smtp,
            TxRef::Ssh(_) => AppProto::Ssh,
            TxRef::Ftp(_) => AppProto::Ftp,
            TxRef::FtpData(_) => AppProto::FtpData,
            TxRef::Sip(_) => AppProto::Sip,
            TxRef::Mqtt(_) => AppProto::Mqtt,
            TxRef::Krb5(_) => AppProto::Krb5,
            TxRef::Snmp(_) => AppProto::Snmp,
            TxRef::Ntp(_) => AppProto::Ntp,
            TxRef::Ldap(_) => AppProto::Ldap,
            TxRef::Tftp(_) => AppProto::Tftp,
            TxRef::WebSocket(_) => AppProto::WebSocket,
            TxRef::Dcerpc(_) => AppProto::Dcerpc,
            TxRef::Smb(..) => AppProto::Smb,
        }
    }

    /// The directions it is inspected in before it is done with; none for the one
    /// state of a TLS or SSH flow, which lasts as long as the flow.
    pub fn sides(&self) -> &'static [Direction] {
        const SERVER: &[Direction] = &[Direction::ToServer];
        const CLIENT: &[Direction] = &[Direction::ToClient];
        let own = |d: Direction| {
            if d == Direction::ToServer {
                SERVER
            } else {
                CLIENT
            }
        };
        match self {
            // A data channel's command is inspected both ways, its file in its own.
            TxRef::Http(_)
            | TxRef::Http2(_)
            | TxRef::Ftp(_)
            | TxRef::FtpData(_)
            | TxRef::Ldap(_)
            | TxRef::Dcerpc(_) => &Direction::BOTH,
            // A file moves one way.
            TxRef::Smb(_, t) => t.file().map_or(&Direction::BOTH, |f| own(f.dir)),
            TxRef::Dns(t) => own(t.dir),
            TxRef::Sip(t) => own(t.dir),
            TxRef::Krb5(t) => own(t.dir),
            TxRef::Snmp(t) => own(t.dir),
            TxRef::Ntp(t) => own(t.dir),
            TxRef::WebSocket(t) => own(t.dir),
            // An MQTT exchange is inspected in the direction of its last packet.
            TxRef::Mqtt(t) => own(t.dir),
            // A mail and a TFTP request are the client's.
            TxRef::Smtp(_) | TxRef::Tftp(_) => SERVER,
            TxRef::Tls(_) | TxRef::Ssh(_) => &[],
        }
    }

    pub fn id(&self) -> u64 {
        match self {
            TxRef::Http(t) => t.id,
            TxRef::Http2(t) => t.id,
            TxRef::Dns(t) => t.id,
            TxRef::Tls(t) => t.tx_id,
            TxRef::Smtp(t) => t.id,
            TxRef::Ssh(_) => 0,
            TxRef::Ftp(t) => t.id,
            TxRef::FtpData(t) => t.id,
            TxRef::Sip(t) => t.id,
            TxRef::Mqtt(t) => t.id,
            TxRef::Krb5(t) => t.id,
            TxRef::Snmp(t) => t.id,
            TxRef::Ntp(t) => t.id,
            TxRef::Ldap(t) => t.id,
            TxRef::Tftp(t) => t.id,
            TxRef::WebSocket(t) => t.id,
            TxRef::Dcerpc(t) => t.id,
            TxRef::Smb(_, t) => t.id,
        }
    }

    /// It is complete: an FTP command answered, an MQTT exchange acknowledged, an LDAP
    /// operation's last response come; for the others, each side it is inspected in
    /// at its last stage.
    pub fn complete(&self) -> bool {
        match self {
            TxRef::Ftp(t) => t.complete,
            TxRef::Mqtt(t) => t.complete,
            TxRef::Ldap(t) => t.complete,
            t => t.sides().iter().all(|&d| t.stage(d) == Stage::Done),
        }
    }

    /// How far the transaction grew in direction `d` at the stage it grows at
    /// ([`TxRef::grows_at`]): LDAP's responses, counted as they come; the bytes of an
    /// HTTP body inspected as it grows ([`Stage::Body`]). A rule of that stage is
    /// judged again each time, until it matched on the transaction (as Suricata
    /// inspects a transaction still in progress on every update).
    pub fn updates(&self, d: Direction) -> usize {
        match self {
            TxRef::Ldap(t) if d == Direction::ToClient => t.responses.len(),
            TxRef::Http(t) => {
                let m = match d {
                    Direction::ToServer => t.request.as_ref().map(|r| &r.msg),
                    Direction::ToClient => t.response.as_ref().map(|r| &r.msg),
                };
                m.filter(|m| m.body_grows()).map_or(0, |m| m.body.len())
            }
            _ => 0,
        }
    }

    /// The stage whose rules are judged again as the transaction grows
    /// ([`TxRef::updates`]).
    pub fn grows_at(&self) -> Stage {
        match self {
            TxRef::Ldap(_) => Stage::Head,
            TxRef::Http(_) => Stage::Body,
            _ => Stage::None,
        }
    }

    /// How far the transaction got in direction `d`.
    pub fn stage(&self, d: Direction) -> Stage {
        let msg = |m: Option<&Message>| match m {
            None => Stage::None,
            Some(m) if m.complete => Stage::Done,
            Some(m) if m.body_grows() => Stage::Body,
            Some(_) => Stage::Head,
        };
        match self {
            TxRef::Http(t) => match (d, &t.request) {
                (Direction::ToServer, Some(r)) if r.line_only => Stage::Line,
                (Direction::ToServer, r) => msg(r.as_ref().map(|r| &r.msg)),
                _ => msg(t.response.as_ref().map(|r| &r.msg)),
            },
            // A side's headers, then its end of the stream.
            TxRef::Http2(t) if t.complete(d) => Stage::Done,
            TxRef::Http2(t) if t.headers[d] => Stage::Head,
            TxRef::Http2(_) => Stage::None,
            TxRef::Dns(t) if t.dir == d => Stage::Done,
            TxRef::Sip(t) if t.dir == d => Stage::Done,
            TxRef::Krb5(t) if t.dir == d => Stage::Done,
            TxRef::Snmp(t) if t.dir == d => Stage::Done,
            TxRef::Ntp(t) if t.dir == d => Stage::Done,
            TxRef::WebSocket(t) if t.dir == d => Stage::Done,
            TxRef::Dns(_)
            | TxRef::Sip(_)
            | TxRef::Krb5(_)
            | TxRef::Snmp(_)
            | TxRef::Ntp(_)
            | TxRef::WebSocket(_) => Stage::None,
            TxRef::Tls(t) => {
                if d == Direction::ToServer {
                    // Its hello, then its certificate or key exchange.
                    if t.progress(d).is_some_and(|p| p >= 2) {
                        Stage::Done
                    } else if t.client_hello.is_some() {
                        Stage::Head
                    } else {
                        Stage::None
                    }
                } else if t.certs_done {
                    Stage::Done
                } else if t.server_hello.is_some() {
                    Stage::Head
                } else {
                    Stage::None
                }
            }
            // A mail is the client's: its commands and message.
            TxRef::Smtp(_) if d == Direction::ToClient => Stage::None,
            TxRef::Smtp(t) if t.complete => Stage::Done,
            TxRef::Smtp(t) if t.mail_from.is_some() || !t.rcpt_to.is_empty() => Stage::Head,
            TxRef::Smtp(_) => Stage::Line,
            // Each side: its identification, then its key exchange offer.
            TxRef::Ssh(t) if t.hassh[d].is_some() => Stage::Done,
            TxRef::Ssh(t) if t.banner[d].is_some() => Stage::Head,
            TxRef::Ssh(_) => Stage::None,
            // A command is known when seen; all of it once its final reply came.
            // The server's greeting is nothing the client sent.
            TxRef::Ftp(t) if d == Direction::ToServer && t.command.is_none() => Stage::None,
            TxRef::Ftp(t) if t.complete => Stage::Done,
            TxRef::Ftp(_) if d == Direction::ToServer => Stage::Head,
            TxRef::Ftp(_) => Stage::None,
            // A data channel: nothing before its command is known; its file's
            // direction until the file is complete, the other direction at once.
            TxRef::FtpData(t) if t.command.is_none() && !t.closed => Stage::None,
            TxRef::FtpData(t) if t.dir == Some(d) && !t.closed => Stage::Head,
            TxRef::FtpData(_) => Stage::Done,
            TxRef::Mqtt(t) if t.complete && t.dir == d => Stage::Done,
            TxRef::Mqtt(_) => Stage::None,
            // The request once read (an answer to no request has none to wait for);
            // the responses while they come, then once the last came.
            TxRef::Ldap(t) if d == Direction::ToServer => {
                if t.request.is_some() || !t.responses.is_empty() {
                    Stage::Done
                } else {
                    Stage::None
                }
            }
            TxRef::Ldap(t) if t.complete => Stage::Done,
            TxRef::Ldap(t) if !t.responses.is_empty() => Stage::Head,
            TxRef::Ldap(_) => Stage::None,
            TxRef::Tftp(_) if d == Direction::ToServer => Stage::Done,
            TxRef::Tftp(_) => Stage::None,
            // Each side once its last fragment came (a bind's answer without a request
            // has no request side); the server's side is at `Line` once the request
            // is complete, where the request's interface and operation are known.
            TxRef::Dcerpc(t) => dcerpc_stage(t, d),
            TxRef::Smb(s, t) => smb_stage(s, t, d),
        }
    }
}

/// A DCE/RPC call: each side once its last fragment came (a bind's answer without a
/// request has no request side); the server's side is at `Line` once the request is
/// complete, where the request's interface and operation are known.
fn dcerpc_stage(t: &dcerpc::Tx, d: Direction) -> Stage {
    let done = |p: &dcerpc::Part| p.done && p.ptype.is_some();
    match d {
        Direction::ToServer if done(&t.request) => Stage::Done,
        Direction::ToClient if done(&t.response) => Stage::Done,
        Direction::ToClient if done(&t.request) => Stage::Line,
        _ => Stage::None,
    }
}

/// An SMB transaction: a file in its own direction once closed (its data arrives
/// until then); a call over a pipe as a DCE/RPC call; a command: its request is the
/// client's `Head`, and its final answer completes both sides (an answer whose request
/// was not seen stands for both).
fn smb_stage(s: &smb::Smb, t: &smb::Tx, d: Direction) -> Stage {
    match (&t.kind, d) {
        (smb::Kind::File(f), d) if f.dir == d && f.closed => Stage::Done,
        (smb::Kind::File(f), d) if f.dir == d => Stage::Head,
        (smb::Kind::File(_), _) => Stage::None,
        (smb::Kind::Rpc { .. }, d) => s.call(t).map_or(Stage::None, |c| dcerpc_stage(c, d)),
        _ if t.response => Stage::Done,
        (_, Direction::ToServer) if t.request => Stage::Head,
        _ => Stage::None,
    }
}

fn lines(m: &Message, out: &mut Vec<u8>) {
    for h in &m.headers {
        out.extend_from_slice(&h.name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(&h.value);
        out.extend_from_slice(b"\r\n");
    }
}

fn header<'a>(m: &'a Message, name: &str, out: &mut Vec<Cow<'a, [u8]>>) {
    // Repeated headers are joined with ", " as libhtp does.
    let vals: Vec<&[u8]> = m
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case(name.as_bytes()))
        .map(|h| h.value.as_slice())
        .collect();
    match vals.len() {
        0 => {}
        1 => out.push(Cow::Borrowed(vals[0])),
        _ => out.push(Cow::Owned(vals.join(&b", "[..]))),
    }
}

/// A response's body as `http.response_body` and `file.data` see it: decoded once
/// complete, as far as it has come before ([`Message::partial_body`]).
fn response_body(r: &http::Response) -> Option<&[u8]> {
    match r.msg.partial_body() {
        Some(b) => Some(b),
        None => (!r.file_data.is_empty()).then_some(&r.file_data[..]),
    }
    .filter(|b| !b.is_empty())
}

/// Appends the instances of `buf` in transaction `tx`, inspected in direction `d`.
/// Most buffers have one instance; `http.request_header`, `dns.query` and `tls.certs`
/// have one per header, question or certificate.
pub fn fill<'a>(buf: AppBuffer, tx: TxRef<'a>, d: Direction, out: &mut Vec<Cow<'a, [u8]>>) {
    use AppBuffer::*;
    match tx {
        TxRef::Http2(t) => fill_http2(buf, t, d, out),
        TxRef::Http(t) => {
            let req = t.request.as_ref();
            let resp = t.response.as_ref();
            let own = if d == Direction::ToServer {
                req.map(|r| &r.msg)
            } else {
                resp.map(|r| &r.msg)
            };
            match buf {
                HttpUri => out.extend(req.map(|r| Cow::Owned(uri::normalize(&r.uri)))),
                HttpUriRaw => out.extend(req.map(|r| Cow::Borrowed(&r.uri[..]))),
                HttpMethod => out.extend(req.map(|r| Cow::Borrowed(&r.method[..]))),
                HttpProtocol => {
                    let p = if d == Direction::ToServer {
                        req.map(|r| &r.protocol[..])
                    } else {
                        resp.map(|r| &r.protocol[..])
                    };
                    out.extend(p.filter(|p| !p.is_empty()).map(Cow::Borrowed));
                }
                HttpRequestLine => out.extend(req.map(|r| Cow::Borrowed(&r.msg.line[..]))),
                HttpResponseLine => out.extend(resp.map(|r| Cow::Borrowed(&r.msg.line[..]))),
                HttpStart => {
                    if let Some(m) = own {
                        let mut b = m.line.clone();
                        b.extend_from_slice(b"\r\n");
                        lines(m, &mut b);
                        b.extend_from_slice(b"\r\n");
                        out.push(Cow::Owned(b));
                    }
                }
                HttpHeader => {
                    if let Some(m) = own.filter(|m| !m.headers.is_empty()) {
                        let mut b = Vec::new();
                        lines(m, &mut b);
                        out.push(Cow::Owned(b));
                    }
                }
                HttpHeaderRaw => out.extend(
                    own.filter(|m| !m.raw_headers.is_empty())
                        .map(|m| Cow::Borrowed(&m.raw_headers[..])),
                ),
                HttpHeaderNames => {
                    if let Some(m) = own.filter(|m| !m.headers.is_empty()) {
                        let mut b = b"\r\n".to_vec();
                        for h in &m.headers {
                            b.extend_from_slice(&h.name);
                            b.extend_from_slice(b"\r\n");
                        }
                        b.extend_from_slice(b"\r\n");
                        out.push(Cow::Owned(b));
                    }
                }
                HttpRequestHeader | HttpResponseHeader => {
                    let m = if buf == HttpRequestHeader {
                        req.map(|r| &r.msg)
                    } else {
                        resp.map(|r| &r.msg)
                    };
                    for h in m.iter().flat_map(|m| m.headers.iter()) {
                        out.push(Cow::Owned([&h.name[..], b": ", &h.value[..]].concat()));
                    }
                }
                HttpHost => {
                    if let Some(v) = req.and_then(|r| r.msg.header("host")) {
                        out.push(Cow::Owned(crate::log::host_port(v).0));
                    }
                }
                HttpHostRaw => {
                    if let Some(r) = req {
                        header(&r.msg, "host", out)
                    }
                }
                HttpUserAgent => req.iter().for_each(|r| header(&r.msg, "user-agent", out)),
                HttpCookie => {
                    let name = if d == Direction::ToServer {
                        "cookie"
                    } else {
                        "set-cookie"
                    };
                    own.iter().for_each(|m| header(m, name, out));
                }
                HttpContentType => own.iter().for_each(|m| header(m, "content-type", out)),
                HttpContentLen => own.iter().for_each(|m| header(m, "content-length", out)),
                HttpReferer => req.iter().for_each(|r| header(&r.msg, "referer", out)),
                HttpAccept => req.iter().for_each(|r| header(&r.msg, "accept", out)),
                HttpAcceptEnc => req
                    .iter()
                    .for_each(|r| header(&r.msg, "accept-encoding", out)),
                HttpAcceptLang => req
                    .iter()
                    .for_each(|r| header(&r.msg, "accept-language", out)),
                HttpConnection => own.iter().for_each(|m| header(m, "connection", out)),
                HttpLocation => resp.iter().for_each(|r| header(&r.msg, "location", out)),
                HttpServer => resp.iter().for_each(|r| header(&r.msg, "server", out)),
                HttpRequestBody => out.extend(
                    req.filter(|r| !r.msg.body.is_empty())
                        .map(|r| Cow::Borrowed(&r.msg.body[..])),
                ),
                HttpResponseBody => out.extend(resp.and_then(response_body).map(Cow::Borrowed)),
                // A response's body still arriving, once enough of it came.
                FileData if d == Direction::ToClient && resp.is_some_and(|r| !r.msg.complete) => {
                    out.extend(resp.and_then(response_body).map(Cow::Borrowed))
                }
                // The direction's files, as their `fileinfo` records give them.
                FileData | FileName | FileSize | FileMd5 | FileSha1 | FileSha256 => {
                    for f in crate::log::http_dir_files(t, d) {
                        match buf {
                            FileName => out.push(f.name(t)),
                            FileSize => out.push(Cow::Owned(f.size.to_be_bytes().to_vec())),
                            _ if f.data.is_empty() => {}
                            FileData => out.push(Cow::Borrowed(f.data)),
                            _ if f.whole => out.push(digest(buf, f.data)),
                            _ => {}
                        }
                    }
                }
                HttpStatCode => out.extend(resp.map(|r| Cow::Borrowed(&r.status[..]))),
                HttpStatMsg => out.extend(
                    resp.filter(|r| !r.reason.is_empty())
                        .map(|r| Cow::Borrowed(&r.reason[..])),
                ),
                _ => {}
            }
        }
        TxRef::Dns(t) => {
            let m = &t.msg;
            let number = |v: u64| Cow::Owned(v.to_be_bytes().to_vec());
            match buf {
                DnsQuery | DnsQueriesRrname => {
                    out.extend(m.questions.iter().map(|q| Cow::Borrowed(&q.name[..])))
                }
                DnsAnswersRrname => {
                    out.extend(m.answers.iter().map(|a| Cow::Borrowed(&a.name[..])))
                }
                DnsAuthoritiesRrname => {
                    out.extend(m.authorities.iter().map(|a| Cow::Borrowed(&a.name[..])))
                }
                DnsAdditionalsRrname => {
                    out.extend(m.additionals.iter().map(|a| Cow::Borrowed(&a.name[..])))
                }
                // Every name a response holds: its questions', its records' owners, and
                // the names their data give (CNAME, NS, PTR, MX; SOA's two).
                DnsResponseRrname if m.response => {
                    out.extend(m.questions.iter().map(|q| Cow::Borrowed(&q.name[..])));
                    for r in m.answers.iter().chain(&m.authorities).chain(&m.additionals) {
                        out.push(Cow::Borrowed(&r.name[..]));
                        if matches!(r.rtype, 2 | 5 | 12 | 15) {
                            out.push(Cow::Borrowed(&r.data[..]));
                        }
                        if let Some(soa) = &r.soa {
                            out.push(Cow::Borrowed(&soa.mname[..]));
                            out.push(Cow::Borrowed(&soa.rname[..]));
                        }
                    }
                }
                DnsOpcode => out.push(number(m.opcode.into())),
                DnsRcode => out.push(number(m.rcode.into())),
                // Every record's type: the questions', and a response's answers'.
                DnsRrtype => out.extend(
                    m.questions
                        .iter()
                        .chain(&m.answers)
                        .map(|r| number(r.rtype.into())),
                ),
                _ => {}
            }
        }
        TxRef::Tls(t) => {
            let ch = t.client_hello.as_ref();
            let sh = t.server_hello.as_ref();
            let chain = match d {
                Direction::ToServer => &t.client_certs,
                Direction::ToClient => &t.certs,
            };
            let leaf = chain.first();
            match buf {
                TlsSni => out.extend(ch.and_then(|c| c.sni.as_deref()).map(Cow::Borrowed)),
                Ja3String => out.extend(ch.map(|c| Cow::Borrowed(c.ja3.as_bytes()))),
                Ja3Hash => {
                    out.extend(ch.map(|c| Cow::Owned(Hash::Md5.hex(c.ja3.as_bytes()).into_bytes())))
                }
                Ja3sString => out.extend(sh.map(|s| Cow::Borrowed(s.ja3s.as_bytes()))),
                Ja3sHash => out
                    .extend(sh.map(|s| Cow::Owned(Hash::Md5.hex(s.ja3s.as_bytes()).into_bytes()))),
                TlsCertSubject => out.extend(
                    leaf.filter(|c| !c.subject.is_empty())
                        .map(|c| Cow::Borrowed(c.subject.as_bytes())),
                ),
                TlsCertIssuer => out.extend(
                    leaf.filter(|c| !c.issuer.is_empty())
                        .map(|c| Cow::Borrowed(c.issuer.as_bytes())),
                ),
                TlsCertSerial => out.extend(
                    leaf.filter(|c| !c.serial.is_empty())
                        .map(|c| Cow::Borrowed(c.serial.as_bytes())),
                ),
                TlsCertFingerprint => {
                    out.extend(leaf.map(|c| Cow::Owned(c.fingerprint().into_bytes())))
                }
                TlsCerts => out.extend(t.certs.iter().map(|c| Cow::Borrowed(&c.der[..]))),
                TlsCertChainLen => {
                    out.push(Cow::Owned((t.certs.len() as u64).to_be_bytes().to_vec()))
                }
                // The version of the direction's hello: the highest the client offers
                // (its supported_versions, drafts as 1.3, else its legacy field), the
                // server's choice as sent (a draft is not 1.3 there, as in Suricata).
                TlsVersion => {
                    let v = if d == Direction::ToServer {
                        ch.map(tls::ClientHello::offered_version)
                    } else {
                        sh.map(|s| s.version)
                    };
                    out.extend(v.map(|v| Cow::Owned(u64::from(v).to_be_bytes().to_vec())));
                }
                // The hello of the direction inspected: the client's to the server.
                TlsRandom | TlsRandomTime | TlsRandomBytes => {
                    let random = if d == Direction::ToServer {
                        ch.map(|c| &c.random)
                    } else {
                        sh.map(|s| &s.random)
                    };
                    let part = match buf {
                        TlsRandomTime => 0..4,
                        TlsRandomBytes => 4..32,
                        _ => 0..32,
                    };
                    out.extend(random.map(|r| Cow::Borrowed(&r[part])));
                }
                _ => {}
            }
        }
        TxRef::Smtp(t) => fill_smtp(buf, t, out),
        TxRef::Ssh(t) => {
            let banner = t.banner[d].as_ref();
            let client = t.hassh[Direction::ToServer].as_deref();
            let server = t.hassh[Direction::ToClient].as_deref();
            let hash = |h: &[u8]| Cow::Owned(Hash::Md5.hex(h).into_bytes());
            match buf {
                SshProto => out.extend(banner.map(|b| Cow::Borrowed(&b.proto_version[..]))),
                SshSoftware => out.extend(banner.map(|b| Cow::Borrowed(&b.software_version[..]))),
                SshHassh => out.extend(client.map(hash)),
                SshHasshString => out.extend(client.map(Cow::Borrowed)),
                SshHasshServer => out.extend(server.map(hash)),
                SshHasshServerString => out.extend(server.map(Cow::Borrowed)),
                _ => {}
            }
        }
        TxRef::Ftp(t) => match buf {
            FtpCommand => out.extend(t.command.as_deref().map(Cow::Borrowed)),
            FtpCommandData => out.extend(
                t.command
                    .as_ref()
                    .filter(|_| !t.command_data.is_empty())
                    .map(|_| Cow::Borrowed(&t.command_data[..])),
            ),
            FtpReply => out.extend(t.replies.iter().map(|r| Cow::Borrowed(&r[..]))),
            FtpCompletionCode => {
                out.extend(t.completion_codes.iter().map(|c| Cow::Borrowed(&c[..])))
            }
            FtpDynamicPort => out.extend(
                t.dynamic_port
                    .map(|(p, _)| Cow::Owned(u64::from(p).to_be_bytes().to_vec())),
            ),
            FtpReplyReceived => out.push(Cow::Owned(u64::from(t.complete).to_be_bytes().to_vec())),
            FtpMode => out.extend(t.dynamic_port.map(|(_, m)| {
                let active = u64::from(m == ftp::Mode::Active);
                Cow::Owned(active.to_be_bytes().to_vec())
            })),
            _ => {}
        },
        TxRef::Sip(t) => fill_sip(buf, &t.msg, out),
        TxRef::Mqtt(t) => fill_mqtt(buf, t, out),
        TxRef::Krb5(t) => fill_krb5(buf, t, out),
        TxRef::FtpData(t) => {
            let own = t.dir == Some(d);
            match buf {
                FtpDataCommand => out.push(Cow::Owned(t.command_code().to_be_bytes().to_vec())),
                FileData if own && !t.data.is_empty() => out.push(Cow::Borrowed(&t.data)),
                FileName if own => out.extend(t.filename.as_deref().map(Cow::Borrowed)),
                FileSize if own && t.size > 0 => {
                    out.push(Cow::Owned(t.size.to_be_bytes().to_vec()))
                }
                // The digest of a file kept whole.
                FileMd5 | FileSha1 | FileSha256 if own && t.size == t.data.len() as u64 => {
                    out.extend((!t.data.is_empty()).then(|| digest(buf, &t.data)))
                }
                _ => {}
            }
        }
        TxRef::Ntp(t) => {
            let number = |v: u8| Cow::Owned(u64::from(v).to_be_bytes().to_vec());
            match buf {
                NtpVersion => out.push(number(t.version)),
                NtpMode => out.push(number(t.mode)),
                NtpStratum => out.push(number(t.stratum)),
                NtpReferenceId => out.push(Cow::Borrowed(&t.reference_id)),
                _ => {}
            }
        }
        TxRef::WebSocket(t) => {
            let number = |v: u64| Cow::Owned(v.to_be_bytes().to_vec());
            match buf {
                WebsocketPayload => out.push(Cow::Borrowed(&t.payload)),
                WebsocketOpcode => out.push(number(t.opcode.into())),
                WebsocketFlags => out.push(number(t.flags.into())),
                WebsocketMask => out.extend(t.mask.map(|m| number(m.into()))),
                _ => {}
            }
        }
        TxRef::Snmp(t) => match buf {
            SnmpVersion => out.push(Cow::Owned(u64::from(t.version).to_be_bytes().to_vec())),
            SnmpPduType if t.pdu_type != snmp::ENCRYPTED => {
                out.push(Cow::Owned(u64::from(t.pdu_type).to_be_bytes().to_vec()))
            }
            SnmpCommunity => {
                out.extend(t.community.as_deref().map(|c| Cow::Borrowed(c.as_bytes())))
            }
            SnmpUsm => out.extend(t.usm.as_deref().map(|u| Cow::Borrowed(u.as_bytes()))),
            _ => {}
        },
        TxRef::Ldap(t) => fill_ldap(buf, t, out),
        // No buffers of its own: rules on a TFTP flow inspect its packets.
        TxRef::Tftp(_) => {}
        TxRef::Dcerpc(t) => fill_dcerpc(buf, t, d, out),
        TxRef::Smb(s, t) => fill_smb(buf, s, t, d, out),
    }
}

/// The buffers of an LDAP operation: its request's operation, name and attribute
/// types; its responses' operations and result codes (one list each, see
/// `Match::UintList`), their count, names, messages and attribute types.
fn fill_ldap<'a>(buf: AppBuffer, t: &'a ldap::Tx, out: &mut Vec<Cow<'a, [u8]>>) {
    use AppBuffer::*;
    use ldap::proto::ProtocolOp as Op;
    let number = |n: u64| Cow::Owned(n.to_be_bytes().to_vec());
    let text = |s: &'a str| Cow::Borrowed(s.as_bytes());
    let list = |f: &dyn Fn(&ldap::Message) -> Option<u32>| {
        let numbers = t.responses.iter().filter_map(f);
        Cow::Owned(numbers.flat_map(|n| u64::from(n).to_be_bytes()).collect())
    };
    let request = t.request.as_ref().map(|m| &m.protocol_op);
    match buf {
        LdapRequestOperation => out.extend(
            t.request
                .as_ref()
                .map(|m| number(ldap::operation(m).into())),
        ),
        LdapRequestDn => out.extend(request.and_then(|op| match op {
            Op::BindRequest(r) => Some(text(&r.name.0)),
            Op::AddRequest(r) => Some(text(&r.entry.0)),
            Op::SearchRequest(r) => Some(text(&r.base_object.0)),
            Op::ModifyRequest(r) => Some(text(&r.object.0)),
            Op::DelRequest(dn) => Some(text(&dn.0)),
            Op::ModDnRequest(r) => Some(text(&r.entry.0)),
            Op::CompareRequest(r) => Some(text(&r.entry.0)),
            _ => None,
        })),
        LdapRequestAttributeType => match request {
            Some(Op::SearchRequest(r)) => out.extend(r.attributes.iter().map(|a| text(&a.0))),
            Some(Op::ModifyRequest(r)) => {
                out.extend((r.changes.iter()).map(|c| text(&c.modification.attr_type.0)))
            }
            Some(Op::AddRequest(r)) => {
                out.extend(r.attributes.iter().map(|a| text(&a.attr_type.0)))
            }
            Some(Op::CompareRequest(r)) => out.push(text(&r.ava.attribute_desc.0)),
            _ => {}
        },
        LdapResponsesOperation => out.push(list(&|m| Some(ldap::operation(m)))),
        LdapResponsesResultCode => {
            out.push(list(&|m| m.protocol_op.result().map(|r| r.result_code.0)))
        }
        LdapResponsesCount => out.push(number(t.responses.len() as u64)),
        // A response without a name or message gives an empty buffer.
        LdapResponsesDn => out.extend(t.responses.iter().map(|m| {
            match &m.protocol_op {
                Op::SearchResultEntry(e) => text(&e.object_name.0),
                op => op
                    .result()
                    .map_or(Cow::Borrowed(&[][..]), |r| text(&r.matched_dn.0)),
            }
        })),
        LdapResponsesMessage => out.extend(t.responses.iter().map(|m| {
            let r = m.protocol_op.result();
            r.map_or(Cow::Borrowed(&[][..]), |r| text(&r.diagnostic_message.0))
        })),
        LdapResponsesAttributeType => {
            for m in &t.responses {
                if let Op::SearchResultEntry(e) = &m.protocol_op {
                    out.extend(e.attributes.iter().map(|a| text(&a.attr_type.0)));
                }
            }
        }
        _ => {}
    }
}

/// The buffers of an SMB transaction: a tree connect's share or pipe, a session
/// setup's NTLMSSP names, a file's name and data (in its own direction), a call's
/// DCE/RPC buffers, and every transaction's version.
/// An HTTP/2 stream's buffers, as Suricata builds them from its headers: the
/// pseudo-headers give the request's method, path and authority and the response's
/// status; `http.request_header` lists them too, `http.header` and
/// `http.header_names` do not.
fn fill_http2<'a>(buf: AppBuffer, t: &'a http2::Tx, d: Direction, out: &mut Vec<Cow<'a, [u8]>>) {
    use AppBuffer::*;
    use Direction::{ToClient, ToServer};
    let own = &t.msgs[d];
    let line = |parts: &[&[u8]]| Cow::Owned(parts.concat());
    let number = |n: u64| Cow::Owned(n.to_be_bytes().to_vec());
    let frames = || t.frames[d].iter();
    // DNS over HTTP/2: the side's DNS message has DNS's buffers.
    if let Some(x) = t.dns[d].as_deref()
        && matches!(
            buf,
            DnsQuery
                | DnsQueriesRrname
                | DnsAnswersRrname
                | DnsAuthoritiesRrname
                | DnsAdditionalsRrname
                | DnsResponseRrname
                | DnsOpcode
                | DnsRcode
                | DnsRrtype
        )
    {
        return fill(buf, TxRef::Dns(x), d, out);
    }
    // A header's values (case-sensitive names, see `http2::Tx::header`), repeated ones
    // joined with ", ".
    let header = |side: Direction, name: &'static str, out: &mut Vec<Cow<'a, [u8]>>| {
        let vals: Vec<&[u8]> = t.headers_named(side, name).collect();
        match vals.len() {
            0 => {}
            1 => out.push(Cow::Borrowed(vals[0])),
            _ => out.push(Cow::Owned(vals.join(&b", "[..]))),
        }
    };
    match buf {
        HttpUri => out.extend(t.path().map(|p| Cow::Owned(uri::normalize(p)))),
        HttpUriRaw => out.extend(t.path().map(Cow::Borrowed)),
        HttpMethod => out.extend(t.method().map(Cow::Borrowed)),
        HttpProtocol => out.push(Cow::Borrowed(b"HTTP/2")),
        HttpRequestLine if d == ToServer => {
            if let (Some(m), Some(p)) = (t.method(), t.path()) {
                out.push(line(&[m, b" ", p, b" HTTP/2"]));
            }
        }
        HttpResponseLine if d == ToClient => {
            out.push(line(&[b"HTTP/2 ", t.status().unwrap_or_default(), b"\r\n"]));
        }
        HttpStatCode => out.extend(t.status().map(Cow::Borrowed)),
        // HTTP/2 has no reason phrase: every transaction's is empty (stream-0 ones'
        // too, measured: http2-keywords2).
        HttpStatMsg => out.push(Cow::Borrowed(b"")),
        HttpHeader | HttpHeaderRaw => {
            let mut b = Vec::new();
            for h in t.regular(d) {
                b.extend_from_slice(&[&h.name[..], b": ", &h.value[..], b"\r\n"].concat());
            }
            if !b.is_empty() {
                out.push(Cow::Owned(b));
            }
        }
        // Every name, pseudo-headers' too (measured: transform-strip-pseudo-headers,
        // where only `strip_pseudo_headers` lets a name list start with a real header).
        HttpHeaderNames => {
            let mut b = b"\r\n".to_vec();
            for h in &t.msgs[d].headers {
                b.extend_from_slice(&h.name);
                b.extend_from_slice(b"\r\n");
            }
            if b.len() > 2 {
                b.extend_from_slice(b"\r\n");
                out.push(Cow::Owned(b));
            }
        }
        HttpRequestHeader | HttpResponseHeader => {
            let side = if buf == HttpRequestHeader {
                ToServer
            } else {
                ToClient
            };
            for h in &t.msgs[side].headers {
                out.push(line(&[&h.name, b": ", &h.value]));
            }
        }
        HttpHost => out.extend(
            t.authority()
                .map(|a| Cow::Owned(crate::log::host_port(a).0)),
        ),
        HttpHostRaw => out.extend(t.authority().map(Cow::Borrowed)),
        HttpUserAgent => header(ToServer, "user-agent", out),
        HttpCookie => header(
            d,
            if d == ToServer {
                "cookie"
            } else {
                "set-cookie"
            },
            out,
        ),
        HttpContentType => header(d, "content-type", out),
        HttpContentLen => header(d, "content-length", out),
        HttpReferer => header(ToServer, "referer", out),
        HttpAccept => header(ToServer, "accept", out),
        HttpAcceptEnc => header(ToServer, "accept-encoding", out),
        HttpAcceptLang => header(ToServer, "accept-language", out),
        HttpConnection => header(d, "connection", out),
        HttpLocation => header(ToClient, "location", out),
        HttpServer => header(ToClient, "server", out),
        HttpRequestBody => {
            let b = &t.msgs[ToServer].body;
            out.extend((!b.is_empty()).then(|| Cow::Borrowed(&b[..])));
        }
        HttpResponseBody => {
            out.extend((!t.file_data.is_empty()).then(|| Cow::Borrowed(&t.file_data[..])));
        }
        FileData | FileMd5 | FileSha1 | FileSha256 | FileSize => {
            let (data, whole) = if d == ToServer {
                let m = &t.msgs[ToServer];
                (&m.body[..], m.body.len() as u64 == m.body_len)
            } else {
                let m = &t.msgs[ToClient];
                (&t.file_data[..], m.body.len() as u64 == m.body_len)
            };
            match buf {
                _ if data.is_empty() => {}
                FileData => out.push(Cow::Borrowed(data)),
                FileSize => out.push(number(t.msgs[d].body_len)),
                _ if whole => out.push(digest(buf, data)),
                _ => {}
            }
        }
        Http2FrameType => out.extend(frames().map(|f| number(u64::from(f.kind)))),
        Http2ErrorCode => out.extend(frames().filter_map(|f| match f.detail {
            http2::Detail::Error(e) => Some(number(u64::from(e))),
            _ => None,
        })),
        Http2Priority => out.extend(frames().filter_map(|f| match f.detail {
            http2::Detail::Priority(w) => Some(number(u64::from(w))),
            _ => None,
        })),
        Http2Window => out.extend(frames().filter_map(|f| match f.detail {
            http2::Detail::Window(w) => Some(number(u64::from(w))),
            _ => None,
        })),
        Http2Settings => {
            for f in frames() {
                if let http2::Detail::Settings(list) = &f.detail {
                    out.extend(
                        list.iter()
                            .map(|&(id, v)| number(u64::from(id) << 32 | u64::from(v))),
                    );
                }
            }
        }
        Http2SizeUpdate => out.extend(t.fields[d].iter().filter_map(|f| match f {
            http2::Field::SizeUpdate(n) => Some(number(*n)),
            http2::Field::Header(_) => None,
        })),
        Http2HeaderName => out.extend(own.headers.iter().map(|h| Cow::Borrowed(&h.name[..]))),
        _ => {}
    }
}

fn fill_smb<'a>(
    buf: AppBuffer,
    s: &'a smb::Smb,
    t: &'a smb::Tx,
    d: Direction,
    out: &mut Vec<Cow<'a, [u8]>>,
) {
    use AppBuffer::*;
    use smb::Kind;
    match (buf, &t.kind) {
        (SmbVersion, _) => out.push(Cow::Owned(u64::from(t.version).to_be_bytes().to_vec())),
        (
            SmbShare,
            Kind::TreeConnect {
                share,
                pipe: Some(false),
            },
        )
        | (
            SmbNamedPipe,
            Kind::TreeConnect {
                share,
                pipe: Some(true),
            },
        ) => out.push(Cow::Borrowed(share)),
        (SmbNtlmsspUser, Kind::SessionSetup { ntlmssp: Some(n) }) => {
            out.push(Cow::Borrowed(&n.user))
        }
        (SmbNtlmsspDomain, Kind::SessionSetup { ntlmssp: Some(n) }) => {
            out.push(Cow::Borrowed(&n.domain))
        }
        (FileData, Kind::File(f)) if f.dir == d && !f.data.is_empty() => {
            out.push(Cow::Borrowed(&f.data))
        }
        (FileName, Kind::File(f)) if f.dir == d => out.push(Cow::Borrowed(&f.name)),
        (FileSize, Kind::File(f)) if f.dir == d => {
            out.push(Cow::Owned(f.size.to_be_bytes().to_vec()))
        }
        (FileMd5 | FileSha1 | FileSha256, Kind::File(f)) if f.dir == d && f.closed => {
            out.push(digest(buf, &f.data))
        }
        (DceStubData | DcerpcIface | DcerpcOpnum, Kind::Rpc { .. }) => {
            if let Some(c) = s.call(t) {
                fill_dcerpc(buf, c, d, out);
            }
        }
        _ => {}
    }
}

/// The buffers of a DCE/RPC call: the stub data of direction `d`; a request's operation
/// number, and each interface bound to its context (see `Match::DceIface`).
fn fill_dcerpc<'a>(buf: AppBuffer, t: &'a dcerpc::Tx, d: Direction, out: &mut Vec<Cow<'a, [u8]>>) {
    let part = if d == Direction::ToServer {
        &t.request
    } else {
        &t.response
    };
    match buf {
        AppBuffer::DceStubData if !part.stub.is_empty() => out.push(Cow::Borrowed(&part.stub)),
        AppBuffer::DcerpcOpnum if t.is_request() => out.extend(
            t.opnum
                .map(|n| Cow::Owned(u64::from(n).to_be_bytes().to_vec())),
        ),
        AppBuffer::DcerpcIface if t.is_request() => out.extend(t.interfaces.iter().map(|i| {
            let mut b = i.uuid.to_vec();
            b.extend_from_slice(&i.version.to_be_bytes());
            b.push(u8::from(i.ack_result == Some(0)));
            b.push(u8::from(i.first_frag));
            Cow::Owned(b)
        })),
        _ => {}
    }
}

/// The buffers of a Kerberos message: its type, an error's code, and each part of the
/// client's and the server's names.
fn fill_krb5<'a>(buf: AppBuffer, t: &'a krb5::Tx, out: &mut Vec<Cow<'a, [u8]>>) {
    let number = |v: u64| Cow::Owned(v.to_be_bytes().to_vec());
    let parts =
        |n: &'a Option<Vec<String>>| n.iter().flatten().map(|p| Cow::Borrowed(p.as_bytes()));
    match buf {
        AppBuffer::Krb5MsgType => out.push(number(t.msg_type.into())),
        // A negative code reads as its two's complement, as a u32 would.
        AppBuffer::Krb5ErrCode => out.extend(t.error_code.map(|c| number(u64::from(c as u32)))),
        // An answer's ticket's encryption, and [`KRB5_WEAK`] too when it is weak.
        AppBuffer::Krb5TicketEncryption => {
            if let Some(e) = t.ticket_etype {
                out.push(number(e as u64));
                if krb5::weak(e) {
                    out.push(number(KRB5_WEAK as u64));
                }
            }
        }
        AppBuffer::Krb5Cname => out.extend(parts(&t.cname)),
        AppBuffer::Krb5Sname => out.extend(parts(&t.sname)),
        _ => {}
    }
}

/// The buffers of an MQTT exchange: each of its packets' fields (an integer keyword
/// matches when any packet's value does).
fn fill_mqtt<'a>(buf: AppBuffer, t: &'a mqtt::Tx, out: &mut Vec<Cow<'a, [u8]>>) {
    use AppBuffer::*;
    use mqtt::Body;
    let number = |v: u64| Cow::Owned(v.to_be_bytes().to_vec());
    let bytes = |b: &'a [u8]| Cow::Borrowed(b);
    for m in &t.msgs {
        let h = m.header;
        match (buf, &m.body) {
            (MqttType, _) => out.push(number(h.kind.into())),
            (MqttFlags, _) => out.push(number(h.flags().into())),
            (MqttQos, _) => out.push(number(h.qos.into())),
            (MqttReasonCode, _) => out.extend(m.reason_codes().iter().map(|&c| number(c.into()))),
            (MqttProtocolVersion, Body::Connect(c)) => out.push(number(c.protocol_version.into())),
            (MqttConnectFlags, Body::Connect(c)) => out.push(number(c.flags.into())),
            (
                MqttConnackSessionPresent,
                Body::Connack {
                    session_present, ..
                },
            ) => out.push(number((*session_present).into())),
            (MqttConnectClientId, Body::Connect(c)) => out.push(bytes(&c.client_id)),
            (MqttConnectUsername, Body::Connect(c)) => out.extend(c.username.as_deref().map(bytes)),
            (MqttConnectPassword, Body::Connect(c)) => out.extend(c.password.as_deref().map(bytes)),
            (MqttConnectProtocolString, Body::Connect(c)) => out.push(bytes(&c.protocol_string)),
            (MqttConnectWillTopic, Body::Connect(c)) => {
                out.extend(c.will.as_ref().map(|w| bytes(&w.topic)))
            }
            (MqttConnectWillMessage, Body::Connect(c)) => {
                out.extend(c.will.as_ref().map(|w| bytes(&w.message)))
            }
            (MqttPublishTopic, Body::Publish { topic, .. }) => out.push(bytes(topic)),
            (MqttPublishMessage, Body::Publish { message, .. }) => out.push(bytes(message)),
            (MqttSubscribeTopic, Body::Subscribe { topics, .. }) => {
                out.extend(topics.iter().map(|(t, _)| bytes(t)))
            }
            (MqttUnsubscribeTopic, Body::Unsubscribe { topics, .. }) => {
                out.extend(topics.iter().map(|t| bytes(t)))
            }
            _ => {}
        }
    }
}

/// The buffers of a SIP message: its start line's parts, some headers (each instance,
/// for those that may repeat) and its session description.
fn fill_sip<'a>(buf: AppBuffer, m: &'a sip::Message, out: &mut Vec<Cow<'a, [u8]>>) {
    use AppBuffer::*;
    use sip::Start::{Request, Response};
    let one = |v: &'a Option<Vec<u8>>| v.as_deref().map(Cow::Borrowed);
    let all = |v: &'a [Vec<u8>]| v.iter().map(|x| Cow::Borrowed(&x[..]));
    let sdp = m.sdp.as_ref();
    let media = sdp.into_iter().flat_map(|s| &s.media);
    let headers = |name| m.values(name).map(Cow::Borrowed);
    match (buf, &m.start) {
        (SipMethod, Request { method, .. }) => out.push(Cow::Borrowed(method)),
        (SipUri, Request { uri, .. }) => out.push(Cow::Borrowed(uri)),
        (SipRequestLine, Request { .. }) | (SipResponseLine, Response { .. }) => {
            out.push(Cow::Borrowed(&m.line))
        }
        (SipStatCode, Response { code, .. }) => out.push(Cow::Borrowed(code)),
        (SipStatMsg, Response { reason, .. }) if !reason.is_empty() => {
            out.push(Cow::Borrowed(reason))
        }
        (SipProtocol, _) => out.push(Cow::Borrowed(&m.version)),
        (SipFrom, _) => out.extend(headers("From")),
        (SipTo, _) => out.extend(headers("To")),
        (SipVia, _) => out.extend(headers("Via")),
        (SipUserAgent, _) => out.extend(headers("User-Agent")),
        (SipContentType, _) => out.extend(headers("Content-Type")),
        (SipContentLength, _) => out.extend(headers("Content-Length")),
        (SdpOrigin, _) => out.extend(sdp.and_then(|s| one(&s.origin))),
        (SdpSessionName, _) => out.extend(sdp.and_then(|s| one(&s.session_name))),
        (SdpSessionInfo, _) => out.extend(sdp.and_then(|s| one(&s.session_info))),
        (SdpUri, _) => out.extend(sdp.and_then(|s| one(&s.uri))),
        (SdpEmail, _) => out.extend(sdp.and_then(|s| one(&s.email))),
        (SdpPhoneNumber, _) => out.extend(sdp.and_then(|s| one(&s.phone_number))),
        (SdpConnectionData, _) => out.extend(sdp.and_then(|s| one(&s.connection_data))),
        (SdpBandwidth, _) => out.extend(sdp.into_iter().flat_map(|s| all(&s.bandwidths))),
        (SdpTime, _) => out.extend(
            sdp.into_iter()
                .flat_map(|s| &s.time_descriptions)
                .map(|t| Cow::Borrowed(&t.time[..])),
        ),
        (SdpRepeatTime, _) => out.extend(
            sdp.into_iter()
                .flat_map(|s| &s.time_descriptions)
                .filter_map(|t| one(&t.repeat_time)),
        ),
        (SdpTimezone, _) => out.extend(sdp.and_then(|s| one(&s.timezone))),
        (SdpEncryptionKey, _) => out.extend(sdp.and_then(|s| one(&s.encryption_key))),
        (SdpAttribute, _) => out.extend(sdp.into_iter().flat_map(|s| all(&s.attributes))),
        (SdpMedia, _) => out.extend(media.map(|x| Cow::Borrowed(&x.media[..]))),
        (SdpMediaInfo, _) => out.extend(media.filter_map(|x| one(&x.media_info))),
        (SdpMediaConnectionData, _) => out.extend(media.filter_map(|x| one(&x.connection_data))),
        (SdpMediaEncryptionKey, _) => out.extend(media.filter_map(|x| one(&x.encryption_key))),
        _ => {}
    }
}

/// The buffers of an SMTP mail.
fn fill_smtp<'a>(buf: AppBuffer, t: &'a smtp::Tx, out: &mut Vec<Cow<'a, [u8]>>) {
    use AppBuffer::*;
    let mime = t.mime.as_deref();
    let header = |name: &'static str| mime.and_then(|m| m.header(name)).map(Cow::Borrowed);
    match buf {
        SmtpHelo => out.extend(t.helo.as_deref().map(Cow::Borrowed)),
        SmtpMailFrom => out.extend(t.mail_from.as_deref().map(Cow::Borrowed)),
        SmtpRcptTo => out.extend(t.rcpt_to.iter().map(|r| Cow::Borrowed(&r[..]))),
        EmailFrom => out.extend(header("from")),
        EmailTo => out.extend(header("to")),
        EmailCc => out.extend(header("cc")),
        EmailSubject => out.extend(header("subject")),
        EmailDate => out.extend(header("date")),
        EmailMessageId => out.extend(header("message-id")),
        EmailXMailer => out.extend(header("x-mailer")),
        EmailUrl => out.extend(
            mime.into_iter()
                .flat_map(|m| m.urls.iter())
                .map(|u| Cow::Borrowed(&u[..])),
        ),
        EmailReceived => out.extend(
            mime.into_iter()
                .flat_map(|m| m.headers_named("received"))
                .map(Cow::Borrowed),
        ),
        FileData => out.extend(
            mime.into_iter()
                .flat_map(|m| &m.files)
                .filter(|f| !f.data.is_empty())
                .map(|f| Cow::Borrowed(&f.data[..])),
        ),
        // The digest of each attachment kept whole.
        FileMd5 | FileSha1 | FileSha256 => out.extend(
            mime.into_iter()
                .flat_map(|m| &m.files)
                .filter(|f| !f.data.is_empty() && f.data.len() as u64 == f.size)
                .map(|f| digest(buf, &f.data)),
        ),
        FileName => out.extend(
            mime.into_iter()
                .flat_map(|m| &m.files)
                .map(|f| Cow::Borrowed(&f.name[..])),
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn apply(ts: &[Transform], input: &[u8]) -> Vec<u8> {
        let xs: Vec<Xform> = ts.iter().map(|t| Xform::new(t, "").unwrap()).collect();
        transform(Cow::Borrowed(input), &xs).into_owned()
    }

    #[test]
    fn pcrexform_keeps_the_first_group_as_bytes() {
        let t = Transform::Pcre(r"data=(.*)".into());
        assert_eq!(
            apply(std::slice::from_ref(&t), b"/get?data=\x7dk\xbb\x8c"),
            b"\x7dk\xbb\x8c"
        );
        assert_eq!(apply(&[t], b"/get?nothing"), b"");
        assert!(Xform::new(&Transform::Pcre("data=.*".into()), "").is_err());
    }

    /// Suricata 8's documented header transforms, on HTTP/2's header forms.
    #[test]
    fn header_transforms_lower_names_and_strip_pseudo_headers() {
        let lower = Transform::Plain(Plain::HeaderLowercase);
        assert_eq!(
            apply(
                std::slice::from_ref(&lower),
                b"Accept-Ranges: Bytes\r\nX-A: B:C\r\n"
            ),
            b"accept-ranges: Bytes\r\nx-a: B:C\r\n"
        );
        let strip = Transform::Plain(Plain::StripPseudoHeaders);
        assert_eq!(
            apply(
                std::slice::from_ref(&strip),
                b"\r\n:status\r\naccept-ranges\r\n\r\n"
            ),
            b"\r\naccept-ranges\r\n\r\n"
        );
        assert_eq!(
            apply(&[strip, lower], b":method: GET\r\nHost: X\r\n"),
            b"host: X\r\n"
        );
    }

    #[test]
    fn xor_cycles_its_key() {
        let key = vec![0x0d, 0x0a, 0xc8, 0xff];
        let plain = b"password=supersecret";
        let sealed: Vec<u8> = plain
            .iter()
            .zip(key.iter().cycle())
            .map(|(a, k)| a ^ k)
            .collect();
        assert_eq!(apply(&[Transform::Xor(key)], &sealed), plain);
    }

    #[test]
    fn from_base64_by_offset_bytes_and_mode() {
        let b64 = |offset, bytes, mode| Transform::FromBase64 {
            offset,
            bytes,
            mode,
        };
        let uri = b"/?arg=dGhpc2lzYXRlc3QK";
        assert_eq!(
            apply(&[b64(6, None, Base64Mode::Rfc4648)], uri),
            b"thisisatest\n"
        );
        assert_eq!(apply(&[b64(6, Some(6), Base64Mode::Rfc4648)], uri), b"this");
        assert_eq!(apply(&[b64(99, None, Base64Mode::Rfc4648)], uri), b"");
        // A byte outside the alphabet: RFC 4648 stops, RFC 2045 skips it, strict fails.
        let odd = b"dGhp*c2lz";
        assert_eq!(apply(&[b64(0, None, Base64Mode::Rfc4648)], odd), b"thi");
        assert_eq!(apply(&[b64(0, None, Base64Mode::Rfc2045)], odd), b"thisis");
        assert_eq!(apply(&[b64(0, None, Base64Mode::Strict)], odd), b"");
        assert_eq!(
            apply(&[b64(0, None, Base64Mode::Strict)], b"dGhpcw=="),
            b"this"
        );
    }

    #[test]
    fn decompression_is_bounded_and_tolerates_damage() {
        let text = b"This is compressed then base64-encoded\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(text).unwrap();
        let z = z.finish().unwrap();
        let max = Transform::MAX_DECOMPRESSED;
        assert_eq!(apply(&[Transform::Gunzip { max }], &gz), text);
        assert_eq!(apply(&[Transform::Gunzip { max: 8 }], &gz), b"This is ");
        assert_eq!(apply(&[Transform::ZlibDeflate { max }], &z), text);
        assert_eq!(
            apply(&[Transform::ZlibDeflate { max: 9 }], &z),
            b"This is c"
        );
        // Not compressed at all, or cut short: what came before the damage, no panic.
        assert_eq!(apply(&[Transform::Gunzip { max }], b"plain"), b"");
        let cut = apply(&[Transform::ZlibDeflate { max }], &z[..z.len() / 2]);
        assert!(text.starts_with(&cut));
    }
}
