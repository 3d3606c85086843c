//! Rule thresholds, detection filters and threshold.config (suppressions, thresholds and
//! rate filters), applied to the alerts of all workers merged in packet order.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use netsieve_rules::{
    Action, GlobalKind, SuppressTrack, Threshold, ThresholdConfig, ThresholdKind, Track,
};

use crate::engine::Alert;
use crate::ruleset::{RuleSet, Sig};

/// What a threshold or rate filter counts by (its `track`), resolved for one alert.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum TrackKey {
    Ip(IpAddr),
    Pair(IpAddr, IpAddr),
    Rule,
    Flow(u64),
}

/// One rule's count for one key in the current window.
#[derive(Clone, Copy, Debug)]
struct Counter {
    count: u64,
    start: Duration,
    window: Duration,
    /// `backoff`: the hit count that alerts next.
    next: u64,
}

/// Threshold counters kept at most; past it, counters whose window has ended are
/// forgotten (a scan over many addresses cannot grow the table without bound).
const MAX_COUNTERS: usize = 1 << 20;

/// Rule thresholds and detection filters, and threshold.config's suppressions,
/// thresholds and rate filters. They limit or change alerts, not matches, and count
/// across flows (by source, destination, address pair or rule), so they are applied
/// once, to the alerts of all workers merged in packet order.
#[derive(Default)]
pub struct Thresholds {
    counters: HashMap<(u32, TrackKey), Counter>,
    /// Per rule (index into `RuleSet::sigs`): the threshold.config entries that apply.
    global: HashMap<u32, Vec<GlobalKind>>,
    /// Rate filter state per rule and key: (matches, window start, new action until).
    rates: HashMap<(u32, TrackKey), (u64, Duration, Option<Duration>)>,
    ips: bool,
}

impl Thresholds {
    /// Thresholds for `set`, with the entries of a threshold.config if there is one.
    /// `ips`: drop and reject block (for rate filters that change the action).
    pub fn new(set: &RuleSet, config: Option<&ThresholdConfig>, ips: bool) -> Thresholds {
        let mut global: HashMap<u32, Vec<GlobalKind>> = HashMap::new();
        if let Some(c) = config {
            for (i, s) in set.sigs.iter().enumerate() {
                let kinds: Vec<GlobalKind> = c
                    .entries
                    .iter()
                    .filter(|e| e.applies(s.rule.gid, s.rule.sid))
                    // A catch-all threshold leaves rules with their own alone.
                    .filter(|e| {
                        !(e.sid == 0
                            && matches!(e.kind, GlobalKind::Threshold(_))
                            && s.rule.threshold.is_some())
                    })
                    .map(|e| e.kind.clone())
                    .collect();
                if !kinds.is_empty() {
                    global.insert(i as u32, kinds);
                }
            }
        }
        Thresholds {
            global,
            ips,
            ..Thresholds::default()
        }
    }

    /// Carries the counters over to a reloaded rule set: a rule keeps its counts where
    /// the new set has a rule with the same (gid, sid); `config` is applied afresh.
    pub fn rebase(&mut self, old: &RuleSet, new: &RuleSet, config: Option<&ThresholdConfig>) {
        if new.extends(old) {
            // Every rule kept its index: the counters stand as they are.
            self.global = Thresholds::new(new, config, self.ips).global;
            return;
        }
        let by_id: HashMap<(u32, u32), u32> = new
            .sigs
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.rule.gid, s.rule.sid), i as u32))
            .collect();
        let moved = |i: u32| {
            let r = &old.sigs[i as usize].rule;
            by_id.get(&(r.gid, r.sid)).copied()
        };
        let counters = std::mem::take(&mut self.counters);
        self.counters = counters
            .into_iter()
            .filter_map(|((i, k), c)| Some(((moved(i)?, k), c)))
            .collect();
        let rates = std::mem::take(&mut self.rates);
        self.rates = rates
            .into_iter()
            .filter_map(|((i, k), r)| Some(((moved(i)?, k), r)))
            .collect();
        self.global = Thresholds::new(new, config, self.ips).global;
    }

    /// Whether `al` is written: suppressions, then the threshold (threshold.config's
    /// replaces the rule's), the detection filter, and rate filters, which may change
    /// the alert's action (and so `blocked`).
    pub fn admit(&mut self, set: &RuleSet, al: &mut Alert) -> bool {
        let s = &set.sigs[al.sig as usize];
        // Taken out for the duration (the counters below need `self`), put back at the end.
        let global = self.global.remove(&al.sig).unwrap_or_default();
        let ok = self.apply(s, &global, al);
        if !global.is_empty() {
            self.global.insert(al.sig, global);
        }
        ok
    }

    fn apply(&mut self, s: &Sig, global: &[GlobalKind], al: &mut Alert) -> bool {
        let mut threshold = s.rule.threshold;
        for g in global {
            match g {
                GlobalKind::Suppress(None) => return false,
                GlobalKind::Suppress(Some((track, addrs))) => {
                    let hit = match track {
                        SuppressTrack::BySrc => addrs.matches(al.src),
                        SuppressTrack::ByDst => addrs.matches(al.dst),
                        SuppressTrack::ByEither => addrs.matches(al.src) || addrs.matches(al.dst),
                    };
                    if hit {
                        return false;
                    }
                }
                GlobalKind::Threshold(t) => threshold = Some(*t),
                GlobalKind::RateFilter { .. } => {}
            }
        }
        let mut ok = true;
        for t in [threshold, s.rule.detection_filter].into_iter().flatten() {
            ok &= self.count(al.sig, t, al);
        }
        if !ok {
            return false;
        }
        for g in global {
            if let GlobalKind::RateFilter {
                track,
                count,
                seconds,
                new_action,
                timeout,
            } = *g
            {
                let key = track_key(track, al);
                let now = al.ts;
                let e = self.rates.entry((al.sig, key)).or_insert((0, now, None));
                if now.saturating_sub(e.1) > Duration::from_secs(seconds) {
                    e.0 = 0;
                    e.1 = now;
                }
                e.0 += 1;
                if e.0 > count {
                    e.2 = Some(now + Duration::from_secs(timeout));
                }
                if e.2.is_some_and(|until| now <= until) {
                    match new_action {
                        Action::Pass => return false,
                        Action::Alert | Action::Accept => al.blocked = false,
                        Action::Drop | Action::Reject => al.blocked = self.ips,
                    }
                }
            }
        }
        true
    }

    fn count(&mut self, si: u32, t: Threshold, c: &Alert) -> bool {
        let key = track_key(t.track, c);
        let now = c.ts;
        let window = Duration::from_secs(t.seconds);
        if self.counters.len() >= MAX_COUNTERS {
            self.counters
                .retain(|_, c| now.saturating_sub(c.start) <= c.window);
            if self.counters.len() >= MAX_COUNTERS {
                // All live: keep the newest half.
                let mut starts: Vec<Duration> = self.counters.values().map(|c| c.start).collect();
                let mid = starts.len() / 2;
                let (_, cut, _) = starts.select_nth_unstable(mid);
                let cut = *cut;
                self.counters.retain(|_, c| c.start > cut);
            }
        }
        let e = self.counters.entry((si, key)).or_insert(Counter {
            count: 0,
            start: now,
            window,
            next: 0,
        });
        if t.kind != ThresholdKind::Backoff && now.saturating_sub(e.start) > window {
            e.count = 0;
            e.start = now;
        }
        e.count += 1;
        match t.kind {
            ThresholdKind::Limit => e.count <= t.count,
            ThresholdKind::Threshold => {
                if e.count >= t.count {
                    e.count = 0;
                    e.start = now;
                    true
                } else {
                    false
                }
            }
            ThresholdKind::Both => e.count == t.count,
            ThresholdKind::DetectionFilter => e.count > t.count,
            ThresholdKind::Backoff => {
                // Alert on hit count, count*m, count*m^2, ... (no window).
                if e.next == 0 {
                    e.next = t.count;
                }
                if e.count == e.next {
                    e.next = e.next.saturating_mul(t.multiplier);
                    true
                } else {
                    false
                }
            }
        }
    }
}

fn track_key(track: Track, c: &Alert) -> TrackKey {
    match track {
        Track::BySrc => TrackKey::Ip(c.src),
        Track::ByDst => TrackKey::Ip(c.dst),
        Track::ByBoth => {
            // The same pair in either direction.
            let (a, b) = if c.src <= c.dst {
                (c.src, c.dst)
            } else {
                (c.dst, c.src)
            };
            TrackKey::Pair(a, b)
        }
        Track::ByRule => TrackKey::Rule,
        Track::ByFlow => match c.flow_id {
            Some(id) => TrackKey::Flow(id),
            None => TrackKey::Rule,
        },
    }
}
