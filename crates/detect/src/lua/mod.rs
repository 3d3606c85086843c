//! Lua scripts in rules, as Suricata 8 runs them: the `lua` keyword (a script's
//! `match` function judges the packet, its flow and the transaction) and the `luaxform`
//! transform (a script's `transform` function rewrites a buffer).
//!
//! A script is read and checked when the rule set is built ([`Script::load`]): its chunk
//! runs, then `init(args)`, whose table names what the script needs (`packet`,
//! `payload`, `stream`: judged on packets; otherwise a rule of an application protocol
//! is judged on its transactions). Each worker thread then runs its own copy of the
//! script ([`Script::matches`], [`Script::transform`]), made the first time the thread
//! needs it: its chunk, then `thread_init()`. Globals live as long as that copy.
//!
//! Every copy runs in a sandbox (`sandbox.rs`): the base, `string`, `table`, `math` and
//! `utf8` libraries only (others blocked, unless `security.lua.allow-restricted-functions`),
//! at most `max-bytes` of memory and `max-instructions` instructions per call. A call
//! that fails is counted ([`stats`]) and logged, and judged as not matching.
//!
//! What a script reads of the traffic comes from Suricata's libraries (`suricata.packet`,
//! `suricata.flow`, `suricata.dns`, ...; `libs.rs`). They read an [`Env`] that exists only
//! while the call runs: a library function called outside `match` finds no packet.

mod libs;
mod sandbox;

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use mlua::{Function, Lua, MultiValue, Value};
use netsieve_packet::Packet;
use netsieve_packet::PerDir;

use crate::app::TxRef;
use crate::vars::FlowVars;

pub use sandbox::Failure;

/// `security.lua` and where scripts are found.
#[derive(Clone, Debug)]
pub struct Config {
    /// `security.lua.allow-rules` (on by default since Suricata 8.0.3).
    pub allow_rules: bool,
    /// `security.lua.allow-restricted-functions`: every standard library, nothing
    /// blocked.
    pub allow_restricted: bool,
    /// `security.lua.max-bytes`: memory one copy of a script may hold.
    pub max_bytes: usize,
    /// `security.lua.max-instructions`: instructions one call may run.
    pub max_instructions: u32,
    /// `default-rule-path`: where script names start; else the rule file's directory.
    pub rule_path: Option<PathBuf>,
    /// Formats a time as the packet library's `timestring_legacy` (false) and
    /// `timestring_iso8601` (true) give it, in the local zone (the binary knows it).
    pub clock: Clock,
}

/// Formats a time for the packet library (see [`Config::clock`]).
pub type Clock = fn(Duration, bool) -> String;

impl Default for Config {
    fn default() -> Config {
        Config {
            allow_rules: true,
            allow_restricted: false,
            max_bytes: 500_000,
            max_instructions: 500_000,
            rule_path: None,
            clock: epoch_clock,
        }
    }
}

/// Times as seconds since the epoch, when the binary set no clock (it sets one that
/// writes EVE's and fast.log's forms).
fn epoch_clock(t: Duration, _iso: bool) -> String {
    format!("{}.{:06}", t.as_secs(), t.subsec_micros())
}

static CONFIG: RwLock<Option<Config>> = RwLock::new(None);

/// Sets the process's Lua settings (before the rules are built).
pub fn set_config(c: Config) {
    *CONFIG.write().unwrap_or_else(|e| e.into_inner()) = Some(c);
}

fn config() -> Config {
    let c = CONFIG.read().unwrap_or_else(|e| e.into_inner());
    c.clone().unwrap_or_default()
}

/// Failed calls since the process began, by cause (EVE's `stats.detect.lua`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub errors: u64,
    pub blocked_function_errors: u64,
    pub instruction_limit_errors: u64,
    pub memory_limit_errors: u64,
}

static ERRORS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

/// The counters of failed calls.
pub fn stats() -> Stats {
    let n = |i: usize| ERRORS[i].load(Ordering::Relaxed);
    Stats {
        errors: n(0),
        blocked_function_errors: n(1),
        instruction_limit_errors: n(2),
        memory_limit_errors: n(3),
    }
}

/// Failures logged at most, so that a script failing on every packet cannot flood the
/// log.
const MAX_LOGGED: u64 = 100;

/// Counts and logs a failed call.
fn failed(f: &Failure) {
    let n = ERRORS[0].fetch_add(1, Ordering::Relaxed);
    let kind = match f {
        Failure::Blocked(_) => Some(1),
        Failure::Instructions => Some(2),
        Failure::Memory => Some(3),
        Failure::Error(_) => None,
    };
    if let Some(k) = kind {
        ERRORS[k].fetch_add(1, Ordering::Relaxed);
    }
    if n < MAX_LOGGED {
        eprintln!("netsieve scan: Lua script failed to run successfully: {f}");
    }
}

/// What a script is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `lua`: `match(args)` returns 1 when the rule holds.
    Match,
    /// `luaxform`: `transform(input, args)` returns the new buffer.
    Transform,
}

/// What `init` said the script reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// The whole packet, its payload or the stream: judged on packets.
    pub packet: bool,
}

/// A script, read and checked.
#[derive(Debug)]
pub struct Script {
    id: u64,
    name: String,
    source: Vec<u8>,
    kind: Kind,
    needs: Needs,
    /// Byte variables `init` mapped (`suricata.bytevar`'s `map`), by name.
    bytevars: Vec<String>,
    /// Flowints `init` registered (`suricata.flowint`'s `register`), by name.
    flowints: Vec<String>,
    /// The settings in force when it was loaded, which its copies keep.
    cfg: Config,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Script {
    /// Reads script `name` (from `default-rule-path`, else from the directory of
    /// `rule_file`), runs its chunk and, for a `lua` script, `init`.
    pub fn load(name: &str, rule_file: &str, kind: Kind) -> Result<Arc<Script>, String> {
        Script::load_with(name, rule_file, kind, config())
    }

    /// [`Script::load`] with settings `cfg`.
    pub fn load_with(
        name: &str,
        rule_file: &str,
        kind: Kind,
        cfg: Config,
    ) -> Result<Arc<Script>, String> {
        if !cfg.allow_rules {
            return Err("Lua rules are disabled (security.lua.allow-rules)".into());
        }
        let dir = match &cfg.rule_path {
            Some(p) => p.clone(),
            None => Path::new(rule_file)
                .parent()
                .unwrap_or(Path::new(""))
                .to_path_buf(),
        };
        let path = dir.join(name);
        let source = std::fs::read(&path).map_err(|e| format!("lua: {}: {e}", path.display()))?;
        Script::from_source(name, source, kind, cfg)
    }

    /// A script from its text `source`, named `name`, checked as [`Script::load`]
    /// checks one.
    pub fn from_source(
        name: &str,
        source: Vec<u8>,
        kind: Kind,
        cfg: Config,
    ) -> Result<Arc<Script>, String> {
        let mut script = Script {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name: name.to_string(),
            source,
            kind,
            needs: Needs::default(),
            bytevars: Vec::new(),
            flowints: Vec::new(),
            cfg: cfg.clone(),
        };
        let lua = sandbox::new(&cfg).map_err(|e| format!("lua: {name}: {e}"))?;
        let mut setup = || -> Result<(), Failure> {
            sandbox::run_chunk(&lua, &cfg, &script.name, &script.source)?;
            let entry = match kind {
                Kind::Match => "match",
                Kind::Transform => "transform",
            };
            if lua.globals().get::<Option<Function>>(entry)?.is_none() {
                return Err(Failure::Error(format!("no {entry} function")));
            }
            if kind == Kind::Match {
                let init: Option<Function> = lua.globals().get("init")?;
                let init = init.ok_or_else(|| Failure::Error("no init function".into()))?;
                let needs: Value = sandbox::call(&lua, &cfg, &init, libs::sig_arg(&lua)?)?;
                script.needs = needs_of(&needs);
            }
            Ok(())
        };
        setup().map_err(|e| format!("lua: {name}: {e}"))?;
        script.bytevars = libs::registered(&lua, libs::BYTEVARS_KEY);
        script.flowints = libs::registered(&lua, libs::FLOWINTS_KEY);
        Ok(Arc::new(script))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn needs(&self) -> Needs {
        self.needs
    }

    /// The byte variables the script reads, by name.
    pub fn bytevars(&self) -> &[String] {
        &self.bytevars
    }

    /// The flowints the script registered, by name (the rule set gives them ids).
    pub fn flowints(&self) -> &[String] {
        &self.flowints
    }

    /// Whether `match` returns 1 (or true) on what `env` shows. A failed call is
    /// counted and does not match.
    pub fn matches(self: &Arc<Script>, env: &mut Env<'_>) -> bool {
        let verdict = self.with_copy(|lua, cfg, f| {
            let v: Value = sandbox::call_in(lua, cfg, f, env, MultiValue::new())?;
            Ok(match v {
                Value::Integer(n) => n == 1,
                Value::Number(n) => n == 1.0,
                Value::Boolean(b) => b,
                _ => false,
            })
        });
        verdict.unwrap_or(false)
    }

    /// What `transform(input, args)` returns: the new buffer and its length, or
    /// `None` (the buffer stays as it was: measured on Suricata 8) when it returns
    /// anything else or fails.
    pub fn transform(self: &Arc<Script>, input: &[u8], args: &[String]) -> Option<Vec<u8>> {
        self.with_copy(|lua, cfg, f| {
            let input = lua.create_string(input)?;
            let args = lua.create_sequence_from(args.iter().map(String::as_str))?;
            let params = MultiValue::from_vec(vec![Value::String(input), Value::Table(args)]);
            let mut env = Env::default();
            let out: MultiValue = sandbox::call_in(lua, cfg, f, &mut env, params)?;
            let mut out = out.into_iter();
            Ok(match (out.next(), out.next()) {
                (Some(Value::String(s)), Some(Value::Integer(n))) => {
                    let b = s.as_bytes();
                    let n = usize::try_from(n).unwrap_or(0).min(b.len());
                    Some(b[..n].to_vec())
                }
                _ => None,
            })
        })
        .flatten()
    }

    /// Runs `f` on this thread's copy of the script (made on first use), with the
    /// function the rule calls. `None` when the copy could not be made or `f` failed
    /// (counted and logged).
    fn with_copy<R>(
        self: &Arc<Script>,
        f: impl FnOnce(&Lua, &Config, &Function) -> Result<R, Failure>,
    ) -> Option<R> {
        // The copy is taken out of the thread's table while it runs: nothing of it is
        // borrowed during the call.
        let copy = COPIES.with(|c| c.borrow_mut().remove(&self.id));
        let copy = match copy {
            Some(c) => c,
            None => ThreadCopy::make(self),
        };
        let out = match &copy.state {
            Ok((lua, func)) => f(lua, &self.cfg, func).map_err(|e| failed(&e)).ok(),
            Err(_) => None,
        };
        COPIES.with(|c| {
            let mut c = c.borrow_mut();
            // Copies of scripts no rule set holds any more go.
            c.retain(|_, v| v.script.strong_count() > 0);
            c.insert(self.id, copy);
        });
        out
    }
}

/// A thread's copy of a script: its state and the function the rule calls, or why it
/// could not be made (reported once).
struct ThreadCopy {
    script: Weak<Script>,
    state: Result<(Lua, Function), ()>,
}

impl ThreadCopy {
    fn make(script: &Arc<Script>) -> ThreadCopy {
        let cfg = script.cfg.clone();
        let state = (|| -> Result<(Lua, Function), Failure> {
            let lua = sandbox::new(&cfg)?;
            sandbox::run_chunk(&lua, &cfg, &script.name, &script.source)?;
            if let Some(ti) = lua.globals().get::<Option<Function>>("thread_init")? {
                let _: Value = sandbox::call(&lua, &cfg, &ti, MultiValue::new())?;
            }
            let entry = match script.kind {
                Kind::Match => "match",
                Kind::Transform => "transform",
            };
            let f: Function = lua.globals().get(entry)?;
            Ok((lua, f))
        })();
        ThreadCopy {
            script: Arc::downgrade(script),
            state: state.map_err(|e| failed(&e)),
        }
    }
}

thread_local! {
    static COPIES: std::cell::RefCell<HashMap<u64, ThreadCopy>> = std::cell::RefCell::new(HashMap::new());
}

/// What `init`'s table asks for.
fn needs_of(v: &Value) -> Needs {
    let Value::Table(t) = v else {
        return Needs::default();
    };
    let on = |k: &str| match t.get::<Value>(k) {
        Ok(Value::Boolean(b)) => b,
        Ok(Value::String(s)) => s.as_bytes().as_ref() != b"false",
        Ok(Value::Nil) | Err(_) => false,
        Ok(_) => true,
    };
    Needs {
        packet: on("packet") || on("payload") || on("stream"),
    }
}

/// What a call of a script sees: the packet, its flow, the transaction being
/// inspected and the rule's byte variables. Empty for a transform.
#[derive(Default)]
pub struct Env<'a> {
    pub packet: Option<&'a Packet>,
    pub flow: Option<FlowEnv<'a>>,
    pub tx: Option<TxRef<'a>>,
    /// The rule's byte variables (`byte_extract`, `byte_math`) the script mapped.
    pub bytevars: Vec<(&'a str, i64)>,
    /// The rule set's flowbit and flowint names, by id.
    pub int_names: &'a [String],
}

/// A flow as a script sees it: a copy of what it shows, and its variables, which the
/// script may change.
pub struct FlowEnv<'a> {
    pub info: FlowInfo,
    pub ints: &'a mut Vec<(u32, u64)>,
    pub vars: &'a mut FlowVars,
}

/// What the flow library shows of a flow.
#[derive(Clone, Debug)]
pub struct FlowInfo {
    pub id: u64,
    pub client: (IpAddr, u16),
    pub server: (IpAddr, u16),
    pub proto: u8,
    pub start: Duration,
    pub last: Duration,
    pub pkts: PerDir<u64>,
    pub bytes: PerDir<u64>,
    /// The application protocol's name, if known.
    pub app: Option<&'static str>,
    pub alerted: bool,
}

#[cfg(test)]
mod tests;
