//! HyPaFilter's hybrid classifier in software.
//!
//! The *fast path* ([`FastPath`]) holds the simple rules of a snapshot of the rule list and
//! returns `matchID`, the position of the first simple rule that matches. `validID` is the
//! first position where the current list may differ from what the fast path knows: the
//! first complex rule, or the first position an update touched since the snapshot. When
//! `matchID < validID` the fast path's answer is final: every rule before it is a simple
//! rule the fast path tested. Otherwise the packet is *shunted* to the slow path, which
//! evaluates the current list with one of the paper's strategies (section 4.2):
//!
//! - [`Strategy::Full`]: the whole list, linearly.
//! - [`Strategy::Cut`]: the list from `validID` on; the rules before it are simple and
//!   known not to match.
//! - [`Strategy::Interval`]: only the rules the fast path does not know (complex rules and
//!   rules inserted since the snapshot) that come before `matchID`'s rule, then that rule.
//!   Consecutive fast-path rules with the same such rules before them form an *interval*;
//!   a binary search over interval starts finds the chain for a `matchID`. Chains are
//!   prefixes of one ordered list, so they cost one integer each.
//!
//! Updates ([`Hybrid::insert`], [`Hybrid::delete`]) change the current list and lower
//! `validID`, so they hold from the next packet, without touching the fast path.
//! [`Hybrid::start_rebuild`] builds a new fast path from the current list on another
//! thread; [`Hybrid::poll`] installs it between two packets when it is ready, and updates
//! made meanwhile stay pending against the new snapshot (rules are matched by identity,
//! not position).
//!
//! The invariant, tested against [`crate::linear`] in `tests/differential.rs`: every
//! packet gets the verdict of a linear first-match over the current list.

use crate::fast::{FastPath, NONE};
use crate::linear::Verdict;
use crate::rule::*;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};

/// How the slow path evaluates shunted packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Full,
    Cut,
    Interval,
}

impl std::str::FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Strategy, String> {
        match s {
            "full" => Ok(Strategy::Full),
            "cut" => Ok(Strategy::Cut),
            "interval" => Ok(Strategy::Interval),
            _ => Err(format!("unknown strategy `{s}` (full, cut, interval)")),
        }
    }
}

/// A fast path and the identities of the rules it was built from, by position.
struct Snapshot {
    fast: FastPath,
    ids: Vec<u64>,
    /// The list's update count when the build started.
    version: u64,
    /// Derived state for the list as it was then; taken at install.
    derived: Option<Derived>,
}

/// What a classification did, besides its verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    pub shunted: bool,
    /// Rules the slow path evaluated.
    pub traversed: u32,
}

/// The hybrid classifier.
pub struct Hybrid {
    rules: Vec<Arc<Rule>>,
    ids: Vec<u64>,
    state: Vec<Vec<MatchState>>,
    next_id: u64,
    policy: Action,
    strategy: Strategy,
    snap: Arc<Snapshot>,
    /// `validID` and, for the interval strategy, the chains: derived from the list and
    /// the snapshot.
    d: Derived,
    /// Whether updates changed the list since `d` was derived (the interval strategy
    /// derives again before the next packet, once for a burst of updates).
    stale: bool,
    rebuild: Option<Receiver<Snapshot>>,
    /// The longest time installing a rebuilt fast path took on the classifying thread.
    longest_install: std::time::Duration,
    /// Updates so far; a rebuild started at the same count needs no recomputation.
    version: u64,
    /// Scratch for [`Hybrid::classify_batch`], kept so batches do not allocate.
    keys: Vec<Key>,
    matches: Vec<u32>,
}

const DELETED: u32 = u32::MAX;

/// Updates since the fast path was built past which a rebuild starts by itself. Each
/// update the fast path does not know about costs every shunted packet (inserted rules
/// are evaluated one by one), so updates are folded in, on another thread, once this
/// many wait: a shunted packet's extra work stays bounded by it (plus the updates that
/// arrive while a rebuild runs), however many updates come.
pub const AUTO_REBUILD: u64 = 256;

/// What `Hybrid` derives from the current list and the snapshot.
#[derive(Clone, Default)]
struct Derived {
    valid: usize,
    // Interval strategy:
    /// Current positions of the rules the fast path does not know, at or after `valid`.
    extras: Vec<u32>,
    /// Interval starts, as snapshot positions, ascending.
    starts: Vec<u32>,
    /// Per interval: how many of `extras` precede it, or `DELETED` when the interval is a
    /// single fast-path rule deleted since the snapshot.
    chain: Vec<u32>,
    /// Per snapshot position: its current position, or `DELETED`.
    now_at: Vec<u32>,
}

fn derive(
    rules: &[Arc<Rule>],
    ids: &[u64],
    snap_ids: &[u64],
    next_id: u64,
    strategy: Strategy,
) -> Derived {
    let same_prefix = ids.iter().zip(snap_ids).take_while(|(a, b)| a == b).count();
    let first_complex = rules
        .iter()
        .position(|r| !r.is_simple())
        .unwrap_or(rules.len());
    let valid = same_prefix.min(first_complex);
    let mut d = Derived {
        valid,
        extras: Vec::new(),
        starts: Vec::new(),
        chain: Vec::new(),
        now_at: Vec::new(),
    };
    if strategy != Strategy::Interval {
        return d;
    }
    // Which snapshot rules survive, and where they are now. Identities are dense, so a
    // table indexed by identity maps them.
    let mut at = vec![DELETED; next_id as usize];
    for (i, id) in ids.iter().enumerate() {
        at[*id as usize] = i as u32;
    }
    d.now_at = snap_ids.iter().map(|id| at[*id as usize]).collect();
    // A current rule is "known" when it is a simple rule of the snapshot.
    let mut known = vec![false; rules.len()];
    for &now in &d.now_at {
        // Same identity, so the same rule, simple in the snapshot too.
        if now != DELETED && rules[now as usize].is_simple() {
            known[now as usize] = true;
        }
    }
    d.extras = (valid..rules.len())
        .filter(|&i| !known[i])
        .map(|i| i as u32)
        .collect();
    // Intervals over snapshot positions of simple rules.
    let mut e = 0; // extras before the current position
    for (s, &now) in d.now_at.iter().enumerate() {
        let simple = now == DELETED || rules[now as usize].is_simple();
        if !simple || (s < valid && now != DELETED) {
            continue;
        }
        let c = if now == DELETED {
            DELETED
        } else {
            while e < d.extras.len() && d.extras[e] < now {
                e += 1;
            }
            e as u32
        };
        if d.chain.last() != Some(&c) || c == DELETED {
            d.starts.push(s as u32);
            d.chain.push(c);
        }
    }
    d
}

/// A fast path over the simple rules of `rules`, with what `Hybrid` derives from it for
/// a list still equal to `rules` (computed here, off the classifying thread).
fn build_snapshot(
    rules: &[Arc<Rule>],
    ids: Vec<u64>,
    next_id: u64,
    version: u64,
    strategy: Strategy,
) -> Snapshot {
    let entries = rules
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_simple())
        .flat_map(|(i, r)| r.header.iter().map(move |h| (i as u32, *h)));
    let fast = FastPath::build(entries);
    let derived = derive(rules, &ids, &ids, next_id, strategy);
    Snapshot {
        fast,
        ids,
        version,
        derived: Some(derived),
    }
}

impl Hybrid {
    pub fn new(set: &RuleSet, strategy: Strategy) -> Hybrid {
        let rules: Vec<Arc<Rule>> = set.rules.iter().cloned().map(Arc::new).collect();
        let ids: Vec<u64> = (0..rules.len() as u64).collect();
        let n = rules.len() as u64;
        let mut snap = build_snapshot(&rules, ids.clone(), n, 0, strategy);
        let derived = snap.derived.take();
        let mut h = Hybrid {
            state: rules.iter().map(|r| r.new_state()).collect(),
            next_id: rules.len() as u64,
            rules,
            ids,
            policy: set.policy,
            strategy,
            snap: Arc::new(snap),
            d: Derived::default(),
            stale: false,
            rebuild: None,
            longest_install: std::time::Duration::ZERO,
            version: 0,
            keys: Vec::new(),
            matches: Vec::new(),
        };
        if let Some(d) = derived {
            h.d = d;
        }
        h
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
    pub fn policy(&self) -> Action {
        self.policy
    }
    pub fn valid_id(&self) -> usize {
        self.derived().valid
    }
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }
    pub fn fast_path(&self) -> &FastPath {
        &self.snap.fast
    }
    /// A number naming the rule at `pos` for as long as it lives: positions shift with
    /// updates, identities do not. Identities are dense from 0.
    pub fn id(&self, pos: usize) -> Option<u64> {
        self.ids.get(pos).copied()
    }
    pub fn rule(&self, pos: usize) -> Option<&Rule> {
        self.rules.get(pos).map(|r| &**r)
    }

    /// `validID` and the interval chains for the current list and snapshot.
    fn derive_now(&self) -> Derived {
        derive(
            &self.rules,
            &self.ids,
            &self.snap.ids,
            self.next_id,
            self.strategy,
        )
    }

    /// Derives again, if updates made `d` stale.
    fn refresh(&mut self) {
        if self.stale {
            self.d = self.derive_now();
            self.stale = false;
        }
    }

    /// What is derived for the current list, whether or not `d` is stale.
    fn derived(&self) -> std::borrow::Cow<'_, Derived> {
        if self.stale {
            std::borrow::Cow::Owned(self.derive_now())
        } else {
            std::borrow::Cow::Borrowed(&self.d)
        }
    }

    /// Classifies one packet.
    pub fn classify(&mut self, p: &Packet<'_>) -> Verdict {
        self.classify_traced(p).0
    }

    pub fn classify_traced(&mut self, p: &Packet<'_>) -> (Verdict, Trace) {
        self.refresh();
        let m = self.snap.fast.lookup(&p.key);
        self.decide(m, p)
    }

    /// Classifies `ps` in order into `out` (cleared first), exactly as one
    /// [`Hybrid::classify_traced`] per packet would: the fast-path lookups of the whole
    /// batch come first ([`FastPath::lookup_batch`], whose memory accesses overlap), then
    /// each packet's decision and slow path in order, so stateful matches see the packets
    /// in the same order. Updates and rebuilds happen between batches.
    pub fn classify_batch(&mut self, ps: &[Packet<'_>], out: &mut Vec<(Verdict, Trace)>) {
        self.refresh();
        out.clear();
        let mut keys = std::mem::take(&mut self.keys);
        let mut matches = std::mem::take(&mut self.matches);
        keys.clear();
        keys.extend(ps.iter().map(|p| p.key));
        matches.clear();
        matches.resize(ps.len(), NONE);
        self.snap.fast.lookup_batch(&keys, &mut matches);
        out.extend(ps.iter().zip(&matches).map(|(p, &m)| self.decide(m, p)));
        self.keys = keys;
        self.matches = matches;
    }

    /// The verdict for `p` given the fast path's answer `m`.
    fn decide(&mut self, m: u32, p: &Packet<'_>) -> (Verdict, Trace) {
        if m != NONE && (m as usize) < self.d.valid {
            let r = m as usize;
            return (
                Verdict {
                    rule: Some(r),
                    action: self.rules[r].action,
                },
                Trace::default(),
            );
        }
        let mut tr = Trace {
            shunted: true,
            traversed: 0,
        };
        let v = match self.strategy {
            Strategy::Full => self.linear_from(0, p, &mut tr),
            Strategy::Cut => self.linear_from(self.d.valid, p, &mut tr),
            Strategy::Interval => self.interval(m, p, &mut tr),
        };
        (v, tr)
    }

    fn linear_from(&mut self, from: usize, p: &Packet<'_>, tr: &mut Trace) -> Verdict {
        for i in from..self.rules.len() {
            tr.traversed += 1;
            if self.rules[i].matches(p, &mut self.state[i]) {
                return Verdict {
                    rule: Some(i),
                    action: self.rules[i].action,
                };
            }
        }
        Verdict {
            rule: None,
            action: self.policy,
        }
    }

    fn interval(&mut self, m: u32, p: &Packet<'_>, tr: &mut Trace) -> Verdict {
        let (upto, then) = if m == NONE {
            (self.d.extras.len(), None)
        } else {
            // The interval holding m: the last start at or before it.
            let k = self.d.starts.partition_point(|&s| s <= m);
            let c = if k == 0 { DELETED } else { self.d.chain[k - 1] };
            if c == DELETED || self.d.now_at[m as usize] == DELETED {
                // The fast path's rule is gone; what matches after it is unknown.
                return self.linear_from(self.d.valid, p, tr);
            }
            (c as usize, Some(self.d.now_at[m as usize] as usize))
        };
        for j in 0..upto {
            let i = self.d.extras[j] as usize;
            tr.traversed += 1;
            if self.rules[i].matches(p, &mut self.state[i]) {
                return Verdict {
                    rule: Some(i),
                    action: self.rules[i].action,
                };
            }
        }
        match then {
            Some(r) => Verdict {
                rule: Some(r),
                action: self.rules[r].action,
            },
            None => Verdict {
                rule: None,
                action: self.policy,
            },
        }
    }

    /// Inserts `rule` at `pos` (0 = first; `len()` = last). Holds from the next packet.
    pub fn insert(&mut self, pos: usize, rule: Rule) {
        let pos = pos.min(self.rules.len());
        self.state.insert(pos, rule.new_state());
        self.rules.insert(pos, Arc::new(rule));
        self.ids.insert(pos, self.next_id);
        self.next_id += 1;
        self.after_update(pos);
    }

    /// Deletes the rule at `pos`; `false` when there is none.
    pub fn delete(&mut self, pos: usize) -> bool {
        if pos >= self.rules.len() {
            return false;
        }
        self.rules.remove(pos);
        self.state.remove(pos);
        self.ids.remove(pos);
        self.after_update(pos);
        true
    }

    fn after_update(&mut self, pos: usize) {
        self.version += 1;
        if self.strategy == Strategy::Interval {
            self.stale = true;
        } else {
            // Nothing before `pos` changed.
            self.d.valid = self.d.valid.min(pos);
        }
        self.fold_in_if_due();
    }

    /// Updates the fast path does not know yet.
    pub fn pending_updates(&self) -> u64 {
        self.version - self.snap.version
    }

    /// Starts a rebuild when more than [`AUTO_REBUILD`] updates wait and none is running
    /// (the full strategy scans every rule anyway).
    fn fold_in_if_due(&mut self) {
        if self.rebuild.is_none()
            && self.strategy != Strategy::Full
            && self.pending_updates() > AUTO_REBUILD
        {
            self.start_rebuild();
        }
    }

    /// Starts building a fast path from the current list on another thread. A rebuild
    /// already running is superseded.
    pub fn start_rebuild(&mut self) {
        let rules = self.rules.clone();
        let ids = self.ids.clone();
        let (next_id, version, strategy) = (self.next_id, self.version, self.strategy);
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let _ = tx.send(build_snapshot(&rules, ids, next_id, version, strategy));
        });
        self.rebuild = Some(rx);
    }

    /// Installs a finished rebuild, if any; returns whether it did. Cheap when none is
    /// ready: call it between packets (rebuilds also start by themselves, past
    /// [`AUTO_REBUILD`] waiting updates, and land here).
    pub fn poll(&mut self) -> bool {
        let Some(rx) = &self.rebuild else {
            return false;
        };
        match rx.try_recv() {
            Ok(snap) => {
                self.rebuild = None;
                self.install(snap);
                self.fold_in_if_due();
                true
            }
            Err(TryRecvError::Empty) => false,
            Err(TryRecvError::Disconnected) => {
                self.rebuild = None;
                false
            }
        }
    }

    /// Waits for a running rebuild and installs it (which may start the next one, when
    /// more than [`AUTO_REBUILD`] updates came meanwhile).
    pub fn finish_rebuild(&mut self) -> bool {
        let Some(rx) = self.rebuild.take() else {
            return false;
        };
        match rx.recv() {
            Ok(snap) => {
                self.install(snap);
                self.fold_in_if_due();
                true
            }
            Err(_) => false,
        }
    }

    /// Rebuilds on this thread.
    pub fn rebuild_now(&mut self) {
        self.rebuild = None;
        let snap = build_snapshot(
            &self.rules,
            self.ids.clone(),
            self.next_id,
            self.version,
            self.strategy,
        );
        self.install(snap);
    }

    fn install(&mut self, mut snap: Snapshot) {
        let t = std::time::Instant::now();
        let derived = snap.derived.take();
        let current = snap.version == self.version;
        let old = std::mem::replace(&mut self.snap, Arc::new(snap));
        self.d = match derived {
            // Nothing changed since the build started: what it derived holds.
            Some(d) if current => d,
            _ => self.derive_now(),
        };
        self.stale = false;
        // Freeing a large fast path takes milliseconds; not between two packets.
        std::thread::spawn(move || drop(old));
        self.longest_install = self.longest_install.max(t.elapsed());
    }

    /// The longest pause an install of a rebuilt fast path caused between two packets
    /// (the build itself runs on another thread).
    pub fn longest_install(&self) -> std::time::Duration {
        self.longest_install
    }

    /// The longest chain of rules a shunted packet may be tested against, per strategy
    /// (the paper's worst-case path, Figure 14).
    pub fn worst_case_traversal(&self) -> usize {
        let d = self.derived();
        match self.strategy {
            Strategy::Full => self.rules.len(),
            Strategy::Cut => self.rules.len() - d.valid,
            Strategy::Interval => {
                // The longest chain, or a deleted fast-path rule's fallback.
                let longest = d
                    .chain
                    .iter()
                    .filter(|&&c| c != DELETED)
                    .max()
                    .copied()
                    .unwrap_or(0) as usize;
                let any_deleted = d.chain.contains(&DELETED);
                let fallback = if any_deleted {
                    self.rules.len() - d.valid
                } else {
                    0
                };
                longest.max(d.extras.len()).max(fallback)
            }
        }
    }

    /// Rules the slow path holds for the strategy: all, those from `validID` on, or the
    /// extras (the chains share them).
    pub fn slow_path_rules(&self) -> usize {
        let d = self.derived();
        match self.strategy {
            Strategy::Full => self.rules.len(),
            Strategy::Cut => self.rules.len() - d.valid,
            Strategy::Interval => d.extras.len(),
        }
    }
}
