//! Buffers: a buffer's name (sticky, legacy modifier or integer keyword), `pkt_data`
//! back to the payload, and `urilen`.

use super::{Builder, Opt, ParseError, parse_cmp, parse_num};
use crate::buffer::{AppBuffer, AppNeed, Spelling};
use crate::rule::{Buffer, Cmp, Match};

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
        Spelling::Integer => {
            let v = o.need()?;
            let c = match buf {
                AppBuffer::TlsVersion => tls_version(v),
                AppBuffer::FtpMode => ftp_mode(v),
                AppBuffer::FtpReplyReceived => yes_no(v),
                _ => parse_cmp(v),
            };
            let c = c.ok_or_else(|| o.bad("bad number"))?;
            let l = b.list_for(Buffer::App(buf));
            b.push_to(l, Match::Uint(c));
        }
    }
    Ok(())
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

/// `yes`/`on` as 1, `no`/`off` as 0 (`ftp.reply_received:yes`).
fn yes_no(v: &str) -> Option<Cmp> {
    match v.trim() {
        "yes" | "on" => Some(Cmp::Eq(1)),
        "no" | "off" => Some(Cmp::Eq(0)),
        _ => None,
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
    fn tls_versions_by_name_or_number() {
        assert_eq!(tls_version("1.2"), Some(Cmp::Eq(0x0303)));
        assert_eq!(tls_version(" 1.0 "), Some(Cmp::Eq(0x0301)));
        assert_eq!(tls_version("3.0"), Some(Cmp::Eq(0x0300)));
        assert_eq!(tls_version("0x0304"), Some(Cmp::Eq(0x0304)));
        assert_eq!(tls_version("1.9"), None);
    }
}
