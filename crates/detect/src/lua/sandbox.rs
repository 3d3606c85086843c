//! The sandbox every copy of a script runs in: the libraries Suricata 8 lets rule
//! scripts use, its memory and instruction limits, and why a call failed.

use std::fmt;

use mlua::{
    FromLuaMulti, Function, HookTriggers, IntoLuaMulti, Lua, LuaOptions, MultiValue, StdLib, Value,
};

use super::{Config, Env, libs};

/// Functions of the base library a sandboxed script may call; the others are
/// replaced by one that fails ("Blocked Lua function called").
const BASE_ALLOWED: &[&str] = &[
    "assert", "error", "ipairs", "next", "pairs", "print", "rawequal", "rawget", "rawlen",
    "rawset", "select", "tonumber", "tostring", "type", "warn",
];

/// Base functions Lua 5.4 has that [`BASE_ALLOWED`] leaves out.
const BASE_BLOCKED: &[&str] = &[
    "collectgarbage",
    "dofile",
    "getmetatable",
    "load",
    "loadfile",
    "pcall",
    "setmetatable",
    "xpcall",
];

const BLOCKED: &str = "Blocked Lua function called: ";
const INSTRUCTIONS: &str = "instruction limit exceeded";

/// Why a script's call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// It called a function the sandbox blocks (its name).
    Blocked(String),
    /// It ran more than `max-instructions` instructions.
    Instructions,
    /// It needed more than `max-bytes` of memory.
    Memory,
    /// Any other error (its first line).
    Error(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Blocked(name) => write!(f, "{BLOCKED}{name}"),
            Failure::Instructions => f.write_str(INSTRUCTIONS),
            Failure::Memory => f.write_str("memory limit exceeded"),
            Failure::Error(m) => f.write_str(m),
        }
    }
}

impl From<mlua::Error> for Failure {
    fn from(e: mlua::Error) -> Failure {
        if let mlua::Error::MemoryError(_) = e {
            return Failure::Memory;
        }
        let text = e.to_string();
        if let Some(at) = text.find(BLOCKED) {
            let name = text[at + BLOCKED.len()..]
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or_default();
            return Failure::Blocked(name.to_string());
        }
        if text.contains(INSTRUCTIONS) {
            return Failure::Instructions;
        }
        if text.contains("not enough memory") {
            return Failure::Memory;
        }
        Failure::Error(text.lines().next().unwrap_or_default().to_string())
    }
}

/// A new state: the libraries the settings allow, `require` for Suricata's libraries,
/// and the memory limit.
pub fn new(cfg: &Config) -> Result<Lua, Failure> {
    let libs = if cfg.allow_restricted {
        StdLib::ALL_SAFE
    } else {
        StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::UTF8
    };
    let lua = Lua::new_with(libs, LuaOptions::new())?;
    let g = lua.globals();
    if !cfg.allow_restricted {
        for &name in BASE_BLOCKED {
            let f = lua.create_function(move |_, _: MultiValue| -> mlua::Result<()> {
                Err(mlua::Error::runtime(format!("{BLOCKED}{name}")))
            })?;
            g.set(name, f)?;
        }
        debug_assert!(BASE_ALLOWED.iter().all(|n| !BASE_BLOCKED.contains(n)));
    }
    g.set("require", libs::require_fn(&lua)?)?;
    lua.set_app_data::<super::Clock>(cfg.clock);
    lua.set_memory_limit(cfg.max_bytes)?;
    Ok(lua)
}

/// Runs a script's chunk (its top level), within the instruction limit.
pub fn run_chunk(lua: &Lua, cfg: &Config, name: &str, source: &[u8]) -> Result<(), Failure> {
    limited(lua, cfg, || lua.load(source).set_name(name).exec()).map_err(Failure::from)
}

/// Calls `f` outside any packet (`init`, `thread_init`).
pub fn call<R: FromLuaMulti>(
    lua: &Lua,
    cfg: &Config,
    f: &Function,
    args: impl IntoLuaMulti,
) -> Result<R, Failure> {
    limited(lua, cfg, || f.call::<R>(args)).map_err(Failure::from)
}

/// Calls `f` with `env` readable by the libraries for the length of the call.
pub fn call_in<R: FromLuaMulti>(
    lua: &Lua,
    cfg: &Config,
    f: &Function,
    env: &mut Env<'_>,
    args: MultiValue,
) -> Result<R, Failure> {
    let out = lua.scope(|scope| {
        let reader = scope.create_function_mut(|lua, (i, args): (usize, MultiValue)| {
            libs::dispatch(lua, env, i, args)
        })?;
        lua.set_named_registry_value(libs::ENV_KEY, reader)?;
        limited(lua, cfg, || f.call::<R>(args))
    });
    // The reader died with the scope; what remains in the registry is unusable.
    let _ = lua.set_named_registry_value(libs::ENV_KEY, Value::Nil);
    out.map_err(Failure::from)
}

/// Runs `f` with the instruction limit set, counted from this call.
fn limited<R>(lua: &Lua, cfg: &Config, f: impl FnOnce() -> mlua::Result<R>) -> mlua::Result<R> {
    let every = HookTriggers::new().every_nth_instruction(cfg.max_instructions.max(1));
    lua.set_hook(every, |_, _| Err(mlua::Error::runtime(INSTRUCTIONS)))?;
    let out = f();
    lua.remove_hook();
    out
}
