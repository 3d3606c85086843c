//! Buffers: a buffer's name (sticky, legacy modifier or integer keyword), `pkt_data`
//! back to the payload, and `urilen`.

use super::{Builder, Opt, ParseError, parse_cmp, parse_num};
use crate::buffer::{AppBuffer, AppNeed, Spelling};
use crate::rule::{Absent, Buffer, Cmp, DataType, Dataset, DatasetCmd, Match, Pick, RawOption};
use netsieve_wire::{FrameType, http2, ldap};

/// `frame:NAME`: the matches after it inspect each frame of that type, named in full
/// (`tls.pdu`) or by type for the header's protocol (`pdu`). A frame no parser of
/// netsieve's marks leaves the rule not inspected, as an unsupported keyword does.
pub(super) fn frame(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let name = o.need()?.trim();
    match FrameType::of_rule(name, b.rule.proto.name()) {
        Some(t) => {
            b.note_app(AppNeed::Protocol(t.protocol().to_string()));
            b.stick(Buffer::Frame(t));
        }
        None => b.rule.unsupported.push(RawOption {
            name: "frame".to_string(),
            value: Some(name.to_string()),
        }),
    }
    Ok(())
}

/// A keyword naming buffer `buf`. `after_content`: the option before it was a content
/// or one of its modifiers.
pub(super) fn buffer(
    b: &mut Builder,
    o: &Opt<'_>,
    buf: AppBuffer,
    spelling: Spelling,
    after_content: bool,
) -> Result<(), ParseError> {
    b.note_app(AppNeed::Buffer(buf));
    match spelling {
        Spelling::Modifier if !b.snort3 && after_content => {
            move_last_content(b, o, buf)?;
            b.prev_was_content = true;
        }
        Spelling::Sticky | Spelling::Modifier => b.stick(Buffer::App(buf)),
        Spelling::Integer if file_hash(buf).is_some() => {
            let m = hash_list(buf, o.need()?).ok_or_else(|| o.bad("bad list file"))?;
            let l = b.list_for(Buffer::App(buf));
            b.push_to(l, m);
        }
        Spelling::Integer if ldap_list(buf).is_some() => {
            let table = ldap_list(buf).expect("checked by the guard");
            let (c, pick) = picked(table, o.need()?).ok_or_else(|| o.bad("bad value or index"))?;
            let l = b.list_for(Buffer::App(buf));
            b.push_to(l, Match::UintList(c, pick));
        }
        Spelling::Integer if buf == AppBuffer::DcerpcIface => {
            let m = dce_iface(o.need()?).ok_or_else(|| o.bad("bad interface"))?;
            let l = b.list_for(Buffer::App(buf));
            b.push_to(l, m);
        }
        Spelling::Integer => {
            let v = o.need()?;
            let c = match buf {
                AppBuffer::TlsVersion => tls_version(v),
                AppBuffer::FtpMode => ftp_mode(v),
                AppBuffer::FtpDataCommand => ftpdata_command(v),
                AppBuffer::Http2FrameType => named_number(&http2::FRAME_TYPES, 0, v),
                AppBuffer::Http2ErrorCode => named_number(&http2::ERROR_CODES, 0, v),
                AppBuffer::Http2Settings => http2_setting(v),
                AppBuffer::FtpReplyReceived => yes_no(v),
                AppBuffer::MqttConnackSessionPresent => yes_no(v),
                AppBuffer::MqttType => mqtt_type(v),
                AppBuffer::Krb5TicketEncryption => krb5_etype(v),
                AppBuffer::NtpMode => ntp_mode(v),
                AppBuffer::MqttFlags => flags(v, &[("dup", 0x08), ("retain", 0x01)]),
                AppBuffer::WebsocketOpcode => websocket_opcode(v),
                AppBuffer::LdapRequestOperation => number_or_name(ldap::OPERATIONS, v),
                AppBuffer::WebsocketFlags => flags(v, &[("fin", 0x80), ("comp", 0x40)]),
                AppBuffer::MqttConnectFlags => flags(
                    v,
                    &[
                        ("username", 0x80),
                        ("password", 0x40),
                        ("will_retain", 0x20),
                        ("will", 0x04),
                        ("clean_session", 0x02),
                    ],
                ),
                _ => parse_cmp(v),
            };
            let c = c.ok_or_else(|| o.bad("bad number"))?;
            let l = b.list_for(Buffer::App(buf));
            b.push_to(l, Match::Uint(c));
        }
    }
    Ok(())
}

/// The digest a file-hash buffer holds (`filemd5` and the like).
pub(crate) fn file_hash(buf: AppBuffer) -> Option<DataType> {
    match buf {
        AppBuffer::FileMd5 => Some(DataType::Md5),
        AppBuffer::FileSha1 => Some(DataType::Sha1),
        AppBuffer::FileSha256 => Some(DataType::Sha256),
        _ => None,
    }
}

/// `filemd5:[!]list`: a file whose digest the list (hex, one per line, beside the rule
/// file) holds, or with `!` does not; a set named by the keyword and the list.
fn hash_list(buf: AppBuffer, v: &str) -> Option<Match> {
    let kind = file_hash(buf)?;
    let v = v.trim();
    let (cmd, file) = match v.strip_prefix('!') {
        Some(f) => (DatasetCmd::IsNotSet, f.trim()),
        None => (DatasetCmd::IsSet, v),
    };
    if file.is_empty() {
        return None;
    }
    let name = format!("{}:{file}", buf.keyword().0);
    Some(Match::Dataset(Box::new(Dataset {
        load: Some(file.to_string()),
        ..Dataset::new(cmd, name, kind)
    })))
}

/// `dcerpc.iface:UUID[,<op><version>][,any_frag]`: an interface UUID (hex, dashes
/// anywhere), its major version compared with `<`, `>`, `=` or `!`.
fn dce_iface(v: &str) -> Option<Match> {
    let mut parts = v.split(',').map(str::trim);
    let hex: String = parts.next()?.chars().filter(|&c| c != '-').collect();
    if hex.len() != 32 || !hex.is_ascii() {
        return None;
    }
    let mut uuid = [0u8; 16];
    for (i, b) in uuid.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    let (mut version, mut any_frag) = (None, false);
    for p in parts {
        match p {
            "any_frag" if !any_frag => any_frag = true,
            _ if version.is_none() && !any_frag && p.starts_with(['<', '>', '=', '!']) => {
                let c = parse_cmp(p)?;
                let n = match c {
                    Cmp::Lt(n) | Cmp::Gt(n) | Cmp::Eq(n) | Cmp::Ne(n) => n,
                    _ => return None,
                };
                u16::try_from(n).ok()?;
                version = Some(c);
            }
            _ => return None,
        }
    }
    Some(Match::DceIface {
        uuid,
        version,
        any_frag,
    })
}

/// `tls.version:1.2`: a version by its name (`1.0` to `1.3`, `3.0` for SSLv3) or its
/// number (`0x0303`), as the record layer writes it.
fn tls_version(v: &str) -> Option<Cmp> {
    let n = match v.trim() {
        "3.0" | "ssl3" | "sslv3" => 0x0300,
        "1.0" => 0x0301,
        "1.1" => 0x0302,
        "1.2" => 0x0303,
        "1.3" => 0x0304,
        other => parse_num(other)?,
    };
    Some(Cmp::Eq(n))
}

/// `ftp.mode:active` (or `passive`): how the data channel opens, as the number the
/// engine's `ftp.mode` buffer holds (1 active, 0 passive).
fn ftp_mode(v: &str) -> Option<Cmp> {
    match v.trim() {
        "active" => Some(Cmp::Eq(1)),
        "passive" => Some(Cmp::Eq(0)),
        _ => None,
    }
}

/// `ftpdata_command:retr` or `stor`: the command that opened an FTP data channel, as
/// the engine numbers it (1 `RETR`, 2 `STOR`).
fn ftpdata_command(v: &str) -> Option<Cmp> {
    match v.trim() {
        "retr" => Some(Cmp::Eq(1)),
        "stor" => Some(Cmp::Eq(2)),
        _ => None,
    }
}

/// `http2.frametype:GOAWAY`, `http2.errorcode:INTERNAL_ERROR`: a name of HTTP/2's (or
/// a number), with `!` for any other.
fn named_number(names: &[&str], first: u32, v: &str) -> Option<Cmp> {
    let v = v.trim();
    let (neg, name) = match v.strip_prefix('!') {
        Some(n) => (true, n),
        None => (false, v),
    };
    let n = i64::from(http2::number_of(names, first, name)?);
    Some(if neg { Cmp::Ne(n) } else { Cmp::Eq(n) })
}

/// `http2.settings:SETTINGS_MAX_FRAME_SIZE` with an optional comparison of its value
/// (`>1000`, `=0`, `<5`): the engine's buffer holds each setting as its identifier
/// above its 32-bit value, so the comparison becomes a range within the identifier.
fn http2_setting(v: &str) -> Option<Cmp> {
    let v = v.trim();
    let at = v.find(['<', '>', '=', '!']).unwrap_or(v.len());
    let (name, cmp) = v.split_at(at);
    let id = i64::from(http2::number_of(&http2::SETTINGS, 1, name)?);
    let base = id << 32;
    let top = base + u32::MAX as i64;
    let value = |c: Cmp| match c {
        Cmp::Eq(n) | Cmp::Gt(n) | Cmp::Ge(n) | Cmp::Lt(n) | Cmp::Le(n) => {
            (0..=u32::MAX as i64).contains(&n)
        }
        _ => false,
    };
    if cmp.trim().is_empty() {
        return Some(Cmp::Range(base, top));
    }
    Some(match parse_cmp(cmp).filter(|&c| value(c)) {
        None => return None,
        Some(Cmp::Eq(n)) => Cmp::Eq(base + n),
        Some(Cmp::Gt(n)) => Cmp::Range(base + n + 1, top),
        Some(Cmp::Ge(n)) => Cmp::Range(base + n, top),
        Some(Cmp::Lt(n)) if n > 0 => Cmp::Range(base, base + n - 1),
        Some(Cmp::Le(n)) => Cmp::Range(base, base + n),
        _ => return None,
    })
}

/// `yes`/`on`/`true` as 1, `no`/`off`/`false` as 0 (`ftp.reply_received:yes`).
fn yes_no(v: &str) -> Option<Cmp> {
    match v.trim() {
        "yes" | "on" | "true" => Some(Cmp::Eq(1)),
        "no" | "off" | "false" => Some(Cmp::Eq(0)),
        _ => None,
    }
}

/// The names of the numbers of an LDAP keyword that compares a list of them
/// (`ldap.responses.operation`, `ldap.responses.result_code`).
fn ldap_list(buf: AppBuffer) -> Option<&'static [(&'static str, u32)]> {
    match buf {
        AppBuffer::LdapResponsesOperation => Some(ldap::OPERATIONS),
        AppBuffer::LdapResponsesResultCode => Some(ldap::RESULT_CODES),
        _ => None,
    }
}

/// A number, a comparison, or a name of `names` (`search_request`, `!success`).
fn number_or_name(names: &[(&str, u32)], v: &str) -> Option<Cmp> {
    let v = v.trim();
    let (neg, name) = match v.strip_prefix('!') {
        Some(n) => (true, n.trim()),
        None => (false, v),
    };
    match ldap::number_of(names, name) {
        Some(n) if neg => Some(Cmp::Ne(i64::from(n))),
        Some(n) => Some(Cmp::Eq(i64::from(n))),
        None => parse_cmp(v),
    }
}

/// `value[,index]`: a value as [`number_or_name`] reads it, and which of the list's
/// numbers it must be (`any`, the default; `all`; an index, from the end if negative).
fn picked(names: &[(&str, u32)], v: &str) -> Option<(Cmp, Pick)> {
    let (value, index) = match v.split_once(',') {
        Some((value, index)) => (value, Some(index.trim())),
        None => (v, None),
    };
    let pick = match index {
        None | Some("any") => Pick::Any,
        Some("all") => Pick::All,
        Some(i) => Pick::At(i.parse().ok()?),
    };
    Some((number_or_name(names, value)?, pick))
}

/// `mqtt.type:CONNECT`: a control packet type by its name (any case) or number.
fn mqtt_type(v: &str) -> Option<Cmp> {
    const TYPES: [&str; 16] = [
        "UNASSIGNED",
        "CONNECT",
        "CONNACK",
        "PUBLISH",
        "PUBACK",
        "PUBREC",
        "PUBREL",
        "PUBCOMP",
        "SUBSCRIBE",
        "SUBACK",
        "UNSUBSCRIBE",
        "UNSUBACK",
        "PINGREQ",
        "PINGRESP",
        "DISCONNECT",
        "AUTH",
    ];
    let v = v.trim();
    match TYPES.iter().position(|t| t.eq_ignore_ascii_case(v)) {
        Some(n) => Some(Cmp::Eq(n as i64)),
        None => parse_cmp(v),
    }
}

/// A list of flag names, each `!`-prefixed when it must be clear (`dup,!retain`), as
/// one mask comparison; `&M=V` is taken as it is (a printed rule reads back).
fn flags(v: &str, names: &[(&str, i64)]) -> Option<Cmp> {
    if v.trim().starts_with('&') {
        return parse_cmp(v);
    }
    let (mut mask, mut value) = (0, 0);
    for f in v.split(',').map(str::trim) {
        let (clear, name) = match f.strip_prefix('!') {
            Some(n) => (true, n.trim()),
            None => (false, f),
        };
        let &(_, bit) = names.iter().find(|(n, _)| *n == name)?;
        mask |= bit;
        if !clear {
            value |= bit;
        }
    }
    (mask != 0).then_some(Cmp::Mask(mask, value))
}

/// `websocket.opcode:text`: an opcode by its name or number, `!` before it negates.
fn websocket_opcode(v: &str) -> Option<Cmp> {
    let v = v.trim();
    let (not, name) = match v.strip_prefix('!') {
        Some(n) => (true, n.trim()),
        None => (false, v),
    };
    let Some(n) = netsieve_wire::websocket::opcode_by_name(name) else {
        return parse_cmp(v);
    };
    let n = i64::from(n);
    Some(if not { Cmp::Ne(n) } else { Cmp::Eq(n) })
}

/// `ntp.mode`'s value: a mode's number or name (RFC 5905 7.3), `!` before it negates.
fn ntp_mode(v: &str) -> Option<Cmp> {
    const MODES: [&str; 8] = [
        "reserved",
        "symmetric_active",
        "symmetric_passive",
        "client",
        "server",
        "broadcast",
        "control",
        "private",
    ];
    let v = v.trim();
    let (not, name) = match v.strip_prefix('!') {
        Some(n) => (true, n.trim()),
        None => (false, v),
    };
    let Some(m) = MODES.iter().position(|&n| n == name) else {
        return parse_cmp(v);
    };
    let m = m as i64;
    Some(if not { Cmp::Ne(m) } else { Cmp::Eq(m) })
}

/// A value whose weak encryption types match as one: `krb5.ticket_encryption:weak`
/// compares with it (the engine gives a weak ticket this value besides its own).
pub const KRB5_WEAK: i64 = 1 << 32;

/// `krb5.ticket_encryption`'s value: `weak`, an encryption type's number or its name.
fn krb5_etype(v: &str) -> Option<Cmp> {
    const NAMES: [(&str, i64); 12] = [
        ("des-cbc-crc", 1),
        ("des-cbc-md4", 2),
        ("des-cbc-md5", 3),
        ("des3-cbc-md5", 5),
        ("des3-cbc-sha1", 7),
        ("des3-cbc-sha1-kd", 16),
        ("aes128-cts-hmac-sha1-96", 17),
        ("aes256-cts-hmac-sha1-96", 18),
        ("aes128-cts-hmac-sha256-128", 19),
        ("aes256-cts-hmac-sha384-192", 20),
        ("rc4-hmac", 23),
        ("rc4-hmac-exp", 24),
    ];
    let v = v.trim();
    if v == "weak" {
        return Some(Cmp::Eq(KRB5_WEAK));
    }
    match NAMES.iter().find(|(n, _)| *n == v) {
        Some(&(_, e)) => Some(Cmp::Eq(e)),
        None => v.parse().ok().map(Cmp::Eq),
    }
}

/// Moves the last content into buffer `buf` (a legacy modifier).
fn move_last_content(b: &mut Builder, o: &Opt<'_>, buf: AppBuffer) -> Result<(), ParseError> {
    let Some((l, i)) = b.last_content else {
        return Err(ParseError::no_content_to_move(o.column, o.name));
    };
    let want = Buffer::App(buf);
    if b.rule.lists[l].buffer == want {
        return Ok(());
    }
    let m = b.rule.lists[l].matches.remove(i);
    // Legacy modifiers gather contents of one buffer into one list, in order.
    let target = match b.rule.lists.iter().rposition(|x| x.buffer == want) {
        Some(t) => t,
        None => b.list_for(want),
    };
    b.push_to(target, m);
    // Matches after the moved content in its old list that are relative to it
    // (pcre/R, byte_* relative) stay; the payload list keeps its order.
    Ok(())
}

/// `absent[: or_else]` after an application buffer's name: a transaction without that
/// buffer matches (with `or_else`, so does one whose buffer the list's matches match).
pub(super) fn absent(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let kind = match o.value.map(str::trim) {
        None => Absent::Only,
        Some("or_else") => Absent::OrElse,
        Some(v) => return Err(o.bad(&format!("unknown option '{v}'"))),
    };
    let l = match b.sticky {
        Some(l) if matches!(b.rule.lists[l].buffer, Buffer::App(_)) => l,
        _ => return Err(o.bad("absent follows an application-layer buffer's name")),
    };
    let list = &mut b.rule.lists[l];
    if !list.matches.is_empty() || list.absent != Absent::No {
        return Err(o.bad("absent comes right after its buffer's name"));
    }
    list.absent = kind;
    Ok(())
}

/// `pkt_data` (and `raw_data`): the options after it inspect the payload again.
pub(super) fn pkt_data(b: &mut Builder, _: &Opt<'_>) -> Result<(), ParseError> {
    b.stick(Buffer::Payload);
    Ok(())
}

/// `urilen:N[,raw|norm]`: the length of the normalised (or raw) URI.
pub(super) fn urilen(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?;
    let (v, raw) = match v.rsplit_once(',').map(|(v, k)| (v, k.trim())) {
        Some((v, "raw")) => (v, true),
        Some((v, "norm")) => (v, false),
        Some(_) => return Err(o.bad("expected ,raw or ,norm")),
        None => (v, false),
    };
    let c = parse_cmp(v.trim()).ok_or_else(|| o.bad("bad length"))?;
    let buf = if raw {
        AppBuffer::HttpUriRaw
    } else {
        AppBuffer::HttpUri
    };
    b.note_app(AppNeed::Buffer(buf));
    let l = b.list_for(Buffer::App(buf));
    b.push_to(l, Match::Bsize(c));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn websocket_opcodes_by_name_or_number() {
        assert_eq!(websocket_opcode("text"), Some(Cmp::Eq(1)));
        assert_eq!(websocket_opcode("!ping"), Some(Cmp::Ne(9)));
        assert_eq!(websocket_opcode("connection_close"), Some(Cmp::Eq(8)));
        assert_eq!(websocket_opcode(">8"), Some(Cmp::Gt(8)));
        assert_eq!(websocket_opcode("chat"), None);
    }

    #[test]
    fn mqtt_types_and_flags() {
        assert_eq!(mqtt_type("CONNACK"), Some(Cmp::Eq(2)));
        assert_eq!(mqtt_type("unsuback"), Some(Cmp::Eq(11)));
        assert_eq!(mqtt_type("3"), Some(Cmp::Eq(3)));
        assert_eq!(mqtt_type("CONNECTED"), None);
        let f = [("dup", 0x08), ("retain", 0x01)];
        assert_eq!(flags("!retain, !dup", &f), Some(Cmp::Mask(9, 0)));
        assert_eq!(flags("dup", &f), Some(Cmp::Mask(8, 8)));
        assert_eq!(flags("&9=8", &f), Some(Cmp::Mask(9, 8)));
        assert_eq!(flags("dup,bogus", &f), None);
        assert!(Cmp::Mask(9, 8).test(0x0a) && !Cmp::Mask(9, 8).test(0x09));
    }

    #[test]
    fn a_flagged_pcre_joins_its_buffers_list() {
        // As `content:"Host: "; http_header; pcre:"/^x/RH";` reads in Suricata: the
        // pcre goes on from the header content, in one list.
        let r = crate::parse_rule(
            "alert http any any -> any any (content:\"Host: \"; http_header; \
             content:\"a\"; pcre:\"/^b/RH\"; pcre:\"/c/U\"; sid:1;)",
            &crate::Vars::default(),
        )
        .unwrap();
        let lists: Vec<(Buffer, usize)> = r
            .lists
            .iter()
            .map(|l| (l.buffer, l.matches.len()))
            .collect();
        assert_eq!(
            lists,
            [
                (Buffer::Payload, 1),
                (Buffer::App(AppBuffer::HttpHeader), 2),
                (Buffer::App(AppBuffer::HttpUri), 1)
            ]
        );
    }

    #[test]
    fn tls_versions_by_name_or_number() {
        assert_eq!(tls_version("1.2"), Some(Cmp::Eq(0x0303)));
        assert_eq!(tls_version(" 1.0 "), Some(Cmp::Eq(0x0301)));
        assert_eq!(tls_version("3.0"), Some(Cmp::Eq(0x0300)));
        assert_eq!(tls_version("0x0304"), Some(Cmp::Eq(0x0304)));
        assert_eq!(tls_version("1.9"), None);
    }
}
