//! `lua`: a Lua script's verdict as one of the rule's conditions.

use super::{Builder, Opt, ParseError};
use crate::rule::LuaCall;

/// `lua:[!]script` (and the older name `luajit`): the script's file name, resolved when
/// the rule set is built.
pub(super) fn lua(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?.trim();
    let (negated, script) = match v.strip_prefix('!') {
        Some(s) => (true, s.trim()),
        None => (false, v),
    };
    if script.is_empty() {
        return Err(o.bad("expected a script's file name"));
    }
    b.rule.lua.push(LuaCall {
        script: script.to_string(),
        negated,
    });
    Ok(())
}
