//! Flow state: `flow`, `flowbits`, `stream_size`.

use super::{Builder, Opt, ParseError, parse_num};
use crate::rule::{Cmp, Cond, Flowbit, FlowbitCmd, StreamSide};

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

/// `stream_size:server|client|both|either, op, n`.
pub(super) fn stream_size(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let parts: Vec<&str> = o.need()?.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(o.bad("expected side, operator, number"));
    }
    let side = StreamSide::by_name(parts[0])
        .ok_or_else(|| o.bad("side must be server, client, both or either"))?;
    let n = parse_num(parts[2]).ok_or_else(|| o.bad("not a number"))?;
    let cmp = match parts[1] {
        "<" => Cmp::Lt(n),
        ">" => Cmp::Gt(n),
        "=" => Cmp::Eq(n),
        "!=" => Cmp::Ne(n),
        "<=" => Cmp::Le(n),
        ">=" => Cmp::Ge(n),
        _ => return Err(o.bad("unknown operator")),
    };
    b.rule.conds.push(Cond::StreamSize { side, cmp });
    Ok(())
}
