//! Transforms with arguments: `pcrexform`, `xor`, `from_base64`, `gunzip` and
//! `zlib_deflate` (those without arguments are names in the keyword table).

use super::{Builder, Opt, ParseError, unquote};
use crate::buffer::{Base64Mode, Transform};

/// `pcrexform:"re"`: the expression, which must capture a group.
pub(super) fn pcrexform(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let re = unquote(o.need()?);
    if !re.contains('(') {
        return Err(o.bad("the expression captures no group"));
    }
    b.transform(Transform::Pcre(re.to_string()));
    Ok(())
}

/// `xor:"0d0ac8ff"`: the key in hex, an even number of digits.
pub(super) fn xor(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let hex = unquote(o.need()?).as_bytes();
    if hex.is_empty() || !hex.len().is_multiple_of(2) || hex.len() > 510 {
        return Err(o.bad("the key must be 1 to 255 bytes in hex"));
    }
    let key = hex
        .chunks(2)
        .map(|p| {
            std::str::from_utf8(p)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| o.bad("the key is not hex"))?;
    b.transform(Transform::Xor(key));
    Ok(())
}

/// `from_base64[: bytes N][, offset N][, mode rfc4648|rfc2045|strict]`.
pub(super) fn from_base64(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let (mut offset, mut bytes, mut mode) = (0, None, Base64Mode::Rfc4648);
    for (k, v) in o.items()? {
        match (k, v) {
            ("mode", Some(m)) => {
                mode =
                    Base64Mode::by_name(m).ok_or_else(|| o.bad(&format!("unknown mode '{m}'")))?;
            }
            ("bytes", Some(n)) => bytes = Some(o.item_number(k, n)?),
            ("offset", Some(n)) => offset = o.item_number(k, n)?,
            _ => return Err(o.bad(&format!("unknown option '{k}'"))),
        }
    }
    b.transform(Transform::FromBase64 {
        offset,
        bytes,
        mode,
    });
    Ok(())
}

/// `gunzip[: max-size N]`.
pub(super) fn gunzip(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let max = max_size(o)?;
    b.transform(Transform::Gunzip { max });
    Ok(())
}

/// `zlib_deflate[: max-size N]`.
pub(super) fn zlib_deflate(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let max = max_size(o)?;
    b.transform(Transform::ZlibDeflate { max });
    Ok(())
}

fn max_size(o: &Opt<'_>) -> Result<u32, ParseError> {
    match o.value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(Transform::MAX_DECOMPRESSED),
        Some(v) => {
            let n = v
                .strip_prefix("max-size")
                .map(str::trim)
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&n| n > 0);
            n.ok_or_else(|| o.bad("expected max-size N"))
        }
    }
}

/// `luaxform:script[, arg]...`: the script's file name, then the arguments its
/// `transform` function receives, each as written.
pub(super) fn luaxform(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let mut parts = o.need()?.split(',').map(str::trim);
    let script = parts.next().filter(|s| !s.is_empty());
    let script = script.ok_or_else(|| o.bad("expected a script's file name"))?;
    let args = parts.map(str::to_string).collect();
    b.transform(Transform::Lua {
        script: script.to_string(),
        args,
    });
    Ok(())
}
