//! What a run is set to do, from suricata.yaml (`-c`) and `--set KEY=VALUE`: one table
//! from a key to the setter that reads its value, so a setting is added in one place.
//!
//! Keys are suricata.yaml's, flattened with dots (`stream.reassembly.depth`; see
//! `config.rs`). A key the table does not have, or an option of a known section that
//! netsieve does not honour, gets one warning naming it.

use netsieve_packet::{Direction, PerDir};
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use netsieve_applayer::AppProto;
use netsieve_applayer::http::Limits as HttpLimits;
use netsieve_detect::digest::Hash;
use netsieve_detect::log::{EMAIL_FIELDS, LogTypes, StoreFiles};
use netsieve_detect::{AppPorts, BuildOptions, DetectOptions, ExceptionPolicy};
use netsieve_packet::defrag::Defrag;
use netsieve_packet::flow::{FLOW_BYTES, FlowConfig, TCP_SESSION_BYTES, UrgentPolicy};
use netsieve_packet::reassembly::OverlapPolicy;
use netsieve_rules::{References, Vars};

use crate::config;

/// The settings a run uses, after suricata.yaml and `--set`.
pub(super) struct Settings {
    pub vars: Vars,
    pub flow: FlowConfig,
    pub classification: Option<PathBuf>,
    /// `reference-config-file`: the URLs of rule references' systems.
    pub reference: Option<PathBuf>,
    pub threshold_file: Option<PathBuf>,
    /// IP reputation: `reputation-categories-file`, `reputation-files` (relative ones
    /// under `default-reputation-path`).
    pub reputation_categories: Option<PathBuf>,
    pub reputation_files: Vec<PathBuf>,
    pub reputation_dir: Option<PathBuf>,
    pub eve: EveOptions,
    pub build: BuildOptions,
    /// `exception-policy` (the master switch), `stream.midstream-policy` and
    /// `app-layer.error-policy`.
    exception_policy: Option<String>,
    midstream_policy: Option<String>,
    app_error_policy: Option<String>,
    /// `stream.reassembly.to{server,client}-chunk-size`.
    pub chunk: PerDir<u64>,
    /// `outputs.eve-log.types.alert.payload-buffer-size`.
    pub payload_limit: usize,
    /// `app-layer.protocols.http.libhtp.default-config.*` limits.
    pub http: HttpLimits,
    /// `packet-alert-max`.
    pub alert_max: usize,
    /// `app-layer.protocols.<name>[.tcp|.udp].detection-ports.dp`.
    pub ports: AppPorts,
    /// `defrag.trackers` and `defrag.memcap`: datagrams being reassembled, and their bytes.
    pub defrag_datagrams: usize,
    pub defrag_bytes: usize,
    /// `security.lua.*`, and `default-rule-path` (where Lua scripts are found).
    pub lua: netsieve_detect::lua::Config,
    /// `outputs.file-store`.
    pub file_store: FileStoreOptions,
    /// `stats.enabled`: off, no `stats` record is written, not even the last.
    pub stats_enabled: bool,
    /// `stats.interval`: how often a `stats` record is written while the run goes on
    /// (wall-clock time, as Suricata's stats thread wakes).
    pub stats_interval: Duration,
}

/// Suricata's stock `stats.interval`, in seconds.
const STATS_INTERVAL: u64 = 8;

/// `outputs.file-store` (version 2): files stored under `dir` (relative to the log
/// directory), each named by its SHA-256; every file with `force-filestore`, else
/// those `filestore` rules match; with `write-fileinfo`, each beside its `fileinfo`
/// record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct FileStoreOptions {
    pub enabled: bool,
    pub force: bool,
    pub dir: Option<PathBuf>,
    pub write_fileinfo: bool,
}

/// The largest HTTP body file-store keeps whole past the body limits: it is held in
/// memory until its message ends (Suricata streams files to disk instead).
pub(super) const FILE_STORE_MAX: usize = 16 << 20;

impl FileStoreOptions {
    /// Which files are stored.
    pub fn stores(&self) -> StoreFiles {
        match (self.enabled, self.force) {
            (false, _) => StoreFiles::Off,
            (true, false) => StoreFiles::Matched,
            (true, true) => StoreFiles::All,
        }
    }

    /// Where files are stored, under log directory `log_dir` (Suricata's `filestore`
    /// unless `dir` says otherwise).
    pub fn dir(&self, log_dir: &std::path::Path) -> PathBuf {
        log_dir.join(self.dir.as_deref().unwrap_or("filestore".as_ref()))
    }
}

/// Which records eve.json gets besides alerts (suricata.yaml's `outputs.eve-log.types`;
/// without a suricata.yaml, those of Suricata's stock one), and what alert records
/// carry beyond the alert (its `outputs.eve-log.types.alert` options).
#[derive(Clone, Copy)]
pub(super) struct EveOptions {
    pub flow: bool,
    /// Two `netflow` records per flow, one per direction (off in Suricata's stock
    /// configuration).
    pub netflow: bool,
    /// `stats` records (every `stats.interval`, and at the end of the run).
    pub stats: bool,
    /// `types.stats.null-values`: counters that are zero are written (Suricata's
    /// default); off, they are left out.
    pub stats_null_values: bool,
    /// `stats.stream-events`: the stats record counts each stream event.
    pub stream_events: bool,
    /// `anomaly` records of decoder events (`anomaly.types.decode`, off by default).
    pub anomaly_decode: bool,
    /// `drop` records (IPS mode), with the rule that dropped the packet (`alerts`).
    pub drop: bool,
    pub drop_alerts: bool,
    pub payload: bool,
    pub payload_printable: bool,
    pub packet: bool,
    /// `types.alert.tagged-packets`: a `packet` record per packet a `tag` holds (on in
    /// Suricata's stock configuration).
    pub tagged_packets: bool,
    pub verdict: bool,
    /// `outputs.eve-log.ethernet`: alerts carry the frame's Ethernet header (`ether`).
    pub ethernet: bool,
    /// `outputs.eve-log.pcap-file`: alerts name the capture file they come from.
    pub pcap_file: bool,
    /// `types.alert.xff`: an HTTP alert's X-Forwarded-For address, and what to do
    /// with it.
    pub xff: Option<Xff>,
    /// What alerts carry beyond the alert (`types.alert.metadata`).
    pub alert_meta: AlertMeta,
    /// `http`, `dns`, `tls` and `fileinfo` (`files`) records.
    pub log: LogTypes,
    /// Flow records name the exception policy their flow triggered
    /// (`types.flow.exception-policy`).
    pub flow_exception: bool,
    /// The message headers `email` objects add, a bit per entry of
    /// `detect::log::EMAIL_FIELDS` (`types.smtp.extended`, or its `custom` list).
    pub email_fields: u32,
}

/// `types.alert.metadata`: whether alerts carry their transaction's objects
/// (`app-layer`), their flow's counters (`flow`), the rule's `metadata` (`rule.metadata`),
/// its text (`rule.raw`) and its references as URLs (`rule.reference`). `metadata: no`
/// turns the first three off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct AlertMeta {
    pub app: bool,
    pub flow: bool,
    pub rule: bool,
    pub raw: bool,
    pub reference: bool,
}

impl Default for AlertMeta {
    fn default() -> AlertMeta {
        AlertMeta {
            app: true,
            flow: true,
            rule: true,
            raw: false,
            reference: false,
        }
    }
}

/// `types.alert.xff`: which address of the header is the client's (the first with a
/// `forward` deployment, the last with `reverse`), and whether it replaces the client
/// side's address in the record (`overwrite`) or is added to it (`extra-data`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Xff {
    pub overwrite: bool,
    pub reverse: bool,
}

/// The record kinds with a switch, as suricata.yaml's eve-log types name them (alerts
/// are always written), and the switch of each.
type KindSwitch = fn(&mut EveOptions) -> &mut bool;
const KINDS: [(&str, KindSwitch); 23] = [
    ("flow", |e| &mut e.flow),
    ("netflow", |e| &mut e.netflow),
    ("drop", |e| &mut e.drop),
    ("stats", |e| &mut e.stats),
    ("http", |e| &mut e.log.http),
    ("http2", |e| &mut e.log.http2),
    ("dns", |e| &mut e.log.dns),
    ("tls", |e| &mut e.log.tls),
    ("smtp", |e| &mut e.log.smtp),
    ("ssh", |e| &mut e.log.ssh),
    ("ftp", |e| &mut e.log.ftp),
    ("sip", |e| &mut e.log.sip),
    ("mqtt", |e| &mut e.log.mqtt),
    ("krb5", |e| &mut e.log.krb5),
    ("snmp", |e| &mut e.log.snmp),
    ("ldap", |e| &mut e.log.ldap),
    ("tftp", |e| &mut e.log.tftp),
    ("ntp", |e| &mut e.log.ntp),
    ("dcerpc", |e| &mut e.log.dcerpc),
    ("smb", |e| &mut e.log.smb),
    ("websocket", |e| &mut e.log.websocket),
    // Application-layer anomalies come with the kind; stream ones are asked for apart.
    ("anomaly", |e| &mut e.log.anomaly_applayer),
    ("files", |e| &mut e.log.files),
];

impl EveOptions {
    /// The switch of record kind `name` ([`KINDS`]).
    fn kind(&mut self, name: &str) -> Option<&mut bool> {
        let (_, switch) = KINDS.iter().find(|(n, _)| *n == name)?;
        Some(switch(self))
    }
}

impl Default for EveOptions {
    fn default() -> EveOptions {
        EveOptions {
            flow: true,
            netflow: false,
            stats: true,
            stats_null_values: true,
            stream_events: false,
            anomaly_decode: false,
            drop: false,
            drop_alerts: false,
            payload: false,
            payload_printable: false,
            packet: false,
            tagged_packets: true,
            verdict: false,
            ethernet: false,
            pcap_file: false,
            xff: None,
            alert_meta: AlertMeta::default(),
            log: LogTypes {
                http: true,
                http2: true,
                dns: true,
                tls: true,
                smtp: true,
                ssh: true,
                ftp: true,
                sip: true,
                mqtt: true,
                krb5: true,
                snmp: true,
                ldap: true,
                tftp: true,
                ntp: false,
                websocket: true,
                dcerpc: true,
                smb: true,
                file_hashes: 0,
                anomaly_applayer: true,
                anomaly_stream: false,
                files: true,
                store: StoreFiles::Off,
            },
            flow_exception: false,
            email_fields: 0,
        }
    }
}

impl Default for Settings {
    /// Without a suricata.yaml: as Suricata's stock one sets it.
    fn default() -> Settings {
        let det = DetectOptions::default();
        Settings {
            vars: Vars::default(),
            // The stock suricata.yaml reads urgent bytes out of band.
            flow: FlowConfig {
                urgent: UrgentPolicy::Oob,
                ..FlowConfig::default()
            },
            classification: None,
            reference: None,
            threshold_file: None,
            reputation_categories: None,
            reputation_files: Vec::new(),
            reputation_dir: None,
            eve: EveOptions::default(),
            build: BuildOptions::default(),
            exception_policy: None,
            midstream_policy: None,
            app_error_policy: None,
            chunk: det.chunk,
            payload_limit: det.payload_limit,
            http: HttpLimits::default(),
            alert_max: det.alert_max,
            ports: AppPorts::default(),
            defrag_datagrams: Defrag::default().max_datagrams,
            defrag_bytes: Defrag::default().max_bytes,
            lua: netsieve_detect::lua::Config::default(),
            file_store: FileStoreOptions::default(),
            stats_enabled: true,
            stats_interval: Duration::from_secs(STATS_INTERVAL),
        }
    }
}

/// `53`, `1053,53` or `[53, 1053]`: ports.
fn port_list(v: &str) -> Option<Vec<u16>> {
    let v = v.trim().trim_start_matches('[').trim_end_matches(']');
    v.split(',').map(|p| p.trim().parse().ok()).collect()
}

/// Whether a setter used its setting.
enum Used {
    Yes,
    /// The key belongs to a section the table knows, but netsieve does not honour it.
    No,
}

/// Reads one value into the settings. `item` is the rest of the key after a
/// [`Key::Prefix`] (empty for an exact key).
type Setter = fn(&mut Settings, item: &str, value: &str) -> Result<Used, String>;

/// How a table entry matches a key.
enum Key {
    Exact(&'static str),
    /// The key starts with this; the rest names an item (a variable, an OS, an option).
    Prefix(&'static str),
}

/// Every setting netsieve reads, by its suricata.yaml key.
const TABLE: &[(Key, Setter)] = &[
    (Key::Prefix("vars.address-groups."), |s, name, v| {
        s.vars.set_address(name, v);
        Ok(Used::Yes)
    }),
    (Key::Prefix("vars.port-groups."), |s, name, v| {
        s.vars.set_port(name, v);
        Ok(Used::Yes)
    }),
    (Key::Exact("stats.enabled"), |s, _, v| {
        s.stats_enabled = boolean(v)?;
        Ok(Used::Yes)
    }),
    (Key::Exact("stats.interval"), |s, _, v| {
        let secs: u64 = v
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("expected a whole number of seconds, not {v}"))?;
        s.stats_interval = Duration::from_secs(secs);
        Ok(Used::Yes)
    }),
    (Key::Exact("stats.stream-events"), |s, _, v| {
        s.eve.stream_events = boolean(v)?;
        Ok(Used::Yes)
    }),
    (Key::Exact("stream.async-oneside"), |s, _, v| {
        s.flow.async_oneside = config::parse_bool(v).unwrap_or(false);
        Ok(Used::Yes)
    }),
    (Key::Exact("vlan.use-for-tracking"), |s, _, v| {
        s.flow.vlan_tracking = config::parse_bool(v).unwrap_or(true);
        Ok(Used::Yes)
    }),
    (Key::Exact("stream.inline"), |s, _, v| {
        // `auto` means inline only in IPS mode, which --simulate-ips sets anyway.
        s.flow.inline = config::parse_bool(v).unwrap_or(false);
        Ok(Used::Yes)
    }),
    (Key::Exact("stream.midstream"), |s, _, v| {
        s.flow.midstream = boolean(v)?;
        Ok(Used::Yes)
    }),
    (
        Key::Exact("stream.reassembly.toserver-chunk-size"),
        |s, _, v| {
            s.chunk[Direction::ToServer] = size(v)?;
            Ok(Used::Yes)
        },
    ),
    (
        Key::Exact("stream.reassembly.toclient-chunk-size"),
        |s, _, v| {
            s.chunk[Direction::ToClient] = size(v)?;
            Ok(Used::Yes)
        },
    ),
    (Key::Exact("stream.reassembly.depth"), |s, _, v| {
        s.flow.depth = size(v)?;
        Ok(Used::Yes)
    }),
    (Key::Exact("stream.reassembly.urgent.policy"), |s, _, v| {
        s.flow.urgent = match v.trim() {
            "inline" => UrgentPolicy::Inline,
            "oob" => UrgentPolicy::Oob,
            // A dropped packet's bytes (`drop`) and a gap (`gap`) are not honoured.
            "drop" | "gap" => return Ok(Used::No),
            _ => return Err(format!("not an urgent policy: {v}")),
        };
        Ok(Used::Yes)
    }),
    (Key::Prefix("host-os-policy."), |s, os, v| {
        let policy =
            OverlapPolicy::from_os(os).ok_or_else(|| format!("unknown host OS policy {os:?}"))?;
        for item in v.trim_matches(|c| c == '[' || c == ']').split(',') {
            let item = item.trim().trim_matches('"');
            if item.is_empty() {
                continue;
            }
            let (net, len) =
                parse_prefix(item).ok_or_else(|| format!("not an address or network: {item:?}"))?;
            s.flow.policies.push((net, len, policy));
        }
        Ok(Used::Yes)
    }),
    // The memory caps, as counts or bytes of what netsieve holds.
    (Key::Exact("flow.memcap"), |s, _, v| {
        s.flow.max_flows = (bytes(v)? / FLOW_BYTES).max(1);
        Ok(Used::Yes)
    }),
    (Key::Exact("stream.memcap"), |s, _, v| {
        s.flow.max_tcp_sessions = (bytes(v)? / TCP_SESSION_BYTES).max(1);
        Ok(Used::Yes)
    }),
    (Key::Exact("stream.reassembly.memcap"), |s, _, v| {
        s.flow.stream_memcap = bytes(v)?;
        Ok(Used::Yes)
    }),
    // netsieve's own: out-of-order bytes a stream keeps waiting for a hole.
    (Key::Exact("stream.reassembly.max-pending"), |s, _, v| {
        s.flow.max_pending = bytes(v)?;
        Ok(Used::Yes)
    }),
    (Key::Exact("default-rule-path"), |s, _, v| {
        let v = v.trim();
        s.lua.rule_path = (!v.is_empty()).then(|| PathBuf::from(v));
        Ok(Used::Yes)
    }),
    (Key::Exact("security.lua.allow-rules"), |s, _, v| {
        s.lua.allow_rules = boolean(v)?;
        Ok(Used::Yes)
    }),
    (
        Key::Exact("security.lua.allow-restricted-functions"),
        |s, _, v| {
            s.lua.allow_restricted = boolean(v)?;
            Ok(Used::Yes)
        },
    ),
    (Key::Exact("security.lua.max-bytes"), |s, _, v| {
        s.lua.max_bytes = bytes(v)?;
        Ok(Used::Yes)
    }),
    (Key::Exact("security.lua.max-instructions"), |s, _, v| {
        s.lua.max_instructions = v
            .trim()
            .parse::<u32>()
            .map_err(|_| format!("not a number: {v}"))?;
        Ok(Used::Yes)
    }),
    (Key::Exact("defrag.memcap"), |s, _, v| {
        s.defrag_bytes = bytes(v)?;
        Ok(Used::Yes)
    }),
    (Key::Exact("defrag.trackers"), |s, _, v| {
        s.defrag_datagrams = v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("not a positive number: {v}"))?;
        Ok(Used::Yes)
    }),
    // The record kinds listed, by name (`- flow`) or with options (`- flow: {...}`).
    (Key::Exact("outputs.eve-log.types"), |s, _, v| {
        let mut used = Used::No;
        for kind in v.split(',') {
            if let Some(on) = s.eve.kind(kind.trim()) {
                *on = true;
                used = Used::Yes;
            }
        }
        Ok(used)
    }),
    (Key::Prefix("outputs.eve-log.types.drop."), |s, opt, v| {
        s.eve.drop = true;
        match opt {
            "alerts" => s.eve.drop_alerts = config::parse_bool(v).unwrap_or(false),
            // Every dropped packet is logged (`flows: all`).
            "flows" if v.trim() == "all" => {}
            "enabled" => s.eve.drop = config::parse_bool(v).unwrap_or(true),
            _ => return Ok(Used::No),
        }
        Ok(Used::Yes)
    }),
    (Key::Exact("outputs.eve-log.ethernet"), |s, _, v| {
        s.eve.ethernet = config::parse_bool(v).unwrap_or(false);
        Ok(Used::Yes)
    }),
    (Key::Exact("outputs.eve-log.pcap-file"), |s, _, v| {
        s.eve.pcap_file = config::parse_bool(v).unwrap_or(false);
        Ok(Used::Yes)
    }),
    (Key::Prefix("outputs.eve-log.types.alert."), |s, opt, v| {
        let on = || config::parse_bool(v).unwrap_or(false);
        match opt {
            "payload" => s.eve.payload = on(),
            "payload-printable" => s.eve.payload_printable = on(),
            "packet" => s.eve.packet = on(),
            "tagged-packets" => s.eve.tagged_packets = on(),
            "verdict" => s.eve.verdict = on(),
            "xff.enabled" if on() => {
                s.eve.xff.get_or_insert(Xff {
                    overwrite: false,
                    reverse: false,
                });
            }
            "xff.enabled" => s.eve.xff = None,
            "xff.mode" | "xff.deployment" => {
                let x = s.eve.xff.get_or_insert(Xff {
                    overwrite: false,
                    reverse: false,
                });
                match (opt, v.trim()) {
                    ("xff.mode", m) => x.overwrite = m == "overwrite",
                    (_, d) => x.reverse = d == "reverse",
                }
            }
            "payload-buffer-size" => s.payload_limit = bytes(v)?,
            "metadata" => {
                let m = &mut s.eve.alert_meta;
                (m.app, m.flow, m.rule) = (on(), on(), on());
            }
            "metadata.app-layer" => s.eve.alert_meta.app = on(),
            "metadata.flow" => s.eve.alert_meta.flow = on(),
            "metadata.rule.metadata" => s.eve.alert_meta.rule = on(),
            "metadata.rule.raw" => s.eve.alert_meta.raw = on(),
            "metadata.rule.reference" => s.eve.alert_meta.reference = on(),
            _ => return Ok(Used::No),
        }
        Ok(Used::Yes)
    }),
    // The `email` object's extra headers: all of them (`extended`), or those listed.
    (Key::Prefix("outputs.eve-log.types.smtp."), |s, opt, v| {
        s.eve.log.smtp = true;
        let all = (1u32 << EMAIL_FIELDS.len()) - 1;
        match opt {
            "extended" if config::parse_bool(v).unwrap_or(false) => s.eve.email_fields = all,
            "extended" => {}
            // The fields netsieve logs are taken; with any other, the setting is
            // reported as not (wholly) used.
            "custom" => {
                let mut all_known = true;
                for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    match EMAIL_FIELDS.iter().position(|f| *f == name) {
                        Some(i) => s.eve.email_fields |= 1 << i,
                        None => all_known = false,
                    }
                }
                if !all_known {
                    return Ok(Used::No);
                }
            }
            "enabled" => s.eve.log.smtp = config::parse_bool(v).unwrap_or(true),
            _ => return Ok(Used::No),
        }
        Ok(Used::Yes)
    }),
    // Which anomalies: `types.applayer` (on with the kind), `types.stream` and
    // `types.decode`.
    (
        Key::Prefix("outputs.eve-log.types.anomaly."),
        |s, opt, v| {
            let on = config::parse_bool(v).unwrap_or(false);
            let log = &mut s.eve.log;
            match opt {
                "enabled" if !on => {
                    log.anomaly_applayer = false;
                    log.anomaly_stream = false;
                    s.eve.anomaly_decode = false;
                }
                "enabled" => log.anomaly_applayer = true,
                "types.applayer" => log.anomaly_applayer = on,
                "types.stream" => log.anomaly_stream = on,
                "types.decode" => s.eve.anomaly_decode = on,
                _ => return Ok(Used::No),
            }
            Ok(Used::Yes)
        },
    ),
    (
        Key::Exact("outputs.eve-log.types.flow.exception-policy"),
        |s, _, v| {
            s.eve.flow = true;
            s.eve.flow_exception = config::parse_bool(v).unwrap_or(false);
            Ok(Used::Yes)
        },
    ),
    // The digests `fileinfo` records carry (`force-hash: [md5, sha256]`).
    (
        Key::Exact("outputs.eve-log.types.files.force-hash"),
        |s, _, v| {
            s.eve.log.files = true;
            let names = v.trim_matches(|c| c == '[' || c == ']');
            for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let Some(h) = Hash::by_name(name) else {
                    return Ok(Used::No);
                };
                s.eve.log.file_hashes |= h.bit();
            }
            Ok(Used::Yes)
        },
    ),
    // `file-store` version 2 (the only one Suricata 8 has); its `stream-depth`,
    // `force-magic` and `max-open-files` are not honoured (files are kept whole up to
    // their parser's limit and written at once).
    (Key::Prefix("outputs.file-store."), |s, opt, v| {
        let fs = &mut s.file_store;
        match opt {
            "version" if v.trim() == "2" => {}
            "version" => return Err(format!("only version 2 is supported, not {v}")),
            "enabled" => fs.enabled = boolean(v)?,
            "force-filestore" => fs.force = boolean(v)?,
            "write-fileinfo" => fs.write_fileinfo = boolean(v)?,
            "dir" => fs.dir = Some(PathBuf::from(v.trim())).filter(|d| !d.as_os_str().is_empty()),
            _ => return Ok(Used::No),
        }
        Ok(Used::Yes)
    }),
    (
        Key::Exact("outputs.eve-log.types.stats.null-values"),
        |s, _, v| {
            s.eve.stats_null_values = boolean(v)?;
            Ok(Used::Yes)
        },
    ),
    // A kind's options: `enabled` is honoured; the others (stats' totals, threads and
    // deltas, http's and tls' extended, ...) are not: each kind is written as Suricata's
    // stock configuration writes it.
    (Key::Prefix("outputs.eve-log.types."), |s, item, v| {
        let (kind, opt) = item.split_once('.').unwrap_or((item, ""));
        let Some(on) = s.eve.kind(kind) else {
            return Ok(Used::No);
        };
        *on = opt != "enabled" || config::parse_bool(v).unwrap_or(true);
        Ok(if opt == "enabled" {
            Used::Yes
        } else {
            Used::No
        })
    }),
    (
        Key::Prefix("app-layer.protocols.http.libhtp.default-config."),
        |s, opt, v| {
            match opt {
                "request-body-limit" => s.http.request_body = bytes(v)?,
                "response-body-limit" => s.http.response_body = bytes(v)?,
                "response-body-decompress-layer-limit" => s.http.decompress_layers = bytes(v)?,
                "request-body-minimal-inspect-size" => s.http.request_inspect_min = bytes(v)?,
                "response-body-minimal-inspect-size" => s.http.response_inspect_min = bytes(v)?,
                "request-body-inspect-window" => s.http.request_inspect_window = bytes(v)?,
                "response-body-inspect-window" => s.http.response_inspect_window = bytes(v)?,
                _ => return Ok(Used::No),
            }
            Ok(Used::Yes)
        },
    ),
    // A protocol's detection ports, over TCP or UDP (or both, without the transport):
    // where the bytes name no protocol, the port does (DNS, MQTT, DCE/RPC).
    (Key::Prefix("app-layer.protocols."), |s, item, v| {
        let parts: Vec<&str> = item.split('.').collect();
        let (name, transports, rest) = match parts.as_slice() {
            [n, t @ ("tcp" | "udp"), rest @ ..] => (*n, vec![*t == "tcp"], rest),
            [n, rest @ ..] => (*n, vec![true, false], rest),
            [] => return Ok(Used::No),
        };
        let Some(proto) = netsieve_detect::app::proto_by_name(name) else {
            return Ok(Used::No);
        };
        // HTTP/2 switched off: not parsed, nor switched to.
        if proto == AppProto::Http2 && rest == ["enabled"] && config::parse_bool(v) == Some(false) {
            s.http.http2 = false;
            return Ok(Used::Yes);
        }
        // `enabled: detection-only`: named, not parsed.
        if rest == ["enabled"] {
            s.ports.set_parsed(proto, v.trim() != "detection-only");
            return Ok(
                if v.trim() == "detection-only" || config::parse_bool(v) == Some(true) {
                    Used::Yes
                } else {
                    Used::No
                },
            );
        }
        // FTP's commands waiting for their replies at most.
        if proto == AppProto::Ftp && rest == ["max-tx"] {
            let n = v.trim().parse().map_err(|_| "expected a number")?;
            s.http.ftp_open_txs = n;
            return Ok(Used::Yes);
        }
        if rest != ["detection-ports", "dp"] {
            return Ok(Used::No);
        }
        let ports = port_list(v).ok_or("expected a port or a list of ports")?;
        let mut used = false;
        for tcp in transports {
            used |= s.ports.set(proto, tcp, &ports);
        }
        Ok(if used { Used::Yes } else { Used::No })
    }),
    (Key::Exact("packet-alert-max"), |s, _, v| {
        // Suricata takes 1 to 65535 and falls back to its default (15) otherwise.
        s.alert_max = v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=65535).contains(n))
            .unwrap_or(15);
        Ok(Used::Yes)
    }),
    (Key::Exact("exception-policy"), |s, _, v| {
        s.exception_policy = Some(v.to_string());
        Ok(Used::Yes)
    }),
    (Key::Exact("stream.midstream-policy"), |s, _, v| {
        s.midstream_policy = Some(v.to_string());
        Ok(Used::Yes)
    }),
    (Key::Exact("app-layer.error-policy"), |s, _, v| {
        s.app_error_policy = Some(v.to_string());
        Ok(Used::Yes)
    }),
    (Key::Exact("action-order"), |s, _, v| {
        s.build.set_action_order(v)?;
        Ok(Used::Yes)
    }),
    (Key::Exact("threshold-file"), |s, _, v| {
        s.threshold_file = Some(PathBuf::from(v));
        Ok(Used::Yes)
    }),
    (Key::Exact("reputation-categories-file"), |s, _, v| {
        s.reputation_categories = Some(PathBuf::from(v));
        Ok(Used::Yes)
    }),
    // A list: its items joined with commas (one per `--set reputation-files.N=`).
    (Key::Exact("reputation-files"), |s, _, v| {
        let items = v.split(',').map(str::trim).filter(|f| !f.is_empty());
        s.reputation_files.extend(items.map(PathBuf::from));
        Ok(Used::Yes)
    }),
    (Key::Exact("default-reputation-path"), |s, _, v| {
        s.reputation_dir = Some(PathBuf::from(v));
        Ok(Used::Yes)
    }),
    (Key::Exact("classification-file"), |s, _, v| {
        s.classification = Some(PathBuf::from(v));
        Ok(Used::Yes)
    }),
    (Key::Exact("reference-config-file"), |s, _, v| {
        s.reference = Some(PathBuf::from(v));
        Ok(Used::Yes)
    }),
];

fn boolean(v: &str) -> Result<bool, String> {
    config::parse_bool(v).ok_or_else(|| format!("not a boolean: {v}"))
}

fn size(v: &str) -> Result<u64, String> {
    config::parse_size(v).ok_or_else(|| format!("not a size: {v}"))
}

fn bytes(v: &str) -> Result<usize, String> {
    size(v).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

impl Settings {
    /// The reference systems' URLs: `reference-config-file`'s, else the bundled ones.
    pub fn references(&self) -> Result<References, String> {
        Ok(match &self.reference {
            Some(p) if p.exists() => References::parse(
                &std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
            ),
            _ => References::bundled(),
        })
    }

    /// The settings a suricata.yaml's values apply to: the defaults, but no records
    /// besides alerts (a suricata.yaml writes the records its eve-log lists, no others).
    fn before_file() -> Settings {
        let mut s = Settings::default();
        // Without the key, Suricata leaves urgent bytes in the stream.
        s.flow.urgent = UrgentPolicy::Inline;
        s.eve.flow = false;
        s.eve.stats = false;
        s.eve.tagged_packets = false;
        s.eve.log = LogTypes::default();
        s
    }

    /// Every setting netsieve honours with the value in force, as `--dump-config` prints
    /// it: suricata.yaml's keys, values in a form [`Settings::apply`] reads back (a unit
    /// test checks both that every key of the table is here and the round trip).
    pub fn dump(&self) -> Vec<(String, String)> {
        let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
        let mut out: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, v: String| out.push((k.to_string(), v));
        let mut vars: Vec<_> = self.vars.addresses().iter().collect();
        vars.sort();
        for (name, v) in vars {
            put(&format!("vars.address-groups.{name}"), v.clone());
        }
        let mut vars: Vec<_> = self.vars.ports().iter().collect();
        vars.sort();
        for (name, v) in vars {
            put(&format!("vars.port-groups.{name}"), v.clone());
        }
        put("stats.enabled", yes(self.stats_enabled));
        put("stats.interval", self.stats_interval.as_secs().to_string());
        put("stats.stream-events", yes(self.eve.stream_events));
        put(
            "outputs.eve-log.types.stats.null-values",
            yes(self.eve.stats_null_values),
        );
        put("stream.inline", yes(self.flow.inline));
        put("stream.midstream", yes(self.flow.midstream));
        put(
            "stream.midstream-policy",
            self.midstream_policy
                .clone()
                .unwrap_or_else(|| "auto".into()),
        );
        put(
            "app-layer.error-policy",
            self.app_error_policy
                .clone()
                .unwrap_or_else(|| "auto".into()),
        );
        put(
            "exception-policy",
            self.exception_policy
                .clone()
                .unwrap_or_else(|| "auto".into()),
        );
        put(
            "stream.reassembly.toserver-chunk-size",
            self.chunk[Direction::ToServer].to_string(),
        );
        put(
            "stream.reassembly.toclient-chunk-size",
            self.chunk[Direction::ToClient].to_string(),
        );
        put("stream.reassembly.depth", self.flow.depth.to_string());
        put(
            "stream.reassembly.urgent.policy",
            match self.flow.urgent {
                UrgentPolicy::Inline => "inline",
                UrgentPolicy::Oob => "oob",
            }
            .to_string(),
        );
        for (name, policy) in [
            ("first", OverlapPolicy::First),
            ("last", OverlapPolicy::Last),
        ] {
            let nets: Vec<String> = self
                .flow
                .policies
                .iter()
                .filter(|(_, _, p)| *p == policy)
                .map(|(net, len, _)| format!("{net}/{len}"))
                .collect();
            if !nets.is_empty() {
                put(
                    &format!("host-os-policy.{name}"),
                    format!("[{}]", nets.join(", ")),
                );
            }
        }
        put(
            "flow.memcap",
            (self.flow.max_flows * FLOW_BYTES).to_string(),
        );
        put(
            "stream.memcap",
            (self.flow.max_tcp_sessions * TCP_SESSION_BYTES).to_string(),
        );
        put(
            "stream.reassembly.memcap",
            self.flow.stream_memcap.to_string(),
        );
        put(
            "stream.reassembly.max-pending",
            self.flow.max_pending.to_string(),
        );
        let rule_path = self.lua.rule_path.as_ref();
        put(
            "default-rule-path",
            rule_path.map_or(String::new(), |p| p.display().to_string()),
        );
        put("security.lua.allow-rules", yes(self.lua.allow_rules));
        put(
            "security.lua.allow-restricted-functions",
            yes(self.lua.allow_restricted),
        );
        put("security.lua.max-bytes", self.lua.max_bytes.to_string());
        put(
            "security.lua.max-instructions",
            self.lua.max_instructions.to_string(),
        );
        put("defrag.memcap", self.defrag_bytes.to_string());
        put("defrag.trackers", self.defrag_datagrams.to_string());
        let mut eve = self.eve;
        let kinds: Vec<&str> = KINDS
            .iter()
            .filter(|(_, switch)| *switch(&mut eve))
            .map(|(name, _)| *name)
            .collect();
        put(
            "outputs.eve-log.types",
            format!("alert, {}", kinds.join(", ")),
        );
        let alert = "outputs.eve-log.types.alert";
        put(&format!("{alert}.payload"), yes(self.eve.payload));
        put(
            &format!("{alert}.payload-printable"),
            yes(self.eve.payload_printable),
        );
        put(&format!("{alert}.packet"), yes(self.eve.packet));
        put(
            &format!("{alert}.tagged-packets"),
            yes(self.eve.tagged_packets),
        );
        put(&format!("{alert}.verdict"), yes(self.eve.verdict));
        if let Some(x) = self.eve.xff {
            put(&format!("{alert}.xff.enabled"), yes(true));
            let mode = if x.overwrite {
                "overwrite"
            } else {
                "extra-data"
            };
            put(&format!("{alert}.xff.mode"), mode.to_string());
            let dep = if x.reverse { "reverse" } else { "forward" };
            put(&format!("{alert}.xff.deployment"), dep.to_string());
        }
        let m = self.eve.alert_meta;
        put(&format!("{alert}.metadata.app-layer"), yes(m.app));
        put(&format!("{alert}.metadata.flow"), yes(m.flow));
        put(&format!("{alert}.metadata.rule.metadata"), yes(m.rule));
        put(&format!("{alert}.metadata.rule.raw"), yes(m.raw));
        put(
            &format!("{alert}.metadata.rule.reference"),
            yes(m.reference),
        );
        put("outputs.eve-log.ethernet", yes(self.eve.ethernet));
        put("outputs.eve-log.pcap-file", yes(self.eve.pcap_file));
        put(
            &format!("{alert}.payload-buffer-size"),
            self.payload_limit.to_string(),
        );
        if self.eve.flow {
            put(
                "outputs.eve-log.types.flow.exception-policy",
                yes(self.eve.flow_exception),
            );
        }
        if self.eve.drop {
            put(
                "outputs.eve-log.types.drop.alerts",
                yes(self.eve.drop_alerts),
            );
        }
        put(
            "outputs.eve-log.types.anomaly.types.stream",
            yes(self.eve.log.anomaly_stream),
        );
        put(
            "outputs.eve-log.types.anomaly.types.decode",
            yes(self.eve.anomaly_decode),
        );
        let email: Vec<&str> = (EMAIL_FIELDS.iter().enumerate())
            .filter(|(i, _)| self.eve.email_fields >> i & 1 != 0)
            .map(|(_, f)| *f)
            .collect();
        if self.eve.log.smtp {
            put("outputs.eve-log.types.smtp.custom", email.join(", "));
        }
        let fs = &self.file_store;
        put("outputs.file-store.version", "2".into());
        put("outputs.file-store.enabled", yes(fs.enabled));
        put("outputs.file-store.force-filestore", yes(fs.force));
        put("outputs.file-store.write-fileinfo", yes(fs.write_fileinfo));
        if let Some(d) = &fs.dir {
            put("outputs.file-store.dir", d.display().to_string());
        }
        if self.eve.log.files {
            let names: Vec<&str> = (Hash::ALL.into_iter())
                .filter(|h| self.eve.log.file_hashes & h.bit() != 0)
                .map(Hash::name)
                .collect();
            put("outputs.eve-log.types.files.force-hash", names.join(", "));
        }
        for &proto in AppProto::ALL.iter().filter(|&&p| !self.ports.parses(p)) {
            put(
                &format!("app-layer.protocols.{}.enabled", proto.name()),
                "detection-only".into(),
            );
        }
        for (proto, tcp) in AppPorts::SETTABLE {
            let ports: Vec<String> = self
                .ports
                .ports(proto, tcp)
                .iter()
                .map(u16::to_string)
                .collect();
            let transport = if tcp { "tcp" } else { "udp" };
            put(
                &format!(
                    "app-layer.protocols.{}.{transport}.detection-ports.dp",
                    proto.name()
                ),
                ports.join(", "),
            );
        }
        let h = &self.http;
        for (key, value) in [
            ("request-body-limit", h.request_body),
            ("response-body-limit", h.response_body),
            ("response-body-decompress-layer-limit", h.decompress_layers),
            ("request-body-minimal-inspect-size", h.request_inspect_min),
            ("response-body-minimal-inspect-size", h.response_inspect_min),
            ("request-body-inspect-window", h.request_inspect_window),
            ("response-body-inspect-window", h.response_inspect_window),
        ] {
            put(
                &format!("app-layer.protocols.http.libhtp.default-config.{key}"),
                value.to_string(),
            );
        }
        put("app-layer.protocols.http2.enabled", yes(self.http.http2));
        put(
            "app-layer.protocols.ftp.max-tx",
            self.http.ftp_open_txs.to_string(),
        );
        put("packet-alert-max", self.alert_max.to_string());
        put("vlan.use-for-tracking", yes(self.flow.vlan_tracking));
        put("stream.async-oneside", yes(self.flow.async_oneside));
        let order: Vec<&str> = self.build.action_order.iter().map(|a| a.name()).collect();
        put("action-order", order.join(","));
        if let Some(f) = &self.threshold_file {
            put("threshold-file", f.display().to_string());
        }
        if let Some(f) = &self.reputation_categories {
            put("reputation-categories-file", f.display().to_string());
        }
        if !self.reputation_files.is_empty() {
            let files: Vec<String> = self
                .reputation_files
                .iter()
                .map(|f| f.display().to_string())
                .collect();
            put("reputation-files", files.join(","));
        }
        if let Some(d) = &self.reputation_dir {
            put("default-reputation-path", d.display().to_string());
        }
        if let Some(f) = &self.classification {
            put("classification-file", f.display().to_string());
        }
        if let Some(f) = &self.reference {
            put("reference-config-file", f.display().to_string());
        }
        out
    }

    /// Sets `key` to `value`: `Ok(false)` when netsieve does not honour the key.
    pub fn apply(&mut self, key: &str, value: &str) -> Result<bool, String> {
        for (k, set) in TABLE {
            let item = match k {
                Key::Exact(e) if *e == key => "",
                Key::Prefix(p) => match key.strip_prefix(p) {
                    Some(item) => item,
                    None => continue,
                },
                Key::Exact(_) => continue,
            };
            return match set(self, item, value).map_err(|e| format!("{key}: {e}"))? {
                Used::Yes => Ok(true),
                Used::No => Ok(false),
            };
        }
        Ok(false)
    }

    /// The settings of a suricata.yaml, then of `--set KEY=VALUE` items; each setting
    /// netsieve does not honour is named in one warning.
    pub fn load(config: Option<&PathBuf>, set: &[String]) -> Result<Settings, String> {
        let mut s = Settings::default();
        let mut ignored = Vec::new();
        if let Some(c) = config {
            let text = std::fs::read_to_string(c).map_err(|e| format!("{}: {e}", c.display()))?;
            let flat = config::flatten(&text)
                .map_err(|e| format!("{}:{e} (not valid YAML)", c.display()))?;
            s = Settings::before_file();
            for (k, v) in flat {
                if !s.apply(&k, &v)? {
                    ignored.push(k);
                }
            }
        }
        for kv in set {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("--set {kv}: expected KEY=VALUE"))?;
            // A list item's index (`outputs.1.eve-log.types.2.anomaly...`) is not part of
            // the key, as a suricata.yaml's lists are read.
            let k: Vec<&str> = k
                .trim()
                .split('.')
                .filter(|seg| !seg.bytes().all(|b| b.is_ascii_digit()))
                .collect();
            let k = k.join(".");
            if !s.apply(&k, v.trim())? {
                ignored.push(k);
            }
        }
        for k in &ignored {
            eprintln!("netsieve scan: warning: setting not used by netsieve: {k}");
        }
        check_var_sizes(&s.vars)?;
        Ok(s)
    }

    /// The records and files detection makes: eve.json's, and the files `file-store`
    /// stores, named by their SHA-256 (which fileinfo records then carry too, as
    /// Suricata's do).
    pub fn log_types(&self) -> LogTypes {
        let mut log = self.eve.log;
        log.store = self.file_store.stores();
        if log.store != StoreFiles::Off {
            log.file_hashes |= Hash::Sha256.bit();
        }
        log
    }

    /// The HTTP parser's limits: suricata.yaml's, and with file-store, files kept whole
    /// past the body limits (up to [`FILE_STORE_MAX`]).
    pub fn http_limits(&self) -> HttpLimits {
        let mut l = self.http;
        if self.file_store.stores() != StoreFiles::Off {
            l.file_bytes = FILE_STORE_MAX;
        }
        l
    }

    /// The policy for a parser's error (SIP's, so far), as Suricata resolves it:
    /// `app-layer.error-policy`, else the `exception-policy` master switch, else `auto`
    /// (drop-flow in IPS mode, ignore otherwise).
    pub fn app_error_policy(&self, ips: bool) -> Result<ExceptionPolicy, String> {
        self.policy("app-layer.error-policy", &self.app_error_policy, ips)
    }

    /// The policy for TCP flows picked up midstream, as Suricata resolves it:
    /// `stream.midstream-policy`, else the `exception-policy` master switch, else
    /// `auto` (drop-flow in IPS mode, ignore otherwise). With `stream.midstream` on, only ignore, pass-flow and bypass apply (a
    /// master switch of `auto` or `drop-flow` then means ignore).
    pub fn midstream_policy(&self, ips: bool) -> Result<ExceptionPolicy, String> {
        let p = self.policy("stream.midstream-policy", &self.midstream_policy, ips)?;
        Ok(match p {
            ExceptionPolicy::Ignore | ExceptionPolicy::PassFlow | ExceptionPolicy::Bypass => p,
            _ if self.flow.midstream => ExceptionPolicy::Ignore,
            _ => p,
        })
    }

    /// Exception policy `key` (set to `specific`), else the `exception-policy` master
    /// switch, else `auto`: neither set, Suricata's own default is `auto` (measured on
    /// the reference with no `exception-policy` in its yaml: in IPS mode it drops
    /// midstream flows).
    fn policy(
        &self,
        key: &str,
        specific: &Option<String>,
        ips: bool,
    ) -> Result<ExceptionPolicy, String> {
        let (key, value) = match (specific, &self.exception_policy) {
            (Some(v), _) => (key, v.as_str()),
            (None, Some(v)) => ("exception-policy", v.as_str()),
            (None, None) => ("exception-policy", "auto"),
        };
        ExceptionPolicy::parse(value, ips)
            .ok_or_else(|| format!("{key}: unknown exception policy {value:?}"))
    }
}

/// Refuses variables that expand past the rules crate's bound (variables listing each
/// other many times grow exponentially), naming them; other errors in a variable are
/// reported with the rules that use it.
fn check_var_sizes(vars: &Vars) -> Result<(), String> {
    let mut names: Vec<(&str, &String)> = vars
        .addresses()
        .keys()
        .map(|k| ("address-groups", k))
        .chain(vars.ports().keys().map(|k| ("port-groups", k)))
        .collect();
    names.sort();
    for (group, name) in names {
        let r = if group == "address-groups" {
            vars.address(&format!("${name}")).err()
        } else {
            vars.port(&format!("${name}")).err()
        };
        if let Some(e) = r.filter(|e| e.0.contains("expands to more than")) {
            return Err(format!("vars.{group}.{name}: {e}"));
        }
    }
    Ok(())
}

/// An address or a network in CIDR form: (network, prefix length).
fn parse_prefix(s: &str) -> Option<(IpAddr, u8)> {
    let (a, len) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l.parse::<u8>().ok()?)),
        None => (s, None),
    };
    let ip: IpAddr = a.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let len = len.unwrap_or(max);
    (len <= max).then_some((ip, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_sets_what_it_names_and_reports_the_rest() {
        let mut s = Settings::default();
        assert!(s.apply("stream.reassembly.depth", "2mb").unwrap());
        assert_eq!(s.flow.depth, 2 << 20);
        assert!(
            s.apply("vars.address-groups.HOME_NET", "[10.0.0.0/8]")
                .unwrap()
        );
        assert_eq!(s.vars.addresses()["HOME_NET"], "[10.0.0.0/8]");
        assert!(s.apply("flow.memcap", "1 MiB").unwrap());
        assert_eq!(s.flow.max_flows, 512);
        assert!(s.apply("host-os-policy.linux", "[10.1.0.0/16]").unwrap());
        assert_eq!(
            s.flow.policy_for("10.1.2.3".parse().unwrap()),
            OverlapPolicy::Last
        );
        // Known sections, unknown options; unknown keys.
        assert!(
            !s.apply("outputs.eve-log.types.alert.http-body", "yes")
                .unwrap()
        );
        assert!(!s.apply("outputs.eve-log.filename", "x.json").unwrap());
        assert!(!s.apply("af-packet.cluster-id", "99").unwrap());
        // Values that do not read are errors naming the key.
        let e = s.apply("stream.midstream", "maybe").err().unwrap();
        assert!(e.starts_with("stream.midstream: "), "{e}");
        let e = s.apply("host-os-policy.amiga", "[1.2.3.4]").err().unwrap();
        assert!(e.contains("amiga"), "{e}");
    }

    /// `types.smtp.extended` asks for every extra `email` header, `custom` for those it
    /// lists; a name netsieve does not log leaves the setting reported as not used.
    #[test]
    fn email_fields_from_extended_or_custom() {
        let mut s = Settings::before_file();
        assert!(
            s.apply("outputs.eve-log.types.smtp.custom", "subject, date")
                .unwrap()
        );
        let bit = |name| 1 << EMAIL_FIELDS.iter().position(|f| *f == name).unwrap();
        assert_eq!(s.eve.email_fields, bit("subject") | bit("date"));
        assert!(s.eve.log.smtp);
        // A field netsieve does not log: the others still apply, the setting is reported.
        assert!(
            !s.apply("outputs.eve-log.types.smtp.custom", "shoe-size, x-mailer")
                .unwrap()
        );
        assert_eq!(
            s.eve.email_fields,
            bit("subject") | bit("date") | bit("x-mailer")
        );
        assert!(
            s.apply("outputs.eve-log.types.smtp.extended", "yes")
                .unwrap()
        );
        assert_eq!(s.eve.email_fields.count_ones() as usize, EMAIL_FIELDS.len());
    }

    /// Suricata 8's own suricata.yaml loads (its sizes read `100 KiB`).
    /// `--dump-config` names every key of the table, and what it prints reads back to
    /// the same settings (here: the defaults, and the stock suricata.yaml's).
    #[test]
    fn the_dump_covers_the_table_and_reads_back() {
        let stock = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/ref/suricata-8.0.6/etc/suricata.yaml"
        ));
        let more: Vec<String> = [
            "outputs.eve-log.types.drop.alerts=yes",
            "outputs.eve-log.types.smtp.custom=subject, received",
            "host-os-policy.linux=[10.0.0.0/8, 192.168.1.0/24]",
            "threshold-file=t.config",
            "classification-file=c.config",
            "reference-config-file=r.config",
            "action-order=drop,pass,alert,reject",
            "reputation-categories-file=cats.txt",
            "reputation-files.0=a.list",
            "app-layer.protocols.snmp.enabled=detection-only",
            "reputation-files.1=b.list",
            "default-reputation-path=/rep",
        ]
        .map(String::from)
        .into();
        let mut all = vec![Settings::load(None, &more).unwrap()];
        if stock.exists() {
            all.push(Settings::load(Some(&stock), &more).unwrap());
        }
        for s in all {
            let dump = s.dump();
            for (k, _) in TABLE {
                let (Key::Exact(name) | Key::Prefix(name)) = k;
                assert!(
                    dump.iter().any(|(d, _)| d.starts_with(name)),
                    "{name} is not dumped"
                );
            }
            // Read back as a suricata.yaml holding the dump would be.
            let mut again = Settings::before_file();
            for (k, v) in &dump {
                assert!(again.apply(k, v).unwrap(), "{k} = {v} is not read back");
            }
            assert_eq!(again.dump(), dump);
        }
    }

    #[test]
    fn the_stock_suricata_yaml_loads() {
        let p = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/ref/suricata-8.0.6/etc/suricata.yaml"
        ));
        if !p.exists() {
            eprintln!("SKIPPED: no {}", p.display());
            return;
        }
        let s = Settings::load(Some(&p), &[]).unwrap();
        // The loggers it lists, `- dns:` (options commented out) among them.
        let l = s.eve.log;
        assert!(l.http && l.dns && l.tls && l.files && s.eve.flow && s.eve.stats);
        assert_eq!(s.http.request_body, 100 << 10);
        assert_eq!(s.flow.stream_memcap, 256 << 20);
        assert_eq!(s.flow.max_flows, 65_536);
    }
}
