//! The `flow` record: one per flow when it ends, with its counters, state, why it ended
//! and whether it alerted, in the order Suricata 8 writes them; and the `netflow`
//! records, one per direction that sent packets, each as if its sender began the flow.
//!
//! Built on the worker that ends the flow ([`Record::of`]) and written by the EVE sink
//! with the alerts, in packet order: after the alerts of the flow's end, before those
//! of the packet that ended it.

use std::sync::Arc;

use netsieve_detect::log::AppName;
use netsieve_detect::vars::Metadata;
use netsieve_detect::{FlowData, RuleSet};
use netsieve_packet::flow::{Flow, TcpState};
use netsieve_packet::{Direction, PerDir};
use serde::Serialize;

use super::{Endpoints, Ip, Timestamp, Traffic};

#[derive(Serialize)]
pub(in crate::scan) struct Record {
    timestamp: Timestamp,
    flow_id: u64,
    event_type: &'static str,
    #[serde(flatten)]
    ends: Endpoints,
    ip_v: u8,
    #[serde(serialize_with = "proto_name")]
    proto: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    app_proto: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    app_proto_orig: Option<&'static str>,
    flow: Counters,
    #[serde(skip_serializing_if = "Option::is_none")]
    tcp: Option<Tcp>,
    /// Where the record goes among the alerts (not written).
    #[serde(skip)]
    order: (u64, bool, u64, u64),
    /// The flowbits the flow held (written as `traffic`, named from the rule set).
    #[serde(skip)]
    bits: Vec<u32>,
    /// Its variables (written as `metadata`, named from the rule set).
    #[serde(skip)]
    metadata: Option<Arc<Metadata>>,
    /// Per direction: the lowest and highest TTL, and the TCP flags (for `netflow`).
    #[serde(skip)]
    ttl: PerDir<[u8; 2]>,
    #[serde(skip)]
    flags: PerDir<u8>,
}

#[derive(Serialize)]
struct Counters {
    pkts_toserver: u64,
    pkts_toclient: u64,
    bytes_toserver: u64,
    bytes_toclient: u64,
    start: Timestamp,
    end: Timestamp,
    age: u64,
    state: &'static str,
    /// A bypassed flow's bypass (`local`: netsieve's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    bypass: Option<&'static str>,
    reason: &'static str,
    alerted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    action: Option<&'static str>,
    /// Transactions the flow's parser began.
    #[serde(skip_serializing_if = "Option::is_none")]
    tx_cnt: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    exception_policy: Vec<Exception>,
}

/// An exception policy the flow triggered.
#[derive(Serialize)]
struct Exception {
    target: &'static str,
    policy: &'static str,
}

/// One direction of a flow, as a `netflow` record.
#[derive(Serialize)]
pub(in crate::scan) struct Netflow<'a> {
    timestamp: Timestamp,
    flow_id: u64,
    event_type: &'static str,
    #[serde(flatten)]
    ends: Endpoints,
    #[serde(serialize_with = "proto_name")]
    proto: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    app_proto: Option<&'static str>,
    netflow: NetflowCounters,
    #[serde(skip_serializing_if = "Option::is_none")]
    tcp: Option<TcpFlags>,
    /// The flow's record, for its flowbits and variables.
    #[serde(skip)]
    rec: &'a Record,
}

impl Netflow<'_> {
    /// The record as written: with the flow's `traffic` object, as the flow record's.
    pub fn with_traffic<'a>(&'a self, set: &'a RuleSet) -> impl Serialize + 'a {
        #[derive(Serialize)]
        struct Written<'a> {
            #[serde(flatten)]
            rec: &'a Netflow<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            traffic: Option<Traffic<'a>>,
        }
        Written {
            rec: self,
            traffic: Traffic::of(set, &self.rec.bits),
        }
    }

    /// The flow's variables, for the `metadata` object.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.rec.metadata()
    }
}

#[derive(Serialize)]
struct NetflowCounters {
    pkts: u64,
    bytes: u64,
    start: Timestamp,
    end: Timestamp,
    age: u64,
    min_ttl: u8,
    max_ttl: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    tx_cnt: Option<u64>,
}

/// One direction's TCP flags (hex), and each flag seen.
#[derive(Serialize)]
struct TcpFlags {
    tcp_flags: String,
    #[serde(flatten)]
    seen: Seen,
}

impl TcpFlags {
    fn of(flags: u8) -> TcpFlags {
        TcpFlags {
            tcp_flags: format!("{flags:02x}"),
            seen: Seen::of(flags),
        }
    }
}

/// Each TCP flag seen (those not seen left out).
#[derive(Serialize)]
struct Seen {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    syn: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    fin: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    rst: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    psh: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    ack: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    urg: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    ecn: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    cwr: bool,
}

impl Seen {
    fn of(flags: u8) -> Seen {
        let has = |bit: u8| flags & bit != 0;
        Seen {
            fin: has(0x01),
            syn: has(0x02),
            rst: has(0x04),
            psh: has(0x08),
            ack: has(0x10),
            urg: has(0x20),
            ecn: has(0x40),
            cwr: has(0x80),
        }
    }
}

/// The flow's TCP flags (hex, as Suricata writes them), each flag seen, and the state.
#[derive(Serialize)]
struct Tcp {
    tcp_flags: String,
    tcp_flags_ts: String,
    tcp_flags_tc: String,
    #[serde(flatten)]
    seen: Seen,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'static str>,
    /// Stream regions per direction: netsieve keeps one buffer per direction.
    ts_max_regions: u8,
    tc_max_regions: u8,
}

impl Record {
    /// The record of flow `f`, which ended before packet `at` (past the last one at the
    /// end of the input); with `exceptions`, it names the exception policy the flow
    /// triggered.
    pub fn of(f: &Flow<FlowData>, at: u64, exceptions: bool) -> Record {
        let exception = f.user.exception();
        let bypassed = f.user.bypassed();
        let (client, server) = (f.client(), f.server());
        let ports = netsieve_wire::ip_proto::has_ports(f.proto());
        let pkts = f.pkts();
        let bytes = f.bytes();
        let (ts, tc) = (Direction::ToServer, Direction::ToClient);
        Record {
            timestamp: Timestamp(f.last()),
            flow_id: f.id(),
            event_type: "flow",
            ends: Endpoints {
                src_ip: Ip(client.0),
                src_port: ports.then_some(client.1),
                dest_ip: Ip(server.0),
                dest_port: ports.then_some(server.1),
            },
            ip_v: if client.0.is_ipv4() { 4 } else { 6 },
            proto: f.proto(),
            app_proto: f.user.app_proto().map(AppName::name),
            app_proto_orig: f.user.app_proto_orig().map(AppName::name),
            flow: Counters {
                pkts_toserver: pkts[ts],
                pkts_toclient: pkts[tc],
                bytes_toserver: bytes[ts],
                bytes_toclient: bytes[tc],
                start: Timestamp(f.start()),
                end: Timestamp(f.last()),
                age: f.last().as_secs().saturating_sub(f.start().as_secs()),
                state: if bypassed { "bypassed" } else { flow_state(f) },
                bypass: bypassed.then_some("local"),
                reason: f.end_reason().name(),
                alerted: f.user.alerted(),
                action: f.user.action(),
                tx_cnt: Some(f.user.tx_count()).filter(|&n| n > 0),
                exception_policy: exception
                    .filter(|_| exceptions)
                    .map(|p| Exception {
                        target: "stream_midstream",
                        policy: p.name(),
                    })
                    .into_iter()
                    .collect(),
            },
            tcp: (f.proto() == 6).then(|| {
                // A session whose FINs were both acknowledged is closed.
                let state = match f.state() {
                    TcpState::Closing if f.closed() && !dropped(f) => TcpState::Closed,
                    s => s,
                };
                Tcp::of(f.tcp_flags(), state)
            }),
            order: (at, false, f.first_packet(), f.id()),
            bits: f.user.flowbits().to_vec(),
            metadata: f.user.metadata(None),
            ttl: f.ttl(),
            flags: f.tcp_flags(),
        }
    }

    /// The `netflow` records: the client's direction, then the server's, each that
    /// sent a packet.
    pub fn netflows(&self) -> impl Iterator<Item = Netflow<'_>> {
        let c = &self.flow;
        let sides = [
            (Direction::ToServer, c.pkts_toserver, c.bytes_toserver),
            (Direction::ToClient, c.pkts_toclient, c.bytes_toclient),
        ];
        sides
            .into_iter()
            .filter(|s| s.1 > 0)
            .map(move |(d, pkts, bytes)| {
                let ends = match d {
                    Direction::ToServer => self.ends,
                    Direction::ToClient => self.ends.reversed(),
                };
                let [min_ttl, max_ttl] = self.ttl[d];
                Netflow {
                    timestamp: self.timestamp,
                    flow_id: self.flow_id,
                    event_type: "netflow",
                    ends,
                    proto: self.proto,
                    app_proto: self.app_proto,
                    netflow: NetflowCounters {
                        pkts,
                        bytes,
                        start: c.start,
                        end: c.end,
                        age: c.age,
                        min_ttl,
                        max_ttl,
                        tx_cnt: c.tx_cnt,
                    },
                    tcp: (self.proto == 6).then(|| TcpFlags::of(self.flags[d])),
                    rec: self,
                }
            })
    }

    /// The record as written: with the `traffic` object of the flowbits it held that
    /// name one (`traffic/id/...`, `traffic/label/...`), named from `set`.
    pub fn with_traffic<'a>(&'a self, set: &'a RuleSet) -> impl Serialize + 'a {
        #[derive(Serialize)]
        struct Written<'a> {
            #[serde(flatten)]
            rec: &'a Record,
            #[serde(skip_serializing_if = "Option::is_none")]
            traffic: Option<Traffic<'a>>,
        }
        Written {
            rec: self,
            traffic: Traffic::of(set, &self.bits),
        }
    }

    /// The flow's variables, for the `metadata` object.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.metadata.as_deref()
    }

    /// Its place among alerts ([`netsieve_detect::Alert::order`]): after the alerts of
    /// the same flow's end.
    pub fn order(&self) -> (u64, bool, u64, u64) {
        self.order
    }
}

/// The protocol as EVE names it.
pub(super) fn proto_name<S: serde::Serializer>(p: &u8, s: S) -> Result<S::Ok, S::Error> {
    match netsieve_wire::ip_proto::eve_str(*p) {
        Some(name) => s.serialize_str(name),
        None => s.collect_str(p),
    }
}

/// The flow was dropped (IPS): Suricata tracks none of its packets after that.
fn dropped(f: &Flow<FlowData>) -> bool {
    f.user.action() == Some("drop")
}

/// Suricata's `flow.state`: new until both sides spoke (for TCP, until the handshake
/// completed), closed once a TCP session closed.
fn flow_state(f: &Flow<FlowData>) -> &'static str {
    match f.state() {
        TcpState::Closed => "closed",
        // Both FINs acknowledged (a dropped flow's later packets are not tracked).
        TcpState::Closing if f.closed() && !dropped(f) => "closed",
        TcpState::Established | TcpState::Closing => "established",
        TcpState::SynSent | TcpState::SynRecv => "new",
        TcpState::None if f.proto() != 6 && f.both_sides_seen() => "established",
        TcpState::None => "new",
    }
}

impl Tcp {
    fn of(flags: PerDir<u8>, state: TcpState) -> Tcp {
        let all = flags[Direction::ToServer] | flags[Direction::ToClient];
        Tcp {
            tcp_flags: format!("{all:02x}"),
            tcp_flags_ts: format!("{:02x}", flags[Direction::ToServer]),
            tcp_flags_tc: format!("{:02x}", flags[Direction::ToClient]),
            seen: Seen::of(all),
            // netsieve's tracker knows fewer states than Suricata's: a session after
            // its first FIN is written as Suricata writes the FIN's sender.
            state: match state {
                TcpState::None => None,
                TcpState::SynSent => Some("syn_sent"),
                TcpState::SynRecv => Some("syn_recv"),
                TcpState::Established => Some("established"),
                TcpState::Closing => Some("fin_wait1"),
                TcpState::Closed => Some("closed"),
            },
            ts_max_regions: 1,
            tc_max_regions: 1,
        }
    }
}
