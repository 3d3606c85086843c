//! The control socket (`--unix-socket PATH`) and SIGUSR2: rules reloaded, added and
//! removed while traffic flows.
//!
//! The socket speaks Suricata's unix-socket protocol (`crate::ctl`), so Suricata's own
//! client (`suricatasc`) works against netsieve unchanged; this module is what `scan`'s
//! commands do.
//!
//! A reload is built here, on the control thread, off the packet path, from the set in
//! force: a full reload compiles only the rules whose text changed, and a rule added or
//! removed changes the set in force without reading the files. The new rule set is then
//! handed to the reader, which switches the workers between two packets
//! ([`super::pipeline::Pool::reload`]) and says so. A blocking `reload-rules` answers
//! once the switch is made; every packet before it was inspected with the old rules and
//! every packet after with the new.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use super::rules::{Edits, RuleSource, Rules};
use crate::ctl::{self, nok, ok};

/// The control side of a run, as the reader sees it.
pub(super) struct Control {
    shared: Arc<Shared>,
    path: Option<PathBuf>,
}

/// What the reader is asked to do at the next packet boundary.
pub(super) enum Order {
    /// Inspect with these rules from now on.
    Switch(Box<Rules>),
    /// End the run as at the end of its input (`shutdown`).
    Stop,
}

/// Counters the reader publishes for `iface-stat` and `dump-counters`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counters {
    pub packets: u64,
    pub bytes: u64,
    pub bad_checksum: u64,
    pub alerts: u64,
    /// Frames the kernel passed and dropped (a live interface).
    pub kernel: Option<(u64, u64)>,
}

/// What the run is, for `running-mode`, `capture-mode` and `iface-list`.
pub(super) struct RunInfo {
    pub threads: usize,
    /// The interfaces read (none for capture files; two inline).
    pub ifaces: Vec<String>,
    pub capture_mode: &'static str,
}

struct Shared {
    started: Instant,
    info: RunInfo,
    /// Set when `inbox` holds an order: the reader's one check per packet.
    pending: AtomicBool,
    inbox: Mutex<Inbox>,
    /// Signalled when the reader takes a rule set, or the run ends.
    taken: Condvar,
    counters: Mutex<Counters>,
    ruleset: Mutex<RulesetState>,
}

#[derive(Default)]
struct Inbox {
    switch: Option<Box<Rules>>,
    stop: bool,
    /// Rule sets the reader switched to so far.
    switched: u64,
    /// The run ended: nobody will take a rule set any more.
    ended: bool,
}

/// The rules in force and how they came to be.
struct RulesetState {
    source: RuleSource,
    edits: Edits,
    /// The rules in force: what the next change starts from.
    last: Rules,
    /// A reload is being built.
    busy: bool,
    last_reload: SystemTime,
    /// Rules parsed (before those the engine cannot use are left out), rules in the
    /// set, and rules that failed to parse.
    parsed: usize,
    loaded: usize,
    failed: usize,
    errors: Vec<String>,
}

/// Every command the socket answers, as `command-list` gives them.
const COMMANDS: &[&str] = &[
    "command-list",
    "help",
    "version",
    "uptime",
    "running-mode",
    "capture-mode",
    "reload-rules",
    "ruleset-reload-rules",
    "ruleset-reload-nonblocking",
    "ruleset-reload-time",
    "ruleset-stats",
    "ruleset-failed-rules",
    "iface-list",
    "iface-stat",
    "dump-counters",
    "add-rule",
    "remove-rule",
    "shutdown",
];

impl Control {
    /// The control side of a run whose rules came from `source` (as `rules`, loaded at
    /// start). With `path`, the socket listens there (a stale socket file is replaced);
    /// SIGUSR2 reloads either way.
    pub fn start(
        path: Option<&Path>,
        source: RuleSource,
        rules: &Rules,
        info: RunInfo,
    ) -> Result<Control, String> {
        let shared = Arc::new(Shared {
            started: Instant::now(),
            info,
            pending: AtomicBool::new(false),
            inbox: Mutex::new(Inbox::default()),
            taken: Condvar::new(),
            counters: Mutex::new(Counters::default()),
            ruleset: Mutex::new(RulesetState {
                source,
                edits: Edits::default(),
                last: rules.clone(),
                busy: false,
                last_reload: SystemTime::now(),
                parsed: rules.parsed,
                loaded: rules.set.stats().inspected,
                failed: rules.failed,
                errors: rules.errors.clone(),
            }),
        });
        if let Some(p) = path {
            ctl::listen(p, Arc::clone(&shared))?;
        }
        if let Ok(mut signals) = signal_hook::iterator::Signals::new([signal_hook::consts::SIGUSR2])
        {
            let sh = Arc::clone(&shared);
            std::thread::spawn(move || {
                for _ in signals.forever() {
                    // As Suricata: a reload by signal does not wait for the switch.
                    sh.reload_in_background();
                }
            });
        }
        Ok(Control {
            shared,
            path: path.map(Path::to_path_buf),
        })
    }

    /// The order waiting at this packet boundary, if any (one atomic load when none).
    #[inline]
    pub fn order(&self) -> Option<Order> {
        if !self.shared.pending.load(Ordering::Acquire) {
            return None;
        }
        let mut inbox = lock(&self.shared.inbox);
        self.shared.pending.store(false, Ordering::Release);
        if inbox.stop {
            return Some(Order::Stop);
        }
        inbox.switch.take().map(Order::Switch)
    }

    /// The reader switched to the rule set it took.
    pub fn switched(&self) {
        lock(&self.shared.inbox).switched += 1;
        self.shared.taken.notify_all();
    }

    /// Rules parsed and rules that failed to parse, in the last load that took effect.
    pub fn rules_read(&self) -> (usize, usize) {
        let r = lock(&self.shared.ruleset);
        (r.parsed, r.failed)
    }

    /// When the rules in force were loaded.
    pub fn last_reload(&self) -> SystemTime {
        lock(&self.shared.ruleset).last_reload
    }

    pub fn publish(&self, c: Counters) {
        *lock(&self.shared.counters) = c;
    }
}

impl Drop for Control {
    /// The run is over: waiting reloads are told so, and the socket file goes.
    fn drop(&mut self) {
        lock(&self.shared.inbox).ended = true;
        self.shared.taken.notify_all();
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ctl::Handler for Shared {
    /// Answers one command.
    fn command(self: &Arc<Self>, cmd: &str, args: &Value) -> Value {
        let arg = |name: &str| args.get(name);
        match cmd {
            "command-list" | "help" => ctl::command_list(COMMANDS),
            "version" => ctl::version(),
            "uptime" => ok(json!(self.started.elapsed().as_secs())),
            "running-mode" => ok(json!(if self.info.threads > 1 {
                "autofp"
            } else {
                "single"
            })),
            "capture-mode" => ok(json!(self.info.capture_mode)),
            "reload-rules" | "ruleset-reload-rules" => self.answer(self.reload(Change::Reload)),
            "ruleset-reload-nonblocking" => self.reload_in_background(),
            "ruleset-reload-time" => {
                let t = lock(&self.ruleset).last_reload;
                ok(json!([{"id": 0, "last_reload": rfc3339(t)}]))
            }
            "ruleset-stats" => {
                let r = lock(&self.ruleset);
                ok(json!([{"id": 0, "rules_loaded": r.loaded, "rules_failed": r.failed}]))
            }
            "ruleset-failed-rules" => {
                let r = lock(&self.ruleset);
                let list: Vec<Value> = r
                    .errors
                    .iter()
                    .map(|e| json!({"tenant_id": 0, "message": e}))
                    .collect();
                ok(json!(list))
            }
            "iface-list" => {
                let ifaces = &self.info.ifaces;
                ok(json!({"count": ifaces.len(), "ifaces": ifaces}))
            }
            "iface-stat" => {
                let name = arg("iface").and_then(Value::as_str).unwrap_or("");
                // Inline, both interfaces answer with the counts of the two together.
                if !self.info.ifaces.iter().any(|i| i == name) {
                    return nok(format!("Interface '{name}' not found"));
                }
                let c = *lock(&self.counters);
                let (_, drop) = c.kernel.unwrap_or_default();
                ok(
                    json!({"pkts": c.packets, "invalid-checksums": c.bad_checksum, "drop": drop, "bypassed": 0}),
                )
            }
            "dump-counters" => self.counters_json(),
            "add-rule" => match arg("rule").and_then(Value::as_str) {
                Some(text) => self.answer(self.reload(Change::Add(text))),
                None => nok("add-rule needs arguments {\"rule\": TEXT}".into()),
            },
            "remove-rule" => match arg("sid").and_then(sid_arg) {
                Some(sid) => self.answer(self.reload(Change::Remove(sid))),
                None => nok("remove-rule needs arguments {\"sid\": N}".into()),
            },
            "shutdown" => {
                lock(&self.inbox).stop = true;
                self.pending.store(true, Ordering::Release);
                ok(json!("Closing netsieve"))
            }
            _ => nok(format!("Unknown command '{cmd}'")),
        }
    }
}

impl Shared {
    fn answer(&self, r: Result<(), String>) -> Value {
        match r {
            Ok(()) => ok(json!("done")),
            Err(e) => nok(e),
        }
    }

    /// Builds the rules `change` asks for, hands them to the reader and waits until it
    /// switched. The socket's edits change only if this succeeds.
    fn reload(&self, change: Change) -> Result<(), String> {
        let (source, mut edits, last) = {
            let mut r = lock(&self.ruleset);
            if r.busy {
                return Err("a reload is already running".into());
            }
            r.busy = true;
            (r.source.clone(), r.edits.clone(), r.last.clone())
        };
        let built = match change {
            Change::Reload => source.load(&edits, Some(&last.set)),
            Change::Add(text) => {
                edits.add(&source, text);
                source.edit(&last, None, Some(text))
            }
            Change::Remove(sid) => {
                edits.remove(sid);
                source.edit(&last, Some(sid), None)
            }
        };
        drop(last);
        let built = built.and_then(|r| match RuleSource::none_loaded(&r) {
            Some(e) => Err(e),
            None => Ok(r),
        });
        let rules = match built {
            Ok(rules) => rules,
            Err(e) => {
                lock(&self.ruleset).busy = false;
                return Err(e);
            }
        };
        let (parsed, loaded, failed) = (rules.parsed, rules.set.stats().inspected, rules.failed);
        let errors = rules.errors.clone();
        let in_force = rules.clone();
        let switched = self.hand_over(rules);
        let mut r = lock(&self.ruleset);
        r.busy = false;
        switched?;
        r.edits = edits;
        r.last = in_force;
        r.last_reload = SystemTime::now();
        r.parsed = parsed;
        r.loaded = loaded;
        r.failed = failed;
        r.errors = errors;
        Ok(())
    }

    /// Gives the reader `rules` and waits until it switched to them.
    fn hand_over(&self, rules: Rules) -> Result<(), String> {
        let mut inbox = lock(&self.inbox);
        if inbox.ended {
            return Err("the run has ended".into());
        }
        let target = inbox.switched + 1;
        inbox.switch = Some(Box::new(rules));
        self.pending.store(true, Ordering::Release);
        while inbox.switched < target {
            if inbox.ended {
                return Err("the run ended before the new rules took effect".into());
            }
            inbox = self
                .taken
                .wait_timeout(inbox, Duration::from_millis(200))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        Ok(())
    }

    /// A reload that goes on after the caller returns (`ruleset-reload-nonblocking`,
    /// SIGUSR2); a failure is reported on standard error.
    fn reload_in_background(self: &Arc<Self>) -> Value {
        if lock(&self.ruleset).busy {
            return nok("a reload is already running".into());
        }
        let sh = Arc::clone(self);
        std::thread::spawn(move || {
            if let Err(e) = sh.reload(Change::Reload) {
                eprintln!("netsieve scan: reload failed: {e}");
            }
        });
        ok(json!("done"))
    }

    fn counters_json(&self) -> Value {
        let c = *lock(&self.counters);
        let r = lock(&self.ruleset);
        let mut v = json!({
            "uptime": self.started.elapsed().as_secs(),
            "decoder": {"pkts": c.packets, "bytes": c.bytes, "invalid-checksums": c.bad_checksum},
            "detect": {"alert": c.alerts, "engines": [{"id": 0, "last_reload": rfc3339(r.last_reload), "rules_loaded": r.loaded, "rules_failed": r.failed}]},
        });
        if let Some((pkts, drops)) = c.kernel {
            v["capture"] = json!({"kernel_packets": pkts, "kernel_drops": drops});
        }
        ok(v)
    }
}

/// What a reload changes.
enum Change<'a> {
    /// Everything: the files are read again.
    Reload,
    /// One rule added to the set in force.
    Add(&'a str),
    /// The rules of one signature id taken out of the set in force.
    Remove(u32),
}

/// A sid given as a number or as text.
fn sid_arg(v: &Value) -> Option<u32> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `t` as Suricata writes times in its replies (UTC).
fn rfc3339(t: SystemTime) -> String {
    super::eve::timestamp(t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default())
}
