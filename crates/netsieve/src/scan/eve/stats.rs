//! The `stats` record, written every `stats.interval` and at the end of a run: the counters netsieve keeps, under
//! the names and nesting of Suricata 8's (which has many more; those netsieve has no
//! counterpart for are left out rather than written as zeros).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, SystemTime};

use netsieve_applayer::AppProto;
use netsieve_packet::DecodeEvent;
use serde::Serialize;
use serde::ser::SerializeMap;

use super::Timestamp;

#[derive(Serialize)]
pub(in crate::scan) struct Record {
    timestamp: Timestamp,
    event_type: &'static str,
    stats: Stats,
}

/// What a run counted, handed over by the scan.
pub(in crate::scan) struct Counted {
    pub uptime: Duration,
    pub decoder: Decoder,
    pub flow: Flow,
    pub rules: Rules,
    pub alerts: u64,
    /// Flows that triggered the midstream exception policy, by policy name; `None`
    /// when midstream pickup is on (no exception, no counter, as Suricata writes it).
    pub midstream_exceptions: Option<Vec<(&'static str, u64)>>,
    /// Alerts packets lost to `packet-alert-max`.
    pub alert_overflow: u64,
    /// `stats.stream-events`: each stream event's count, by name.
    pub stream_events: Option<BTreeMap<&'static str, u64>>,
    /// IPS mode: packets accepted, blocked, and blocked by reason.
    pub ips: Option<Ips>,
    /// Firewall mode: what the firewall accepted and blocked, by reason.
    pub firewall: Option<Ips>,
    pub tcp: Tcp,
    /// Per application protocol (`None`: detection failed) and IP protocol: flows
    /// and transactions.
    pub app_layer: AppCounts,
}

/// Per application protocol (`None`: detection failed) and IP protocol: flows, and the
/// transactions they began.
pub(in crate::scan) type AppCounts = HashMap<(Option<AppProto>, u8), (u64, u64)>;

#[derive(Serialize)]
struct Stats {
    uptime: u64,
    decoder: Decoder,
    flow: Flow,
    tcp: Tcp,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<BTreeMap<&'static str, u64>>,
    app_layer: AppLayer,
    detect: Detect,
    #[serde(skip_serializing_if = "Option::is_none")]
    ips: Option<Ips>,
    #[serde(skip_serializing_if = "Option::is_none")]
    firewall: Option<Ips>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exception_policy: Option<ExceptionPolicies>,
}

/// `app_layer.flow.<name>` and `app_layer.tx.<name>`.
#[derive(Serialize)]
struct AppLayer {
    flow: BTreeMap<String, u64>,
    tx: BTreeMap<String, u64>,
}

impl AppLayer {
    fn of(counts: AppCounts) -> AppLayer {
        let mut a = AppLayer {
            flow: BTreeMap::new(),
            tx: BTreeMap::new(),
        };
        for ((app, ipproto), (flows, txs)) in counts {
            let name = counter_name(app, ipproto);
            *a.flow.entry(name.clone()).or_default() += flows;
            // Measured: Suricata counts no transaction of TLS and SSH here (their one
            // state is one in the flow record's `tx_cnt`).
            let txs = match app {
                Some(AppProto::Tls | AppProto::Ssh) => 0,
                _ => txs,
            };
            if app.is_some() {
                *a.tx.entry(name).or_default() += txs;
            }
        }
        a
    }
}

/// Suricata's counter name of a protocol: `failed_tcp` for flows whose detection
/// failed, `<name>_<tcp|udp>` for a protocol it parses over both, else its name.
fn counter_name(app: Option<AppProto>, ipproto: u8) -> String {
    let transport = if ipproto == 17 { "udp" } else { "tcp" };
    match app {
        None => format!("failed_{transport}"),
        Some(p) if p.over_udp() || p == AppProto::Dcerpc => format!("{}_{transport}", p.name()),
        Some(p) => p.name().to_string(),
    }
}

/// `tcp`: what the stream engine counted, in Suricata's key order.
#[derive(Serialize)]
pub(in crate::scan) struct Tcp {
    pub syn: u64,
    pub synack: u64,
    pub rst: u64,
    pub sessions: u64,
    /// Holes the TCP streams skipped.
    pub reassembly_gap: u64,
}

/// IPS mode's verdicts (and the firewall's, in firewall mode): packets passed on,
/// packets dropped, and why.
#[derive(Serialize)]
pub(in crate::scan) struct Ips {
    pub accepted: u64,
    pub blocked: u64,
    pub drop_reason: BTreeMap<&'static str, u64>,
    /// The firewall's only: threat detection alerts thrown away because an application
    /// state of the firewall dropped their packet after the packet rules raised them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discarded_alerts: Option<u64>,
}

/// `exception_policy.tcp.midstream.<policy>`: flows that triggered each policy.
#[derive(Serialize)]
struct ExceptionPolicies {
    tcp: Midstream,
}

#[derive(Serialize)]
struct Midstream {
    midstream: BTreeMap<&'static str, u64>,
}

#[derive(Serialize)]
pub(in crate::scan) struct Decoder {
    pub pkts: u64,
    pub bytes: u64,
    pub invalid: u64,
    pub ipv4: u64,
    pub ipv6: u64,
    pub ethernet: u64,
    pub unknown_ethertype: u64,
    pub tcp: u64,
    pub udp: u64,
    pub icmpv4: u64,
    pub icmpv6: u64,
    pub ipv4_in_ipv4: u64,
    pub ipv6_in_ipv4: u64,
    pub ipv4_in_ipv6: u64,
    pub ipv6_in_ipv6: u64,
    /// Each decoder event netsieve raises, by layer (`event.ipv4.trunc_pkt`).
    pub event: DecodeEvents,
}

/// Counts of decoder events, by [`DecodeEvent`] index (empty: none raised), written as
/// Suricata writes them: every event, nested by layer (`{"ipv4": {"trunc_pkt": 0}}`).
pub(in crate::scan) struct DecodeEvents(pub Vec<u64>);

impl DecodeEvents {
    pub fn of(&self, e: DecodeEvent) -> u64 {
        self.0.get(e as usize).copied().unwrap_or(0)
    }
}

impl Serialize for DecodeEvents {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut layers: Vec<(&str, Vec<(&str, u64)>)> = Vec::new();
        for &e in DecodeEvent::ALL {
            let (layer, name) = e.name().split_once('.').unwrap_or(("", e.name()));
            match layers.iter_mut().find(|l| l.0 == layer) {
                Some(l) => l.1.push((name, self.of(e))),
                None => layers.push((layer, vec![(name, self.of(e))])),
            }
        }
        let mut map = s.serialize_map(Some(layers.len()))?;
        for (layer, events) in &layers {
            map.serialize_entry(layer, &Counters(events))?;
        }
        map.end()
    }
}

/// One layer's event counters, in order.
struct Counters<'a>(&'a [(&'a str, u64)]);

impl Serialize for Counters<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, n) in self.0 {
            map.serialize_entry(name, n)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
pub(in crate::scan) struct Flow {
    pub total: u64,
    pub tcp: u64,
    pub udp: u64,
    pub icmpv4: u64,
    pub icmpv6: u64,
}

#[derive(Serialize)]
struct Detect {
    engines: [Rules; 1],
    alert: u64,
    alert_queue_overflow: u64,
    lua: Lua,
}

/// Lua calls that failed, by cause (`detect.lua`).
#[derive(Serialize)]
struct Lua {
    errors: u64,
    blocked_function_errors: u64,
    instruction_limit_errors: u64,
    memory_limit_errors: u64,
}

impl Lua {
    fn now() -> Lua {
        let s = netsieve_detect::lua::stats();
        Lua {
            errors: s.errors,
            blocked_function_errors: s.blocked_function_errors,
            instruction_limit_errors: s.instruction_limit_errors,
            memory_limit_errors: s.memory_limit_errors,
        }
    }
}

/// The rule set in force: rules inspected, rules that failed to parse or compile, and
/// rules skipped (read, but needing a parser or keyword netsieve does not have).
#[derive(Serialize)]
pub(in crate::scan) struct Rules {
    pub id: u32,
    pub last_reload: Timestamp,
    pub rules_loaded: usize,
    pub rules_failed: usize,
    pub rules_skipped: usize,
}

impl Record {
    /// The record without its counters that are zero (`null-values: false`), and
    /// without the objects left empty; the rule set's description (`detect.engines`)
    /// is not a counter and stays whole.
    pub fn without_zeros(&self) -> serde_json::Value {
        fn prune(v: &mut serde_json::Value) {
            if let serde_json::Value::Object(map) = v {
                map.retain(|k, x| {
                    if k == "engines" {
                        return true;
                    }
                    prune(x);
                    match x {
                        serde_json::Value::Number(n) => n.as_f64() != Some(0.0),
                        serde_json::Value::Object(m) => !m.is_empty(),
                        _ => true,
                    }
                });
            }
        }
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(stats) = v.get_mut("stats") {
            prune(stats);
        }
        v
    }

    pub fn new(c: Counted) -> Record {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        Record {
            timestamp: Timestamp(now),
            event_type: "stats",
            stats: Stats {
                uptime: c.uptime.as_secs(),
                decoder: c.decoder,
                flow: c.flow,
                tcp: c.tcp,
                stream: c.stream_events,
                app_layer: AppLayer::of(c.app_layer),
                detect: Detect {
                    engines: [c.rules],
                    alert: c.alerts,
                    alert_queue_overflow: c.alert_overflow,
                    lua: Lua::now(),
                },
                ips: c.ips,
                firewall: c.firewall,
                exception_policy: c.midstream_exceptions.map(|m| ExceptionPolicies {
                    tcp: Midstream {
                        midstream: m.into_iter().collect(),
                    },
                }),
            },
        }
    }
}
