//! A run's counters: the `stats` records written while it goes on and at its end, the
//! summary line on standard error, `--stats-json`, and with `--profile` where the time
//! went.

use std::time::{Duration, Instant, SystemTime};

use netsieve_detect::RuleSet;
use netsieve_detect::engine::Phase;
use netsieve_packet::DecodeEvent;
use serde_json::{Value, json};

use netsieve_detect::{DropReason, ExceptionPolicy, FwDrop};

use super::control::Control;
use super::eve::Record;
use super::eve::{
    Counted, DecodeEvents, DecoderCounts, FlowCounts, IpsCounts, RuleCounts, StatsRecord,
    TcpCounts, Timestamp,
};
use super::pipeline::{Pool, PoolReport, ReadStats};
use super::sink::Emitter;

/// What stays the same through a run, for its summary and `stats` records.
pub(super) struct RunFacts {
    /// When the run started (loading included): `stats` records' `uptime` counts from it.
    pub started: Instant,
    pub load_time: Duration,
    pub mpm: String,
    pub threads: usize,
    /// IPS mode (inline or simulated): the stats record counts verdicts.
    pub ips: bool,
    /// Midstream pickup is off: flows picked up midstream are counted as exceptions.
    pub midstream_exception: bool,
    /// `stats.stream-events`: stream events are counted.
    pub stream_events: bool,
}

/// What a run did, so far or in all.
pub(super) struct Summary<'a> {
    pub read: &'a ReadStats,
    pub pool: &'a PoolReport,
    pub set: &'a RuleSet,
    pub alerts: u64,
    /// Rules parsed, and rules that failed to parse.
    pub parsed: usize,
    pub failed: usize,
    pub scan_time: Duration,
    pub run: &'a RunFacts,
}

impl<'a> Summary<'a> {
    /// What the run did so far: the reader's counters `read`, the pool's `pool`, the
    /// rules in force `set`, and the emitter's and control's counts.
    pub fn new(
        read: &'a ReadStats,
        pool: &'a PoolReport,
        set: &'a RuleSet,
        (out, control): (&Emitter, &Control),
        run: &'a RunFacts,
    ) -> Summary<'a> {
        let (parsed, failed) = control.rules_read();
        Summary {
            read,
            pool,
            set,
            alerts: out.alerts(),
            parsed,
            failed,
            scan_time: Duration::ZERO,
            run,
        }
    }

    /// Writes the run's counters as a `stats` record, the rules in force loaded at
    /// `last_reload`.
    pub fn write_stats(&self, out: &mut Emitter, last_reload: SystemTime) -> Result<(), String> {
        out.record(Record::Stats(Box::new(self.stats_record(last_reload))))
    }
}

/// `stats.interval`: a `stats` record every so often (wall-clock time, as Suricata's
/// stats thread wakes), with the counters of the whole run so far.
pub(super) struct Periodic<'a> {
    every: Duration,
    next: Instant,
    run: &'a RunFacts,
    control: &'a Control,
}

impl<'a> Periodic<'a> {
    pub fn new(every: Duration, run: &'a RunFacts, control: &'a Control) -> Periodic<'a> {
        Periodic {
            every,
            next: Instant::now() + every,
            run,
            control,
        }
    }

    /// Writes a `stats` record if one is due: every packet before it is inspected and
    /// its alerts written first, and the record is flushed to its file.
    pub fn tick(
        &mut self,
        read: &ReadStats,
        pool: &mut Pool,
        out: &mut Emitter,
    ) -> Result<(), String> {
        let now = Instant::now();
        if now < self.next {
            return Ok(());
        }
        // The next one an interval from now: a run that stalled does not catch up.
        self.next = now + self.every;
        let report = pool.report(out)?;
        let set = std::sync::Arc::clone(out.rules());
        let summary = Summary::new(read, &report, &set, (out, self.control), self.run);
        summary.write_stats(out, self.control.last_reload())?;
        // Readers tailing eve.json see it now, not when the buffer next fills.
        out.flush()
    }
}

impl Summary<'_> {
    fn gbit_per_second(&self) -> f64 {
        self.read.bytes as f64 * 8.0 / self.scan_time.as_secs_f64().max(1e-9) / 1e9
    }

    /// Rules that failed to load or to compile.
    fn failed(&self) -> usize {
        self.failed + self.set.stats().compile_errors.len()
    }

    /// The run's counters as an EVE `stats` record, the rules in force loaded at
    /// `last_reload`.
    pub fn stats_record(&self, last_reload: SystemTime) -> StatsRecord {
        let (r, d, f) = (self.read, &self.read.decoded, &self.pool.flows);
        let s = self.set.stats();
        let events = DecodeEvents(d.events.clone());
        StatsRecord::new(Counted {
            uptime: self.run.started.elapsed(),
            decoder: DecoderCounts {
                pkts: r.packets,
                bytes: r.bytes,
                invalid: d.invalid,
                ipv4: d.ipv4,
                ipv6: d.ipv6,
                ethernet: d.ethernet,
                unknown_ethertype: events.of(DecodeEvent::EthernetUnknownEthertype),
                tcp: d.tcp,
                udp: d.udp,
                icmpv4: d.icmpv4,
                icmpv6: d.icmpv6,
                ipv4_in_ipv4: d.ipv4_in_ipv4,
                ipv6_in_ipv4: d.ipv6_in_ipv4,
                ipv4_in_ipv6: d.ipv4_in_ipv6,
                ipv6_in_ipv6: d.ipv6_in_ipv6,
                event: events,
            },
            flow: FlowCounts {
                total: f.created,
                tcp: f.tcp,
                udp: f.udp,
                icmpv4: f.icmpv4,
                icmpv6: f.icmpv6,
            },
            rules: RuleCounts {
                id: 0,
                last_reload: Timestamp(
                    last_reload
                        .duration_since(SystemTime::UNIX_EPOCH)
                        .unwrap_or_default(),
                ),
                rules_loaded: s.inspected,
                rules_failed: self.failed(),
                rules_skipped: s.waiting_app_layer + s.unsupported.values().sum::<usize>(),
            },
            alerts: self.alerts,
            // Every policy but `ignore`, which Suricata does not count.
            midstream_exceptions: self.run.midstream_exception.then(|| {
                ExceptionPolicy::ALL
                    .iter()
                    .zip(self.pool.counts.midstream_exceptions)
                    .filter(|(p, _)| **p != ExceptionPolicy::Ignore)
                    .map(|(p, n)| (p.name(), n))
                    .collect()
            }),
            alert_overflow: self.pool.counts.alert_overflow,
            stream_events: self
                .run
                .stream_events
                .then(|| f.stream_events().map(|(e, n)| (e.name(), n)).collect()),
            tcp: TcpCounts {
                syn: f.tcp_syn,
                synack: f.tcp_synack,
                rst: f.tcp_rst,
                sessions: f.tcp_sessions,
                reassembly_gap: self.pool.ended.gaps,
            },
            app_layer: self.pool.ended.app.clone(),
            ips: self.run.ips.then(|| {
                let c = &self.pool.counts;
                IpsCounts {
                    accepted: c.ips_accepted,
                    blocked: c.ips_blocked,
                    drop_reason: DropReason::COUNTER_NAMES
                        .into_iter()
                        .zip(c.drop_reasons)
                        .collect(),
                    discarded_alerts: None,
                }
            }),
            firewall: (self.run.ips && self.set.firewall_mode()).then(|| {
                let c = &self.pool.counts;
                IpsCounts {
                    accepted: c.fw_accepted,
                    blocked: c.fw_blocked,
                    drop_reason: FwDrop::COUNTER_NAMES
                        .into_iter()
                        .zip(c.fw_drop_reasons)
                        .collect(),
                    discarded_alerts: Some(c.fw_discarded_alerts),
                }
            }),
        })
    }

    /// The summary as `--stats-json` writes it (with `--profile`, the stage times too).
    pub fn json(&self) -> Value {
        let s = &self.set.stats();
        let (tcp_groups, udp_groups) = self.set.port_groups();
        let mut v = json!({
            "packets": self.read.packets,
            "bytes": self.read.bytes,
            "flows": self.pool.flows.created,
            "flows_evicted": self.pool.flows.evicted,
            "established_flows_evicted": self.pool.flows.evicted_established,
            "alerts": self.alerts,
            "bad_checksum_packets": self.read.bad_checksum,
            "undecoded_link_type_packets": self.read.undecoded,
            "rules": {
                "parsed": self.parsed,
                "failed": self.failed(),
                "inspected": s.inspected,
                "waiting_for_app_layer": s.waiting_app_layer,
                "app_layer_missing": s.app_missing,
                "transaction_rules": s.app_layer,
                "unsupported_keyword": s.unsupported.values().sum::<usize>(),
                "not_inspected": s
                    .not_inspected
                    .iter()
                    .map(|(sid, needs)| json!({"sid": sid, "needs": needs}))
                    .collect::<Vec<Value>>(),
                "pcre_regex_crate": s.pcre_linear,
                "pcre_pcre2": s.pcre_backtracking,
            },
            "load_seconds": self.run.load_time.as_secs_f64(),
            "scan_seconds": self.scan_time.as_secs_f64(),
            "gbit_per_second": self.gbit_per_second(),
            "prefilter_bytes": self.set.prefilter_bytes(),
            "port_groups": { "tcp": tcp_groups, "udp": udp_groups },
            "mpm": self.run.mpm,
            "detection": self.counts_json(),
            "threads": self.run.threads,
        });
        if let Some(stages) = self.stages() {
            let obj = stages
                .iter()
                .map(|(name, d)| (name.to_string(), json!(d.as_secs_f64())))
                .collect();
            v["profile_seconds"] = Value::Object(obj);
        }
        if let Some((p, _)) = self.pool.profile.as_ref() {
            let obj = Phase::ALL
                .iter()
                .map(|&ph| {
                    (
                        ph.name().to_string(),
                        json!(p.phases[ph as usize].as_secs_f64()),
                    )
                })
                .collect();
            v["detection_phase_seconds"] = Value::Object(obj);
        }
        v
    }

    /// What detection did, per packet and per kilobyte scanned.
    fn counts_json(&self) -> Value {
        let c = self.pool.counts;
        let per = |n: u64, d: u64| n as f64 / d.max(1) as f64;
        json!({
            "packets": c.packets,
            "bytes_prefiltered": c.scanned,
            "prefilter_hits": c.hits,
            "candidates": c.candidates,
            "candidates_evaluated": c.evaluated,
            "prefilter_hits_per_kb": per(c.hits * 1000, c.scanned),
            "candidates_per_packet": per(c.candidates, c.packets),
            "evaluated_per_packet": per(c.evaluated, c.packets),
        })
    }

    /// With `--profile`: the time of each stage.
    fn stages(&self) -> Option<[(&'static str, Duration); 6]> {
        let (p, flow_time) = self.pool.profile.as_ref()?;
        let decode = self.read.decode_time;
        let eval = p.detect.saturating_sub(p.app + p.prefilter);
        let other = self
            .scan_time
            .saturating_sub(decode + *flow_time + p.detect);
        Some([
            ("decode", decode),
            ("flow_and_reassembly", *flow_time),
            ("app_layer", p.app),
            ("prefilter", p.prefilter),
            ("rule_evaluation", eval),
            ("capture_and_output", other),
        ])
    }

    /// Prints the profile (if any) and the summary line on standard error.
    pub fn print(&self) {
        if let Some(stages) = self.stages() {
            let mut line = String::from("netsieve scan: profile:");
            for (name, d) in stages {
                let share = 100.0 * d.as_secs_f64() / self.scan_time.as_secs_f64().max(1e-9);
                line.push_str(&format!(" {name} {:.3} s ({share:.0}%),", d.as_secs_f64()));
            }
            line.pop();
            eprintln!("{line}");
            if let Some((p, _)) = self.pool.profile.as_ref() {
                let mut line = String::from("netsieve scan: profile: detection phases:");
                for ph in Phase::ALL {
                    let d = p.phases[ph as usize].as_secs_f64();
                    line.push_str(&format!(" {} {d:.3} s,", ph.name()));
                }
                line.pop();
                eprintln!("{line}");
            }
            let c = self.counts_json();
            eprintln!(
                "netsieve scan: profile: {} bytes prefiltered, {:.2} hits/KB, {:.2} candidates and {:.2} evaluated per packet",
                c["bytes_prefiltered"],
                c["prefilter_hits_per_kb"].as_f64().unwrap_or(0.0),
                c["candidates_per_packet"].as_f64().unwrap_or(0.0),
                c["evaluated_per_packet"].as_f64().unwrap_or(0.0),
            );
        }
        let s = &self.set.stats();
        eprintln!(
            "netsieve scan: {} packets, {:.1} MB, {} flows, {} alerts; rules: {} inspected, {} waiting for app-layer, {} unsupported keyword, {} failed; load {:.3} s, scan {:.3} s ({:.2} Gbit/s)",
            self.read.packets,
            self.read.bytes as f64 / 1e6,
            self.pool.flows.created,
            self.alerts,
            s.inspected,
            s.waiting_app_layer,
            s.unsupported.values().sum::<usize>(),
            self.failed(),
            self.run.load_time.as_secs_f64(),
            self.scan_time.as_secs_f64(),
            self.gbit_per_second(),
        );
        // As Suricata warns: a capture taken on the sending host often has checksums
        // the card would have filled in.
        if self.read.bad_checksum > 0 {
            eprintln!(
                "netsieve scan: warning: {} of {} packets ({:.1}%) had a wrong checksum: their payload was kept out of streams. If the capture was taken where the network card computes checksums, use -k none",
                self.read.bad_checksum,
                self.read.packets,
                100.0 * self.read.bad_checksum as f64 / self.read.packets.max(1) as f64
            );
        }
    }
}
