//! The inspection buffers and transforms a rule may name, each with one table of names.
//!
//! To add a buffer: one line in the `app_buffers!` table below (its canonical name and
//! every keyword that selects it), then, for the engine to inspect it, one line in
//! `netsieve-detect`'s `app.rs` (its protocol, side and stage) and one arm in its `fill`.

use netsieve_wire::named;
use std::fmt;

/// How a keyword naming a buffer acts in a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// A sticky buffer (`http.uri;`): the matches after it inspect the buffer.
    Sticky,
    /// A Snort 2 / Suricata 4 content modifier (`content:"x"; http_uri;`): it moves the
    /// content before it into the buffer. Where no content comes right before it, or in
    /// a Snort 3 rule, it is a sticky buffer.
    Modifier,
    /// An integer keyword (`dns.opcode:4;`): one comparison with the buffer's number.
    Integer,
}

macro_rules! app_buffers {
    ($($v:ident = $name:literal { $($kw:literal: $sp:ident),* };)*) => {
        /// An application-layer buffer a rule inspects.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum AppBuffer { $($v),* }

        impl AppBuffer {
            /// Every buffer, in table order.
            pub const ALL: &'static [AppBuffer] = &[$(AppBuffer::$v),*];

            /// Its Suricata 5+ name (`http.uri`), as logs and statistics give it.
            pub fn name(self) -> &'static str {
                match self { $(AppBuffer::$v => $name),* }
            }

            /// The rule keywords that name it, and how each acts.
            pub fn keywords(self) -> &'static [(&'static str, Spelling)] {
                match self {
                    $(AppBuffer::$v => &[$(($kw, Spelling::$sp)),*]),*
                }
            }

            /// The keyword a printed rule uses for it: its first sticky or integer
            /// spelling, or its modifier where it has no other.
            pub fn keyword(self) -> (&'static str, Spelling) {
                let spellings = self.keywords();
                *spellings
                    .iter()
                    .find(|(_, s)| *s != Spelling::Modifier)
                    .unwrap_or(&spellings[0])
            }
        }
    };
}

app_buffers! {
    HttpUri = "http.uri" { "http.uri": Sticky, "http_uri": Modifier, "http.uri.normalized": Sticky };
    HttpUriRaw = "http.uri.raw" { "http.uri.raw": Sticky, "http_raw_uri": Modifier };
    HttpMethod = "http.method" { "http.method": Sticky, "http_method": Modifier };
    HttpProtocol = "http.protocol" { "http.protocol": Sticky, "http_protocol": Sticky };
    HttpRequestLine = "http.request_line" { "http.request_line": Sticky, "http_request_line": Sticky };
    HttpStart = "http.start" { "http.start": Sticky, "http_start": Sticky };
    HttpHeader = "http.header" { "http.header": Sticky, "http_header": Modifier };
    HttpHeaderRaw = "http.header.raw" { "http.header.raw": Sticky, "http_raw_header": Modifier };
    HttpHeaderNames = "http.header_names" { "http.header_names": Sticky, "http_header_names": Sticky };
    HttpRequestHeader = "http.request_header" { "http.request_header": Sticky };
    HttpResponseHeader = "http.response_header" { "http.response_header": Sticky };
    HttpHost = "http.host" { "http.host": Sticky, "http_host": Modifier };
    HttpHostRaw = "http.host.raw" { "http.host.raw": Sticky, "http_raw_host": Modifier };
    HttpUserAgent = "http.user_agent" { "http.user_agent": Sticky, "http_user_agent": Modifier };
    HttpCookie = "http.cookie" { "http.cookie": Sticky, "http_cookie": Modifier };
    HttpCookieRaw = "http.cookie.raw" { "http_raw_cookie": Modifier };
    HttpContentType = "http.content_type" { "http.content_type": Sticky, "http_content_type": Sticky };
    HttpContentLen = "http.content_len" { "http.content_len": Sticky, "http_content_len": Sticky };
    HttpReferer = "http.referer" { "http.referer": Sticky, "http_referer": Sticky };
    HttpAccept = "http.accept" { "http.accept": Sticky, "http_accept": Sticky };
    HttpAcceptEnc = "http.accept_enc" { "http.accept_enc": Sticky, "http_accept_enc": Sticky };
    HttpAcceptLang = "http.accept_lang" { "http.accept_lang": Sticky, "http_accept_lang": Sticky };
    HttpConnection = "http.connection" { "http.connection": Sticky, "http_connection": Sticky };
    HttpLocation = "http.location" { "http.location": Sticky, "http_location": Sticky };
    HttpServer = "http.server" { "http.server": Sticky, "http_server": Sticky };
    HttpRequestBody = "http.request_body" { "http.request_body": Sticky, "http_client_body": Modifier };
    HttpResponseBody = "http.response_body" { "http.response_body": Sticky, "http_server_body": Modifier };
    HttpStatCode = "http.stat_code" { "http.stat_code": Sticky, "http_stat_code": Modifier };
    HttpStatMsg = "http.stat_msg" { "http.stat_msg": Sticky, "http_stat_msg": Modifier };
    HttpResponseLine = "http.response_line" { "http.response_line": Sticky, "http_response_line": Sticky };
    HttpParam = "http_param" { "http_param": Sticky };
    HttpTrueIp = "http_true_ip" { "http_true_ip": Sticky };
    FileData = "file.data" { "file.data": Sticky, "file_data": Sticky };
    FileName = "file.name" { "file.name": Sticky };
    // A file's digest, tested against a list (`filemd5:list`; see `parse::app`).
    FileMd5 = "file.md5" { "filemd5": Integer };
    FileSha1 = "file.sha1" { "filesha1": Integer };
    FileSha256 = "file.sha256" { "filesha256": Integer };
    SmtpHelo = "smtp.helo" { "smtp.helo": Sticky };
    SmtpMailFrom = "smtp.mail_from" { "smtp.mail_from": Sticky };
    SmtpRcptTo = "smtp.rcpt_to" { "smtp.rcpt_to": Sticky };
    EmailFrom = "email.from" { "email.from": Sticky };
    EmailTo = "email.to" { "email.to": Sticky };
    EmailCc = "email.cc" { "email.cc": Sticky };
    EmailSubject = "email.subject" { "email.subject": Sticky };
    EmailDate = "email.date" { "email.date": Sticky };
    EmailMessageId = "email.message_id" { "email.message_id": Sticky };
    EmailXMailer = "email.x_mailer" { "email.x_mailer": Sticky };
    EmailUrl = "email.url" { "email.url": Sticky };
    EmailReceived = "email.received" { "email.received": Sticky };
    DnsQuery = "dns.query" { "dns.query": Sticky, "dns_query": Sticky };
    DnsQueriesRrname = "dns.queries.rrname" { "dns.queries.rrname": Sticky };
    DnsAnswersRrname = "dns.answers.rrname" { "dns.answers.rrname": Sticky };
    DnsResponseRrname = "dns.response.rrname" { "dns.response.rrname": Sticky };
    DnsAuthoritiesRrname = "dns.authorities.rrname" { "dns.authorities.rrname": Sticky };
    DnsAdditionalsRrname = "dns.additionals.rrname" { "dns.additionals.rrname": Sticky };
    DnsOpcode = "dns.opcode" { "dns.opcode": Integer };
    DnsRcode = "dns.rcode" { "dns.rcode": Integer };
    DnsRrtype = "dns.rrtype" { "dns.rrtype": Integer };
    TlsSni = "tls.sni" { "tls.sni": Sticky, "tls_sni": Sticky };
    TlsCertSubject = "tls.cert_subject" { "tls.cert_subject": Sticky, "tls_cert_subject": Sticky };
    TlsCertIssuer = "tls.cert_issuer" { "tls.cert_issuer": Sticky, "tls_cert_issuer": Sticky };
    TlsCertSerial = "tls.cert_serial" { "tls.cert_serial": Sticky, "tls_cert_serial": Sticky };
    TlsCertFingerprint = "tls.cert_fingerprint" { "tls.cert_fingerprint": Sticky, "tls_cert_fingerprint": Sticky };
    TlsCerts = "tls.certs" { "tls.certs": Sticky };
    TlsCertChainLen = "tls.cert_chain_len" { "tls.cert_chain_len": Integer };
    TlsRandom = "tls.random" { "tls.random": Sticky };
    TlsRandomTime = "tls.random_time" { "tls.random_time": Sticky };
    TlsRandomBytes = "tls.random_bytes" { "tls.random_bytes": Sticky };
    TlsVersion = "tls.version" { "tls.version": Integer };
    Ja3Hash = "ja3.hash" { "ja3.hash": Sticky, "ja3_hash": Sticky };
    Ja3String = "ja3.string" { "ja3.string": Sticky, "ja3_string": Sticky };
    Ja3sHash = "ja3s.hash" { "ja3s.hash": Sticky, "ja3s_hash": Sticky };
    Ja3sString = "ja3s.string" { "ja3s.string": Sticky, "ja3s_string": Sticky };
    SshProto = "ssh.proto" { "ssh.proto": Sticky, "ssh_proto": Sticky };
    SshSoftware = "ssh.software" { "ssh.software": Sticky, "ssh_software": Sticky };
    SshHassh = "ssh.hassh" { "ssh.hassh": Sticky, "ssh-hassh": Sticky };
    SshHasshString = "ssh.hassh.string" { "ssh.hassh.string": Sticky, "ssh-hassh-string": Sticky };
    SshHasshServer = "ssh.hassh.server" { "ssh.hassh.server": Sticky, "ssh-hassh-server": Sticky };
    SshHasshServerString = "ssh.hassh.server.string" { "ssh.hassh.server.string": Sticky, "ssh-hassh-server-string": Sticky };
    FtpCommand = "ftp.command" { "ftp.command": Sticky };
    FtpCommandData = "ftp.command_data" { "ftp.command_data": Sticky };
    FtpReply = "ftp.reply" { "ftp.reply": Sticky };
    FtpCompletionCode = "ftp.completion_code" { "ftp.completion_code": Sticky };
    FtpDynamicPort = "ftp.dynamic_port" { "ftp.dynamic_port": Integer };
    FtpMode = "ftp.mode" { "ftp.mode": Integer };
    FtpReplyReceived = "ftp.reply_received" { "ftp.reply_received": Integer };
    SipMethod = "sip.method" { "sip.method": Sticky, "sip_method": Sticky };
    SipUri = "sip.uri" { "sip.uri": Sticky, "sip_uri": Sticky };
    SipRequestLine = "sip.request_line" { "sip.request_line": Sticky };
    SipProtocol = "sip.protocol" { "sip.protocol": Sticky };
    SipStatCode = "sip.stat_code" { "sip.stat_code": Sticky, "sip_stat_code": Sticky };
    SipStatMsg = "sip.stat_msg" { "sip.stat_msg": Sticky };
    SipResponseLine = "sip.response_line" { "sip.response_line": Sticky };
    SipFrom = "sip.from" { "sip.from": Sticky };
    SipTo = "sip.to" { "sip.to": Sticky };
    SipVia = "sip.via" { "sip.via": Sticky };
    SipUserAgent = "sip.user_agent" { "sip.user_agent": Sticky };
    SipContentType = "sip.content_type" { "sip.content_type": Sticky };
    SipContentLength = "sip.content_length" { "sip.content_length": Sticky };
    SipHeader = "sip.header" { "sip.header": Sticky, "sip_header": Sticky };
    SdpOrigin = "sdp.origin" { "sdp.origin": Sticky };
    SdpSessionName = "sdp.session_name" { "sdp.session_name": Sticky };
    SdpSessionInfo = "sdp.session_info" { "sdp.session_info": Sticky };
    SdpUri = "sdp.uri" { "sdp.uri": Sticky };
    SdpEmail = "sdp.email" { "sdp.email": Sticky };
    SdpPhoneNumber = "sdp.phone_number" { "sdp.phone_number": Sticky };
    SdpConnectionData = "sdp.connection_data" { "sdp.connection_data": Sticky };
    SdpBandwidth = "sdp.bandwidth" { "sdp.bandwidth": Sticky };
    SdpTime = "sdp.time" { "sdp.time": Sticky };
    SdpRepeatTime = "sdp.repeat_time" { "sdp.repeat_time": Sticky };
    SdpTimezone = "sdp.timezone" { "sdp.timezone": Sticky };
    SdpEncryptionKey = "sdp.encryption_key" { "sdp.encryption_key": Sticky };
    SdpAttribute = "sdp.attribute" { "sdp.attribute": Sticky };
    SdpMedia = "sdp.media.media" { "sdp.media.media": Sticky };
    SdpMediaInfo = "sdp.media.media_info" { "sdp.media.media_info": Sticky };
    SdpMediaConnectionData = "sdp.media.connection_data" { "sdp.media.connection_data": Sticky };
    SdpMediaEncryptionKey = "sdp.media.encryption_key" { "sdp.media.encryption_key": Sticky };
    MqttType = "mqtt.type" { "mqtt.type": Integer };
    MqttFlags = "mqtt.flags" { "mqtt.flags": Integer };
    MqttQos = "mqtt.qos" { "mqtt.qos": Integer };
    MqttReasonCode = "mqtt.reason_code" { "mqtt.reason_code": Integer, "mqtt.connack.return_code": Integer };
    MqttProtocolVersion = "mqtt.protocol_version" { "mqtt.protocol_version": Integer };
    MqttConnectFlags = "mqtt.connect.flags" { "mqtt.connect.flags": Integer };
    MqttConnackSessionPresent = "mqtt.connack.session_present" { "mqtt.connack.session_present": Integer };
    MqttConnectClientId = "mqtt.connect.clientid" { "mqtt.connect.clientid": Sticky };
    MqttConnectUsername = "mqtt.connect.username" { "mqtt.connect.username": Sticky };
    MqttConnectPassword = "mqtt.connect.password" { "mqtt.connect.password": Sticky };
    MqttConnectProtocolString = "mqtt.connect.protocol_string" { "mqtt.connect.protocol_string": Sticky };
    MqttConnectWillTopic = "mqtt.connect.willtopic" { "mqtt.connect.willtopic": Sticky };
    MqttConnectWillMessage = "mqtt.connect.willmessage" { "mqtt.connect.willmessage": Sticky };
    MqttPublishTopic = "mqtt.publish.topic" { "mqtt.publish.topic": Sticky };
    MqttPublishMessage = "mqtt.publish.message" { "mqtt.publish.message": Sticky };
    MqttSubscribeTopic = "mqtt.subscribe.topic" { "mqtt.subscribe.topic": Sticky };
    MqttUnsubscribeTopic = "mqtt.unsubscribe.topic" { "mqtt.unsubscribe.topic": Sticky };
    SmbNamedPipe = "smb.named_pipe" { "smb.named_pipe": Sticky, "smb_named_pipe": Sticky };
    SmbShare = "smb.share" { "smb.share": Sticky, "smb_share": Sticky };
    SmbNtlmsspUser = "smb.ntlmssp_user" { "smb.ntlmssp_user": Sticky };
    SmbNtlmsspDomain = "smb.ntlmssp_domain" { "smb.ntlmssp_domain": Sticky };
    SmbVersion = "smb.version" { "smb.version": Integer };
    FtpDataCommand = "ftpdata_command" { "ftpdata_command": Integer };
    Http2FrameType = "http2.frametype" { "http2.frametype": Integer };
    Http2ErrorCode = "http2.errorcode" { "http2.errorcode": Integer };
    Http2Priority = "http2.priority" { "http2.priority": Integer };
    Http2Window = "http2.window" { "http2.window": Integer };
    Http2SizeUpdate = "http2.size_update" { "http2.size_update": Integer };
    Http2Settings = "http2.settings" { "http2.settings": Integer };
    Http2HeaderName = "http2.header_name" { "http2.header_name": Sticky };
    NtpVersion = "ntp.version" { "ntp.version": Integer };
    NtpMode = "ntp.mode" { "ntp.mode": Integer };
    NtpStratum = "ntp.stratum" { "ntp.stratum": Integer };
    NtpReferenceId = "ntp.reference_id" { "ntp.reference_id": Sticky };
    LdapRequestOperation = "ldap.request.operation" { "ldap.request.operation": Integer };
    LdapRequestDn = "ldap.request.dn" { "ldap.request.dn": Sticky };
    LdapRequestAttributeType = "ldap.request.attribute_type" { "ldap.request.attribute_type": Sticky };
    LdapResponsesOperation = "ldap.responses.operation" { "ldap.responses.operation": Integer };
    LdapResponsesCount = "ldap.responses.count" { "ldap.responses.count": Integer };
    LdapResponsesResultCode = "ldap.responses.result_code" { "ldap.responses.result_code": Integer };
    LdapResponsesDn = "ldap.responses.dn" { "ldap.responses.dn": Sticky };
    LdapResponsesMessage = "ldap.responses.message" { "ldap.responses.message": Sticky };
    LdapResponsesAttributeType = "ldap.responses.attribute_type" { "ldap.responses.attribute_type": Sticky };
    WebsocketPayload = "websocket.payload" { "websocket.payload": Sticky };
    WebsocketOpcode = "websocket.opcode" { "websocket.opcode": Integer };
    WebsocketMask = "websocket.mask" { "websocket.mask": Integer };
    WebsocketFlags = "websocket.flags" { "websocket.flags": Integer };
    SnmpVersion = "snmp.version" { "snmp.version": Integer };
    SnmpPduType = "snmp.pdu_type" { "snmp.pdu_type": Integer };
    SnmpCommunity = "snmp.community" { "snmp.community": Sticky };
    SnmpUsm = "snmp.usm" { "snmp.usm": Sticky };
    FileSize = "filesize" { "filesize": Integer };
    Krb5MsgType = "krb5_msg_type" { "krb5_msg_type": Integer };
    Krb5ErrCode = "krb5_err_code" { "krb5_err_code": Integer };
    Krb5TicketEncryption = "krb5.ticket_encryption" { "krb5.ticket_encryption": Integer };
    Krb5Cname = "krb5.cname" { "krb5.cname": Sticky, "krb5_cname": Sticky };
    Krb5Sname = "krb5.sname" { "krb5.sname": Sticky, "krb5_sname": Sticky };
    DceStubData = "dcerpc.stub_data" { "dcerpc.stub_data": Sticky, "dce_stub_data": Sticky };
    DcerpcIface = "dcerpc.iface" { "dcerpc.iface": Integer, "dce_iface": Integer };
    DcerpcOpnum = "dcerpc.opnum" { "dcerpc.opnum": Integer, "dce_opnum": Integer };
    Base64Data = "base64_data" { "base64_data": Sticky };
    JsData = "js_data" { "js_data": Sticky };
}

impl fmt::Display for AppBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

named! {
    /// A packet's header as a sticky buffer (`tcp.hdr;`): the header's bytes as the
    /// packet carries them, options included.
    pub enum HeaderBuffer {
        Ipv4 = "ipv4.hdr",
        Ipv6 = "ipv6.hdr",
        Tcp = "tcp.hdr",
        Udp = "udp.hdr",
        Icmpv4 = "icmpv4.hdr",
        Icmpv6 = "icmpv6.hdr",
        /// The source address (4 or 16 bytes), not a header of its own.
        IpSrc = "ip.src",
        IpDst = "ip.dst",
    }
}

named! {
    /// A transform without arguments.
    pub enum Plain {
        DotPrefix = "dotprefix",
        ToLowercase = "to_lowercase",
        ToUppercase = "to_uppercase",
        StripWhitespace = "strip_whitespace",
        CompressWhitespace = "compress_whitespace",
        UrlDecode = "url_decode",
        /// The buffer's digest, its raw bytes (16, 20 and 32).
        ToMd5 = "to_md5",
        ToSha1 = "to_sha1",
        ToSha256 = "to_sha256",
        /// Header lines' names lower-cased, their values left as they are.
        HeaderLowercase = "header_lowercase",
        /// The lines that start with `:` (HTTP/2's pseudo-headers) taken out.
        StripPseudoHeaders = "strip_pseudo_headers",
    }
}

/// A transform: it changes a buffer before the matches of its list see it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Transform {
    Plain(Plain),
    /// `pcrexform:"re"`: what the expression's first group captured (the buffer is left
    /// empty when it does not match).
    Pcre(String),
    /// `xor:"0d0ac8ff"`: every byte xored with the key's, the key repeated.
    Xor(Vec<u8>),
    /// `from_base64[: bytes N, offset N, mode M]`: the bytes from `offset` (at most
    /// `bytes` of them) decoded from base64.
    FromBase64 {
        offset: u32,
        bytes: Option<u32>,
        mode: Base64Mode,
    },
    /// `gunzip[: max-size N]`: the buffer gzip-decompressed, to at most `max` bytes.
    Gunzip {
        max: u32,
    },
    /// `zlib_deflate[: max-size N]`: the buffer zlib-decompressed, to at most `max`
    /// bytes.
    ZlibDeflate {
        max: u32,
    },
    /// `luaxform:script[, arg]...`: what the script's `transform(input, args)` returns
    /// (the buffer is left empty when it fails or returns nothing).
    Lua {
        script: String,
        args: Vec<String>,
    },
}

named! {
    /// How `from_base64` reads what is not base64: RFC 4648 stops there (the default),
    /// RFC 2045 skips it, strict gives nothing.
    pub enum Base64Mode {
        Rfc4648 = "rfc4648",
        Rfc2045 = "rfc2045",
        Strict = "strict",
    }
}

impl Transform {
    /// Decompression's default limit, as Suricata's (`max-size` unset).
    pub const MAX_DECOMPRESSED: u32 = 1 << 20;

    /// Its keyword.
    pub fn name(&self) -> &'static str {
        match self {
            Transform::Plain(p) => p.name(),
            Transform::Pcre(_) => "pcrexform",
            Transform::Xor(_) => "xor",
            Transform::FromBase64 { .. } => "from_base64",
            Transform::Gunzip { .. } => "gunzip",
            Transform::ZlibDeflate { .. } => "zlib_deflate",
            Transform::Lua { .. } => "luaxform",
        }
    }
}

impl Transform {
    /// Its arguments as a rule writes them after the keyword's `:`, if it has any.
    pub fn value(&self) -> Option<String> {
        Some(match self {
            Transform::Plain(_) => return None,
            Transform::Pcre(re) => format!("\"{re}\""),
            Transform::Xor(key) => {
                let hex = netsieve_wire::hex::lower(key);
                format!("\"{hex}\"")
            }
            Transform::FromBase64 {
                offset,
                bytes,
                mode,
            } => match bytes {
                Some(n) => format!("offset {offset}, mode {mode}, bytes {n}"),
                None => format!("offset {offset}, mode {mode}"),
            },
            Transform::Gunzip { max } | Transform::ZlibDeflate { max } => {
                format!("max-size {max}")
            }
            Transform::Lua { script, args } => std::iter::once(script.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

impl fmt::Display for Transform {
    /// As a rule writes it, arguments included.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        match self.value() {
            Some(v) => write!(f, ":{v}"),
            None => Ok(()),
        }
    }
}

/// What of the application layer a rule needs: a buffer, or a protocol it names in its
/// header or `service:` list. Logs and statistics give it by name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AppNeed {
    Buffer(AppBuffer),
    Protocol(String),
}

impl fmt::Display for AppNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppNeed::Buffer(b) => b.fmt(f),
            AppNeed::Protocol(p) => f.write_str(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every buffer has a keyword, and prints with one of its own.
    #[test]
    fn every_buffer_has_a_keyword() {
        for &b in AppBuffer::ALL {
            assert!(b.keywords().contains(&b.keyword()), "{b}");
        }
        for &t in Plain::ALL {
            assert_eq!(Plain::by_name(t.name()), Some(t));
            assert_eq!(Transform::Plain(t).to_string(), t.name());
        }
        let x = Transform::FromBase64 {
            offset: 6,
            bytes: Some(4),
            mode: Base64Mode::Strict,
        };
        assert_eq!(x.to_string(), "from_base64:offset 6, mode strict, bytes 4");
        assert_eq!(Transform::Xor(vec![0x0d, 0xff]).to_string(), "xor:\"0dff\"");
    }
}
