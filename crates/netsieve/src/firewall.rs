//! `netsieve firewall`: an ordered rule set (iptables-save or ClassBench) applied to a
//! capture or a ClassBench trace by the hybrid classifier, with live updates.
//!
//! ```text
//! netsieve firewall -R rules.v4 -r in.pcap -w passed.pcap --verdicts out.tsv
//! netsieve firewall -R acl1_10k --trace acl1_10k_trace --strategy cut
//! netsieve firewall -R fw.v4 -r in.pcap --updates updates.txt
//! ```
//!
//! An update file has one change per line, applied before the packet with that index
//! (0-based) is classified: `N insert POS RULE`, `N delete POS`, `N rebuild` (start a
//! background rebuild of the fast path). POS counts rules of the flattened list from 0;
//! RULE is written as in the rule set (iptables options with a verdict, or a ClassBench
//! line). Lines starting with `#` are comments.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use serde_json::{Value, json};

use netsieve_classify::hybrid::Trace;
use netsieve_classify::iptables::{self, Family};
use netsieve_classify::linear::Verdict;
use netsieve_classify::rule::{CtState, Key, Packet, Rule, RuleSet, v4};
use netsieve_classify::{Action, Hybrid, Strategy, classbench};
use netsieve_packet::capture::{Capture, Frame, FrameSource, Next};
use netsieve_packet::decode::{Decoder, L4, Packet as Decoded};
use netsieve_packet::flow::{FlowConfig, FlowTable};

use crate::ctl::{self, nok, ok};
use crate::interrupt::Interrupt;
use crate::live::LiveArgs;
use crate::pcapout::PcapOut;

#[derive(clap::Args)]
pub struct Args {
    /// The rule set: an iptables-save dump or a ClassBench file.
    #[arg(short = 'R', long = "ruleset")]
    ruleset: PathBuf,
    /// iptables, ip6tables, nft (an `nft list ruleset` dump, its IPv4 rules), nft6 or
    /// classbench; by default nft when the file starts with `table`, ClassBench when the
    /// first rule starts with `@`, iptables otherwise.
    #[arg(long)]
    format: Option<String>,
    /// The iptables chain to classify with (user chains it jumps to are flattened in).
    #[arg(long, default_value = "FORWARD")]
    chain: String,
    /// Capture to classify (pcap or pcapng); repeat for several.
    #[arg(short = 'r')]
    read: Vec<PathBuf>,
    /// Classify live traffic on this interface (counts only: nothing is forwarded).
    #[arg(short = 'i', long = "interface", value_name = "IFACE", conflicts_with_all = ["read", "inline", "queue", "trace"])]
    interface: Option<String>,
    /// Inline between two interfaces: every frame read on one is sent out of the other
    /// when the rule set accepts it (a firewall on a wire, without an IP stack).
    #[arg(long, value_name = "IFACE_A:IFACE_B", conflicts_with_all = ["read", "queue", "trace"])]
    inline: Option<String>,
    /// Decide the packets a netfilter queue holds (`iptables -j NFQUEUE --queue-num N`):
    /// accept or drop, by the rule set.
    #[arg(short = 'q', value_name = "N", conflicts_with_all = ["read", "trace"])]
    queue: Option<u16>,
    /// Write the accepted packets (and those the table does not see: not IP, or IPv6
    /// for an iptables set and IPv4 for an ip6tables one) to this pcap file.
    #[arg(short = 'w')]
    write: Option<PathBuf>,
    /// A ClassBench trace to classify instead of a capture.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Write one line per packet: index, matched rule (position, or - for the policy),
    /// action (PASS for packets the table does not see: not IP, or the other family).
    #[arg(long)]
    verdicts: Option<PathBuf>,
    /// How the slow path evaluates shunted packets: interval, cut or full.
    #[arg(long, default_value = "interval")]
    strategy: String,
    /// Rule changes to apply while packets flow.
    #[arg(long)]
    updates: Option<PathBuf>,
    /// Print the flattened rule list and exit: position (what `--updates` refers to),
    /// the chains that lead to the rule, origin, action, simple or complex, and its text.
    #[arg(long)]
    list: bool,
    /// Run even when rules of the set cannot be represented (they are left out, and the
    /// summary lists them: the protection they gave is lost). Without it such a set is
    /// refused.
    #[arg(long)]
    allow_skipped: bool,
    /// Take rule changes while packets flow through this unix socket, in Suricata's
    /// socket protocol: `firewall-insert` (`{"position": N, "rule": TEXT}`, the rule as
    /// `--updates` writes it), `firewall-delete` (`{"position": N}`), `firewall-rebuild`,
    /// `shutdown`.
    #[arg(long, value_name = "PATH")]
    unix_socket: Option<PathBuf>,
    /// After the summary, the fast and slow paths' figures (packets on each, rules a
    /// shunted packet traversed, the slow path's strategy, validID, rebuilds, speed).
    #[arg(long)]
    stats: bool,
    /// Interface names the packets arrived on and leave by (for -i / -o matches).
    #[arg(long, default_value = "")]
    iif: String,
    #[arg(long, default_value = "")]
    oif: String,
}

/// Exit codes: 0 when every input was read and every output written, 1 on any error
/// (after writing what was decided before it).
pub fn run(a: Args) -> ExitCode {
    match go(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("netsieve firewall: {e}");
            ExitCode::from(1)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Iptables(Family),
    ClassBench,
}

/// A change to the rule list: by flattened position (`insert`, `delete`, as `--list`
/// numbers), or in iptables' own forms on the classified chain, which are resolved
/// against the list as it is when they apply.
enum Change {
    Insert(usize, Rule),
    Delete(usize),
    /// `-I CHAIN N RULE`: before the chain's rule N, numbered from 1 as `iptables -L
    /// --line-numbers` numbers.
    InsertInChain(u32, Rule),
    /// `-A CHAIN RULE`: after the chain's last rule.
    AppendToChain(Rule),
    /// `-D CHAIN N`.
    DeleteInChain(u32),
    /// `-D CHAIN RULE`: the chain's rule written so.
    DeleteRule(String),
    Rebuild,
}

/// A rule set as read: the rules, their format, and the rules that could not be
/// represented (`file:line:column: why`), which the run leaves out.
struct Loaded {
    set: RuleSet,
    format: Format,
    skipped: Vec<String>,
    /// The rules of the classified chain, as iptables numbers them (0 for ClassBench).
    chain_len: u32,
}

/// Reads a text file; bytes that are not UTF-8 (a Latin-1 comment, say) are read as
/// U+FFFD with a warning naming the first one's line and column, so the rest is kept.
fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    match String::from_utf8(bytes) {
        Ok(t) => Ok(t),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
            let col = 1 + at
                - bytes[..at]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1);
            eprintln!(
                "netsieve firewall: {}:{line}:{col}: not UTF-8; such bytes are read as U+FFFD",
                path.display()
            );
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        }
    }
}

fn load(a: &Args) -> Result<Loaded, String> {
    let path = &a.ruleset;
    let text = read_text(path)?;
    let name = path.display().to_string();
    // An `nft list ruleset` dump is read as the iptables-save dump it stands for.
    let nft = match a.format.as_deref() {
        Some("nft") => Some(Family::V4),
        Some("nft6") => Some(Family::V6),
        None if netsieve_classify::nft::is_nft(&text) => Some(Family::V4),
        _ => None,
    };
    let (text, nft_errors) = match nft {
        Some(fam) => netsieve_classify::nft::to_iptables(&text, fam),
        None => (text, Vec::new()),
    };
    let format = match a.format.as_deref() {
        Some("iptables" | "nft") => Format::Iptables(Family::V4),
        Some("ip6tables" | "nft6") => Format::Iptables(Family::V6),
        _ if nft.is_some() => Format::Iptables(Family::V4),
        Some("classbench") => Format::ClassBench,
        Some(f) => {
            return Err(format!(
                "unknown format `{f}` (iptables, ip6tables, nft, nft6, classbench)"
            ));
        }
        None => {
            let first = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'));
            if first.is_some_and(|l| l.starts_with('@')) {
                Format::ClassBench
            } else {
                Format::Iptables(Family::V4)
            }
        }
    };
    let (set, skipped, chain_len) = match format {
        Format::ClassBench => {
            let (set, errors) = classbench::parse(&text, &name);
            if set.rules.is_empty() {
                return Err(format!("{name}: no ClassBench rule could be read"));
            }
            (
                set,
                errors.iter().map(|e| format!("{name}:{e}")).collect(),
                0,
            )
        }
        Format::Iptables(fam) => {
            let p =
                iptables::parse(&text, fam, &a.chain, &name).map_err(|e| format!("{name}:{e}"))?;
            for (t, n) in &p.non_terminating {
                eprintln!("{name}: {n} rule(s) with target {t} do not change verdicts; left out");
            }
            (
                p.set,
                nft_errors
                    .iter()
                    .chain(&p.errors)
                    .map(|e| format!("{name}:{e}"))
                    .collect(),
                p.chain_len,
            )
        }
    };
    Ok(Loaded {
        set,
        format,
        skipped,
        chain_len,
    })
}

/// Refuses a rule set with rules left out unless `--allow-skipped` says to go on.
fn check_skipped(loaded: &Loaded, allow: bool) -> Result<(), String> {
    if loaded.skipped.is_empty() {
        return Ok(());
    }
    for e in &loaded.skipped {
        eprintln!("netsieve firewall: {e} (rule left out)");
    }
    if allow {
        return Ok(());
    }
    Err(format!(
        "{} rule(s) cannot be represented; a firewall without them would let through what \
         they stop. Give --allow-skipped to run without them",
        loaded.skipped.len()
    ))
}

/// Reads `--updates`: `N insert POS RULE`, `N delete POS`, `N rebuild`, and iptables'
/// forms on the classified chain `chain`: `N -I CHAIN [POS] RULE`, `N -A CHAIN RULE`,
/// `N -D CHAIN POS` and `N -D CHAIN RULE`.
fn load_updates(path: &Path, format: Format, chain: &str) -> Result<Vec<(u64, Change)>, String> {
    let text = read_text(path)?;
    let name = path.display();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let ln = n + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let bad = |col: usize, msg: &str| format!("{name}:{ln}:{col}: {msg}");
        let mut it = t.splitn(3, char::is_whitespace);
        let at: u64 = it
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| bad(1, "expected a packet index"))?;
        let verb = it.next().unwrap_or("");
        let rest = it.next().unwrap_or("").trim_start();
        let change = match verb {
            "rebuild" => Change::Rebuild,
            "delete" => Change::Delete(
                rest.parse()
                    .map_err(|_| bad(1, "`delete` needs a position"))?,
            ),
            "insert" => {
                let (pos, rule) = rest
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| bad(1, "`insert` needs a position and a rule"))?;
                let pos: usize = pos
                    .parse()
                    .map_err(|_| bad(1, "`insert` needs a position"))?;
                let rule = parse_rule(rule, format, &format!("{name}:{ln}"))
                    .map_err(|e| bad(1, &format!("in the rule: {e}")))?;
                Change::Insert(pos, rule)
            }
            "-I" | "-A" | "-D" => {
                if format == Format::ClassBench {
                    return Err(bad(1, "iptables' forms need an iptables rule set"));
                }
                chain_change(verb, rest, chain, format, &format!("{name}:{ln}"))
                    .map_err(|e| bad(1, &e))?
            }
            _ => {
                return Err(bad(
                    1,
                    "expected `insert`, `delete`, `rebuild`, `-I`, `-A` or `-D`",
                ));
            }
        };
        out.push((at, change));
    }
    out.sort_by_key(|c| c.0);
    Ok(out)
}

/// The firewall's control socket: changes while packets flow, made between two packets
/// as `--updates` makes them, each answered once made.
struct FwControl {
    started: Instant,
    format: Format,
    /// Set when `inbox` holds changes or a stop: the loop's one check per packet.
    pending: AtomicBool,
    inbox: Mutex<Vec<(Change, Reply)>>,
    stop: AtomicBool,
}

/// Where the loop says whether a change was made.
type Reply = mpsc::Sender<Result<(), String>>;

const FW_COMMANDS: &[&str] = &[
    "command-list",
    "help",
    "version",
    "uptime",
    "firewall-insert",
    "firewall-delete",
    "firewall-rebuild",
    "shutdown",
];

impl ctl::Handler for FwControl {
    fn command(self: &Arc<Self>, cmd: &str, args: &Value) -> Value {
        let position = || {
            args.get("position")
                .and_then(Value::as_u64)
                .map(|p| p as usize)
                .ok_or_else(|| format!("{cmd} needs arguments {{\"position\": N}}"))
        };
        let change = match cmd {
            "command-list" | "help" => return ctl::command_list(FW_COMMANDS),
            "version" => return ctl::version(),
            "uptime" => return ok(json!(self.started.elapsed().as_secs())),
            "shutdown" => {
                self.stop.store(true, Ordering::Release);
                self.pending.store(true, Ordering::Release);
                return ok(json!("Closing netsieve"));
            }
            "firewall-rebuild" => Ok(Change::Rebuild),
            "firewall-delete" => position().map(Change::Delete),
            "firewall-insert" => position().and_then(|pos| {
                let text = args
                    .get("rule")
                    .and_then(Value::as_str)
                    .ok_or("firewall-insert needs arguments {\"position\": N, \"rule\": TEXT}")?;
                let rule = parse_rule(text, self.format, "<unix-socket>")
                    .map_err(|e| format!("in the rule: {e}"))?;
                Ok(Change::Insert(pos, rule))
            }),
            _ => return nok(format!("Unknown command '{cmd}'")),
        };
        match change.and_then(|c| self.submit(c)) {
            Ok(()) => ok(json!("done")),
            Err(e) => nok(e),
        }
    }
}

impl FwControl {
    /// Hands `c` to the classifying loop and waits until it was made.
    fn submit(&self, c: Change) -> Result<(), String> {
        let (tx, rx) = mpsc::channel();
        self.inbox
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((c, tx));
        self.pending.store(true, Ordering::Release);
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .map_err(|_| "the firewall did not take the change (has it stopped?)".to_string())?
    }

    /// Makes the changes waiting (between two packets); true when a stop was asked.
    fn serve(&self, run: &mut Run) -> bool {
        if !self.pending.swap(false, Ordering::AcqRel) {
            return false;
        }
        let changes = std::mem::take(&mut *self.inbox.lock().unwrap_or_else(|e| e.into_inner()));
        for (c, tx) in changes {
            let _ = tx.send(run.apply(c));
        }
        self.stop.load(Ordering::Acquire)
    }
}

/// One rule in the set's format; `origin` names where it came from.
/// One change in iptables' form (`-I`, `-A`, `-D` and what follows it) on `chain`, the
/// classified one: a user chain's rules are flattened into it, so they are changed there.
fn chain_change(
    verb: &str,
    rest: &str,
    chain: &str,
    format: Format,
    origin: &str,
) -> Result<Change, String> {
    let (name, spec) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    if name != chain {
        return Err(format!(
            "`{verb} {name}`: only the classified chain ({chain}) takes changes (user chains are flattened into it)"
        ));
    }
    let spec = spec.trim();
    let (number, spec) = match spec.split_once(char::is_whitespace) {
        Some((n, r)) if n.parse::<u32>().is_ok() => (n.parse::<u32>().ok(), r.trim()),
        _ => (
            spec.parse::<u32>().ok(),
            if spec.parse::<u32>().is_ok() {
                ""
            } else {
                spec
            },
        ),
    };
    let rule = |spec: &str| -> Result<Rule, String> {
        let mut r = parse_rule(spec, format, origin).map_err(|e| format!("in the rule: {e}"))?;
        r.text = format!("-A {chain} {spec}");
        r.chain = vec![chain.to_string()];
        Ok(r)
    };
    match verb {
        "-I" => Ok(Change::InsertInChain(number.unwrap_or(1), rule(spec)?)),
        "-A" if number.is_none() => Ok(Change::AppendToChain(rule(spec)?)),
        "-D" => match number {
            Some(n) if spec.is_empty() => Ok(Change::DeleteInChain(n)),
            _ if !spec.is_empty() => {
                Ok(Change::DeleteRule(normalize(&format!("-A {chain} {spec}"))))
            }
            _ => Err("`-D` needs a rule number or a rule".into()),
        },
        _ => Err(format!("`{verb} {chain}` takes a rule, not a number")),
    }
}

/// A rule's words, single-spaced (to find a rule by its text).
fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parse_rule(text: &str, format: Format, origin: &str) -> Result<Rule, String> {
    match format {
        Format::ClassBench => classbench::parse_one(text.trim(), origin),
        Format::Iptables(f) => iptables::parse_one(text.trim(), f, origin),
    }
    .map_err(|e| format!("column {}: {}", e.column(), e.message()))
}

/// Counts per rule (by identity, so they survive position shifts) and per action.
#[derive(Default)]
struct Counts {
    /// By rule identity: packets and bytes, and the rule once it matched.
    rules: Vec<(u64, u64, Option<Arc<Rule>>)>,
    actions: HashMap<&'static str, u64>,
    fast: u64,
    shunted: u64,
    traversed: u64,
    packets: u64,
    bytes: u64,
}

struct Run {
    hy: Hybrid,
    /// Per position of the list, its rule's number in the classified chain (as
    /// [`Rule::top`]; kept here as changes renumber), and how many rules the chain has.
    tops: Vec<u32>,
    chain_len: u32,
    changes: std::iter::Peekable<std::vec::IntoIter<(u64, Change)>>,
    counts: Counts,
    verdicts: Option<BufWriter<File>>,
    rebuilds: u64,
    /// Rules of the set left out (`--allow-skipped`), for the summary.
    skipped: Vec<String>,
}

impl Run {
    /// Applies the changes due before packet `i`. A change that does not apply (a
    /// position past the end of the list) is an error, as `iptables -I`/`-D` make it:
    /// the list would not be what its operator meant.
    fn changes_due(&mut self, i: u64) -> Result<(), String> {
        while let Some((at, _)) = self.changes.peek() {
            if *at > i {
                break;
            }
            let (_, c) = self.changes.next().expect("peeked");
            self.apply(c)
                .map_err(|e| format!("update before packet {i}: {e}"))?;
        }
        if self.hy.poll() {
            self.rebuilds += 1;
        }
        Ok(())
    }

    /// A packet the table does not see (not IP, or IP of the other family).
    fn pass_unseen(&mut self, i: u64) -> Result<(), String> {
        if let Some(w) = self.verdicts.as_mut() {
            writeln!(w, "{i}\t-\tPASS").map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The packet index of the next change, if any.
    /// Inserts, deletes or starts a rebuild. A position past the end of the list is an
    /// error (the change is not made).
    fn apply(&mut self, c: Change) -> Result<(), String> {
        let len = self.hy.len();
        match c {
            Change::Insert(pos, _) | Change::Delete(pos)
                if pos > len || (pos == len && matches!(c, Change::Delete(_))) =>
            {
                return Err(format!("no position {pos} (the list has {len} rules)"));
            }
            Change::Insert(pos, rule) => {
                // It takes the number of the rule it goes before.
                let n = self.tops.get(pos).copied().unwrap_or(self.chain_len + 1);
                self.insert(pos, n, rule);
            }
            Change::Delete(pos) => self.delete(pos),
            Change::AppendToChain(rule) => self.insert(len, self.chain_len + 1, rule),
            Change::InsertInChain(n, rule) => {
                if n == 0 || n > self.chain_len + 1 {
                    return Err(format!(
                        "no rule number {n} (the chain has {} rules)",
                        self.chain_len
                    ));
                }
                let pos = self.tops.iter().position(|&t| t >= n).unwrap_or(len);
                self.insert(pos, n, rule);
            }
            Change::DeleteInChain(n) => self.delete_in_chain(n)?,
            Change::DeleteRule(text) => {
                let p = (0..len)
                    .find(|&p| {
                        self.hy
                            .rule(p)
                            .is_some_and(|r| r.chain.len() <= 1 && normalize(&r.text) == text)
                    })
                    .ok_or_else(|| format!("no rule `{text}` in the chain"))?;
                self.delete_in_chain(self.tops[p])?;
            }
            Change::Rebuild => self.hy.start_rebuild(),
        }
        Ok(())
    }

    /// Puts `rule` at position `pos` as the chain's rule `n`: the rules from `n` on are
    /// numbered one more.
    fn insert(&mut self, pos: usize, n: u32, mut rule: Rule) {
        for t in self.tops.iter_mut().filter(|t| **t >= n) {
            *t += 1;
        }
        rule.top = n;
        self.tops.insert(pos, n);
        self.chain_len += 1;
        self.hy.insert(pos, rule);
    }

    /// Takes out the rule at `pos`; when it was the last copy of its chain rule, the
    /// rules after that are numbered one less.
    fn delete(&mut self, pos: usize) {
        let n = self.tops.remove(pos);
        self.hy.delete(pos);
        if !self.tops.contains(&n) {
            for t in self.tops.iter_mut().filter(|t| **t > n) {
                *t -= 1;
            }
            self.chain_len = self.chain_len.saturating_sub(1);
        }
    }

    /// `-D CHAIN n`: only a rule that is itself in the list (a verdict, not a jump whose
    /// chain was flattened in, nor a LOG or RETURN, which the list does not hold).
    fn delete_in_chain(&mut self, n: u32) -> Result<(), String> {
        let at: Vec<usize> = (0..self.tops.len())
            .filter(|&p| self.tops[p] == n)
            .collect();
        match at[..] {
            [p] if self.hy.rule(p).is_some_and(|r| r.chain.len() <= 1) => {
                self.delete(p);
                Ok(())
            }
            [] if n == 0 || n > self.chain_len => Err(format!(
                "no rule number {n} (the chain has {} rules)",
                self.chain_len
            )),
            _ => Err(format!(
                "rule {n} of the chain is a jump, a LOG or a RETURN: deleting it is not supported (delete the rules it reaches by position)"
            )),
        }
    }

    fn next_change(&mut self) -> Option<u64> {
        self.changes.peek().map(|(at, _)| *at)
    }

    fn classify(&mut self, i: u64, p: &Packet<'_>) -> Result<Action, String> {
        let (v, tr) = self.hy.classify_traced(p);
        self.record(i, u64::from(p.len), v, tr)
    }

    /// Counts and writes the verdict of packet `i` (`bytes` long, as netfilter counts).
    fn record(&mut self, i: u64, bytes: u64, v: Verdict, tr: Trace) -> Result<Action, String> {
        let c = &mut self.counts;
        c.packets += 1;
        c.bytes += bytes;
        if tr.shunted {
            c.shunted += 1;
            c.traversed += tr.traversed as u64;
        } else {
            c.fast += 1;
        }
        *c.actions.entry(v.action.name()).or_default() += 1;
        let label = match v.rule {
            Some(r) => {
                let id = self.hy.id(r).expect("a verdict names a rule of the list") as usize;
                if c.rules.len() <= id {
                    c.rules.resize(id + 1, (0, 0, None));
                }
                let slot = &mut c.rules[id];
                if slot.2.is_none() {
                    let rule = self.hy.rule(r).expect("a verdict names a rule of the list");
                    slot.2 = Some(Arc::new(rule.clone()));
                }
                slot.0 += 1;
                slot.1 += bytes;
                r.to_string()
            }
            None => "-".to_string(),
        };
        if let Some(w) = self.verdicts.as_mut() {
            writeln!(w, "{i}\t{label}\t{}", v.action.name()).map_err(|e| e.to_string())?;
        }
        Ok(v.action)
    }
}

fn ip_u128(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => v4(a.into()),
        IpAddr::V6(a) => a.into(),
    }
}

/// The classifier's view of a decoded packet; `None` for packets without an IP layer.
fn view<'p>(d: &'p Decoded, state: CtState, a: &'p Args) -> Option<Packet<'p>> {
    let ip = d.ip?;
    let (sport, dport) = d.l4.ports();
    let flags = match d.l4 {
        L4::Tcp(t) => t.flags as u16,
        _ => 0,
    };
    let icmp_type = match d.l4 {
        L4::Icmp { itype, icode, .. } => Some((itype, icode)),
        _ => None,
    };
    let bytes = d.data.get(d.l3_at..).unwrap_or(&[]);
    let len = match ip.src {
        IpAddr::V4(_) => bytes
            .get(2..4)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]])),
        IpAddr::V6(_) => bytes
            .get(4..6)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]).saturating_add(40)),
    };
    Some(Packet {
        key: Key {
            src: ip_u128(ip.src),
            dst: ip_u128(ip.dst),
            sport,
            dport,
            proto: ip.proto,
            flags,
        },
        ip: bytes,
        len,
        ttl: ip.ttl,
        icmp_type,
        state,
        time: d.ts.as_secs_f64(),
        iif: &a.iif,
        oif: &a.oif,
    })
}

fn go(a: &Args) -> Result<(), String> {
    let strategy: Strategy = a.strategy.parse()?;
    if a.list {
        let Loaded { set, skipped, .. } = load(a)?;
        for e in &skipped {
            eprintln!("netsieve firewall: {e} (rule left out)");
        }
        let mut o = std::io::stdout().lock();
        for (i, r) in set.rules.iter().enumerate() {
            let kind = if r.is_simple() { "simple" } else { "complex" };
            writeln!(
                o,
                "{i}\t{}\t{}\t{}\t{kind}\t{}",
                chain_path(r),
                r.origin,
                r.action.name(),
                r.text
            )
            .map_err(|e| e.to_string())?;
        }
        writeln!(o, "policy\t{}", set.policy.name()).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let live = LiveArgs {
        interface: a.interface.as_deref(),
        inline: a.inline.as_deref(),
        queue: a.queue,
        bpf: None,
    };
    let is_live = a.interface.is_some() || a.inline.is_some() || a.queue.is_some();
    if !is_live && a.read.is_empty() == a.trace.is_none() {
        return Err("give -r CAPTURE, --trace TRACE, -i IFACE, --inline A:B or -q N".into());
    }
    let t0 = Instant::now();
    let loaded = load(a)?;
    check_skipped(&loaded, a.allow_skipped)?;
    let Loaded {
        set,
        format,
        skipped,
        chain_len,
    } = loaded;
    let tops = set.rules.iter().map(|r| r.top).collect();
    let changes = match &a.updates {
        Some(p) => load_updates(p, format, &a.chain)?,
        None => Vec::new(),
    };
    let complex = set.rules.iter().filter(|r| !r.is_simple()).count();
    let hy = Hybrid::new(&set, strategy);
    let build = t0.elapsed();
    let fs = hy.fast_path().stats();
    eprintln!(
        "netsieve firewall: {} rules ({} simple, {complex} complex), policy {}; fast path: \
         {} over {} entries, {:.1} MiB, built with the parse in {:.1} ms; validID {}",
        set.rules.len(),
        set.rules.len() - complex,
        set.policy.name(),
        fs.algorithm,
        fs.entries,
        fs.heap_bytes as f64 / (1 << 20) as f64,
        build.as_secs_f64() * 1e3,
        hy.valid_id()
    );
    let verdicts = match &a.verdicts {
        Some(p) => Some(BufWriter::new(
            File::create(p).map_err(|e| format!("{}: {e}", p.display()))?,
        )),
        None => None,
    };
    let mut run = Run {
        hy,
        tops,
        chain_len,
        changes: changes.into_iter().peekable(),
        counts: Counts::default(),
        verdicts,
        rebuilds: 0,
        skipped,
    };
    let mut out = a.write.as_deref().map(|p| PcapOut::new(p, 262_144));
    let t1 = Instant::now();
    let mut not_ip = 0u64;
    let mut read_error = None;
    let mut cap_linktype = None;
    if let Some(tp) = &a.trace {
        let text = std::fs::read_to_string(tp).map_err(|e| format!("{}: {e}", tp.display()))?;
        let (trace, errors) = classbench::parse_trace(&text);
        for e in errors.iter().take(10) {
            eprintln!("{}:{e} (line skipped)", tp.display());
        }
        // In batches of up to 64 headers (their fast-path lookups overlap), cut where an
        // update is due; a background rebuild is installed between batches.
        let mut batch = Vec::with_capacity(64);
        let mut verdicts = Vec::with_capacity(64);
        let mut i = 0;
        while i < trace.len() {
            run.changes_due(i as u64)?;
            let mut end = (i + 64).min(trace.len());
            if let Some(at) = run.next_change() {
                end = end.min((at as usize).max(i + 1));
            }
            batch.clear();
            batch.extend(trace[i..end].iter().map(|t| Packet::header_only(t.key)));
            run.hy.classify_batch(&batch, &mut verdicts);
            for (j, &(v, tr)) in verdicts.iter().enumerate() {
                run.record((i + j) as u64, u64::from(batch[j].len), v, tr)?;
            }
            i = end;
        }
    } else {
        let mut src = match crate::live::open(&live)? {
            Some(src) => src,
            None => FrameSource::Files(Capture::open(&a.read).map_err(|e| e.to_string())?),
        };
        // Live, Ctrl-C or SIGTERM ends the run (and the summary is printed).
        let interrupt = Interrupt::install();
        let control = Arc::new(FwControl {
            started: Instant::now(),
            format,
            pending: AtomicBool::new(false),
            inbox: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        if let Some(p) = &a.unix_socket {
            ctl::listen(p, Arc::clone(&control))?;
        }
        let mut dec = Decoder::new(false);
        let mut flows: FlowTable<()> = FlowTable::new(FlowConfig {
            midstream: true,
            ..FlowConfig::default()
        });
        let mut frame = Frame::default();
        let mut d = Decoded::default();
        let mut i = 0u64;
        let v6 = format == Format::Iptables(Family::V6);
        loop {
            if interrupt.requested() || control.serve(&mut run) {
                break;
            }
            match src.next(&mut frame) {
                Ok(Next::Frame) => {}
                Ok(Next::End) => break,
                Ok(Next::Idle) => {
                    // A rebuild finishes, and is installed, between packets.
                    run.changes_due(i)?;
                    continue;
                }
                Err(e) if src.is_live() => return Err(e.to_string()),
                Err(e) => {
                    // Everything classified so far is still reported.
                    eprintln!("netsieve firewall: {e}");
                    read_error = Some(e.to_string());
                    continue;
                }
            }
            dec.decode(&frame, i + 1, &mut d);
            let state = match flows.packet(&d, false) {
                None => CtState::Invalid,
                Some((_, obs)) if obs.new_flow => CtState::New,
                Some((f, _)) if f.both_sides_seen() => CtState::Established,
                Some(_) => CtState::New,
            };
            run.changes_due(i)?;
            // netfilter runs IPv4 packets through iptables and IPv6 ones through
            // ip6tables; a packet of the other family, or not IP, is not this table's.
            let family_ok = d.ip.is_some_and(|ip| ip.src.is_ipv6() == v6);
            let pass = match view(&d, state, a) {
                Some(p) if family_ok => run.classify(i, &p)? == Action::Accept,
                _ => {
                    not_ip += 1;
                    run.pass_unseen(i)?;
                    true
                }
            };
            if pass && let Some(o) = out.as_mut() {
                o.write(&frame, frame.data.len())
                    .map_err(|e| e.to_string())?;
            }
            // Inline and from a queue, the verdict is carried out.
            src.verdict(&frame, pass).map_err(|e| e.to_string())?;
            i += 1;
        }
        if let Some(p) = &a.unix_socket {
            let _ = std::fs::remove_file(p);
        }
        cap_linktype = match &src {
            FrameSource::Files(cap) => cap.linktype(),
            _ => (i > 0).then_some(frame.linktype),
        };
    }
    let elapsed = t1.elapsed();
    if let Some(o) = out {
        o.finish(cap_linktype.unwrap_or(1))
            .map_err(|e| e.to_string())?;
    }
    if let Some(mut w) = run.verdicts.take() {
        w.flush().map_err(|e| e.to_string())?;
    }
    report(&run, not_ip, elapsed.as_secs_f64(), a.stats);
    match read_error {
        Some(e) => Err(format!("the capture ended with an error: {e}")),
        None => Ok(()),
    }
}

/// The chains a rule is reached through, as `INPUT > IN_public > IN_public_allow`.
fn chain_path(r: &Rule) -> String {
    if r.chain.is_empty() {
        "-".into()
    } else {
        r.chain.join(" > ")
    }
}

/// The end-of-run summary, in the admin's words: what was matched, accepted and dropped,
/// then each rule's counters as `iptables -L -v -n -x` shows them, by the chain that
/// holds it; with `--stats`, the fast and slow paths' figures.
fn report(run: &Run, not_ip: u64, secs: f64, stats: bool) {
    let c = &run.counts;
    let mut o = std::io::stdout().lock();
    if !run.skipped.is_empty() {
        let _ = writeln!(
            o,
            "rules left out (their protection is lost)\t{}",
            run.skipped.len()
        );
        for e in &run.skipped {
            let _ = writeln!(o, "left out\t{e}");
        }
    }
    let by_action = |a: Action| c.actions.get(a.name()).copied().unwrap_or(0);
    let by_rules: u64 = c.rules.iter().map(|v| v.0).sum();
    let _ = writeln!(
        o,
        "packets\t{}\nmatched a rule\t{by_rules}\naccepted\t{}\ndropped\t{}\nrejected\t{}",
        c.packets,
        by_action(Action::Accept),
        by_action(Action::Drop),
        by_action(Action::Reject),
    );
    if not_ip > 0 {
        let _ = writeln!(o, "not IP or other family (passed)\t{not_ip}");
    }
    rule_counters(&mut o, run);
    if stats {
        let _ = writeln!(
            o,
            "\nstats\nfast path\t{}\nshunted\t{}\nrules traversed by shunted packets\t{}\n\
             strategy\t{:?}\nvalidID\t{}\nrules\t{}\nrebuilds installed\t{} (longest install {} µs)\n\
             classification\t{:.3} s ({:.2} Mpps)",
            c.fast,
            c.shunted,
            c.traversed,
            run.hy.strategy(),
            run.hy.valid_id(),
            run.hy.len(),
            run.rebuilds,
            run.hy.longest_install().as_micros(),
            secs,
            c.packets as f64 / secs.max(1e-9) / 1e6
        );
    }
}

/// Per rule that matched, its packets and bytes, grouped by the chain that holds it
/// (copies of one rule that flattening made are one line), then the policy's.
fn rule_counters(o: &mut impl Write, run: &Run) {
    let c = &run.counts;
    // Rules in order of origin (file, then line).
    let mut per: Vec<(Arc<Rule>, u64, u64)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for (n, b, r) in &c.rules {
        let Some(r) = r else { continue };
        match at.get(r.origin.as_str()) {
            Some(&i) => {
                per[i].1 += n;
                per[i].2 += b;
            }
            None => {
                at.insert(&r.origin, per.len());
                per.push((Arc::clone(r), *n, *b));
            }
        }
    }
    per.sort_by_key(|(r, ..)| {
        let (file, line) = r.origin.rsplit_once(':').unwrap_or((&r.origin, "0"));
        (file.to_string(), line.parse::<u64>().unwrap_or(0))
    });
    let (n, b) = per
        .iter()
        .fold((0, 0), |(n, b), (_, pn, pb)| (n + pn, b + pb));
    let _ = writeln!(
        o,
        "\npolicy {} ({} packets, {} bytes)\n{:>10} {:>12}  {:<7} {:<20} {:<24} rule",
        run.hy.policy().name(),
        c.packets - n,
        c.bytes - b,
        "pkts",
        "bytes",
        "target",
        "chain",
        "origin",
    );
    for (r, n, b) in per {
        let chain = r.chain.last().map_or("-", String::as_str);
        let _ = writeln!(
            o,
            "{n:>10} {b:>12}  {:<7} {chain:<20} {:<24} {}",
            r.action.name(),
            r.origin,
            r.text
        );
    }
}
