//! Numbers read from the buffer: `byte_test`, `byte_jump`, `byte_extract`, `byte_math`.

use super::{Builder, Opt, ParseError, parse_num, parse_val};
use crate::rule::{ByteOp, ByteRead, Endian, Match, MathOp, Val};

pub(super) fn byte_test(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let parts = fields(o, 4, "expected bytes, operator, value, offset")?;
    // The count may be a `byte_extract` variable (Suricata 7): checked when read.
    let count = parse_val(parts[0]).ok_or_else(|| o.bad("bad byte count"))?;
    let bytes = match count {
        Val::Num(_) => byte_count(o, parts[0])?,
        Val::Var(_) => 0,
    };
    let (negated, opstr) = match parts[1].strip_prefix('!') {
        Some(r) => (true, r.trim()),
        None => (false, parts[1]),
    };
    let op = ByteOp::by_name(opstr).ok_or_else(|| o.bad("unknown operator"))?;
    // `!` alone means "not equal".
    let negated = negated || parts[1] == "!";
    let value = parse_val(parts[2]).ok_or_else(|| o.bad("bad value"))?;
    let offset = parse_val(parts[3]).ok_or_else(|| o.bad("bad offset"))?;
    let read = byte_read_opts(o, bytes, offset, &parts[4..], &mut |_, _| Ok(false))?;
    b.push(Match::ByteTest {
        read,
        count,
        negated,
        op,
        value,
    });
    Ok(())
}

pub(super) fn byte_jump(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let parts = fields(o, 2, "expected bytes, offset")?;
    let bytes = byte_count(o, parts[0])?;
    let offset = parse_val(parts[1]).ok_or_else(|| o.bad("bad offset"))?;
    let mut multiplier = 1u64;
    let mut align = false;
    let mut from_beginning = false;
    let mut from_end = false;
    let mut post_offset = 0i64;
    let read = byte_read_opts(o, bytes, offset, &parts[2..], &mut |k, v| {
        match k {
            "multiplier" => multiplier = number(o, v, "bad multiplier")? as u64,
            "align" => align = true,
            "from_beginning" => from_beginning = true,
            "from_end" => from_end = true,
            "post_offset" => post_offset = number(o, v, "bad post_offset")?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    b.push(Match::ByteJump {
        read,
        multiplier,
        align,
        from_beginning,
        from_end,
        post_offset,
    });
    Ok(())
}

pub(super) fn byte_extract(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let parts = fields(o, 3, "expected bytes, offset, name")?;
    let bytes = byte_count(o, parts[0])?;
    let offset = parse_val(parts[1]).ok_or_else(|| o.bad("bad offset"))?;
    let name = parts[2].to_string();
    if name.is_empty() || parse_num(&name).is_some() {
        return Err(o.bad("bad variable name"));
    }
    let mut multiplier = 1u64;
    let mut align = 0u8;
    let read = byte_read_opts(o, bytes, offset, &parts[3..], &mut |k, v| {
        match k {
            "multiplier" => multiplier = number(o, v, "bad multiplier")? as u64,
            "align" => {
                align = v
                    .and_then(parse_num)
                    .filter(|a| *a == 2 || *a == 4)
                    .ok_or_else(|| o.bad("align must be 2 or 4"))? as u8
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    b.push(Match::ByteExtract {
        read,
        name,
        multiplier,
        align,
    });
    Ok(())
}

/// `byte_math:bytes 2, offset 0, oper +, rvalue 10, result sum[, relative, endian big,
/// string dec, dce, bitmask 0xff]`: named fields in any order.
pub(super) fn byte_math(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let parts = fields(o, 5, "expected bytes, offset, oper, rvalue, result")?;
    // `endian big` and `string dec` name what the shared options spell `big`, `dec`.
    let mut shared = Vec::new();
    for p in &parts {
        match p.split_once(char::is_whitespace) {
            Some(("endian", v)) => shared.push(v.trim()),
            Some(("string", v)) => shared.extend(["string", v.trim()]),
            _ => shared.push(p),
        }
    }
    let (mut count, mut offset, mut oper, mut rvalue, mut result) = (None, None, None, None, None);
    let mut read = byte_read_opts(o, 0, Val::Num(0), &shared, &mut |k, v| {
        let v = v.ok_or_else(|| o.bad(&format!("{k} needs a value")))?;
        match k {
            "bytes" => count = Some(parse_val(v).ok_or_else(|| o.bad("bad byte count"))?),
            "offset" => offset = Some(parse_val(v).ok_or_else(|| o.bad("bad offset"))?),
            "oper" => oper = Some(MathOp::by_name(v).ok_or_else(|| o.bad("unknown operator"))?),
            "rvalue" => rvalue = Some(parse_val(v).ok_or_else(|| o.bad("bad rvalue"))?),
            "result" => result = Some(v.to_string()),
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    let (Some(count), Some(offset), Some(oper), Some(rvalue), Some(result)) =
        (count, offset, oper, rvalue, result)
    else {
        return Err(o.bad("expected bytes, offset, oper, rvalue, result"));
    };
    if result.is_empty() || parse_num(&result).is_some() {
        return Err(o.bad("bad variable name"));
    }
    let max = if read.string_base.is_some() { 10 } else { 4 };
    if let Val::Num(n) = count
        && !(1..=max).contains(&n)
    {
        return Err(o.bad(&format!("bytes must be 1 to {max}")));
    }
    read.offset = offset;
    b.push(Match::ByteMath {
        read,
        count,
        oper,
        rvalue,
        result,
    });
    Ok(())
}

/// The comma-separated fields of the value, at least `min` of them.
fn fields<'a>(o: &Opt<'a>, min: usize, expected: &str) -> Result<Vec<&'a str>, ParseError> {
    let parts: Vec<&str> = o.need()?.split(',').map(str::trim).collect();
    if parts.len() < min {
        return Err(o.bad(expected));
    }
    Ok(parts)
}

fn byte_count(o: &Opt<'_>, field: &str) -> Result<u8, ParseError> {
    field.parse().map_err(|_| o.bad("bad byte count"))
}

fn number(o: &Opt<'_>, v: Option<&str>, why: &str) -> Result<i64, ParseError> {
    v.and_then(parse_num).ok_or_else(|| o.bad(why))
}

/// A handler for options particular to one byte keyword: true when it took the option.
type ExtraOpt<'a> = dyn FnMut(&str, Option<&str>) -> Result<bool, ParseError> + 'a;

/// The options every byte keyword shares (`relative`, endianness, `string`, base,
/// `dce`, `bitmask`); `extra` takes the others.
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
                let v = v.ok_or_else(|| o.bad("bitmask needs a value"))?;
                r.bitmask = Some(parse_num(v).ok_or_else(|| o.bad("bad bitmask"))? as u64);
            }
            "" => {}
            _ => {
                if !extra(k, v)? {
                    return Err(o.bad(&format!("unknown option '{k}'")));
                }
            }
        }
    }
    if !string {
        r.string_base = None;
        // byte_jump may read 0 bytes (a jump by post_offset alone).
        if bytes > 8 {
            return Err(o.bad("binary reads take 1 to 8 bytes"));
        }
    } else if bytes > 23 {
        return Err(o.bad("string reads take 1 to 23 bytes"));
    }
    Ok(r)
}
