//! Rule text to [`Rule`].
//!
//! A rule is `action proto src sport dir dst dport (name:value; name; ...)`. The options
//! are read in order; detection options build lists of matches per buffer:
//!
//! - a *sticky buffer* (`http.uri;`, `dns_query;`, `file_data;`, and in Snort 3 rules
//!   `http_uri;`) sends the options after it to that buffer, `pkt_data;` back to the
//!   payload;
//! - a *legacy modifier* (`content:"x"; http_uri;`) moves the content just before it;
//! - Snort 3 writes content modifiers after commas: `content:"x",depth 4,nocase;`.
//!
//! A rule is a Snort 3 rule when it uses `service:` or a comma modifier; then buffer
//! names are sticky. Errors carry the column of the option that failed.

use std::fmt;

use crate::rule::*;
use crate::vars::{PortExpr, Vars};

/// Why one rule was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based column in the rule's text (its first line for a continued rule).
    pub column: usize,
    /// A short category for summaries ("unknown keyword 'foo'", "bad content").
    pub kind: String,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

fn perr(column: usize, kind: impl Into<String>, message: impl Into<String>) -> ParseError {
    ParseError {
        column,
        kind: kind.into(),
        message: message.into(),
    }
}

/// Application-layer buffers: every name a rule may use for one, mapped to its Suricata
/// 5+ name. Legacy content modifiers and sticky buffers alike.
pub fn app_buffer(name: &str) -> Option<&'static str> {
    Some(match name {
        "http.uri" | "http_uri" | "http.uri.normalized" => "http.uri",
        "http.uri.raw" | "http_raw_uri" => "http.uri.raw",
        "http.method" | "http_method" => "http.method",
        "http.protocol" | "http_protocol" => "http.protocol",
        "http.request_line" | "http_request_line" => "http.request_line",
        "http.start" | "http_start" => "http.start",
        "http.header" | "http_header" => "http.header",
        "http.header.raw" | "http_raw_header" => "http.header.raw",
        "http.header_names" | "http_header_names" => "http.header_names",
        "http.host" | "http_host" => "http.host",
        "http.host.raw" | "http_raw_host" => "http.host.raw",
        "http.user_agent" | "http_user_agent" => "http.user_agent",
        "http.cookie" | "http_cookie" => "http.cookie",
        "http.content_type" | "http_content_type" => "http.content_type",
        "http.content_len" | "http_content_len" => "http.content_len",
        "http.referer" | "http_referer" => "http.referer",
        "http.accept" | "http_accept" => "http.accept",
        "http.accept_enc" | "http_accept_enc" => "http.accept_enc",
        "http.accept_lang" | "http_accept_lang" => "http.accept_lang",
        "http.connection" | "http_connection" => "http.connection",
        "http.location" | "http_location" => "http.location",
        "http.server" | "http_server" => "http.server",
        "http.request_body" | "http_client_body" => "http.request_body",
        "http.response_body" | "http_server_body" => "http.response_body",
        "http.stat_code" | "http_stat_code" => "http.stat_code",
        "http.stat_msg" | "http_stat_msg" => "http.stat_msg",
        "http.response_line" | "http_response_line" => "http.response_line",
        "file.data" | "file_data" => "file.data",
        "dns.query" | "dns_query" => "dns.query",
        "dns.queries.rrname" => "dns.queries.rrname",
        "tls.sni" | "tls_sni" => "tls.sni",
        "http.request_header" => "http.request_header",
        "http.response_header" => "http.response_header",
        "tls.cert_subject" | "tls_cert_subject" => "tls.cert_subject",
        "tls.cert_issuer" | "tls_cert_issuer" => "tls.cert_issuer",
        "tls.cert_serial" | "tls_cert_serial" => "tls.cert_serial",
        "tls.cert_fingerprint" | "tls_cert_fingerprint" => "tls.cert_fingerprint",
        "tls.certs" => "tls.certs",
        "tls.random" => "tls.random",
        "tls.random_time" => "tls.random_time",
        "tls.random_bytes" => "tls.random_bytes",
        "tls.version" => "tls.version",
        "ja3.hash" | "ja3_hash" => "ja3.hash",
        "ja3.string" | "ja3_string" => "ja3.string",
        "ja3s.hash" | "ja3s_hash" => "ja3s.hash",
        "ja3s.string" | "ja3s_string" => "ja3s.string",
        "ssh.proto" | "ssh_proto" => "ssh.proto",
        "ssh.software" | "ssh_software" => "ssh.software",
        "sip.method" | "sip_method" => "sip.method",
        "sip.stat_code" | "sip_stat_code" => "sip.stat_code",
        "sip.header" | "sip_header" => "sip.header",
        "sip.uri" | "sip_uri" => "sip.uri",
        "dce_stub_data" => "dce_stub_data",
        "base64_data" => "base64_data",
        "js_data" => "js_data",
        "http_param" => "http_param",
        "http_raw_cookie" => "http.cookie.raw",
        "http_true_ip" => "http_true_ip",
        "smb.named_pipe" | "smb.share" => "smb",
        _ => return None,
    })
}

/// Transforms: they change the buffer of the sticky list they follow.
pub const TRANSFORMS: &[&str] = &[
    "dotprefix",
    "to_lowercase",
    "to_uppercase",
    "strip_whitespace",
    "compress_whitespace",
    "url_decode",
];

fn is_transform(name: &str) -> bool {
    TRANSFORMS.contains(&name)
}

/// Legacy names that modify the content before them (Snort 2, Suricata 4) rather than
/// start a sticky buffer. The other `http_` names of Suricata 4.1 (`http_accept`,
/// `http_header_names`, `http_request_line`, ...) were sticky buffers from the start.
fn is_legacy_modifier(name: &str) -> bool {
    matches!(
        name,
        "http_uri"
            | "http_raw_uri"
            | "http_method"
            | "http_header"
            | "http_raw_header"
            | "http_cookie"
            | "http_raw_cookie"
            | "http_user_agent"
            | "http_host"
            | "http_raw_host"
            | "http_client_body"
            | "http_server_body"
            | "http_stat_code"
            | "http_stat_msg"
    )
}

/// Application protocol names a rule header may use.
fn app_proto(name: &str) -> bool {
    matches!(
        name,
        "http"
            | "http1"
            | "http2"
            | "dns"
            | "tls"
            | "ssl"
            | "ssh"
            | "smtp"
            | "ftp"
            | "ftp-data"
            | "smb"
            | "dcerpc"
            | "nfs"
            | "krb5"
            | "dhcp"
            | "snmp"
            | "sip"
            | "rfb"
            | "mqtt"
            | "modbus"
            | "dnp3"
            | "enip"
            | "ikev2"
            | "ike"
            | "ntp"
            | "tftp"
            | "rdp"
            | "pgsql"
            | "quic"
            | "telnet"
            | "imap"
            | "pop3"
            | "ldap"
            | "websocket"
            | "bittorrent-dht"
            | "doh2"
            | "mdns"
            | "file"
            | "irc"
            | "netbios-ssn"
            | "dce_smb"
            | "dcerpc-smb"
            | "dcerpc-tcp"
            | "dcerpc-udp"
    )
}

/// Keywords that parse and that the engine does not evaluate yet: the rule loads and is
/// counted as not inspected.
fn is_known_unsupported(name: &str) -> bool {
    matches!(
        name,
        "xbits"
            | "hostbits"
            | "flowint"
            | "asn1"
            | "base64_decode"
            | "dce_iface"
            | "dce_opnum"
            | "ssl_state"
            | "ssl_version"
            | "app-layer-event"
            | "app-layer-protocol"
            | "ftpbounce"
            | "fragbits"
            | "fragoffset"
            | "window"
            | "tos"
            | "icmp_id_"
            | "tls.store"
            | "tls.fingerprint"
            | "tls_cert_notbefore"
            | "tls_cert_notafter"
            | "tls_cert_expired"
            | "tls_cert_valid"
            | "filemagic"
            | "filename"
            | "fileext"
            | "filestore"
            | "filemd5"
            | "filesha1"
            | "filesha256"
            | "filesize"
            | "file.name"
            | "file.magic"
            | "to_md5"
            | "to_sha1"
            | "to_sha256"
            | "pcrexform"
            | "xor"
            | "header_lowercase"
            | "strip_pseudo_headers"
            | "from_base64"
            | "byte_math"
            | "datarep"
            | "dataset"
            | "iprep"
            | "geoip"
            | "lua"
            | "luajit"
            | "entropy"
            | "requires"
            | "config"
            | "replace"
            | "ssh.protoversion"
            | "ssh.softwareversion"
            | "ssh.hassh"
            | "ssh.hassh.string"
            | "ssh.hassh.server"
            | "dns.opcode"
            | "dns.rrtype"
            | "tls.random"
            | "rpc"
            | "sd_pattern"
            | "file_type"
            | "bufferlen_"
            | "rem"
            | "pkthdr"
            | "frame"
            | "krb5_msg_type"
            | "krb5.msg_type"
            | "snmp.community"
            | "snmp.pdu_type"
            | "dhcp.leasetime"
            | "ja4.hash"
            | "decode_event"
            | "stream-event"
            | "app-layer-state"
            | "icmpv6.hdr"
            | "icmpv6.mtu"
            | "ipv4.hdr"
            | "ipv6.hdr"
            | "tcp.hdr"
            | "udp.hdr"
            | "tcp.mss"
            | "tcp.flags"
            | "template"
            | "appid"
    )
}

struct Opt<'a> {
    name: &'a str,
    value: Option<&'a str>,
    column: usize,
}

/// Splits the option body into `name[:value]` items at unescaped `;`.
fn split_options(body: &str, base_col: usize) -> Result<Vec<Opt<'_>>, ParseError> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let start = i;
        // As Suricata: quotes do not protect ';' (write it `\;` or `|3b|`).
        let mut colon = None;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 1,
                b':' if colon.is_none() => colon = Some(i),
                b';' => break,
                _ => {}
            }
            i += 1;
        }
        if i >= b.len() {
            let rest = body[start..].trim();
            if rest.is_empty() {
                break;
            }
            return Err(perr(
                base_col + start,
                "missing ';'",
                format!("option '{}' is not ended by ';'", short(rest)),
            ));
        }
        let item = &body[start..i];
        let (name, value) = match colon {
            Some(c) => (body[start..c].trim(), Some(body[c + 1..i].trim())),
            None => (item.trim(), None),
        };
        out.push(Opt {
            name,
            value,
            column: base_col + start,
        });
        i += 1;
    }
    Ok(out)
}

fn short(s: &str) -> String {
    let mut t: String = s.chars().take(40).collect();
    if t.len() < s.len() {
        t.push_str("...");
    }
    t
}

/// Strips surrounding double quotes.
fn unquote(v: &str) -> &str {
    let v = v.trim();
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// Decodes a content string: `|41 42|` hex runs and `\"`, `\;`, `\\`, `\:` escapes.
pub fn decode_content(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'|' => {
                i += 1;
                let mut hi: Option<u8> = None;
                loop {
                    let Some(&c) = b.get(i) else {
                        return Err("unterminated |hex| run".into());
                    };
                    i += 1;
                    if c == b'|' {
                        if hi.is_some() {
                            return Err("odd number of hex digits".into());
                        }
                        break;
                    }
                    if c.is_ascii_whitespace() {
                        continue;
                    }
                    let d = (c as char)
                        .to_digit(16)
                        .ok_or_else(|| format!("'{}' is not a hex digit", c as char))?
                        as u8;
                    match hi.take() {
                        None => hi = Some(d),
                        Some(h) => out.push(h << 4 | d),
                    }
                }
            }
            b'\\' => {
                let Some(&c) = b.get(i + 1) else {
                    return Err("string ends with '\\'".into());
                };
                out.push(c);
                i += 2;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

fn parse_num(v: &str) -> Option<i64> {
    let v = v.trim();
    if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok();
    }
    v.parse().ok()
}

fn parse_val(v: &str) -> Option<Val> {
    let v = v.trim();
    if v.is_empty() {
        return None;
    }
    match parse_num(v) {
        Some(n) => Some(Val::Num(n)),
        None if v
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')) =>
        {
            Some(Val::Var(v.to_string()))
        }
        None => None,
    }
}

/// `N`, `<N`, `>N`, `<=N`, `>=N`, `!N`, `=N`, `N<>M`, `N-M`.
pub fn parse_cmp(v: &str) -> Option<Cmp> {
    let v = v.trim();
    if let Some((a, b)) = v.split_once("<=>") {
        return Some(Cmp::Range(parse_num(a)?, parse_num(b)?));
    }
    if let Some((a, b)) = v.split_once("<>") {
        return Some(Cmp::Between(parse_num(a)?, parse_num(b)?));
    }
    for (p, f) in [
        ("<=", Cmp::Le as fn(i64) -> Cmp),
        (">=", Cmp::Ge),
        ("<", Cmp::Lt),
        (">", Cmp::Gt),
        ("!=", Cmp::Ne),
        ("!", Cmp::Ne),
        ("=", Cmp::Eq),
    ] {
        if let Some(r) = v.strip_prefix(p) {
            return Some(f(parse_num(r)?));
        }
    }
    if let Some((a, b)) = v.split_once('-')
        && !a.trim().is_empty()
    {
        return Some(Cmp::Range(parse_num(a)?, parse_num(b)?));
    }
    Some(Cmp::Eq(parse_num(v)?))
}

/// The parser's running state for one rule.
struct Builder {
    rule: Rule,
    /// Index of the list sticky options go to.
    cur: usize,
    snort3: bool,
    /// `(list, index)` of the last content, for modifiers.
    last_content: Option<(usize, usize)>,
    /// The previous option was a content (so a legacy modifier may follow).
    prev_was_content: bool,
}

impl Builder {
    fn list_for(&mut self, buf: Buffer) -> usize {
        // A new sticky buffer starts a new list, even for a buffer seen before
        // (relative matches do not cross from one to the other).
        self.rule.lists.push(List {
            buffer: buf,
            matches: Vec::new(),
            transforms: Vec::new(),
        });
        self.rule.lists.len() - 1
    }

    fn push(&mut self, m: Match) {
        if self.rule.lists.is_empty() {
            self.cur = self.list_for(Buffer::Payload);
        }
        let l = &mut self.rule.lists[self.cur];
        let is_content = matches!(m, Match::Content(_));
        l.matches.push(m);
        if is_content {
            self.last_content = Some((self.cur, l.matches.len() - 1));
        }
    }

    fn content_mut(&mut self, col: usize, what: &str) -> Result<&mut Content, ParseError> {
        let Some((l, i)) = self.last_content else {
            return Err(perr(
                col,
                format!("'{what}' without content"),
                format!("'{what}' needs a content before it"),
            ));
        };
        match &mut self.rule.lists[l].matches[i] {
            Match::Content(c) => Ok(c),
            _ => unreachable!("last_content points at a content"),
        }
    }

    fn note_app(&mut self, name: &str) {
        if !self.rule.app_layer.iter().any(|x| x == name) {
            self.rule.app_layer.push(name.to_string());
        }
    }

    /// Moves the last content into buffer `buf` (a legacy modifier).
    fn move_last_content(&mut self, buf: &str, col: usize, kw: &str) -> Result<(), ParseError> {
        let Some((l, i)) = self.last_content else {
            return Err(perr(
                col,
                format!("'{kw}' without content"),
                format!("'{kw}' modifies a content, but none comes before it"),
            ));
        };
        let want = Buffer::App(buf.to_string());
        if self.rule.lists[l].buffer == want {
            return Ok(());
        }
        let m = self.rule.lists[l].matches.remove(i);
        // Legacy modifiers gather contents of one buffer into one list, in order.
        let target = match self.rule.lists.iter().rposition(|x| x.buffer == want) {
            Some(t) => t,
            None => self.list_for(want),
        };
        self.rule.lists[target].matches.push(m);
        self.last_content = Some((target, self.rule.lists[target].matches.len() - 1));
        // Matches after the moved content in its old list that are relative to it
        // (pcre/R, byte_* relative) stay; the payload list keeps its order.
        Ok(())
    }
}

/// Parses one rule. `vars` resolves address and port variables.
pub fn parse_rule(text: &str, vars: &Vars) -> Result<Rule, ParseError> {
    let text = text.trim_end();
    let open = text
        .find('(')
        .ok_or_else(|| perr(1, "no options", "no '(' starting the options"))?;
    if !text.ends_with(')') {
        return Err(perr(text.len(), "no options", "rule does not end with ')'"));
    }
    let header = &text[..open];
    let body = &text[open + 1..text.len() - 1];
    let mut b = Builder {
        rule: parse_header(header, vars)?,
        cur: 0,
        snort3: false,
        last_content: None,
        prev_was_content: false,
    };
    let opts = split_options(body, open + 2)?;
    b.snort3 = opts.iter().any(|o| {
        o.name == "service"
            || (matches!(o.name, "content" | "pcre")
                && o.value.is_some_and(|v| {
                    let v = v.trim();
                    v.rfind('"').is_some_and(|q| {
                        q + 1 < v.len() && v[q + 1..].trim_start().starts_with(',')
                    })
                }))
    });
    let mut sid_seen = false;
    for o in &opts {
        let was_content = b.prev_was_content;
        b.prev_was_content = false;
        option(&mut b, o, was_content, &mut sid_seen)?;
    }
    if !sid_seen {
        return Err(perr(open + 1, "no sid", "rule has no sid"));
    }
    // Drop lists emptied by legacy modifiers.
    b.rule.lists.retain(|l| !l.matches.is_empty());
    if let Proto::App(p) = &b.rule.proto {
        let p = p.clone();
        b.note_app(&p);
    }
    Ok(b.rule)
}

fn parse_header(h: &str, vars: &Vars) -> Result<Rule, ParseError> {
    // Tokens, keeping bracketed lists (which may hold spaces) whole.
    let mut toks: Vec<(usize, String)> = Vec::new();
    let bytes = h.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        let start = i;
        let mut depth = 0i32;
        while i < bytes.len() && (depth > 0 || !bytes[i].is_ascii_whitespace()) {
            match bytes[i] {
                b'[' => depth += 1,
                b']' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        toks.push((start + 1, h[start..i].to_string()));
    }
    let col = |k: usize| toks.get(k).map(|t| t.0).unwrap_or(1);
    let action = match toks.first().map(|t| t.1.as_str()) {
        Some("alert") => Action::Alert,
        Some("drop") => Action::Drop,
        Some("reject" | "rejectsrc" | "rejectdst" | "rejectboth" | "sdrop") => Action::Reject,
        Some("pass") => Action::Pass,
        Some(a) => return Err(perr(1, "unknown action", format!("unknown action '{a}'"))),
        None => return Err(perr(1, "empty rule", "empty rule")),
    };
    let proto_s = toks
        .get(1)
        .map(|t| t.1.to_ascii_lowercase())
        .ok_or_else(|| perr(col(0), "bad header", "no protocol"))?;
    let proto = match proto_s.as_str() {
        "ip" | "ipv4" | "ipv6" | "pkthdr" => Proto::Ip,
        "tcp" => Proto::Tcp,
        "udp" => Proto::Udp,
        "icmp" | "icmpv4" | "icmpv6" => Proto::Icmp,
        "tcp-pkt" => Proto::TcpPkt,
        "tcp-stream" => Proto::TcpStream,
        p if app_proto(p) => Proto::App(p.to_string()),
        p => {
            return Err(perr(
                col(1),
                "unknown protocol",
                format!("unknown protocol '{p}'"),
            ));
        }
    };
    let mut rule = Rule {
        file: String::new(),
        line: 0,
        action,
        proto,
        src: crate::vars::AddrExpr::Any,
        sport: PortExpr::Any,
        bidirectional: false,
        dst: crate::vars::AddrExpr::Any,
        dport: PortExpr::Any,
        sid: 0,
        gid: 1,
        rev: 0,
        msg: String::new(),
        classtype: None,
        priority: None,
        references: Vec::new(),
        metadata: Vec::new(),
        target: None,
        lists: Vec::new(),
        conds: Vec::new(),
        flow: FlowOpts::default(),
        flowbits: Vec::new(),
        noalert: false,
        threshold: None,
        detection_filter: None,
        services: Vec::new(),
        app_layer: Vec::new(),
        unsupported: Vec::new(),
    };
    // Snort 3 allows `alert http (...)`: no addresses.
    if toks.len() == 2 {
        return Ok(rule);
    }
    if toks.len() != 7 {
        return Err(perr(
            col(0),
            "bad header",
            format!(
                "header needs 7 fields (action proto src sport dir dst dport), found {}",
                toks.len()
            ),
        ));
    }
    let addr = |k: usize| {
        vars.address(&toks[k].1)
            .map_err(|e| perr(col(k), "bad address", e.0))
    };
    let port = |k: usize| {
        vars.port(&toks[k].1)
            .map_err(|e| perr(col(k), "bad port", e.0))
    };
    rule.src = addr(2)?;
    rule.sport = port(3)?;
    rule.bidirectional = match toks[4].1.as_str() {
        "->" => false,
        "<>" => true,
        d => {
            return Err(perr(
                col(4),
                "bad direction",
                format!("direction must be -> or <>, not '{d}'"),
            ));
        }
    };
    rule.dst = addr(5)?;
    rule.dport = port(6)?;
    Ok(rule)
}

fn need<'a>(o: &Opt<'a>) -> Result<&'a str, ParseError> {
    o.value.filter(|v| !v.is_empty()).ok_or_else(|| {
        perr(
            o.column,
            format!("'{}' without value", o.name),
            format!("'{}' needs a value", o.name),
        )
    })
}

fn bad(o: &Opt<'_>, what: &str) -> ParseError {
    perr(
        o.column,
        format!("bad {}", o.name),
        format!(
            "bad {} '{}': {what}",
            o.name,
            short(o.value.unwrap_or_default())
        ),
    )
}

fn option(
    b: &mut Builder,
    o: &Opt<'_>,
    prev_content: bool,
    sid_seen: &mut bool,
) -> Result<(), ParseError> {
    let name = o.name;
    match name {
        "msg" => b.rule.msg = unescape_msg(unquote(need(o)?)),
        "sid" => {
            b.rule.sid = need(o)?.parse().map_err(|_| bad(o, "not a number"))?;
            *sid_seen = true;
        }
        "rev" => b.rule.rev = need(o)?.parse().map_err(|_| bad(o, "not a number"))?,
        "gid" => b.rule.gid = need(o)?.parse().map_err(|_| bad(o, "not a number"))?,
        "classtype" => b.rule.classtype = Some(need(o)?.to_string()),
        "priority" => {
            b.rule.priority = Some(need(o)?.parse().map_err(|_| bad(o, "not a number 0-255"))?)
        }
        "reference" => b.rule.references.push(need(o)?.to_string()),
        "metadata" => b
            .rule
            .metadata
            .extend(need(o)?.split(',').map(|s| s.trim().to_string())),
        "target" => {
            b.rule.target = Some(match need(o)? {
                "src_ip" => Target::SrcIp,
                "dest_ip" => Target::DestIp,
                _ => return Err(bad(o, "expected src_ip or dest_ip")),
            })
        }
        "service" => {
            for s in need(o)?.split(',') {
                let s = s.trim().to_string();
                b.note_app(&s);
                b.rule.services.push(s);
            }
        }
        "content" | "uricontent" => {
            let v = need(o)?;
            let mut c = Content::default();
            let (neg, rest) = match v.strip_prefix('!') {
                Some(r) => (true, r.trim_start()),
                None => (false, v),
            };
            c.negated = neg;
            if !rest.starts_with('"') {
                return Err(bad(o, "the pattern must be in double quotes"));
            }
            let close = closing_quote(rest).ok_or_else(|| bad(o, "no closing quote"))?;
            c.pattern = decode_content(&rest[1..close]).map_err(|e| bad(o, &e))?;
            if c.pattern.is_empty() {
                return Err(bad(o, "empty pattern"));
            }
            let mods = rest[close + 1..].trim();
            let buffer_before = b.cur;
            if name == "uricontent" {
                b.note_app("http.uri");
                let l = match b
                    .rule
                    .lists
                    .iter()
                    .rposition(|x| x.buffer == Buffer::App("http.uri".into()))
                {
                    Some(l) => l,
                    None => b.list_for(Buffer::App("http.uri".into())),
                };
                b.cur = l;
            }
            b.push(Match::Content(c));
            if name == "uricontent" {
                b.cur = buffer_before;
            }
            if let Some(mods) = mods.strip_prefix(',') {
                snort3_modifiers(b, o, mods)?;
            } else if !mods.is_empty() {
                return Err(bad(o, "text after the closing quote"));
            }
            b.prev_was_content = true;
        }
        "nocase" => b.content_mut(o.column, name)?.nocase = true,
        "rawbytes" => b.content_mut(o.column, name)?.rawbytes = true,
        "startswith" => b.content_mut(o.column, name)?.startswith = true,
        "endswith" => b.content_mut(o.column, name)?.endswith = true,
        "offset" | "depth" | "distance" | "within" => {
            let v = parse_val(need(o)?).ok_or_else(|| bad(o, "not a number or variable"))?;
            let c = b.content_mut(o.column, name)?;
            check_pos(c, name, &v).map_err(|e| bad(o, &e))?;
            set_pos(c, name, v);
        }
        "fast_pattern" => {
            let v = o.value.map(str::trim);
            let c = b.content_mut(o.column, name)?;
            c.fast_pattern = true;
            match v {
                None | Some("") => {}
                Some("only") => c.fast_pattern_only = true,
                Some(x) => {
                    let (a, l) = x
                        .split_once(',')
                        .ok_or_else(|| bad(o, "expected 'only' or offset,length"))?;
                    let a: u16 = a.trim().parse().map_err(|_| bad(o, "bad offset"))?;
                    let l: u16 = l.trim().parse().map_err(|_| bad(o, "bad length"))?;
                    c.fast_pattern_chop = Some((a, l));
                }
            }
        }
        "pcre" => {
            let mut p = parse_pcre(need(o)?).map_err(|e| bad(o, &e))?;
            p.column = o.column;
            let buf = pcre_buffer(&p.flags);
            if let Some(buf) = buf {
                b.note_app(buf);
                let l = b.list_for(Buffer::App(buf.to_string()));
                b.rule.lists[l].matches.push(Match::Pcre(p));
            } else {
                b.push(Match::Pcre(p));
            }
        }
        "flow" => {
            for f in need(o)?.split(',') {
                let fl = &mut b.rule.flow;
                match f.trim() {
                    "established" => fl.established = true,
                    "not_established" => fl.not_established = true,
                    "stateless" => fl.stateless = true,
                    "to_server" | "from_client" => fl.to_server = true,
                    "to_client" | "from_server" => fl.to_client = true,
                    "only_stream" => fl.only_stream = true,
                    "no_stream" => fl.no_stream = true,
                    "only_frag" => fl.only_frag = true,
                    "no_frag" => fl.no_frag = true,
                    x => return Err(bad(o, &format!("unknown flow option '{x}'"))),
                }
            }
        }
        "flowbits" => {
            let v = need(o)?;
            let (cmd, names) = match v.split_once(',') {
                Some((c, n)) => (c.trim(), Some(n.trim())),
                None => (v.trim(), None),
            };
            let cmd = match cmd {
                "noalert" => {
                    b.rule.noalert = true;
                    return Ok(());
                }
                "set" => FlowbitCmd::Set,
                "unset" => FlowbitCmd::Unset,
                "toggle" => FlowbitCmd::Toggle,
                "isset" => FlowbitCmd::IsSet,
                "isnotset" => FlowbitCmd::IsNotSet,
                x => return Err(bad(o, &format!("unknown command '{x}'"))),
            };
            let names = names.ok_or_else(|| bad(o, "no flowbit name"))?;
            let any = names.contains('|');
            let list: Vec<String> = names
                .split(['|', '&'])
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            if list.is_empty() {
                return Err(bad(o, "no flowbit name"));
            }
            b.rule.flowbits.push(Flowbit {
                cmd,
                names: list,
                any,
            });
        }
        "noalert" => b.rule.noalert = true,
        "threshold" => b.rule.threshold = Some(parse_threshold(o, false)?),
        "detection_filter" => b.rule.detection_filter = Some(parse_threshold(o, true)?),
        "dsize" => b.rule.conds.push(Cond::Dsize(cmp(o)?)),
        "ttl" => b.rule.conds.push(Cond::Ttl(cmp(o)?)),
        "itype" => b.rule.conds.push(Cond::Itype(cmp(o)?)),
        "icode" => b.rule.conds.push(Cond::Icode(cmp(o)?)),
        "icmp_id" => b.rule.conds.push(Cond::IcmpId(
            need(o)?
                .trim()
                .parse()
                .map_err(|_| bad(o, "not a number 0-65535"))?,
        )),
        "id" => b.rule.conds.push(Cond::IpId(
            need(o)?
                .trim()
                .parse()
                .map_err(|_| bad(o, "not a number 0-65535"))?,
        )),
        "seq" => b.rule.conds.push(Cond::TcpSeq(
            need(o)?
                .trim()
                .parse()
                .map_err(|_| bad(o, "not a number 0-4294967295"))?,
        )),
        "ack" => b.rule.conds.push(Cond::TcpAck(
            need(o)?
                .trim()
                .parse()
                .map_err(|_| bad(o, "not a number 0-4294967295"))?,
        )),
        "icmp_seq" => b.rule.conds.push(Cond::IcmpSeq(
            need(o)?
                .trim()
                .parse()
                .map_err(|_| bad(o, "not a number 0-65535"))?,
        )),
        "ip_proto" => {
            let v = need(o)?.trim();
            let (negated, v) = match v.strip_prefix('!') {
                Some(r) => (true, r),
                None => (false, v),
            };
            let named = match v.to_ascii_lowercase().as_str() {
                "tcp" => Some(6),
                "udp" => Some(17),
                "icmp" => Some(1),
                "ipv6-icmp" | "icmpv6" => Some(58),
                "igmp" => Some(2),
                "gre" => Some(47),
                "esp" => Some(50),
                "ah" => Some(51),
                "sctp" => Some(132),
                _ => None,
            };
            let cmp = match named {
                Some(n) => Cmp::Eq(n),
                None => parse_cmp(v).ok_or_else(|| bad(o, "not a protocol"))?,
            };
            b.rule.conds.push(Cond::IpProto { negated, cmp });
        }
        "flags" => b.rule.conds.push(parse_flags(o)?),
        "sameip" => b.rule.conds.push(Cond::SameIp),
        "ipopts" => {
            let v = need(o)?.trim();
            if !matches!(
                v,
                "rr" | "eol"
                    | "nop"
                    | "ts"
                    | "sec"
                    | "esec"
                    | "lsrr"
                    | "lsrre"
                    | "ssrr"
                    | "satid"
                    | "any"
            ) {
                return Err(bad(o, "unknown IP option"));
            }
            b.rule.conds.push(Cond::IpOpts(v.to_string()));
        }
        "stream_size" => {
            let v = need(o)?;
            let parts: Vec<&str> = v.split(',').map(str::trim).collect();
            if parts.len() != 3 {
                return Err(bad(o, "expected side, operator, number"));
            }
            let side = match parts[0] {
                "server" => StreamSide::Server,
                "client" => StreamSide::Client,
                "both" => StreamSide::Both,
                "either" => StreamSide::Either,
                _ => return Err(bad(o, "side must be server, client, both or either")),
            };
            let n = parse_num(parts[2]).ok_or_else(|| bad(o, "not a number"))?;
            let cmp = match parts[1] {
                "<" => Cmp::Lt(n),
                ">" => Cmp::Gt(n),
                "=" => Cmp::Eq(n),
                "!=" => Cmp::Ne(n),
                "<=" => Cmp::Le(n),
                ">=" => Cmp::Ge(n),
                _ => return Err(bad(o, "unknown operator")),
            };
            b.rule.conds.push(Cond::StreamSize { side, cmp });
        }
        "isdataat" => {
            let v = need(o)?;
            let mut parts = v.split(',').map(str::trim);
            let first = parts.next().unwrap_or("");
            let (negated, first) = match first.strip_prefix('!') {
                Some(r) => (true, r.trim()),
                None => (false, first),
            };
            let offset = parse_val(first).ok_or_else(|| bad(o, "not a number"))?;
            let mut relative = false;
            for p in parts {
                match p {
                    "relative" => relative = true,
                    "rawbytes" => {}
                    x => return Err(bad(o, &format!("unknown option '{x}'"))),
                }
            }
            b.push(Match::IsDataAt {
                offset,
                relative,
                negated,
            });
        }
        "bsize" | "bufferlen" => {
            let v = need(o)?;
            b.push(Match::Bsize(
                parse_cmp(v).ok_or_else(|| bad(o, "bad size"))?,
            ));
        }
        "byte_test" => b.push(parse_byte_test(o)?),
        "byte_jump" => b.push(parse_byte_jump(o)?),
        "byte_extract" => b.push(parse_byte_extract(o)?),
        "pkt_data" | "raw_data" => {
            b.cur = b.list_for(Buffer::Payload);
        }
        _ => {
            if let Some(buf) = app_buffer(name) {
                b.note_app(buf);
                if !b.snort3 && is_legacy_modifier(name) && prev_content {
                    b.move_last_content(buf, o.column, name)?;
                    b.prev_was_content = true;
                } else {
                    b.cur = b.list_for(Buffer::App(buf.to_string()));
                }
                return Ok(());
            }
            // Hints and side outputs that do not change whether a rule matches: `prefilter`
            // (use this option as the prefilter) and `tag` (also log the following
            // packets, which netsieve does not do).
            if name == "prefilter" || name == "tag" {
                return Ok(());
            }
            if matches!(
                name,
                "dns.opcode" | "dns.rcode" | "dns.rrtype" | "tls.cert_chain_len"
            ) {
                b.note_app(name);
                let c = parse_cmp(need(o)?).ok_or_else(|| bad(o, "bad number"))?;
                let l = b.list_for(Buffer::App(name.to_string()));
                b.rule.lists[l].matches.push(Match::Uint(c));
                return Ok(());
            }
            if name == "urilen" {
                b.note_app(name);
                let v = need(o)?;
                let (v, raw) = match v.rsplit_once(',').map(|(v, k)| (v, k.trim())) {
                    Some((v, "raw")) => (v, true),
                    Some((v, "norm")) => (v, false),
                    Some(_) => return Err(bad(o, "expected ,raw or ,norm")),
                    None => (v, false),
                };
                let c = parse_cmp(v.trim()).ok_or_else(|| bad(o, "bad length"))?;
                let buf = if raw { "http.uri.raw" } else { "http.uri" };
                let l = b.list_for(Buffer::App(buf.to_string()));
                b.rule.lists[l].matches.push(Match::Bsize(c));
                return Ok(());
            }
            if is_transform(name) {
                if b.rule.lists.is_empty() {
                    b.cur = b.list_for(Buffer::Payload);
                }
                b.rule.lists[b.cur].transforms.push(name.to_string());
                return Ok(());
            }
            if is_known_unsupported(name) {
                if !b.rule.unsupported.iter().any(|x| x == name) {
                    b.rule.unsupported.push(name.to_string());
                }
                return Ok(());
            }
            return Err(perr(
                o.column,
                format!("unknown keyword '{name}'"),
                format!("unknown keyword '{name}'"),
            ));
        }
    }
    // Options that modify a content keep `prev_was_content` for a following modifier.
    if matches!(
        name,
        "nocase"
            | "rawbytes"
            | "offset"
            | "depth"
            | "distance"
            | "within"
            | "fast_pattern"
            | "startswith"
            | "endswith"
    ) {
        b.prev_was_content = prev_content;
    }
    Ok(())
}

fn unescape_msg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            if let Some(n) = it.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn closing_quote(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Refuses what Suricata refuses: an `offset` or `depth` outside 0 to 65535, a
/// `distance` or `within` outside a 32-bit signed number, and a `depth` or `within`
/// shorter than the content (it could never match). Variables are checked when used.
fn check_pos(c: &Content, name: &str, v: &Val) -> Result<(), String> {
    let Val::Num(n) = *v else {
        return Ok(());
    };
    let (lo, hi) = match name {
        "offset" | "depth" => (0, 65_535),
        _ => (i64::from(i32::MIN), i64::from(i32::MAX)),
    };
    if !(lo..=hi).contains(&n) {
        return Err(format!("{name} must be between {lo} and {hi}, not {n}"));
    }
    let len = c.pattern.len() as i64;
    if matches!(name, "depth" | "within") && n < len {
        return Err(format!(
            "{name}:{n} is shorter than the content ({len} bytes): it could never match"
        ));
    }
    Ok(())
}

fn set_pos(c: &mut Content, name: &str, v: Val) {
    match name {
        "offset" => c.offset = Some(v),
        "depth" => c.depth = Some(v),
        "distance" => c.distance = Some(v),
        _ => c.within = Some(v),
    }
}

/// Snort 3 content modifiers after the pattern: `,depth 4,nocase,fast_pattern`.
fn snort3_modifiers(b: &mut Builder, o: &Opt<'_>, mods: &str) -> Result<(), ParseError> {
    for m in mods.split(',') {
        let m = m.trim();
        if m.is_empty() {
            continue;
        }
        let (k, v) = match m.split_once(char::is_whitespace) {
            Some((k, v)) => (k, Some(v.trim())),
            None => (m, None),
        };
        let c = b.content_mut(o.column, "content")?;
        match (k, v) {
            ("nocase", None) => c.nocase = true,
            ("fast_pattern", None) => c.fast_pattern = true,
            ("rawbytes", None) => c.rawbytes = true,
            ("fast_pattern_offset", Some(v)) => {
                let n: u16 = v.parse().map_err(|_| bad(o, "bad fast_pattern_offset"))?;
                c.fast_pattern = true;
                let len = c.fast_pattern_chop.map_or(u16::MAX, |x| x.1);
                c.fast_pattern_chop = Some((n, len));
            }
            ("fast_pattern_length", Some(v)) => {
                let n: u16 = v.parse().map_err(|_| bad(o, "bad fast_pattern_length"))?;
                c.fast_pattern = true;
                let off = c.fast_pattern_chop.map_or(0, |x| x.0);
                c.fast_pattern_chop = Some((off, n));
            }
            ("offset" | "depth" | "distance" | "within", Some(v)) => {
                let val = parse_val(v).ok_or_else(|| bad(o, "not a number or variable"))?;
                check_pos(c, k, &val).map_err(|e| bad(o, &e))?;
                set_pos(c, k, val);
            }
            _ => return Err(bad(o, &format!("unknown content modifier '{m}'"))),
        }
    }
    Ok(())
}

/// `/expr/flags` (with an optional leading `!` and quotes).
fn parse_pcre(v: &str) -> Result<Pcre, String> {
    let v = v.trim();
    let (negated, v) = match v.strip_prefix('!') {
        Some(r) => (true, r.trim_start()),
        None => (false, v),
    };
    let v = unquote(v);
    // Snort 3 may add ",relative" etc. after the closing quote: not here (unquoted).
    let body = v.strip_prefix('/').ok_or("must start with '/'")?;
    let end = body.rfind('/').ok_or("no closing '/'")?;
    let pattern = body[..end].to_string();
    let flags = body[end + 1..].to_string();
    for f in flags.chars() {
        if !"ismxAEGRUIPHDMCKSYBVWQOL".contains(f) {
            return Err(format!("unknown flag '{f}'"));
        }
    }
    Ok(Pcre {
        relative: flags.contains('R'),
        pattern,
        flags,
        negated,
        column: 0,
    })
}

/// The buffer a pcre's flags select, if any.
fn pcre_buffer(flags: &str) -> Option<&'static str> {
    for f in flags.chars() {
        let b = match f {
            'U' => "http.uri",
            'I' => "http.uri.raw",
            'P' => "http.request_body",
            'Q' => "http.response_body",
            'H' => "http.header",
            'D' => "http.header.raw",
            'M' => "http.method",
            'C' => "http.cookie",
            'K' => "http.cookie.raw",
            'S' => "http.stat_code",
            'Y' => "http.stat_msg",
            'V' => "http.user_agent",
            'W' => "http.host",
            'B' => continue,
            _ => continue,
        };
        return Some(b);
    }
    None
}

fn cmp(o: &Opt<'_>) -> Result<Cmp, ParseError> {
    parse_cmp(need(o)?).ok_or_else(|| bad(o, "expected N, <N, >N, !N or N<>M"))
}

fn parse_threshold(o: &Opt<'_>, filter: bool) -> Result<Threshold, ParseError> {
    threshold_fields(need(o)?, filter).map_err(|m| bad(o, &m))
}

/// The `name value, ...` fields of `threshold` (or, with `filter`, `detection_filter`),
/// as written in rules and in threshold.config.
pub fn threshold_fields(text: &str, filter: bool) -> Result<Threshold, String> {
    let mut kind = if filter {
        Some(ThresholdKind::DetectionFilter)
    } else {
        None
    };
    let mut track = None;
    let mut count = None;
    let mut seconds = None;
    let mut multiplier = None;
    for part in text.split(',') {
        let mut w = part.split_whitespace();
        let (Some(k), Some(v)) = (w.next(), w.next()) else {
            return Err("expected 'name value' pairs".into());
        };
        match k {
            "type" if !filter => {
                kind = Some(match v {
                    "limit" => ThresholdKind::Limit,
                    "threshold" => ThresholdKind::Threshold,
                    "both" => ThresholdKind::Both,
                    "backoff" => ThresholdKind::Backoff,
                    _ => return Err("type must be limit, threshold, both or backoff".into()),
                })
            }
            "track" => {
                track = Some(match v {
                    "by_src" => Track::BySrc,
                    "by_dst" => Track::ByDst,
                    "by_rule" => Track::ByRule,
                    "by_both" => Track::ByBoth,
                    "by_flow" => Track::ByFlow,
                    _ => return Err("unknown track".into()),
                })
            }
            "count" => count = Some(v.parse().map_err(|_| "bad count")?),
            "seconds" => seconds = Some(v.parse().map_err(|_| "bad seconds")?),
            "multiplier" => multiplier = Some(v.parse().map_err(|_| "bad multiplier")?),
            _ => return Err(format!("unknown field '{k}'")),
        }
    }
    match (kind, track, count, seconds, multiplier) {
        (Some(ThresholdKind::Backoff), Some(track), Some(count), None, Some(m))
            if count > 0 && m > 1 =>
        {
            Ok(Threshold {
                kind: ThresholdKind::Backoff,
                track,
                count,
                seconds: 0,
                multiplier: m,
            })
        }
        (Some(ThresholdKind::Backoff), ..) => {
            Err("backoff needs track, count (> 0) and multiplier (> 1), no seconds".into())
        }
        (Some(kind), Some(track), Some(count), Some(seconds), None) => Ok(Threshold {
            kind,
            track,
            count,
            seconds,
            multiplier: 0,
        }),
        _ => Err("needs type, track, count and seconds".into()),
    }
}

fn parse_flags(o: &Opt<'_>) -> Result<Cond, ParseError> {
    let v = need(o)?.trim();
    let (set, ignore) = match v.split_once(',') {
        Some((s, i)) => (s.trim(), i.trim()),
        None => (v, ""),
    };
    let bit = |c: char| -> Option<u8> {
        Some(match c.to_ascii_uppercase() {
            'F' => 0x01,
            'S' => 0x02,
            'R' => 0x04,
            'P' => 0x08,
            'A' => 0x10,
            'U' => 0x20,
            'E' | '2' => 0x40,
            'C' | '1' => 0x80,
            _ => return None,
        })
    };
    let mut mode = FlagsMode::Exact;
    let mut bits = 0u8;
    for c in set.chars() {
        match c {
            '+' => mode = FlagsMode::All,
            '*' => mode = FlagsMode::Any,
            '!' => mode = FlagsMode::Not,
            '0' => {}
            c => bits |= bit(c).ok_or_else(|| bad(o, &format!("unknown flag '{c}'")))?,
        }
    }
    let mut ign = 0u8;
    for c in ignore.chars() {
        ign |= bit(c).ok_or_else(|| bad(o, &format!("unknown flag '{c}'")))?;
    }
    Ok(Cond::Flags {
        mode,
        bits,
        ignore: ign,
    })
}

/// A handler for options particular to one byte keyword: true when it took the option.
type ExtraOpt<'a> = dyn FnMut(&str, Option<&str>) -> Result<bool, ParseError> + 'a;

fn byte_read_opts(
    o: &Opt<'_>,
    bytes: u8,
    offset: Val,
    rest: &[&str],
    extra: &mut ExtraOpt<'_>,
) -> Result<ByteRead, ParseError> {
    let mut r = ByteRead {
        bytes,
        offset,
        relative: false,
        endian: Endian::Big,
        string_base: None,
        bitmask: None,
        dce: false,
    };
    let mut string = false;
    for p in rest {
        let (k, v) = match p.split_once(char::is_whitespace) {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (p.trim(), None),
        };
        match k {
            "relative" => r.relative = true,
            "big" => r.endian = Endian::Big,
            "little" => r.endian = Endian::Little,
            "string" => {
                string = true;
                r.string_base.get_or_insert(10);
            }
            "hex" => r.string_base = Some(16),
            "dec" => r.string_base = Some(10),
            "oct" => r.string_base = Some(8),
            "dce" => r.dce = true,
            "bitmask" => {
                let v = v.ok_or_else(|| bad(o, "bitmask needs a value"))?;
                r.bitmask = Some(parse_num(v).ok_or_else(|| bad(o, "bad bitmask"))? as u64);
            }
            "" => {}
            _ => {
                if !extra(k, v)? {
                    return Err(bad(o, &format!("unknown option '{k}'")));
                }
            }
        }
    }
    if !string {
        r.string_base = None;
        // byte_jump may read 0 bytes (a jump by post_offset alone).
        if bytes > 8 {
            return Err(bad(o, "binary reads take 1 to 8 bytes"));
        }
    } else if bytes > 23 {
        return Err(bad(o, "string reads take 1 to 23 bytes"));
    }
    Ok(r)
}

fn parse_byte_test(o: &Opt<'_>) -> Result<Match, ParseError> {
    let v = need(o)?;
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() < 4 {
        return Err(bad(o, "expected bytes, operator, value, offset"));
    }
    let bytes: u8 = parts[0].parse().map_err(|_| bad(o, "bad byte count"))?;
    let (negated, opstr) = match parts[1].strip_prefix('!') {
        Some(r) => (true, r.trim()),
        None => (false, parts[1]),
    };
    let op = match opstr {
        "<" => ByteOp::Lt,
        ">" => ByteOp::Gt,
        "<=" => ByteOp::Le,
        ">=" => ByteOp::Ge,
        "=" | "" => ByteOp::Eq,
        "&" => ByteOp::And,
        "^" | "|" => ByteOp::Or,
        _ => return Err(bad(o, "unknown operator")),
    };
    // `!` alone means "not equal".
    let negated = negated || parts[1] == "!";
    let value = parse_val(parts[2]).ok_or_else(|| bad(o, "bad value"))?;
    let offset = parse_val(parts[3]).ok_or_else(|| bad(o, "bad offset"))?;
    let read = byte_read_opts(o, bytes, offset, &parts[4..], &mut |_, _| Ok(false))?;
    Ok(Match::ByteTest {
        read,
        negated,
        op,
        value,
    })
}

fn parse_byte_jump(o: &Opt<'_>) -> Result<Match, ParseError> {
    let v = need(o)?;
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() < 2 {
        return Err(bad(o, "expected bytes, offset"));
    }
    let bytes: u8 = parts[0].parse().map_err(|_| bad(o, "bad byte count"))?;
    let offset = parse_val(parts[1]).ok_or_else(|| bad(o, "bad offset"))?;
    let mut multiplier = 1u64;
    let mut align = false;
    let mut from_beginning = false;
    let mut from_end = false;
    let mut post_offset = 0i64;
    let read = byte_read_opts(o, bytes, offset, &parts[2..], &mut |k, v| {
        match k {
            "multiplier" => {
                multiplier = v
                    .and_then(parse_num)
                    .ok_or_else(|| bad(o, "bad multiplier"))? as u64
            }
            "align" => align = true,
            "from_beginning" => from_beginning = true,
            "from_end" => from_end = true,
            "post_offset" => {
                post_offset = v
                    .and_then(parse_num)
                    .ok_or_else(|| bad(o, "bad post_offset"))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(Match::ByteJump {
        read,
        multiplier,
        align,
        from_beginning,
        from_end,
        post_offset,
    })
}

fn parse_byte_extract(o: &Opt<'_>) -> Result<Match, ParseError> {
    let v = need(o)?;
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() < 3 {
        return Err(bad(o, "expected bytes, offset, name"));
    }
    let bytes: u8 = parts[0].parse().map_err(|_| bad(o, "bad byte count"))?;
    let offset = parse_val(parts[1]).ok_or_else(|| bad(o, "bad offset"))?;
    let name = parts[2].to_string();
    if name.is_empty() || parse_num(&name).is_some() {
        return Err(bad(o, "bad variable name"));
    }
    let mut multiplier = 1u64;
    let mut align = 0u8;
    let read = byte_read_opts(o, bytes, offset, &parts[3..], &mut |k, v| {
        match k {
            "multiplier" => {
                multiplier = v
                    .and_then(parse_num)
                    .ok_or_else(|| bad(o, "bad multiplier"))? as u64
            }
            "align" => {
                align = v
                    .and_then(parse_num)
                    .filter(|a| *a == 2 || *a == 4)
                    .ok_or_else(|| bad(o, "align must be 2 or 4"))? as u8
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(Match::ByteExtract {
        read,
        name,
        multiplier,
        align,
    })
}
