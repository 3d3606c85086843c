//! Flow state: `flow`, `flowbits`, `stream_size`.

use super::{Builder, Opt, ParseError, parse_cmp, parse_num};
use crate::rule::{AlMode, AlProto, IpRepSide};
use crate::rule::{
    Cmp, Cond, Flowbit, FlowbitCmd, Flowint, FlowintOp, FlowintVal, StreamSide, Xbit, XbitTrack,
};

/// `flow:established,to_server` and the rest of its words.
pub(super) fn flow(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    for word in o.need()?.split(',') {
        let word = word.trim();
        if !b.rule.flow.set(word) {
            return Err(o.bad(&format!("unknown flow option '{word}'")));
        }
    }
    Ok(())
}

/// `flowbits:set,name`, `isset,a|b`, `noalert`, ...
pub(super) fn flowbits(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?;
    let (cmd, names) = match v.split_once(',') {
        Some((c, n)) => (c.trim(), Some(n.trim())),
        None => (v.trim(), None),
    };
    if cmd == "noalert" {
        b.rule.noalert = true;
        return Ok(());
    }
    let cmd = FlowbitCmd::by_name(cmd).ok_or_else(|| o.bad(&format!("unknown command '{cmd}'")))?;
    let names = names.ok_or_else(|| o.bad("no flowbit name"))?;
    let any = names.contains('|');
    let list: Vec<String> = names
        .split(['|', '&'])
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if list.is_empty() {
        return Err(o.bad("no flowbit name"));
    }
    b.rule.flowbits.push(Flowbit {
        cmd,
        names: list,
        any,
    });
    Ok(())
}

/// `xbits:set,name,track ip_src[,expire 30]` (and `unset`, `toggle`, `isset`,
/// `isnotset`).
pub(super) fn xbits(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    bits_on_hosts(b, o, false)
}

/// `hostbits:set,name[,src|dst][,expire 30]`: `xbits` on a host (the source by
/// default); `hostbits:noalert` as `flowbits:noalert`.
pub(super) fn hostbits(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    bits_on_hosts(b, o, true)
}

/// `xbits`, or with `hostbits` its older spelling.
fn bits_on_hosts(b: &mut Builder, o: &Opt<'_>, hostbits: bool) -> Result<(), ParseError> {
    let v = o.need()?;
    if hostbits && v.trim() == "noalert" {
        b.rule.noalert = true;
        return Ok(());
    }
    let mut parts = v.split(',').map(str::trim);
    let (cmd, name) = bit_and_name(o, &mut parts)?;
    let (mut track, mut expire) = (hostbits.then_some(XbitTrack::IpSrc), None);
    for p in parts {
        match (hostbits, &p.split_whitespace().collect::<Vec<_>>()[..]) {
            (false, ["track", t]) => {
                track = Some(
                    XbitTrack::by_name(t).ok_or_else(|| o.bad(&format!("unknown track '{t}'")))?,
                )
            }
            (true, ["src"]) => track = Some(XbitTrack::IpSrc),
            (true, ["dst"]) => track = Some(XbitTrack::IpDst),
            (_, ["expire", n]) => {
                expire = Some(n.parse().map_err(|_| o.bad(&format!("bad expire '{n}'")))?)
            }
            _ => return Err(o.bad(&format!("unknown option '{p}'"))),
        }
    }
    let track = track.ok_or_else(|| o.bad("xbits need a track"))?;
    b.rule.xbits.push(Xbit {
        cmd,
        name,
        track,
        expire,
    });
    Ok(())
}

/// The command and the bit's name that start `xbits` and `hostbits`.
fn bit_and_name<'a>(
    o: &Opt<'_>,
    parts: &mut impl Iterator<Item = &'a str>,
) -> Result<(FlowbitCmd, String), ParseError> {
    let cmd = parts.next().unwrap_or("");
    let cmd = FlowbitCmd::by_name(cmd).ok_or_else(|| o.bad(&format!("unknown command '{cmd}'")))?;
    let name = parts
        .next()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| o.bad("no bit name"))?;
    Ok((cmd, name.to_string()))
}

/// `flowint:name,op[,value]`: a counter of the flow, changed (`=`, `+`, `-`) or tested
/// (`==`, `!=`, `<`, `>`, `<=`, `>=`, `isset`, `notset`/`isnotset`); the value is a
/// number or another counter's name.
pub(super) fn flowint(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let parts: Vec<&str> = o.need()?.split(',').map(str::trim).collect();
    let (name, op) = match parts[..] {
        [name, op] | [name, op, _] if !name.is_empty() => (name, op),
        _ => return Err(o.bad("expected name, operator[, value]")),
    };
    let op = match op {
        "isnotset" => FlowintOp::NotSet,
        op => FlowintOp::by_name(op).ok_or_else(|| o.bad(&format!("unknown operator '{op}'")))?,
    };
    let value = match (op, parts.get(2)) {
        (FlowintOp::IsSet | FlowintOp::NotSet, None) => None,
        (FlowintOp::IsSet | FlowintOp::NotSet, Some(_)) => {
            return Err(o.bad(&format!("'{op}' takes no value")));
        }
        (_, None) => return Err(o.bad("no value")),
        (_, Some(v)) => Some(match v.parse() {
            Ok(n) => FlowintVal::Num(n),
            Err(_)
                if v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) =>
            {
                FlowintVal::Var(v.to_string())
            }
            Err(_) => return Err(o.bad(&format!("bad value '{v}'"))),
        }),
    };
    b.rule.flowints.push(Flowint {
        name: name.to_string(),
        op,
        value,
    });
    Ok(())
}

/// `flow.pkts:toserver|toclient|either,<cmp>` (and `flow.bytes`); the older
/// `flow.pkts_toserver:<cmp>` and the like name their side.
pub(super) fn flow_count(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?;
    let bytes = o.name.starts_with("flow.bytes");
    let (side, cmp) = match o.name.rsplit_once('_') {
        Some((_, side)) => (side, v),
        None => v
            .split_once(',')
            .map(|(s, c)| (s.trim(), c))
            .ok_or_else(|| o.bad("expected direction, comparison"))?,
    };
    let side = match side {
        "toserver" => StreamSide::Server,
        "toclient" => StreamSide::Client,
        "either" => StreamSide::Either,
        _ => return Err(o.bad("direction must be toserver, toclient or either")),
    };
    let cmp = parse_cmp(cmp).ok_or_else(|| o.bad("bad comparison"))?;
    b.rule.conds.push(Cond::FlowCount { bytes, side, cmp });
    Ok(())
}

/// `flow.age:<cmp>`: seconds since the flow began.
pub(super) fn flow_age(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let cmp = parse_cmp(o.need()?).ok_or_else(|| o.bad("bad comparison"))?;
    b.rule.conds.push(Cond::FlowAge(cmp));
    Ok(())
}

/// An operator written apart from its number (`stream_size`, `iprep`): `<`, `>`, `=`,
/// `!=`, `<=` or `>=`.
fn side_op(op: &str, n: i64) -> Option<Cmp> {
    Some(match op {
        "<" => Cmp::Lt(n),
        ">" => Cmp::Gt(n),
        "=" => Cmp::Eq(n),
        "!=" => Cmp::Ne(n),
        "<=" => Cmp::Le(n),
        ">=" => Cmp::Ge(n),
        _ => return None,
    })
}

/// `iprep:<any|src|dst|both>,<category>,<op>,<value>` (op `<`, `>`, `=`, `!=`, `<=`,
/// `>=`; value 0 to 127).
pub(super) fn iprep(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let parts: Vec<&str> = o.need()?.split(',').map(str::trim).collect();
    let [side, category, op, value] = parts[..] else {
        return Err(o.bad("expected side, category, operator, value"));
    };
    let side =
        IpRepSide::by_name(side).ok_or_else(|| o.bad("side must be any, src, dst or both"))?;
    let n = parse_num(value)
        .filter(|n| (0..=127).contains(n))
        .ok_or_else(|| o.bad("value must be 0 to 127"))?;
    let cmp = side_op(op, n).ok_or_else(|| o.bad("unknown operator"))?;
    if category.is_empty() {
        return Err(o.bad("no category"));
    }
    b.rule.conds.push(Cond::IpRep {
        side,
        category: category.to_string(),
        id: 0,
        cmp,
    });
    Ok(())
}

/// `app-layer-protocol:[!]<proto>[,<mode>]`; `unknown` is never negated.
pub(super) fn app_layer_protocol(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?;
    let (name, mode) = match v.split_once(',') {
        Some((n, m)) => (
            n.trim(),
            AlMode::by_name(m.trim()).ok_or_else(|| o.bad("unknown mode"))?,
        ),
        None => (v.trim(), AlMode::Direction),
    };
    let (negated, name) = match name.strip_prefix('!') {
        Some(n) => (true, n.trim()),
        None => (false, name),
    };
    let proto = AlProto::by_name(name).ok_or_else(|| o.bad("unknown protocol"))?;
    if negated && proto == AlProto::Unknown {
        return Err(o.bad("unknown cannot be negated"));
    }
    b.rule.conds.push(Cond::AppLayerProtocol {
        negated,
        proto,
        mode,
    });
    Ok(())
}

/// `stream_size:server|client|both|either, op, n`.
pub(super) fn stream_size(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let parts: Vec<&str> = o.need()?.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(o.bad("expected side, operator, number"));
    }
    let side = StreamSide::by_name(parts[0])
        .ok_or_else(|| o.bad("side must be server, client, both or either"))?;
    let n = parse_num(parts[2]).ok_or_else(|| o.bad("not a number"))?;
    let cmp = side_op(parts[1], n).ok_or_else(|| o.bad("unknown operator"))?;
    b.rule.conds.push(Cond::StreamSize { side, cmp });
    Ok(())
}
