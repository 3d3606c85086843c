//! Running the rule set over packets and streams.
//!
//! For each packet: its transport group's prefilter runs over the payload; the rules of
//! the patterns it finds, and the group's rules without a fast pattern, are the
//! candidates. Each candidate is checked cheaply first (protocol, addresses, ports, flow
//! direction and state, header conditions, flowbits), then its payload lists are
//! evaluated.
//!
//! For TCP, reassembled stream bytes go through a *streaming* prefilter kept per flow
//! direction, so a fast pattern split across segments is found; its rules are then
//! evaluated over the reassembled stream. *When* stream bytes are inspected follows
//! Suricata:
//!
//! - IPS mode (inline): on arrival, as soon as they are in order.
//! - IDS mode: only bytes the receiver acknowledged, and only once at least a chunk of
//!   them (`stream.reassembly.toserver-chunk-size`, 2,560 bytes by default) waits, or
//!   the stream reached its depth; the inspection runs on a packet of the stream's own
//!   direction. Whatever is left when the flow ends (timeout, eviction, end of input)
//!   is inspected by [`Detector::flow_end`], on a *pseudo packet* per direction
//!   (Suricata's `stream (flow timeout)`), with every remaining hole skipped.
//!
//! A gap in a stream splits it into runs; a pattern never matches across a gap.

use std::borrow::Cow;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use netsieve_packet::decode::{Ip, Packet, Tcp, tcp_flags as tcp};
use netsieve_packet::flow::{Flow, FlowTable, Observed};
use netsieve_packet::reassembly::{OverlapPolicy, RunView};
use netsieve_packet::{Direction, L4, PerDir, Tunnel};
use netsieve_rules::{
    Absent, Action, Cond, FileStore, FileStoreDir, FileStoreScope, FlowOpts, FlowbitCmd, FlowintOp,
    Hook, PacketHook, Scope, TagHost, TagScope,
};

use netsieve_applayer::frames::Frame;
use netsieve_applayer::ftp::Mode;
use netsieve_applayer::{AppProto, Encryption, Parser, Probe, Session, dcerpc, sip, smb};

use crate::app::{Stage, TxRef, fill, transform, txs};
use crate::eval::{Ctx, matches, matches_at};
use crate::expect::Expected;
use crate::firewall::{self, FwInfo, Verdict as FwVerdict};
use crate::header::{Pkt, header_ok};
use crate::hostbits::HostBits;
use crate::log::{
    Anomaly, AppName, FileMeta, Logged, TxLog, TxMeta, ftpdata_dir, ftpdata_file, http_files,
    http2_files, meta, smb_file, smtp_files,
};
use crate::lua::{self, FlowEnv, FlowInfo};
use crate::options::{DetectOptions, ExceptionPolicy};
use crate::ruleset::TxList;
use crate::ruleset::{
    Extra, Group, GroupId, IntVal, PortGroup, Prefilter, Prefiltered, RuleSet, Sig, tx_group,
};
use crate::tag::{HostTags, Tags};
use crate::vars::{FlowVars, Metadata, Named};
use netsieve_packet::AppEvent;
use netsieve_rules::rule::VarScope;

/// What became of one transaction of a flow.
#[derive(Clone, Debug)]
struct TxSeen {
    id: u64,
    /// The stage inspected in each direction.
    stage: PerDir<Stage>,
    /// A transaction that grows without changing stage (`TxRef::updates`): what was
    /// inspected of it.
    growth: Option<Box<Growth>>,
    /// Its record was made.
    logged: bool,
    /// The file of each direction was logged.
    files: PerDir<bool>,
    /// The `filestore` rules that matched it: the files of each direction they cover
    /// are marked for `file-store`, with those rules' sids.
    store: StoreMarks,
    /// A `config` rule turned its logging off.
    quiet: bool,
    /// The firewall's state of the transaction (firewall mode only).
    fw: Option<Box<FwTx>>,
}

impl TxSeen {
    /// The entry of transaction `id`, made if there is none.
    fn of(seen: &mut Vec<TxSeen>, id: u64) -> &mut TxSeen {
        let at = match seen.iter().position(|x| x.id == id) {
            Some(i) => i,
            None => {
                seen.push(TxSeen {
                    id,
                    stage: PerDir::splat(Stage::None),
                    growth: None,
                    logged: false,
                    files: PerDir::splat(false),
                    store: StoreMarks::default(),
                    quiet: false,
                    fw: None,
                });
                seen.len() - 1
            }
        };
        &mut seen[at]
    }
}

/// The firewall's state of one transaction.
#[derive(Clone, Debug, Default)]
struct FwTx {
    /// Per direction, where its next evaluation starts (the state it reached last,
    /// evaluated again).
    from: PerDir<Option<u8>>,
    /// The rest of its states are accepted (`accept:tx`).
    accepted: bool,
    /// Firewall rules with buffers that matched it: they match again without alerting
    /// (Suricata keeps them in the transaction's detect state).
    matched: Vec<u32>,
}

impl TxSeen {
    /// Its firewall state, made if there is none.
    fn fw(&mut self) -> &mut FwTx {
        self.fw.get_or_insert_with(Box::default)
    }

    /// Its growth, made if there is none.
    fn growth(&mut self) -> &mut Growth {
        self.growth.get_or_insert_with(Box::default)
    }

    /// The updates of direction `d` inspected.
    fn updates(&self, d: Direction) -> usize {
        self.growth.as_ref().map_or(0, |g| g.updates[d])
    }

    /// Rule `si` matched on the transaction as it grew (an HTTP body's growth included).
    fn matched(&self, si: u32) -> bool {
        self.growth
            .as_ref()
            .is_some_and(|g| g.matched.contains(&si))
    }
}

/// What was inspected of a transaction that grows without changing stage (LDAP's
/// responses, an HTTP body at [`Stage::Body`]).
#[derive(Clone, Debug, Default)]
struct Growth {
    /// Its updates inspected in each direction.
    updates: PerDir<usize>,
    /// The rules that matched on it: they are not judged again.
    matched: Vec<u32>,
}

/// Application-layer events kept for a direction's next packet.
const MAX_EVENTS_AHEAD: usize = 16;

/// What detection keeps per flow.
#[derive(Default, Debug)]
pub struct FlowData {
    /// Flowbits set, by id.
    bits: Vec<u32>,
    /// `flowint` counters set: (id, value), ids shared with the flowbits.
    ints: Vec<(u32, u64)>,
    /// Flow variables (`pcre` captures) and `entropy` values.
    vars: FlowVars,
    /// Each direction's streaming prefilter.
    scan: PerDir<StreamScan>,
    /// Stream offset up to which each direction was inspected.
    fed: PerDir<u64>,
    /// The link type, VLANs and tunnel of the flow's last packet (for pseudo packets).
    linktype: u32,
    vlan: [u16; netsieve_packet::VLAN_LAYERS],
    tunnel: Option<Tunnel>,
    /// A message in this direction looks complete (the other side answered): its
    /// acknowledged bytes are inspected on the direction's next packet.
    trigger: PerDir<bool>,
    /// IP-only rules were checked on this direction (first packet each way).
    ip_only_done: PerDir<bool>,
    /// The flow's first packet was TCP without a lone SYN.
    midstream: bool,
    /// The application layer, once the flow carries data (if the rules need it).
    app: Option<Session>,
    /// Stream offset up to which each direction went to the application layer.
    app_fed: PerDir<u64>,
    /// The direction's end went to the application layer.
    app_closed: PerDir<bool>,
    /// UDP: the flow carried a datagram no parser of netsieve's reads.
    app_failed: bool,
    /// Application-layer events raised by each direction's bytes, for that direction's
    /// next packet (at most [`MAX_EVENTS_AHEAD`]).
    events_ahead: PerDir<Vec<AppEvent>>,
    /// FTP: the id of the first transaction whose data channel was not announced.
    ftp_announced: u64,
    /// An FTP flow: the data channel its last `PASV` or `PORT` (or their like)
    /// announced, which the next transfer command uses.
    ftp_channel: Option<(IpAddr, u16)>,
    /// Per transaction: how far it was inspected, and what of it was logged.
    tx_seen: Vec<TxSeen>,
    /// The `filestore` rules of flow scope that matched: the flow's files from then on
    /// are marked for `file-store`.
    store_files: StoreMarks,
    /// The `tag`s of session scope set on the flow.
    tags: Tags,
    /// DNS: the message ids of requests whose logging a `config` rule turned off; the
    /// response with the same id is not logged either (as Suricata's DNS parser passes a
    /// request's config on to its response).
    quiet_dns: Vec<u16>,
    /// The number of the packet on which the flow was found encrypted (TLS
    /// application data): later packets' payloads and the streams are not inspected.
    encrypted_at: Option<u64>,
    /// SSH, once encrypted: each stream's offset then. What is before it is still
    /// inspected (Suricata stops adding to an SSH stream, where it stops inspecting a
    /// TLS one).
    kept: Option<PerDir<u64>>,
    /// A pass rule matched: the flow is not inspected further.
    passed: bool,
    /// A rule with `bypass` matched: passed, and its record says `bypassed`.
    bypassed: bool,
    /// A drop rule matched in IPS mode: the flow's packets are dropped.
    dropped: bool,
    /// A firewall rule accepted the flow (`accept:flow`): the firewall's tables are
    /// not evaluated again.
    fw_accepted: bool,
    /// The firewall dropped the flow (`dropped` is set too).
    fw_dropped: bool,
    /// A rule alerted on the flow (before thresholds).
    alerted: bool,
    /// The exception policy the flow triggered (picked up midstream), if any.
    exception: Option<ExceptionPolicy>,
}

impl FlowData {
    /// A packet rule with `filestore` matched in direction `d`: with transaction scope,
    /// the transactions in progress (not yet logged) are marked for `file-store`.
    fn mark_files(&mut self, s: &Sig, fs: FileStore, d: Direction) {
        if fs.scope == FileStoreScope::Flow {
            return self.store_files.mark(s, fs, d);
        }
        let parser = self.app.as_ref().and_then(|a| a.parser.as_ref());
        for t in txs(parser) {
            let seen = TxSeen::of(&mut self.tx_seen, t.id());
            if !seen.logged {
                seen.store.mark(s, fs, d);
            }
        }
    }

    /// The flow's TCP session started over (its streams did): what followed the old
    /// streams' offsets starts over too, the application layer with it.
    fn restart_session(&mut self) {
        self.scan = PerDir::default();
        self.fed = PerDir::default();
        self.trigger = PerDir::default();
        self.app = None;
        self.app_fed = PerDir::default();
        self.app_closed = PerDir::default();
        self.events_ahead = PerDir::default();
        self.tx_seen.clear();
        self.encrypted_at = None;
        self.kept = None;
    }

    /// Where inspection of direction `d`'s stream, which holds bytes up to `end`, may go
    /// on packet `num` (`None`: at the flow's end). Once the flow went encrypted, a TLS
    /// stream goes no further (Suricata turns its raw reassembly off; the packet that
    /// found it encrypted still inspects what it was due to), an SSH stream up to what
    /// it held then.
    fn stream_end(&self, d: Direction, num: Option<u64>, end: u64) -> u64 {
        match (self.encrypted_at, self.kept) {
            (None, _) => end,
            (Some(_), Some(kept)) => end.min(kept[d]),
            (Some(at), None) if num == Some(at) => end,
            (Some(_), None) => 0,
        }
    }

    /// Whether packet `num`'s payload is inspected: not after the packet that found the
    /// flow encrypted.
    fn payload_inspected(&self, num: u64) -> bool {
        self.encrypted_at.is_none_or(|at| num <= at)
    }

    /// A rule alerted on the flow (before thresholds; Suricata's `flow.alerted`).
    pub fn alerted(&self) -> bool {
        self.alerted
    }

    /// A `bypass` rule or the midstream exception policy bypassed the flow (its
    /// record's state is `bypassed`).
    pub fn bypassed(&self) -> bool {
        self.bypassed || self.exception == Some(ExceptionPolicy::Bypass)
    }

    /// The exception policy the flow triggered (Suricata's `flow.exception_policy`;
    /// the target is always the stream's midstream pickup).
    pub fn exception(&self) -> Option<ExceptionPolicy> {
        self.exception
    }

    /// The flowbits the flow holds, by id into the rule set in force
    /// ([`RuleSet::flowbit_name`]).
    pub fn flowbits(&self) -> &[u32] {
        &self.bits
    }

    /// EVE's `metadata` object of the flow's records (with `pkt`, an alert's packet's
    /// variables); `None` when there is nothing to write.
    pub fn metadata(&self, pkt: Option<&Named<Vec<u8>>>) -> Option<Arc<Metadata>> {
        Metadata::of(&self.bits, &self.ints, Some(&self.vars), pkt)
    }

    /// What decided the whole flow, if anything did: a drop rule in IPS mode, else a
    /// pass rule (Suricata's `flow.action`).
    pub fn action(&self) -> Option<&'static str> {
        if self.dropped {
            Some("drop")
        } else if self.fw_accepted {
            // A firewall's `accept:flow` (measured: Suricata 8, ruletype-firewall-03).
            Some("accept")
        } else if self.passed && !self.bypassed {
            // A flow a `bypass` rule bypassed names no action (measured: Suricata 8,
            // detect-bypass-udp); one the midstream policy bypassed says `pass`
            // (exception-policy-midstream-07).
            Some("pass")
        } else {
            None
        }
    }

    /// What protocol detection made of the flow: its protocol, `failed` once its
    /// bytes named none netsieve parses, or nothing yet (nor when nothing is parsed).
    pub fn app_proto(&self) -> Option<AppName> {
        match &self.app {
            Some(s) if s.given_up() => Some(AppName::Failed),
            Some(s) => s.proto.map(AppName::Proto),
            None if self.app_failed => Some(AppName::Failed),
            None => None,
        }
    }

    /// The protocol the flow spoke before it switched to its present one (HTTP before
    /// HTTP/2), if it did.
    pub fn app_proto_orig(&self) -> Option<AppName> {
        self.app.as_ref()?.orig().map(AppName::Proto)
    }

    /// Application-layer transactions the flow began.
    pub fn tx_count(&self) -> u64 {
        self.app.as_ref().map_or(0, Session::tx_count)
    }

    /// Moves the flow's detection state from rule set `old` to a new one whose flowbit
    /// ids are `ids`: a flowbit the new set does not name is dropped (no rule can test
    /// it), and the streaming prefilter restarts from the stream's current offset.
    fn rebase(&mut self, old: &RuleSet, ids: &HashMap<&str, u32>) {
        self.bits = self
            .bits
            .iter()
            .filter_map(|&b| ids.get(old.flowbit_name(b)).copied())
            .collect();
        self.ints = self
            .ints
            .iter()
            .filter_map(|&(b, v)| ids.get(old.flowbit_name(b)).map(|&id| (id, v)))
            .collect();
        for d in [Direction::ToServer, Direction::ToClient] {
            self.scan[d].forget();
        }
    }
}

/// One direction's streaming prefilter: how far its bytes were fed, the matcher's state,
/// and the hits found ahead of the stream's inspection.
///
/// A TCP payload that is the stream's next bytes is fed here when it arrives (its
/// packet's rules take their hits from the same pass, [`PortGroup`]'s `stream_packet`),
/// and the hits wait in `ahead` until the stream is inspected up to their end: the bytes
/// are searched once, where a packet scan then a stream scan searched them twice. Bytes
/// not fed that way (out of order, after a gap) are fed when inspected.
#[derive(Default, Debug)]
struct StreamScan {
    /// DFC's state; its offset 0 is stream offset `base`.
    mpm: dfc::StreamState,
    base: u64,
    /// The stream's last bytes (for the re-scanning AC prefilter).
    tail: Vec<u8>,
    /// Stream offset up to which the prefilter was fed.
    at: u64,
    /// Hits fed ahead of inspection: (pattern, stream offset of its end).
    ahead: Vec<(u32, u64)>,
    /// Stream offset up to which hits were taken by inspections.
    taken: u64,
}

impl StreamScan {
    /// Forgets everything (the prefilter changed: its pattern ids mean other things).
    fn forget(&mut self) {
        self.mpm.reset();
        self.tail.clear();
        self.ahead.clear();
    }

    /// Feeds stream bytes `bytes`, at stream offset `at`, to DFC matcher `m` (the
    /// prefilter of `pf`), restarting it when they do not follow what it was fed. Hits
    /// whose pattern a stream rule uses wait in `ahead`; `hit` sees every hit (pattern
    /// and stream offset of its start).
    fn feed(
        &mut self,
        m: &dfc::Matcher,
        pf: &Prefiltered,
        at: u64,
        bytes: &[u8],
        mut hit: impl FnMut(u32, u64),
    ) {
        if self.at != at || self.mpm.offset() == 0 {
            self.mpm.reset();
            self.base = at;
        }
        let (base, ahead) = (self.base, &mut self.ahead);
        m.feed(&mut self.mpm, bytes, |x| {
            if !pf.pattern_sigs[x.pattern as usize].is_empty() {
                ahead.push((x.pattern, base + x.end as u64));
            }
            hit(x.pattern, base + x.start as u64);
        });
        self.at = at + bytes.len() as u64;
    }

    /// The hits that end in stream offsets `range` (the bytes being inspected), to
    /// `take`; those that end before it are dropped, those after it kept.
    fn take(&mut self, range: std::ops::Range<u64>, mut take: impl FnMut(u32)) {
        self.taken = self.taken.max(range.end);
        self.ahead.retain(|&(pattern, end)| {
            if end > range.end {
                return true;
            }
            if end > range.start {
                take(pattern);
            }
            false
        });
    }
}

/// Where a record is logged: the packet's number, the flow's first packet when it is
/// logged at the flow's end (no packet of its own), and the time.
type LogAt = (u64, Option<u64>, std::time::Duration);

/// Why a packet was dropped (IPS mode), as Suricata's `drop.reason` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// A drop or reject rule matched: the first such rule.
    Rules(u32),
    /// An earlier packet dropped the flow.
    FlowDrop,
    /// The flow was picked up midstream and the exception policy drops it.
    StreamMidstream,
    /// The flow's parser failed on the packet and the exception policy drops it.
    AppLayerError,
    /// The firewall dropped it (firewall mode); threat detection never saw it.
    Firewall(FwDrop),
}

/// Why the firewall dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FwDrop {
    /// A firewall rule of `packet:filter` or of an application state: the rule.
    Rules(u32),
    /// No `packet:filter` rule accepted it.
    DefaultPacketPolicy,
    /// No rule accepted a state of its transaction.
    DefaultAppPolicy,
    /// A rule of `packet:pre_stream` dropped it.
    PreStreamHook,
    /// A rule of `packet:pre_flow` dropped it.
    PreFlowHook,
    /// The firewall dropped its flow on an earlier packet.
    FlowDrop,
}

impl FwDrop {
    /// The stats record's `firewall.drop_reason` counters, in [`FwDrop::index`] order.
    pub const COUNTER_NAMES: [&'static str; 6] = [
        "rules",
        "default_packet_policy",
        "default_app_policy",
        "pre_stream_hook",
        "pre_flow_hook",
        "flow_drop",
    ];

    pub fn index(self) -> usize {
        match self {
            FwDrop::Rules(_) => 0,
            FwDrop::DefaultPacketPolicy => 1,
            FwDrop::DefaultAppPolicy => 2,
            FwDrop::PreStreamHook => 3,
            FwDrop::PreFlowHook => 4,
            FwDrop::FlowDrop => 5,
        }
    }
}

impl DropReason {
    /// The names of the reasons, in [`DropReason::index`] order, as the stats record's
    /// `ips.drop_reason` counters name them.
    pub const COUNTER_NAMES: [&'static str; 4] =
        ["rules", "flow_drop", "stream_midstream", "applayer_error"];

    pub fn name(self) -> &'static str {
        match self {
            DropReason::Rules(_) => "rules",
            DropReason::FlowDrop => "flow drop",
            DropReason::StreamMidstream => "stream midstream",
            DropReason::AppLayerError => "applayer error",
            DropReason::Firewall(f) => match f {
                FwDrop::Rules(_) => "firewall rules",
                FwDrop::DefaultPacketPolicy => "firewall default packet policy",
                FwDrop::DefaultAppPolicy => "firewall default app policy",
                FwDrop::PreStreamHook => "firewall pre stream hook",
                FwDrop::PreFlowHook => "firewall pre flow hook",
                FwDrop::FlowDrop => "firewall flow drop",
            },
        }
    }

    /// The index of its `ips.drop_reason` counter; `None` for the firewall's (counted
    /// under `firewall`).
    pub fn index(self) -> Option<usize> {
        match self {
            DropReason::Rules(_) => Some(0),
            DropReason::FlowDrop => Some(1),
            DropReason::StreamMidstream => Some(2),
            DropReason::AppLayerError => Some(3),
            DropReason::Firewall(_) => None,
        }
    }

    /// The rule that dropped the packet, if a rule did.
    pub fn rule(self) -> Option<u32> {
        match self {
            DropReason::Rules(s) | DropReason::Firewall(FwDrop::Rules(s)) => Some(s),
            _ => None,
        }
    }
}

/// One alert.
#[derive(Clone, Debug)]
pub struct Alert {
    /// Index into [`RuleSet::sigs`].
    pub sig: u32,
    pub packet: u64,
    pub ts: Duration,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
    pub proto: u8,
    pub flow_id: Option<u64>,
    pub dir: Option<Direction>,
    /// The packet was dropped (drop/reject rule in IPS mode).
    pub blocked: bool,
    /// Matched on the reassembled stream rather than the packet alone.
    pub stream: bool,
    /// ICMP type and code, for ICMP packets.
    pub icmp: Option<(u8, u8)>,
    pub vlan: [u16; netsieve_packet::VLAN_LAYERS],
    /// The tunnel the packet came out of, if any.
    pub tunnel: Option<Tunnel>,
    pub linktype: u32,
    /// With [`DetectOptions::keep_bytes`]: the inspected buffer (the packet payload, or
    /// the reassembled stream for a stream match) and the packet's bytes, for the log.
    pub bytes: Option<Box<(Vec<u8>, Vec<u8>)>>,
    /// A flow-end pseudo packet's alert: the `first_packet` of its flow. Such alerts
    /// have no packet of their own; `packet` is where in the input they were raised.
    pub pseudo: Option<u64>,
    /// The flow's application protocol (or `failed`), when known.
    pub app_proto: Option<AppName>,
    /// The transaction a transaction rule matched.
    pub tx: Option<Box<TxMeta>>,
    /// The flow's counters as the alert is raised (EVE's `flow` object in the alert).
    pub flow: Option<FlowCounts>,
    /// The flow's flowbits named `traffic/id/...` and `traffic/label/...` once its packet
    /// was inspected (EVE's `traffic` object), by id into [`RuleSet::flowbit_name`].
    pub traffic: Vec<u32>,
    /// The flow's variables and the packet's once its packet was inspected (EVE's
    /// `metadata` object).
    pub metadata: Option<Arc<Metadata>>,
    /// What became of the alert's packet once all rules were judged (EVE's `verdict`).
    pub verdict: Verdict,
    /// The JSON values JSON datasets and `pcre` captures into `alert:` targets gave it,
    /// by context key (EVE's `alert.context`).
    pub context: Vec<(Arc<str>, Arc<str>)>,
    /// A firewall rule's alert: where it was raised and its actions (EVE's
    /// `alert.engine: fw` and `firewall` object).
    pub firewall: Option<Box<FwInfo>>,
    /// An Ethernet frame's header: destination, source, EtherType (EVE's `ether`).
    pub ether: Option<[u8; 14]>,
    /// The packet had no IP layer (a decoder event's alert on a frame the decoder could
    /// not take that far): `src`, `dst`, the ports and `proto` are unspecified, and
    /// records leave them out, as Suricata's do.
    pub without_ip: bool,
    /// The frame a frame rule matched, with its bytes (EVE's `frame` object).
    pub frame: Option<Box<FrameHit>>,
}

/// A frame a rule matched: the frame, and the bytes it was judged on (fewer than its
/// length when it did not all arrive).
#[derive(Clone, Debug)]
pub struct FrameHit {
    pub frame: Frame,
    pub bytes: Vec<u8>,
}

impl FrameHit {
    /// All of the frame's bytes arrived.
    pub fn complete(&self) -> bool {
        self.bytes.len() as u64 == self.frame.len
    }
}

/// What became of a packet once all rules were judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verdict {
    /// Passed on, with its alerts.
    #[default]
    Alert,
    /// A pass rule matched it, or its flow is passed.
    Pass,
    /// A drop or reject rule blocked it (IPS).
    Drop,
}

/// A flow's counters at one point of its life, this packet included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowCounts {
    /// Packets and bytes on the wire, to the server and to the client.
    pub pkts: PerDir<u64>,
    pub bytes: PerDir<u64>,
    /// The time of the flow's first packet.
    pub start: Duration,
    /// The client's and the server's address and port.
    pub client: (IpAddr, u16),
    pub server: (IpAddr, u16),
}

impl Alert {
    /// The key that orders alerts as a single thread raises them: by packet, a flow's
    /// end before the packet that ended it, flows in the order they began.
    pub fn order(&self) -> (u64, bool, u64, u64) {
        match self.pseudo {
            Some(first) => (self.packet, false, first, self.flow_id.unwrap_or(0)),
            None => (self.packet, true, 0, 0),
        }
    }
}

/// Time spent per detection stage, when profiling (`Detector::prof`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Profile {
    /// Feeding and parsing the application layer.
    pub app: Duration,
    /// Prefilters over payloads, streams and application-layer buffers.
    pub prefilter: Duration,
    /// All of detection (the rest is rule evaluation and bookkeeping).
    pub detect: Duration,
    /// The detection loop's time by phase ([`Phase`]'s order).
    pub phases: [Duration; Phase::ALL.len()],
}

/// The phases of the detection loop, timed apart under `--profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// What rules may ask of the packet and its flow.
    Setup,
    /// The firewall's packet tables (firewall mode).
    Firewall,
    /// The payload through its prefilter, the rules without a fast pattern, IP-only
    /// rules.
    PacketCandidates,
    /// The stream bytes the packet inspects through the stream's prefilter.
    StreamCandidates,
    /// Candidates judged in rule order.
    Evaluation,
    /// Transactions and frames: their prefilters and rules (and the firewall's
    /// application states).
    Transactions,
    /// Alerts ordered and cut, the packet's verdict.
    Verdict,
}

impl Phase {
    pub const ALL: [Phase; 7] = [
        Phase::Setup,
        Phase::Firewall,
        Phase::PacketCandidates,
        Phase::StreamCandidates,
        Phase::Evaluation,
        Phase::Transactions,
        Phase::Verdict,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Firewall => "firewall",
            Phase::PacketCandidates => "packet_candidates",
            Phase::StreamCandidates => "stream_candidates",
            Phase::Evaluation => "evaluation",
            Phase::Transactions => "transactions",
            Phase::Verdict => "verdict",
        }
    }
}

/// What one pass of the detection loop inspects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Subject {
    /// A packet as it arrived.
    Packet,
    /// A flow's end: a pseudo packet per direction, without payload, inspecting what
    /// the streams still hold. `first`: the flow's first packet (its alerts name it).
    FlowEnd { first: u64 },
}

impl Subject {
    /// For alerts: the flow's first packet at its end.
    fn pseudo(self) -> Option<u64> {
        match self {
            Subject::Packet => None,
            Subject::FlowEnd { first } => Some(first),
        }
    }
}

/// What the evaluation phase judges rules on.
struct Inspected<'a> {
    /// The payload (empty at a flow's end, and once the flow went encrypted).
    payload: &'a [u8],
    /// The payload is not inspected: the flow went encrypted.
    payload_off: bool,
    /// The direction of the stream window in `Detector::views`, if any, and where it
    /// ends.
    stream_dir: Option<Direction>,
    stream_end: Option<u64>,
    /// IP-only rules are judged (the first packet of its direction).
    ip_only: bool,
    subject: Subject,
}

/// A packet's fate by its own rules (its flow's is in [`FlowData`]).
#[derive(Clone, Copy, Debug, Default)]
struct PacketVerdict {
    dropped: bool,
    passed: bool,
}

/// What detection did: the work behind its time, counted on every run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Packets (and end-of-flow pseudo packets) through the detection loop.
    pub packets: u64,
    /// Bytes given to the payload and stream prefilters.
    pub scanned: u64,
    /// Prefilter hits: a pattern found in those bytes.
    pub hits: u64,
    /// Candidate rules after the prefilters (and the address and always-on lists).
    pub candidates: u64,
    /// Candidates whose options were evaluated (their header and flowbits passed).
    pub evaluated: u64,
    /// Flows that triggered the midstream exception policy, by policy
    /// ([`ExceptionPolicy::ALL`]'s order).
    pub midstream_exceptions: [u64; 7],
    /// Alerts a packet lost to `packet-alert-max` (Suricata's
    /// `detect.alert_queue_overflow`).
    pub alert_overflow: u64,
    /// IPS mode: packets passed on and packets dropped, the dropped by
    /// [`DropReason::index`].
    pub ips_accepted: u64,
    pub ips_blocked: u64,
    pub drop_reasons: [u64; 4],
    /// Firewall mode: packets the firewall accepted and dropped, the dropped by
    /// [`FwDrop::index`] (those it accepted are counted by `ips_*` as well).
    pub fw_accepted: u64,
    pub fw_blocked: u64,
    pub fw_drop_reasons: [u64; 6],
    /// Alerts of threat detection's packet rules thrown away because an application
    /// state of the firewall dropped their packet.
    pub fw_discarded_alerts: u64,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        // Every field named, so that a counter added to `Counts` cannot be left out of
        // the sum over workers.
        let Counts {
            packets,
            scanned,
            hits,
            candidates,
            evaluated,
            midstream_exceptions,
            alert_overflow,
            ips_accepted,
            ips_blocked,
            drop_reasons,
            fw_accepted,
            fw_blocked,
            fw_drop_reasons,
            fw_discarded_alerts,
        } = o;
        self.packets += packets;
        self.scanned += scanned;
        self.hits += hits;
        self.candidates += candidates;
        self.evaluated += evaluated;
        self.alert_overflow += alert_overflow;
        self.ips_accepted += ips_accepted;
        self.ips_blocked += ips_blocked;
        self.fw_accepted += fw_accepted;
        self.fw_blocked += fw_blocked;
        self.fw_discarded_alerts += fw_discarded_alerts;
        let pairs = (self.midstream_exceptions.iter_mut()).zip(midstream_exceptions);
        let fw = self.fw_drop_reasons.iter_mut().zip(fw_drop_reasons);
        for (a, b) in pairs
            .chain(self.drop_reasons.iter_mut().zip(drop_reasons))
            .chain(fw)
        {
            *a += b;
        }
    }
}

fn since(t: Option<std::time::Instant>, acc: Option<&mut Duration>) {
    if let (Some(t), Some(a)) = (t, acc) {
        *a += t.elapsed();
    }
}

/// Per-worker detection state: the shared rule set and scratch space.
pub struct Detector {
    /// Stage times, when profiling.
    prof: Option<Profile>,
    set: Arc<RuleSet>,
    /// A second handle on `set`, which each packet takes and gives back
    /// ([`Detector::take_set`]): the phases borrow the set while the detector changes,
    /// and a clone per packet would write the set's reference count, a cache line
    /// every worker writes (two threads up to 5% slower, docs/BENCHMARKS.md).
    spare: Option<Arc<RuleSet>>,
    cands: Vec<u32>,
    stream_cands: Vec<u32>,
    gather: Gather,
    views: Vec<RunView>,
    cx: Ctx,
    /// The packet's variables (`pcre` captures into `pkt:` targets), for its alerts.
    pkt_vars: Named<Vec<u8>>,
    /// What detection did, for profiles and benchmarks.
    counts: Counts,
    opts: DetectOptions,
    /// Why the last packet given to [`Detector::inspect`] is dropped (IPS: a drop or
    /// reject rule matched it, or its flow is dropped), if it is.
    last_drop: Option<DropReason>,
    /// A `tag` holds the last packet given to [`Detector::inspect`].
    tagged: bool,
    /// The flow's parser failed on this packet's bytes.
    pkt_app_error: bool,
    /// Records of transactions and files made and not yet taken.
    logs: Vec<TxLog>,
    /// Application-layer events raised on what the packet being inspected brought.
    pkt_events: Vec<AppEvent>,
    /// The transaction the datagram being inspected made (UDP), by its id: the newest.
    pkt_datagram_tx: Option<u64>,
    /// What the workers share.
    shared: Shared,
    /// The secondary `pass` of the firewall rules that accepted the packet being
    /// inspected, if one had it.
    fw_pass: Option<Scope>,
}

/// State every worker shares: bits and tags kept on hosts (`xbits`, `tag:host`), and
/// flows announced by other flows (FTP data channels).
#[derive(Clone, Debug, Default)]
pub struct Shared {
    hostbits: Arc<Mutex<HostBits>>,
    expected: Arc<Mutex<Expected>>,
    host_tags: Arc<Mutex<HostTags>>,
    /// Some host holds a tag: only then is the table locked for each packet.
    host_tagged: Arc<AtomicBool>,
}

/// Locks a shared table. A worker that panicked holding the lock left a table that is
/// still whole (each change is one map operation).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Gathers the rules behind prefilter hits: a pattern found many times in one scan adds
/// its rules once (a stamp per pattern id, renewed per scan, instead of sorting the
/// repeats away).
#[derive(Default)]
struct Gather {
    stamp: Vec<u32>,
    scan: u32,
}

impl Gather {
    /// Starts a scan with prefilter `pf`.
    fn start(&mut self, pf: &Prefiltered) {
        if self.stamp.len() < pf.ids() {
            self.stamp.resize(pf.ids(), 0);
        }
        self.scan = self.scan.wrapping_add(1);
        if self.scan == 0 {
            self.stamp.fill(0);
            self.scan = 1;
        }
    }

    /// Pattern `id` of `pf` was found: its rules go to `out` if they are not there yet.
    #[inline]
    fn hit(&mut self, pf: &Prefiltered, id: u32, out: &mut Vec<u32>, hits: &mut u64) {
        self.mark(id as usize, &pf.pattern_sigs[id as usize], out, hits);
    }

    /// Pattern `id` of `pf`'s extra prefilter `x` was found.
    #[inline]
    fn hit_extra(
        &mut self,
        pf: &Prefiltered,
        x: &Extra,
        id: u32,
        out: &mut Vec<u32>,
        hits: &mut u64,
    ) {
        let rules = &x.pattern_sigs[id as usize];
        self.mark(pf.pattern_sigs.len() + id as usize, rules, out, hits);
    }

    #[inline]
    fn mark(&mut self, id: usize, rules: &[u32], out: &mut Vec<u32>, hits: &mut u64) {
        *hits += 1;
        let stamp = &mut self.stamp[id];
        if *stamp != self.scan {
            *stamp = self.scan;
            out.extend_from_slice(rules);
        }
    }

    /// Scans `hay` with `pf` (its extra patterns too), the rules of what it finds to
    /// `out`.
    fn scan(&mut self, pf: &Prefiltered, hay: &[u8], out: &mut Vec<u32>, hits: &mut u64) {
        pf.prefilter.scan(hay, |id| self.hit(pf, id, out, hits));
        if let Some(x) = &pf.extra {
            x.prefilter
                .scan(hay, |id| self.hit_extra(pf, x, id, out, hits));
        }
    }
}

impl Detector {
    pub fn new(set: Arc<RuleSet>, opts: DetectOptions) -> Detector {
        Detector {
            prof: None,
            set,
            spare: None,
            opts,
            cands: Vec::new(),
            stream_cands: Vec::new(),
            gather: Gather::default(),
            views: Vec::new(),
            cx: Ctx::default(),
            pkt_vars: Named::default(),
            counts: Counts::default(),
            last_drop: None,
            tagged: false,
            fw_pass: None,
            pkt_app_error: false,
            logs: Vec::new(),
            pkt_events: Vec::new(),
            pkt_datagram_tx: None,
            shared: Shared::default(),
        }
    }

    /// Makes the detector keep its host bits and announced flows in `shared`, which
    /// other detectors share.
    pub fn share(&mut self, shared: Shared) {
        self.shared = shared;
    }

    /// Whether the `xbits` tests of rule `s` hold for the packet (an expired bit they
    /// find is removed).
    fn xbits_hold(&self, s: &Sig, ctx: &Pkt<'_>) -> bool {
        s.xbits.is_empty()
            || lock(&self.shared.hostbits).tests_hold(&s.xbits, ctx.src, ctx.dst, ctx.p.ts)
    }

    /// Applies the `xbits` changes of rule `s`, which matched the packet.
    fn apply_xbits(&self, s: &Sig, ctx: &Pkt<'_>) {
        if !s.xbits.is_empty() {
            lock(&self.shared.hostbits).apply(&s.xbits, ctx.src, ctx.dst, ctx.p.ts);
        }
    }

    /// Announces the data channels of the flow's FTP commands that name one and were
    /// not announced yet.
    ///
    /// A transfer command (`RETR`, `STOR`, `LIST`, ...) names the channel announced
    /// last before it; a data channel takes its transfer's command and file name once
    /// its control flow told them (the data flow may open before that command is
    /// parsed: Suricata too names a data channel when its first bytes come).
    fn announce_ftp_data(&self, f: &mut Flow<FlowData>, now: Duration) {
        let server = f.server();
        if let Some(data) = f.user.app.as_mut().and_then(Session::ftp_data_mut) {
            if data.undescribed()
                && let Some((command, file)) = lock(&self.shared.expected).transfer(server, now)
            {
                data.describe(&command, file.as_deref());
            }
            return;
        }
        let Some(ftp) = f.user.app.as_ref().and_then(Session::ftp) else {
            return;
        };
        let client = f.client();
        let from = f.user.ftp_announced;
        let mut next = from;
        let mut channel = f.user.ftp_channel;
        let (mut found, mut transfers) = (Vec::new(), Vec::new());
        for t in ftp.txs.iter().filter(|t| t.id >= from) {
            if let Some((command, file)) = t.transfer() {
                transfers.extend(channel.map(|to| (to, command, file)));
            } else {
                let to = match t.dynamic_port {
                    // Passive: the client connects to the server's port; active: the
                    // server connects to the client's.
                    Some((port, Mode::Passive)) => (server.0, port),
                    Some((port, Mode::Active)) => (client.0, port),
                    None if !t.complete => break,
                    None => {
                        next = t.id + 1;
                        continue;
                    }
                };
                found.push(to);
                channel = Some(to);
            }
            next = t.id + 1;
        }
        f.user.ftp_announced = next;
        f.user.ftp_channel = channel;
        if !found.is_empty() || !transfers.is_empty() {
            let mut e = lock(&self.shared.expected);
            for to in found {
                e.announce(to, AppProto::FtpData, now);
            }
            for (to, command, file) in transfers {
                e.describe(to, command, file, now);
            }
        }
    }

    /// The records of transactions and files made since the last call, in the order
    /// made ([`DetectOptions::log`] says which).
    pub fn take_logs(&mut self) -> Vec<TxLog> {
        std::mem::take(&mut self.logs)
    }

    /// Whether the last packet given to [`Detector::inspect`] is dropped: always false
    /// outside IPS mode.
    pub fn packet_dropped(&self) -> bool {
        self.last_drop.is_some()
    }

    /// Whether a `tag` holds the last packet given to [`Detector::inspect`] (it is
    /// logged as a tagged packet).
    pub fn packet_tagged(&self) -> bool {
        self.tagged
    }

    /// Why the last packet given to [`Detector::inspect`] is dropped (IPS mode), if it
    /// is (Suricata's `drop.reason`).
    pub fn drop_reason(&self) -> Option<DropReason> {
        self.last_drop
    }

    /// Inspects with `set` from the next packet on. Every flow of `flows` keeps its
    /// state (streams, application layer, transactions, pass and drop decisions); what
    /// belongs to the old set is carried over by name (flowbits) or restarted (the
    /// streaming prefilter, whose state is the old matcher's: a pattern that straddles
    /// the switch is not seen). A set that [`RuleSet::extends`] the old one needs
    /// neither.
    pub fn reload(&mut self, set: Arc<RuleSet>, flows: &mut FlowTable<FlowData>) {
        // The old set's spare handle goes now, not at the next packet.
        self.spare = None;
        if set.extends(&self.set) {
            // Nothing a flow holds changes meaning: the switch is the pointer's.
            self.set = set;
            return;
        }
        let ids: HashMap<&str, u32> = set
            .flowbit_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect();
        flows.for_each_user_mut(|fd| fd.rebase(&self.set, &ids));
        self.set = set;
    }

    /// Times each stage from now on ([`Detector::profile`]).
    pub fn start_profiling(&mut self) {
        self.prof.get_or_insert_with(Profile::default);
    }

    /// The stage times so far, when profiling.
    pub fn profile(&self) -> Option<&Profile> {
        self.prof.as_ref()
    }

    /// What detection did so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Inspects one packet (with its flow, if it has one), appending alerts to `out` in
    /// evaluation order.
    pub fn inspect(
        &mut self,
        p: &Packet,
        flow: Option<(&mut Flow<FlowData>, &Observed)>,
        out: &mut Vec<Alert>,
    ) {
        self.last_drop = None;
        self.tagged = false;
        if p.ip.is_none() {
            // Judged by the decoder-event rules only.
            self.judge_without_ip(p, out);
            if self.opts.ips {
                self.count_verdict();
            }
            return;
        }
        let t0 = self.prof.is_some().then(std::time::Instant::now);
        let mut flow = flow;
        self.pkt_events.clear();
        self.pkt_datagram_tx = None;
        let dropped_before = flow.as_ref().is_some_and(|(f, _)| f.user.dropped);
        let first_alert = out.len();
        self.inspect_timed(p, flow.as_mut().map(|(f, o)| (&mut **f, *o)), out);
        let fd = flow.as_mut().map(|(f, _)| &mut f.user);
        self.tagged = self.follow_tags(p, fd, &out[first_alert..]);
        // A flow dropped before this packet drops it; one dropped by this packet names
        // what dropped it.
        let (flow_dropped, by_fw) =
            flow.map_or((false, false), |(f, _)| (f.user.dropped, f.user.fw_dropped));
        let flow_drop = if by_fw {
            DropReason::Firewall(FwDrop::FlowDrop)
        } else {
            DropReason::FlowDrop
        };
        self.last_drop = match self.last_drop {
            _ if !self.opts.ips => None,
            _ if dropped_before => Some(flow_drop),
            Some(r) => Some(r),
            None if flow_dropped => Some(flow_drop),
            None => None,
        };
        if self.opts.ips {
            self.count_verdict();
        }
        since(t0, self.prof.as_mut().map(|p| &mut p.detect));
    }

    /// `tag`: whether a tag set before holds packet `p` (each tag of its flow and
    /// hosts counts it), then the tags of the rules that alerted on it are set.
    fn follow_tags(&self, p: &Packet, mut fd: Option<&mut FlowData>, alerts: &[Alert]) -> bool {
        let Some(ip) = p.ip else { return false };
        let len = p.data.len() as u64;
        let mut tagged = false;
        if let Some(fd) = fd.as_deref_mut()
            && !fd.tags.is_empty()
        {
            tagged |= fd.tags.packet(p.ts, len);
        }
        let hosts = &self.shared.host_tags;
        if self.shared.host_tagged.load(Ordering::Relaxed) {
            let mut h = lock(hosts);
            tagged |= h.packet(ip.src, ip.dst, p.ts, len);
            self.shared
                .host_tagged
                .store(!h.is_empty(), Ordering::Relaxed);
        }
        for al in alerts {
            let s = self.set.sig(al.sig);
            for (nth, t) in s.rule.tags.iter().enumerate() {
                let key = (s.rule.sid, nth);
                match t.scope {
                    TagScope::Session => {
                        if let Some(fd) = fd.as_deref_mut() {
                            fd.tags.set(key, t, p.ts, len);
                        }
                    }
                    TagScope::Host(which) => {
                        let host = match which {
                            TagHost::Src => ip.src,
                            TagHost::Dst => ip.dst,
                        };
                        // Said while the table is held, so that no reader clears it
                        // between the two.
                        let mut h = lock(hosts);
                        h.set(host, key, t, p.ts, len);
                        self.shared.host_tagged.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
        tagged
    }

    /// A packet without an IP layer: the rules that judge such packets
    /// ([`Sig::judges_without_ip`]) alert when the decoder raised their events; in IPS
    /// mode a drop rule drops it, and a pass rule stops the rules after it.
    fn judge_without_ip(&mut self, p: &Packet, out: &mut Vec<Alert>) {
        if p.events.is_empty() {
            return;
        }
        let set = self.take_set();
        let first_new = out.len();
        let unspecified = IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);
        let ctx = Pkt {
            p,
            src: unspecified,
            dst: unspecified,
            sport: 0,
            dport: 0,
            proto: 0,
            dir: None,
            established: false,
            flow_id: None,
            stream_sizes: None,
            app: None,
            app_orig: None,
            app_name: None,
            app_parsed: PerDir::default(),
            flow: None,
            app_events: Vec::new(),
            stream_events: Vec::new(),
        };
        let mut passed = false;
        for &si in &set.no_ip_rules {
            let s = &set.sigs[si as usize];
            let holds = |c: &Cond| matches!(c, Cond::DecodeEvent(e) if p.events.contains(e));
            if set.is_removed(si) || !s.rule.conds.iter().all(holds) {
                continue;
            }
            self.counts.evaluated += 1;
            let action = s.rule.action;
            let blocked = self.opts.ips && matches!(action, Action::Drop | Action::Reject);
            if blocked {
                self.last_drop.get_or_insert(DropReason::Rules(si));
            }
            if !s.rule.noalert && (action != Action::Pass || s.rule.pass_alert) {
                // Its frame goes with it: the logs show its first bytes, having no
                // addresses to show.
                out.push(Alert {
                    without_ip: true,
                    bytes: Some(Box::new((Vec::new(), p.data.clone()))),
                    ..alert(p, &ctx, si, blocked, None)
                });
            }
            if action == Action::Pass {
                passed = true;
                break;
            }
        }
        let verdict = match self.last_drop {
            Some(_) => Verdict::Drop,
            None if passed => Verdict::Pass,
            None => Verdict::Alert,
        };
        for a in &mut out[first_new..] {
            a.verdict = verdict;
        }
        self.spare = Some(set);
    }

    /// Counts the last packet's verdict: in firewall mode, the firewall's first; what it
    /// accepted goes on to threat detection's counters.
    fn count_verdict(&mut self) {
        let c = &mut self.counts;
        if self.set.firewall.on {
            if let Some(DropReason::Firewall(f)) = self.last_drop {
                c.fw_blocked += 1;
                c.fw_drop_reasons[f.index()] += 1;
                return;
            }
            c.fw_accepted += 1;
        }
        match self.last_drop.and_then(DropReason::index) {
            Some(i) => {
                c.ips_blocked += 1;
                c.drop_reasons[i] += 1;
            }
            None => c.ips_accepted += 1,
        }
    }

    /// Applies exception policy `policy` to the flow for this packet; `true` when the
    /// packet is left uninspected (passed or dropped by the policy on its own).
    fn apply(&mut self, policy: ExceptionPolicy, why: DropReason, f: &mut Flow<FlowData>) -> bool {
        match policy {
            ExceptionPolicy::Ignore => {}
            ExceptionPolicy::PassPacket => return true,
            ExceptionPolicy::DropPacket => {
                self.last_drop = Some(why);
                return true;
            }
            ExceptionPolicy::PassFlow | ExceptionPolicy::Bypass => f.user.passed = true,
            ExceptionPolicy::DropFlow | ExceptionPolicy::Reject if !f.user.dropped => {
                f.user.dropped = true;
                self.last_drop = Some(why);
            }
            ExceptionPolicy::DropFlow | ExceptionPolicy::Reject => {}
        }
        false
    }

    fn inspect_timed(
        &mut self,
        p: &Packet,
        mut flow: Option<(&mut Flow<FlowData>, &Observed)>,
        out: &mut Vec<Alert>,
    ) {
        if let Some((f, obs)) = flow.as_mut() {
            if obs.reused {
                f.user.restart_session();
            }
            // A flow another announced (an FTP data channel) speaks what it said, when
            // announced before its first bytes reach the application layer (a PASV's
            // reply may be parsed, on its ACK, after the data flow opened; Suricata
            // too looks the flow up when it detects its protocol).
            if matches!(p.l4, L4::Tcp(_))
                && f.user.app.as_ref().is_none_or(|a| a.proto.is_none())
                && f.user.app_fed.values().all(|&n| n == 0)
                && let Some(proto) = lock(&self.shared.expected).take(f.server(), p.ts)
            {
                f.user.app = Some(Session::with(proto));
            }
            if obs.new_flow
                && let L4::Tcp(t) = p.l4
            {
                f.user.midstream = t.flags & (tcp::SYN | tcp::ACK) != tcp::SYN;
            }
            if f.user.midstream {
                // Counted once per flow, but per packet for pass-flow, whose packets all
                // still meet the policy (measured: 9 for a flow of 9 packets in Suricata).
                let again = self.opts.midstream == ExceptionPolicy::PassFlow;
                if obs.new_flow || again {
                    let p = self.opts.midstream;
                    f.user.exception = Some(p);
                    if self.opts.midstream_exception {
                        self.counts.midstream_exceptions[p as usize] += 1;
                    }
                }
                if self.apply(self.opts.midstream, DropReason::StreamMidstream, f) {
                    return;
                }
            }
            if f.user.passed || f.user.dropped {
                return;
            }
            f.user.linktype = p.linktype;
            f.user.vlan = p.vlan;
            f.user.tunnel = p.tunnel;
            if self.opts.log.anomaly_stream {
                for &e in &obs.events {
                    self.log_anomaly(f, obs.dir, (p.num, None, p.ts), Anomaly::Stream(e));
                }
            }
        }
        // The stream bytes this packet inspects, in its own direction.
        let mut stream = None;
        if let Some((f, obs)) = flow.as_mut()
            && (self.set.needs_app || self.opts.log.any())
        {
            let t = self.prof.is_some().then(std::time::Instant::now);
            let encryption = |f: &Flow<FlowData>| {
                f.user
                    .app
                    .as_ref()
                    .map_or(Encryption::Clear, Session::encryption)
            };
            let before = encryption(f);
            let fed = f.user.app_fed;
            self.app_feed(p, f, obs);
            // A flow goes encrypted when its parser reads the server's TLS application
            // data (or anything after the client's), or the second SSH_MSG_NEWKEYS (as
            // measured on Suricata 8): from this packet on its streams are not
            // inspected, and from the next on no payload.
            let parsed = f.user.app_fed != fed;
            let now = encryption(f);
            if f.user.encrypted_at.is_none()
                && (matches!(now, Encryption::ServerData | Encryption::NewKeys)
                    || (before == Encryption::ClientData && parsed))
            {
                f.user.encrypted_at = Some(p.num);
                if now == Encryption::NewKeys {
                    // This packet's own bytes came after: Suricata reads the other
                    // side's bytes before it adds a packet's to its stream.
                    let held = |d| match obs.stream.start {
                        s if d == obs.dir && !obs.stream.is_empty() => s,
                        _ => f.stream(d).offset(),
                    };
                    f.user.kept = Some(PerDir::new(
                        held(Direction::ToServer),
                        held(Direction::ToClient),
                    ));
                }
            }
            since(t, self.prof.as_mut().map(|p| &mut p.app));
            // The parser failed on this packet's bytes: the app-layer error policy.
            if std::mem::take(&mut self.pkt_app_error)
                && (self.apply(self.opts.app_error, DropReason::AppLayerError, f)
                    || f.user.passed
                    || f.user.dropped)
            {
                return;
            }
        }
        if let (Some((f, obs)), L4::Tcp(_)) = (flow.as_mut(), p.l4) {
            let d = obs.dir;
            // A direction that is reset is inspected up to its end, chunk or not.
            if let L4::Tcp(t) = p.l4
                && t.flags & tcp::RST != 0
            {
                f.user.trigger[d] = true;
            }
            let s = f.stream(d);
            let from = f.user.fed[d];
            let range = if self.opts.inline {
                // Inline: the new bytes; a segment that brings none (a retransmission)
                // has its own place in the stream inspected again.
                let seg = obs.seg.start..obs.seg.end.min(s.offset());
                if s.offset() > from {
                    from..s.offset()
                } else if obs.added && !seg.is_empty() {
                    seg
                } else {
                    from..from
                }
            } else {
                let acked = s.offset().min(s.acked_offset());
                // A closing session inspects what is acknowledged on every packet,
                // chunk or not, as Suricata does: from the client's FIN on when the
                // client closes first; when the server does, only once both FINs are
                // acknowledged.
                let closing = match f.first_fin() {
                    Some(Direction::ToServer) => true,
                    Some(Direction::ToClient) => f.closed(),
                    None => false,
                };
                let ready = acked.saturating_sub(from) >= self.opts.chunk[d]
                    || s.at_depth()
                    || closing
                    || f.user.trigger[d];
                from..if ready { acked } else { from }
            };
            let range = range.start
                ..f.user
                    .stream_end(d, Some(p.num), range.end)
                    .max(range.start);
            if !range.is_empty() {
                f.user.trigger[d] = false;
                stream = Some((d, range));
            }
        }
        self.run(
            p,
            flow.as_mut().map(|(f, o)| (&mut **f, *o)),
            Subject::Packet,
            stream,
            out,
        );
        // What the packet completed is logged once inspected (a `config` rule may have
        // turned its logging off).
        if let Some((f, o)) = flow
            && self.opts.log.any()
        {
            self.log_txs(f, p.num, p.ts, Logging::Packet(o.dir));
        }
    }

    /// The flow ends: what its streams hold and was not inspected yet is inspected now,
    /// with every hole skipped, on a pseudo packet per direction (client's first).
    /// `at` is the number of the packet before which this happens (or past the last).
    pub fn flow_end(&mut self, f: &mut Flow<FlowData>, at: u64, out: &mut Vec<Alert>) {
        if f.proto() != 6 || !f.tracked() || f.user.passed || f.user.dropped {
            return;
        }
        let t0 = self.prof.is_some().then(std::time::Instant::now);
        self.flow_end_timed(f, at, out);
        since(t0, self.prof.as_mut().map(|p| &mut p.detect));
    }

    fn flow_end_timed(&mut self, f: &mut Flow<FlowData>, at: u64, out: &mut Vec<Alert>) {
        for d in Direction::BOTH {
            f.stream_mut(d).flush();
        }
        // The application layer gets everything and the ends of both directions.
        let t_app = self.prof.is_some().then(std::time::Instant::now);
        if f.user.app.is_some() {
            let first = f.first_packet();
            for d in Direction::BOTH {
                let before = f.user.app.as_ref().map_or(0, Session::events_raised);
                let upto = f.stream(d).offset();
                app_stream(f, d, upto, true);
                self.log_app_events(f, before, d, (at, Some(first), f.last()));
            }
            if let Some(a) = f.user.app.as_mut() {
                a.finish();
            }
        }
        since(t_app, self.prof.as_mut().map(|p| &mut p.app));
        for dir in Direction::BOTH {
            let d = dir;
            let from = f.user.fed[d];
            let range = from..f.user.stream_end(d, None, f.stream(d).offset()).max(from);
            let frames = f.user.app.as_ref().is_some_and(|a| a.frames_waiting(d));
            // Events the direction's bytes raised that no packet of it saw yet are
            // seen by its pseudo packet (measured: http2-authority-mismatch).
            let events = std::mem::take(&mut f.user.events_ahead[d]);
            if range.is_empty() && !tx_pending(&f.user, d) && !frames && events.is_empty() {
                continue;
            }
            let ((src, sport), (dst, dport)) = match dir {
                Direction::ToServer => (f.client(), f.server()),
                Direction::ToClient => (f.server(), f.client()),
            };
            let pkt = Packet {
                num: at,
                ts: f.last(),
                vlan: f.user.vlan,
                ip: Some(Ip {
                    src,
                    dst,
                    proto: 6,
                    ttl: 0,
                    tos: 0,
                    id: 0,
                    opts: 0,
                    fragment: false,
                    reassembled: false,
                }),
                l4: L4::Tcp(Tcp {
                    sport,
                    dport,
                    seq: 0,
                    ack: 0,
                    flags: tcp::ACK,
                    window: 0,
                    fast_open: false,
                    timestamp: None,
                    urgent: 0,
                }),
                tunnel: f.user.tunnel,
                linktype: f.user.linktype,
                ..Packet::default()
            };
            let obs = Observed {
                dir,
                new_flow: false,
                // Stream data entered only once the connection was established.
                established: true,
                stream: 0..0,
                added: false,
                seg: 0..0,
                normalized: None,
                other: 0..0,
                reused: false,
                events: Vec::new(),
            };
            let first = f.first_packet();
            let n = out.len();
            let stream = (!range.is_empty()).then_some((d, range));
            let end = Subject::FlowEnd { first };
            self.pkt_events = events;
            self.run(&pkt, Some((&mut *f, &obs)), end, stream, out);
            for al in &mut out[n..] {
                if let Some(b) = &mut al.bytes {
                    b.1.clear();
                }
            }
        }
        if self.opts.log.any() {
            let first = f.first_packet();
            self.log_txs(f, at, f.last(), Logging::FlowEnd(first));
        }
    }

    /// Feeds the stream bytes this packet put in order (`obs.stream`) to its direction's
    /// streaming prefilter ahead of their inspection, when they follow what it was fed
    /// (DFC only: the AC prefilter keeps the two passes, as a reference). True when the
    /// payload is exactly those bytes: the same pass found the packet's candidates, and
    /// the packet needs no scan of its own.
    fn feed_ahead(
        &mut self,
        pg: &PortGroup,
        f: &mut Flow<FlowData>,
        obs: &Observed,
        payload: &[u8],
    ) -> bool {
        let pf = &pg.stream;
        let Prefilter::Dfc(m) = &*pf.prefilter else {
            return false;
        };
        let d = obs.dir;
        let range = obs.stream.clone();
        // Bytes fed ahead must stay as they are until inspected: a receiver whose later
        // copy of overlapping bytes wins (Linux) may still change them.
        if range.is_empty()
            || f.user.scan[d].at != range.start
            || f.stream(d).policy() != OverlapPolicy::First
        {
            return false;
        }
        f.stream(d).runs_into(range.clone(), &mut self.views);
        let [v] = &self.views[..] else {
            return false;
        };
        let (streams, fd) = f.streams_and_user();
        let bytes = &streams[d].bytes(v.idx.clone())[(range.start - v.off) as usize..];
        if bytes.len() as u64 != range.end - range.start {
            return false;
        }
        // The packet's own hits come from this pass when its payload is these bytes
        // (not where the stream kept other bytes than the packet carries).
        let own = obs.seg == range && obs.normalized.is_none() && payload == bytes;
        self.counts.scanned += bytes.len() as u64;
        self.gather.start(pf);
        let (gather, cands, hits) = (&mut self.gather, &mut self.cands, &mut self.counts.hits);
        fd.scan[d].feed(m, pf, range.start, bytes, |pattern, start| {
            if own && start >= range.start {
                gather.mark(
                    pattern as usize,
                    &pg.stream_packet[pattern as usize],
                    cands,
                    hits,
                );
            }
        });
        if own && let Some(x) = &pg.packet.extra {
            // Patterns added by an edit are not in the stream's prefilter.
            let (gather, cands, hits) = (&mut self.gather, &mut self.cands, &mut self.counts.hits);
            gather.start(&pg.packet);
            x.prefilter.scan(payload, |id| {
                gather.hit_extra(&pg.packet, x, id, cands, hits)
            });
        }
        own
    }

    /// The detection loop for one packet (or a flow's end), with the rule set in force.
    /// `stream`: the stream bytes this packet inspects (direction, offsets).
    fn run(
        &mut self,
        p: &Packet,
        flow: Option<(&mut Flow<FlowData>, &Observed)>,
        subject: Subject,
        stream: Option<(Direction, std::ops::Range<u64>)>,
        out: &mut Vec<Alert>,
    ) {
        let set = self.take_set();
        self.run_phases(&set, p, flow, subject, stream, out);
        self.spare = Some(set);
    }

    /// The rule set in force, for one packet, to be given back to `spare`: the spare
    /// handle when it is that set (no reference count is written), else a new clone
    /// (the first packet; a reload drops the spare).
    fn take_set(&mut self) -> Arc<RuleSet> {
        match self.spare.take() {
            Some(s) if Arc::ptr_eq(&s, &self.set) => s,
            _ => Arc::clone(&self.set),
        }
    }

    /// [`Detector::run`]'s phases, as Suricata's `DetectRun`: the packet's context, the
    /// firewall's packet tables, the packet's candidates, the stream's candidates, their
    /// evaluation in rule order, the transactions and frames, and the verdict. Each
    /// phase is timed under `--profile`.
    fn run_phases(
        &mut self,
        set: &RuleSet,
        p: &Packet,
        mut flow: Option<(&mut Flow<FlowData>, &Observed)>,
        subject: Subject,
        stream: Option<(Direction, std::ops::Range<u64>)>,
        out: &mut Vec<Alert>,
    ) {
        let Some(ip) = p.ip else { return };
        let first_new = out.len();
        let t = self.phase_start();
        let group = GroupId::of(p.l4, ip.proto);
        let g = &set.groups[group as usize];
        // IP-only rules are judged on the first packet of each direction of a flow.
        let mut ip_only = subject == Subject::Packet;
        if let (Some((f, obs)), Subject::Packet) = (flow.as_mut(), subject) {
            let done = &mut f.user.ip_only_done[obs.dir];
            ip_only = !std::mem::replace(done, true);
        }
        let ctx = self.context(p, ip, flow.as_ref().map(|(f, o)| (&**f, *o)), subject);
        let t = self.phase_end(t, Phase::Setup);

        // Firewall mode: the firewall's packet tables come first; what they drop goes
        // no further. Its application states come after the packet rules.
        let mut fw_app = false;
        if subject == Subject::Packet && set.firewall.on {
            let f = flow.as_mut().map(|(f, _)| &mut **f);
            match self.fw_packet(set, &ctx, ip_only, f, out) {
                FwOutcome::Accepted => {}
                FwOutcome::Pending => fw_app = true,
                // Threat detection is skipped, and so are the stream bytes the packet
                // brought, even at the flow's end.
                FwOutcome::Dropped | FwOutcome::Passed => {
                    if let (Some((f, _)), Some((d, range))) = (flow.as_mut(), &stream) {
                        f.user.fed[*d] = f.user.fed[*d].max(range.end);
                    }
                    // Nothing the firewall's rules captured outlives the packet.
                    self.pkt_vars.clear();
                    self.cx.entropy.clear();
                    self.phase_end(t, Phase::Firewall);
                    return;
                }
            }
        }
        let td_from = out.len();
        let t = self.phase_end(t, Phase::Firewall);

        // The packet's port group: by its direction in the flow and the server's port.
        let pg = match ctx.dir {
            Some(Direction::ToClient) => g.for_packet(Direction::ToClient, ctx.sport, ip.dst),
            _ => g.for_packet(Direction::ToServer, ctx.dport, ip.src),
        };
        // The payload of a packet after its flow went encrypted is not inspected.
        let payload_off = subject == Subject::Packet
            && flow
                .as_ref()
                .is_some_and(|(f, _)| !f.user.payload_inspected(p.num));
        let payload = match subject {
            Subject::Packet if !payload_off => p.payload(),
            _ => &[][..],
        };
        self.counts.packets += 1;
        self.packet_candidates(p, &mut flow, (group, g, pg), payload, ip_only);
        let t = self.phase_end(t, Phase::PacketCandidates);

        let stream_dir = match (flow.as_mut(), group, &stream) {
            (Some((f, _)), GroupId::Tcp, Some((d, range))) => {
                self.stream_candidates(f, pg, *d, range.clone());
                Some(*d)
            }
            _ => {
                self.stream_cands.clear();
                self.views.clear();
                None
            }
        };
        self.counts.candidates += (self.cands.len() + self.stream_cands.len()) as u64;
        let t = self.phase_end(t, Phase::StreamCandidates);

        let inspected = Inspected {
            payload,
            payload_off,
            stream_dir,
            stream_end: stream.as_ref().map(|(_, r)| r.end),
            ip_only,
            subject,
        };
        let mut verdict = self.evaluate(set, &ctx, &mut flow, &inspected, out);
        let t = self.phase_end(t, Phase::Evaluation);

        // Rules appended by an edit are evaluated last, wherever their rule order.
        let mut unordered = set.has_appended();
        if let Some((f, obs)) = flow.as_mut()
            && f.user.app.is_some()
        {
            let n = out.len();
            self.name_transactions(set, f, &mut out[first_new..]);
            let fw = match fw_app && !verdict.dropped {
                true => self.fw_app(set, &ctx, f, td_from, out),
                false => FwOutcome::Accepted,
            };
            verdict.dropped |= matches!(fw, FwOutcome::Dropped);
            if matches!(fw, FwOutcome::Accepted) {
                let window = stream_dir.filter(|&d| d == obs.dir);
                let pseudo = subject.pseudo();
                self.run_tx(
                    set,
                    &ctx,
                    f,
                    (obs.dir, window),
                    pseudo,
                    verdict.dropped,
                    out,
                );
                self.run_frames(set, &ctx, f, obs.dir, pseudo, out);
                self.prune_txs(f);
            }
            unordered |= out.len() > n;
        }
        let t = self.phase_end(t, Phase::Transactions);

        self.conclude(
            set,
            flow.map(|(f, _)| f),
            verdict,
            unordered,
            &mut *out,
            first_new,
        );
        self.phase_end(t, Phase::Verdict);
    }

    /// Phase "setup": what rules may ask of the packet and its flow.
    fn context<'p>(
        &self,
        p: &'p Packet,
        ip: Ip,
        flow: Option<(&Flow<FlowData>, &Observed)>,
        subject: Subject,
    ) -> Pkt<'p> {
        let (sport, dport) = p.l4.ports();
        let mut ctx = Pkt {
            p,
            src: ip.src,
            dst: ip.dst,
            sport,
            dport,
            proto: ip.proto,
            dir: None,
            established: false,
            flow_id: None,
            stream_sizes: None,
            app_events: Vec::new(),
            stream_events: Vec::new(),
            app: None,
            app_orig: None,
            app_name: None,
            app_parsed: PerDir::splat(false),
            flow: None,
        };
        let Some((f, obs)) = flow else { return ctx };
        ctx.dir = Some(obs.dir);
        ctx.flow_id = Some(f.id());
        ctx.flow = Some(FlowCounts {
            pkts: f.pkts(),
            bytes: f.bytes(),
            start: f.start(),
            client: f.client(),
            server: f.server(),
        });
        ctx.app = f.user.app.as_ref().and_then(|a| a.proto);
        ctx.app_orig = f.user.app.as_ref().and_then(|a| a.orig());
        ctx.app_name = f.user.app_proto();
        if let Some(a) = &f.user.app {
            ctx.app_parsed =
                PerDir::new(a.parsed(Direction::ToServer), a.parsed(Direction::ToClient));
        }
        // A flow's end sees the events no packet of its direction saw.
        ctx.app_events.clone_from(&self.pkt_events);
        if subject == Subject::Packet {
            ctx.stream_events.clone_from(&obs.events);
        }
        ctx.established = match p.l4 {
            L4::Tcp(_) => obs.established,
            // UDP and others: established once both sides have spoken.
            _ => f.both_sides_seen(),
        };
        ctx.stream_sizes = Some((
            f.stream(Direction::ToServer).offset(),
            f.stream(Direction::ToClient).offset(),
        ));
        ctx
    }

    /// Phase "packet candidates": the rules whose fast pattern the payload holds (a TCP
    /// payload that is the stream's next bytes goes through the stream's prefilter,
    /// which finds the packet's hits as well), the group's rules without one, and on
    /// the first packet of a direction its IP-only rules; in `self.cands`, in rule
    /// order.
    fn packet_candidates(
        &mut self,
        p: &Packet,
        flow: &mut Option<(&mut Flow<FlowData>, &Observed)>,
        (group, g, pg): (GroupId, &Group, &PortGroup),
        payload: &[u8],
        ip_only: bool,
    ) {
        self.cands.clear();
        let added = flow.as_ref().is_some_and(|(_, obs)| obs.added);
        let searched = match flow.as_mut() {
            Some((f, obs)) if group == GroupId::Tcp && obs.added && !payload.is_empty() => {
                self.feed_ahead(pg, f, obs, payload)
            }
            _ => false,
        };
        if !payload.is_empty() && !searched {
            // A TCP payload that went into the stream is judged on its own only by some
            // rules; the others judge it on the stream.
            let pf = if group == GroupId::Tcp && !added {
                &pg.unstreamed
            } else {
                &pg.packet
            };
            self.counts.scanned += payload.len() as u64;
            self.gather.start(pf);
            self.gather
                .scan(pf, payload, &mut self.cands, &mut self.counts.hits);
        }
        self.cands.extend_from_slice(&pg.always);
        if !payload.is_empty() {
            self.cands.extend(pg.by_dsize.of(payload.len()));
        }
        if ip_only && let Some(ip) = p.ip {
            g.ip_only.lookup(ip.src, ip.dst, &mut self.cands);
        }
        self.cands.sort_unstable();
        self.cands.dedup();
    }

    /// Phase "stream candidates": the stream bytes `range` of direction `d` through the
    /// streaming prefilter, run by run (it restarts after a gap); the candidates in
    /// `self.stream_cands`, in rule order, and the window the rules see in `self.views`.
    fn stream_candidates(
        &mut self,
        f: &mut Flow<FlowData>,
        pg: &PortGroup,
        d: Direction,
        range: std::ops::Range<u64>,
    ) {
        self.stream_cands.clear();
        self.views.clear();
        f.stream_mut(d).runs_into(range.clone(), &mut self.views);
        f.stream_mut(d).freeze(range.end);
        // Rules see a window of the stream: in IDS mode the chunk being inspected;
        // inline, the packet's new bytes and up to a chunk of bytes before them.
        let back = if self.opts.inline {
            self.opts.chunk[d]
        } else {
            0
        };
        for v in &mut self.views {
            let len = v.new.end - v.new.start;
            let start = v.new.end.saturating_sub(len.max(back)).max(v.off);
            v.idx.start += (start - v.off) as usize;
            v.off = start;
        }
        let (streams, fd) = f.streams_and_user();
        // One direction of a flow always has the same port group, whose prefilter
        // carries its stream state.
        let pf = &pg.stream;
        let fed = fd.fed[d];
        self.gather.start(pf);
        let scan = &mut fd.scan[d];
        for v in &self.views {
            let run = streams[d].bytes(v.idx.clone());
            let new = v.new.clone();
            let (gather, sc, hits) = (
                &mut self.gather,
                &mut self.stream_cands,
                &mut self.counts.hits,
            );
            match &*pf.prefilter {
                Prefilter::Dfc(m) => {
                    // Bytes fed ahead from where the last inspection stopped: only what
                    // follows them is fed now. Otherwise (a gap, bytes inspected again
                    // inline) as two passes would: the prefilter goes on where it
                    // stopped, or restarts here.
                    let ahead = new.start == scan.taken && scan.at >= new.start;
                    if !ahead && scan.at != new.start {
                        scan.forget();
                    }
                    let from = if ahead { scan.at } else { new.start };
                    if from < new.end {
                        let bytes = &run[(from - v.off) as usize..];
                        self.counts.scanned += bytes.len() as u64;
                        scan.feed(m, pf, from, bytes, |_, _| {});
                    }
                    scan.take(new, |x| gather.hit(pf, x, sc, hits));
                }
                Prefilter::Ac(ac) => {
                    let bytes = &run[(new.start - v.off) as usize..];
                    self.counts.scanned += bytes.len() as u64;
                    if scan.at != new.start {
                        scan.tail.clear();
                    }
                    scan.at = new.end;
                    let keep = pf.prefilter.max_len().saturating_sub(1);
                    let tail = &mut scan.tail;
                    let old = tail.len();
                    tail.extend_from_slice(bytes);
                    for m in ac.find_overlapping_iter(&tail[..]) {
                        if m.end() > old {
                            gather.hit(pf, m.pattern().as_u32(), sc, hits);
                        }
                    }
                    let cut = tail.len().saturating_sub(keep);
                    tail.drain(..cut);
                }
                Prefilter::None => {}
            }
        }
        // Patterns added by an edit have no stream state: they are looked for in the
        // window the rules see, which holds every place they can match.
        if let Some(x) = &pf.extra {
            for v in &self.views {
                let run = streams[d].bytes(v.idx.clone());
                let (gather, sc, hits) = (
                    &mut self.gather,
                    &mut self.stream_cands,
                    &mut self.counts.hits,
                );
                x.prefilter
                    .scan(run, |id| gather.hit_extra(pf, x, id, sc, hits));
            }
        }
        fd.fed[d] = fed.max(range.end);
        self.stream_cands.sort_unstable();
        self.stream_cands.dedup();
    }

    /// Phase "evaluation": both candidate lists walked together in rule order, each
    /// candidate judged on the packet's payload, or the stream's window, or both, as its
    /// scope says; a match applies its flowbits and actions and yields its alert.
    fn evaluate(
        &mut self,
        set: &RuleSet,
        ctx: &Pkt<'_>,
        flow: &mut Option<(&mut Flow<FlowData>, &Observed)>,
        ins: &Inspected<'_>,
        out: &mut Vec<Alert>,
    ) -> PacketVerdict {
        let p = ctx.p;
        let payload = ins.payload;
        let added = flow.as_ref().is_some_and(|(_, obs)| obs.added);
        let mut verdict = PacketVerdict::default();
        let (mut i, mut j) = (0, 0);
        loop {
            let next = match (self.cands.get(i), self.stream_cands.get(j)) {
                (None, None) => break,
                (Some(&a), None) => {
                    i += 1;
                    (a, true, false)
                }
                (None, Some(&b)) => {
                    j += 1;
                    (b, false, true)
                }
                (Some(&a), Some(&b)) => {
                    if a < b {
                        i += 1;
                        (a, true, false)
                    } else if b < a {
                        j += 1;
                        (b, false, true)
                    } else {
                        i += 1;
                        j += 1;
                        (a, true, true)
                    }
                }
            };
            let (si, pkt_cand, stream_cand) = next;
            if !set.may_hold(si, ctx.sport, ctx.dport) {
                continue;
            }
            let s = &set.sigs[si as usize];
            // A flow's end judges, of the packet rules, those on events its packets
            // did not see (Suricata's pseudo packet at a flow's timeout).
            let on_pseudo = || {
                s.lists.is_empty() && s.rule.conds.iter().any(|c| matches!(c, Cond::AppEvent(_)))
            };
            let pkt_cand = pkt_cand
                && match ins.subject {
                    Subject::Packet => !(ins.payload_off && s.payload_rule),
                    Subject::FlowEnd { .. } => !ctx.app_events.is_empty() && on_pseudo(),
                };
            if (s.first_packets && !ins.ip_only) || !header_ok(s, ctx) {
                continue;
            }
            let fd = flow.as_mut().map(|(f, _)| &mut f.user);
            if !flowbits_ok(s, fd.as_deref().map(|f| f.bits.as_slice()))
                || !flowints_ok(s, fd.as_deref().map(|f| f.ints.as_slice()))
                || !self.xbits_hold(s, ctx)
            {
                continue;
            }
            self.counts.evaluated += 1;
            self.cx.start_rule();
            let scope = s.scope;
            let has_lists = !s.lists.is_empty();
            let mut matched = false;
            let mut on_stream = false;
            // A TCP packet whose payload went into the stream is judged on its own
            // payload only by the rules whose scope says so; the others judge it on the
            // stream (as Suricata does).
            let pkt_here =
                scope.packet && !(scope.stream && has_lists && added && !scope.streamed_packet);
            // Payload keywords (content, pcre, isdataat, byte_*) never match a packet
            // without payload, as in Suricata: not even negated or absence tests.
            if pkt_here && pkt_cand && (!has_lists || !payload.is_empty()) {
                matched = s.hdr_lists.iter().all(|h| h.holds(p, &mut self.cx))
                    && s.lists.iter().all(|l| matches(l, payload, &mut self.cx));
            }
            if !matched
                && scope.stream
                && has_lists
                && (stream_cand || (!s.needs_payload && ins.stream_dir.is_some()))
                && let (Some(d), Some((f, _))) = (ins.stream_dir, flow.as_mut())
            {
                for v in &self.views {
                    let data = f.stream(d).bytes(v.idx.clone());
                    if s.lists.iter().all(|l| matches(l, data, &mut self.cx)) {
                        matched = true;
                        on_stream = true;
                        break;
                    }
                }
            }
            if matched && !s.lua.is_empty() {
                let (fe, tx) = match flow.as_mut() {
                    Some((f, _)) => {
                        let (fe, tx) = flow_env(f);
                        (Some(fe), tx)
                    }
                    None => (None, None),
                };
                matched = scripts_hold(s, set, &self.cx, p, fe, tx);
            }
            if !matched {
                continue;
            }
            // Post-match: flowbit changes, then thresholds, then the alert.
            if let Some((f, obs)) = flow.as_mut() {
                apply_flowbits(s, &mut f.user.bits);
                apply_flowints(s, &mut f.user.ints);
                keep_captures(&mut self.cx, &mut f.user.vars, &mut self.pkt_vars);
                if let Some(fs) = s.rule.filestore {
                    f.user.mark_files(s, fs, obs.dir);
                }
                if s.rule.bypass {
                    f.user.passed = true;
                    f.user.bypassed = true;
                }
            }
            self.apply_xbits(s, ctx);
            // Pass and drop decide the flow when the rule has no payload or packet
            // keywords or matched on the stream; otherwise they decide this packet
            // (Suricata's signature types). The first flow decision stands, and a packet
            // already dropped is not passed.
            let action = s.rule.action;
            let flow_scope = s.flow_action || on_stream;
            let pass = action == Action::Pass;
            if pass {
                verdict.passed |= !verdict.dropped;
                if flow_wide(s, flow_scope)
                    && !verdict.dropped
                    && let Some((f, _)) = flow.as_mut()
                {
                    f.user.passed = true;
                }
                // A pass rule stops the rules after it; with `alert`, it alerts first.
                if !s.rule.pass_alert {
                    break;
                }
            }
            let blocked = self.opts.ips && matches!(action, Action::Drop | Action::Reject);
            if blocked {
                verdict.dropped = true;
                self.last_drop.get_or_insert(DropReason::Rules(si));
                // A drop of a rule with a `flow` keyword and nothing to inspect drops
                // only its packet (measured: `drop tcp ... (flow:to_server;)` blocks
                // every packet to the server in Suricata 8, TCP and UDP alike).
                let drop_scope = flow_scope
                    && (on_stream || s.tx.is_some() || s.rule.flow == FlowOpts::default());
                if flow_wide(s, drop_scope)
                    && let Some((f, _)) = flow.as_mut()
                {
                    f.user.dropped = true;
                }
            }
            if s.rule.noalert {
                continue;
            }
            let bytes = self.opts.keep_bytes.then(|| {
                let buf = match (on_stream, ins.stream_dir, flow.as_ref(), ins.stream_end) {
                    (true, Some(d), Some((f, _)), Some(end)) => {
                        f.stream(d).render(end, self.opts.payload_limit)
                    }
                    _ => payload.to_vec(),
                };
                Box::new((buf, p.data.clone()))
            });
            out.push(Alert {
                bytes,
                stream: on_stream,
                context: std::mem::take(&mut self.cx.context),
                ..alert(p, ctx, si, blocked, ins.subject.pseudo())
            });
            if pass {
                break;
            }
        }
        verdict
    }

    /// Alerts of packet rules on a datagram (DNS, SNMP, TFTP, ...) name the newest
    /// transaction, the one it made (measured on DNS and SNMP), and alerts on an application-layer
    /// event the transaction the parser made or changed last (the one that raised it,
    /// as Suricata's alert names it).
    fn name_transactions(&self, set: &RuleSet, f: &Flow<FlowData>, alerts: &mut [Alert]) {
        let parser = f.user.app.as_ref().and_then(|a| a.parser.as_ref());
        if let Some(id) = self.pkt_datagram_tx
            && alerts.iter().any(|a| a.tx.is_none())
            && let Some(t) = crate::app::txs(parser).find(|t| t.id() == id)
        {
            let m = meta(t);
            for al in alerts.iter_mut().filter(|a| a.tx.is_none()) {
                al.tx = Some(Box::new(m.clone()));
            }
        }
        let on_event = |al: &Alert| {
            let conds = &set.sigs[al.sig as usize].rule.conds;
            al.tx.is_none() && conds.iter().any(|c| matches!(c, Cond::AppEvent(_)))
        };
        if alerts.iter().any(on_event)
            && let Some(t) = crate::app::txs(parser).last()
        {
            let m = meta(t);
            for al in alerts.iter_mut().filter(|a| on_event(a)) {
                al.tx = Some(Box::new(m.clone()));
            }
        }
    }

    /// Phase "verdict": the packet's alerts in rule order (the firewall's first), cut
    /// to `packet-alert-max`, each with the flow's traffic tags and the packet's
    /// verdict as the packet leaves detection, as Suricata logs them.
    fn conclude(
        &mut self,
        set: &RuleSet,
        mut flow: Option<&mut Flow<FlowData>>,
        verdict: PacketVerdict,
        unordered: bool,
        out: &mut Vec<Alert>,
        first_new: usize,
    ) {
        if unordered {
            // Alerts of a packet come in rule order, whichever engine raised them.
            set.sort_alerts(&mut out[first_new..], |a| a.sig);
        }
        // The firewall's alerts come first: its rules are loaded, and judged, first.
        if set.firewall.on {
            out[first_new..].sort_by_key(|a| a.firewall.is_none());
        }
        // Suricata's `packet-alert-max`: a packet keeps its first alerts in rule order.
        if out.len() - first_new > self.opts.alert_max {
            self.counts.alert_overflow += (out.len() - first_new - self.opts.alert_max) as u64;
            set.sort_alerts(&mut out[first_new..], |a| a.sig);
            out.truncate(first_new + self.opts.alert_max);
        }
        // The entropy values taken on the packet stay with the flow.
        let entropy = std::mem::take(&mut self.cx.entropy);
        if let Some(f) = flow.as_mut() {
            for (key, h) in entropy {
                f.user.vars.entropy.set(&key, h);
            }
        }
        let pkt_vars = std::mem::take(&mut self.pkt_vars);
        if out.len() == first_new {
            return;
        }
        if let Some(f) = flow.as_mut() {
            f.user.alerted = true;
        }
        let (passed, dropped) = flow
            .as_ref()
            .map_or((false, false), |f| (f.user.passed, f.user.dropped));
        let v = if verdict.dropped || (dropped && self.opts.ips) {
            Verdict::Drop
        } else if verdict.passed || passed {
            Verdict::Pass
        } else {
            Verdict::Alert
        };
        let t = flow
            .as_ref()
            .map_or(Vec::new(), |f| traffic(set, &f.user.bits));
        let metadata = match flow {
            Some(f) => f.user.metadata(Some(&pkt_vars)),
            None => Metadata::of(&[], &[], None, Some(&pkt_vars)),
        };
        for a in &mut out[first_new..] {
            a.traffic.clone_from(&t);
            a.metadata.clone_from(&metadata);
            a.verdict = v;
        }
    }

    /// Starts timing a phase (only when profiling).
    fn phase_start(&self) -> Option<std::time::Instant> {
        self.prof.is_some().then(std::time::Instant::now)
    }

    /// Ends phase `ph` begun at `t`, and starts the next.
    fn phase_end(
        &mut self,
        t: Option<std::time::Instant>,
        ph: Phase,
    ) -> Option<std::time::Instant> {
        let (Some(t), Some(p)) = (t, self.prof.as_mut()) else {
            return None;
        };
        let now = std::time::Instant::now();
        p.phases[ph as usize] += now - t;
        // The candidates' phases are the payload and stream prefilters' time (the
        // transactions' prefilters are counted in `run_tx`).
        if matches!(ph, Phase::PacketCandidates | Phase::StreamCandidates) {
            p.prefilter += now - t;
        }
        Some(now)
    }

    /// The firewall's packet tables for the packet of `ctx` (see [`crate::firewall`]);
    /// `Pending` when they accepted it on to its application states, which are judged
    /// after threat detection's packet rules ([`Detector::fw_app`]). `first`: the first
    /// packet of its direction of its flow.
    fn fw_packet(
        &mut self,
        set: &RuleSet,
        ctx: &Pkt<'_>,
        first: bool,
        mut flow: Option<&mut Flow<FlowData>>,
        out: &mut Vec<Alert>,
    ) -> FwOutcome {
        if flow.as_ref().is_some_and(|f| f.user.fw_accepted) {
            return FwOutcome::Accepted;
        }
        let fw = &set.firewall;
        let first_new = out.len();
        self.fw_pass = None;
        let tcp = matches!(ctx.p.l4, L4::Tcp(_));
        let tables: [(&[u32], PacketHook, FwVerdict); 3] = [
            (&fw.pre_flow, PacketHook::PreFlow, FwVerdict::Next),
            (
                if tcp { &fw.pre_stream } else { &[] },
                PacketHook::PreStream,
                FwVerdict::Next,
            ),
            (&fw.filter, PacketHook::All, FwVerdict::DropPacket),
        ];
        let mut decided = (FwVerdict::Next, None);
        for (rules, hook, default) in tables {
            let by_rule = |si| match hook {
                PacketHook::PreFlow => FwDrop::PreFlowHook,
                PacketHook::PreStream => FwDrop::PreStreamHook,
                _ => FwDrop::Rules(si),
            };
            let found =
                self.fw_packet_table(set, rules, hook, ctx, first, flow.as_deref_mut(), out);
            decided = match found {
                Some((v, si)) => (v, Some(by_rule(si))),
                None => (default, Some(FwDrop::DefaultPacketPolicy)),
            };
            if decided.0 != FwVerdict::Next {
                break;
            }
        }
        // Accepted on: the states the packet's transactions passed come next, unless it
        // brought its flow's parser nothing.
        let app_update = flow.as_ref().is_some_and(|f| {
            f.user.app.is_some()
                && (!ctx.p.payload().is_empty() || ctx.dir.is_some_and(|d| fw_states_moved(f, d)))
        });
        if decided.0 == FwVerdict::Next && app_update && self.fw_pass.is_none() {
            if let Some(f) = flow {
                f.user.alerted |= out.len() > first_new;
            }
            return FwOutcome::Pending;
        }
        self.fw_conclude(decided, flow, first_new, out)
    }

    /// The firewall's application states for the packet of `ctx` (its packet tables
    /// accepted it on), after threat detection's packet rules: alerts from `td_from` on
    /// are theirs, thrown away (and counted) when a state drops the packet.
    fn fw_app(
        &mut self,
        set: &RuleSet,
        ctx: &Pkt<'_>,
        f: &mut Flow<FlowData>,
        td_from: usize,
        out: &mut Vec<Alert>,
    ) -> FwOutcome {
        let app_from = out.len();
        let decided = match ctx.dir {
            Some(d) => self.fw_app_tables(set, ctx, f, d, out),
            None => (FwVerdict::Next, None),
        };
        if decided.0.drops() {
            self.counts.fw_discarded_alerts += (app_from - td_from) as u64;
            out.drain(td_from..app_from);
        }
        self.fw_conclude(decided, Some(f), td_from, out)
    }

    /// Applies what the firewall decided (`decided`: the verdict, and why it drops) to
    /// the packet and its flow; its alerts are `out[first_new..]`.
    fn fw_conclude(
        &mut self,
        decided: (FwVerdict, Option<FwDrop>),
        mut flow: Option<&mut Flow<FlowData>>,
        first_new: usize,
        out: &mut [Alert],
    ) -> FwOutcome {
        let (verdict, why) = decided;
        if let Some(f) = flow.as_deref_mut() {
            match verdict {
                FwVerdict::AcceptFlow => f.user.fw_accepted = true,
                FwVerdict::DropFlow => {
                    f.user.dropped = true;
                    f.user.fw_dropped = true;
                }
                _ => {}
            }
            f.user.alerted |= out.len() > first_new;
        }
        if verdict.drops() {
            if let Some(r) = why {
                self.last_drop.get_or_insert(DropReason::Firewall(r));
            }
            for a in &mut out[first_new..] {
                a.verdict = Verdict::Drop;
            }
            return FwOutcome::Dropped;
        }
        // An accepting rule's secondary `pass`: threat detection skips this packet, or
        // with `pass:flow` the rest of the flow.
        let Some(scope) = self.fw_pass.take() else {
            return FwOutcome::Accepted;
        };
        if scope == Scope::Flow
            && let Some(f) = flow
        {
            f.user.passed = true;
        }
        for a in &mut out[first_new..] {
            a.verdict = Verdict::Pass;
        }
        FwOutcome::Passed
    }

    /// The first rule of a packet-layer table that matches the packet, with its
    /// verdict; its alert, if it alerts, goes to `out`.
    #[allow(clippy::too_many_arguments)]
    fn fw_packet_table(
        &mut self,
        set: &RuleSet,
        rules: &[u32],
        hook: PacketHook,
        ctx: &Pkt<'_>,
        first: bool,
        mut flow: Option<&mut Flow<FlowData>>,
        out: &mut Vec<Alert>,
    ) -> Option<(FwVerdict, u32)> {
        let p = ctx.p;
        for &si in rules {
            let s = &set.sigs[si as usize];
            if s.rule.hook == Some(Hook::Packet(PacketHook::FlowStart)) && !first {
                continue;
            }
            let fd = flow.as_deref().map(|f| &f.user);
            if !header_ok(s, ctx)
                || !flowbits_ok(s, fd.map(|f| f.bits.as_slice()))
                || !flowints_ok(s, fd.map(|f| f.ints.as_slice()))
                || !self.xbits_hold(s, ctx)
            {
                continue;
            }
            self.counts.evaluated += 1;
            self.cx.start_rule();
            let payload = p.payload();
            let lists_ok = (s.lists.is_empty() || !payload.is_empty())
                && s.hdr_lists.iter().all(|h| h.holds(p, &mut self.cx))
                && s.lists.iter().all(|l| matches(l, payload, &mut self.cx));
            if !lists_ok {
                continue;
            }
            if let Some(f) = flow.as_deref_mut() {
                apply_flowbits(s, &mut f.user.bits);
                apply_flowints(s, &mut f.user.ints);
                keep_captures(&mut self.cx, &mut f.user.vars, &mut self.pkt_vars);
            }
            self.apply_xbits(s, ctx);
            let v = FwVerdict::of(s.rule.action, s.rule.scope);
            if !v.drops() && s.rule.also_pass.is_some() {
                self.fw_pass = s.rule.also_pass;
            }
            if s.rule.pass_alert && !s.rule.noalert {
                out.push(Alert {
                    firewall: Some(Box::new(FwInfo::new(
                        Some(firewall::packet_hook_name(hook).to_string()),
                        s,
                    ))),
                    ..alert(p, ctx, si, v.drops(), None)
                });
            }
            return Some((v, si));
        }
        None
    }

    /// The application-layer tables: each state the flow's transactions passed in
    /// direction `d` since the last evaluation (the last one reached again) needs a rule
    /// that accepts it; the first rule that matches decides, and none drops the flow.
    fn fw_app_tables(
        &mut self,
        set: &RuleSet,
        ctx: &Pkt<'_>,
        f: &mut Flow<FlowData>,
        d: Direction,
        out: &mut Vec<Alert>,
    ) -> (FwVerdict, Option<FwDrop>) {
        let fw = &set.firewall;
        let FlowData {
            app,
            tx_seen,
            bits,
            ints,
            vars,
            ..
        } = &mut f.user;
        let Some(sess) = app.as_ref() else {
            return (FwVerdict::Next, None);
        };
        let Some(proto) = sess.proto else {
            return (FwVerdict::Next, None);
        };
        let states = fw.app.get(&(proto, d));
        let mut bufs = Vec::new();
        for tx in txs(sess.parser.as_ref()) {
            let Some(cur) = firewall::progress(&tx, d) else {
                continue;
            };
            let id = tx.id();
            let entry = TxSeen::of(tx_seen, id);
            if entry.fw().accepted {
                continue;
            }
            // A state that did not move is evaluated again only once no message of the
            // direction is half-read.
            let last = entry.fw().from[d].replace(cur);
            if last == Some(cur) && !firewall::settled(&tx, d) {
                continue;
            }
            let from = last.map_or(0, |l| l.min(cur));
            for st in from..=cur {
                let rules = states.and_then(|v| v.get(usize::from(st)));
                let mut decided = None;
                for &(si, implicit) in rules.map_or(&[][..], |v| &v[..]) {
                    let s = &set.sigs[si as usize];
                    if !header_ok(s, ctx)
                        || !flowbits_ok(s, Some(bits))
                        || !flowints_ok(s, Some(ints))
                        || !self.xbits_hold(s, ctx)
                    {
                        continue;
                    }
                    if implicit {
                        decided = Some((FwVerdict::Next, si));
                        break;
                    }
                    let seen = TxSeen::of(tx_seen, id);
                    let known = seen.fw().matched.contains(&si);
                    if !known {
                        self.counts.evaluated += 1;
                        self.cx.start_rule();
                        let lists = s.tx.as_ref().map_or(&[][..], |t| &t.lists[..]);
                        if !tx_rule_ok(
                            s,
                            lists,
                            (tx, d, 0),
                            (ctx.p, &[Some(ctx.p.payload())]),
                            (&mut bufs, &mut self.cx),
                        ) {
                            continue;
                        }
                        if !lists.is_empty() {
                            seen.fw().matched.push(si);
                        }
                        apply_flowbits(s, bits);
                        apply_flowints(s, ints);
                        keep_captures(&mut self.cx, vars, &mut self.pkt_vars);
                        self.apply_xbits(s, ctx);
                    }
                    let v = FwVerdict::of(s.rule.action, s.rule.scope);
                    if !v.drops() && s.rule.also_pass.is_some() {
                        self.fw_pass = s.rule.also_pass;
                    }
                    if !known && s.rule.pass_alert && !s.rule.noalert {
                        let hook = firewall::app_hook_name(proto, d, st);
                        out.push(Alert {
                            app_proto: Some(AppName::Proto(proto)),
                            tx: Some(Box::new(meta(tx))),
                            firewall: Some(Box::new(FwInfo::new(hook, s))),
                            ..alert(ctx.p, ctx, si, v.drops(), None)
                        });
                    }
                    decided = Some((v, si));
                    break;
                }
                match decided {
                    Some((FwVerdict::Next, _)) => {}
                    // The rest of the transaction, both sides (a protocol with a
                    // transaction per message has only one).
                    Some((FwVerdict::AcceptTx, _)) => {
                        TxSeen::of(tx_seen, id).fw().accepted = true;
                        break;
                    }
                    Some((v, si)) => return (v, Some(FwDrop::Rules(si))),
                    None => return (FwVerdict::DropFlow, Some(FwDrop::DefaultAppPolicy)),
                }
            }
        }
        (FwVerdict::Next, None)
    }

    /// Gives the application layer the stream bytes this packet makes available: in
    /// IDS mode, the other direction's bytes this packet acknowledges (Suricata parses
    /// on the ACK); inline, this packet's own. A UDP datagram to or from port 53 is a
    /// DNS message; a TCP flow on port 53 is DNS unless its bytes say otherwise.
    ///
    /// An event belongs to the direction whose bytes raised it, and a packet of that
    /// direction sees it: in IDS mode a request's event, raised on the server's ACK, is
    /// seen by the client's next packet (where Suricata inspects the request).
    fn app_feed(&mut self, p: &Packet, f: &mut Flow<FlowData>, obs: &Observed) {
        let before = f.user.app.as_ref().map_or(0, Session::events_raised);
        self.app_feed_bytes(p, f, obs);
        // A protocol detected and not parsed (`enabled: detection-only`): its flow is
        // named, and nothing of it is read.
        if let Some(a) = f.user.app.as_mut()
            && a.proto.is_some_and(|x| !self.opts.ports.parses(x))
        {
            a.parser = None;
        }
        let d = obs.dir;
        let fed = if matches!(p.l4, L4::Tcp(_)) && !self.opts.inline {
            d.reverse()
        } else {
            d
        };
        if let Some(a) = f.user.app.as_ref() {
            let ahead = &mut f.user.events_ahead[fed];
            a.events_since(before, ahead);
            let over = ahead.len().saturating_sub(MAX_EVENTS_AHEAD);
            ahead.drain(..over);
        }
        self.log_app_events(f, before, d, (p.num, None, p.ts));
        self.pkt_events = std::mem::take(&mut f.user.events_ahead[d]);
        self.announce_ftp_data(f, p.ts);
    }

    /// The `anomaly` records of the application-layer events flow `f`'s parser raised
    /// after the first `before`, on the packet (or the flow's end) `at` that fed it
    /// bytes, in direction `d`; each names the transaction the parser made or changed
    /// last.
    fn log_app_events(&mut self, f: &Flow<FlowData>, before: u64, d: Direction, at: LogAt) {
        let Some(a) = f.user.app.as_ref() else { return };
        let Some(proto) = a.proto else { return };
        if !self.opts.log.anomaly_applayer || a.events_raised() == before {
            return;
        }
        let mut new = Vec::new();
        a.events_since(before, &mut new);
        let tx_id = crate::app::txs(a.parser.as_ref()).last().map(|t| t.id());
        for event in new {
            let a = Anomaly::App {
                proto,
                event,
                tx_id,
            };
            self.log_anomaly(f, d, at, a);
        }
    }

    /// An `anomaly` record of flow `f`, logged at `at`, in direction `d`.
    fn log_anomaly(&mut self, f: &Flow<FlowData>, d: Direction, at: LogAt, a: Anomaly) {
        let (src, dst) = match d {
            Direction::ToServer => (f.client(), f.server()),
            Direction::ToClient => (f.server(), f.client()),
        };
        let (packet, pseudo, ts) = at;
        self.logs.push(TxLog {
            packet,
            pseudo,
            ts,
            flow_id: f.id(),
            src,
            dst,
            proto: f.proto(),
            tunnel: f.user.tunnel,
            metadata: f.user.metadata(None),
            record: Logged::Anomaly(a),
        });
    }

    fn app_feed_bytes(&mut self, p: &Packet, f: &mut Flow<FlowData>, obs: &Observed) {
        let d = obs.dir;
        let (a, b) = (f.client().1, f.server().1);
        match p.l4 {
            L4::Udp { .. } => {
                let payload = p.payload();
                if f.user.app.is_none() && !f.user.app_failed && !payload.is_empty() {
                    // DNS by its port, SIP by its first datagram.
                    if let Some(proto) = self.opts.ports.of(false, a, b) {
                        f.user.app = Some(Session::with(proto));
                    } else if sip::probe(payload) == Probe::Is(AppProto::Sip) {
                        f.user.app = Some(Session::with(AppProto::Sip));
                    } else {
                        f.user.app_failed = true;
                    }
                }
                let Some(a) = f.user.app.as_mut() else { return };
                if !self.set.frame_rules.is_empty() {
                    a.want_frames();
                }
                let parsed = !payload.is_empty() && a.datagram(d, payload);
                // A SIP datagram that is not a message of its direction is a parser
                // error (a DNS one raises events instead).
                self.pkt_app_error = !parsed && !payload.is_empty() && a.sip().is_some();
                if parsed {
                    self.pkt_datagram_tx = a.tx_count().checked_sub(1);
                }
            }
            L4::Tcp(_) => {
                if f.user.app.is_none() {
                    // DNS, MQTT and DCE/RPC (a request with no bind before it) by
                    // their ports when the bytes name no protocol.
                    f.user.app = Some(match self.opts.ports.of(true, a, b) {
                        Some(p) => Session::probing_or(self.opts.http, p),
                        None => Session::new(self.opts.http),
                    });
                }
                if f.user.app.as_ref().is_some_and(Session::given_up) {
                    return;
                }
                if let Some(a) = f.user.app.as_mut()
                    && !self.set.frame_rules.is_empty()
                {
                    a.want_frames();
                }
                // Nothing goes to the application layer before the session is
                // established (a TCP Fast Open SYN's data waits for the packet after the
                // handshake), as in Suricata.
                if !obs.established && !self.opts.inline {
                    return;
                }
                // A one-sided session has no other side to acknowledge: its packets
                // hand over their own bytes, as inline.
                let own = self.opts.inline || f.one_sided();
                let x = if own { d } else { d.reverse() };
                let s = f.stream(x);
                let upto = if self.opts.inline {
                    s.offset()
                } else {
                    s.offset().min(s.acked_offset())
                };
                app_stream(f, x, upto, false);
            }
            _ => {}
        }
    }

    /// Makes the records of the flow's transactions and files that are ready and were
    /// not made yet, logged on packet `packet` at `ts`: one of the flow's packets, or
    /// (its first packet given) the flow's end, where every one is ready. An HTTP transaction
    /// is ready once its response is complete, a file once its message is; a DNS
    /// message at once; a TLS handshake once both sides are past its clear part.
    fn log_txs(&mut self, f: &mut Flow<FlowData>, packet: u64, ts: Duration, at: Logging) {
        let (pseudo, packet_dir) = match at {
            Logging::Packet(d) => (None, Some(d)),
            Logging::FlowEnd(first) => (Some(first), None),
        };
        let end = pseudo.is_some();
        let (client, server, flow_id, proto) = (f.client(), f.server(), f.id(), f.proto());
        let tunnel = f.user.tunnel;
        let FlowData {
            app,
            tx_seen,
            quiet_dns,
            app_closed,
            bits,
            ints,
            vars,
            store_files,
            ..
        } = &mut f.user;
        // Made once, for the first record the call writes.
        let mut metadata = None;
        let mut metadata = || {
            metadata
                .get_or_insert_with(|| Metadata::of(bits, ints, Some(vars), None))
                .clone()
        };
        let both_closed = app_closed.values().all(|&c| c);
        let Some(sess) = app.as_ref() else { return };
        let Some(app_proto) = sess.proto else { return };
        let want = self.opts.log;
        if !want.of(app_proto) {
            return;
        }
        // How a transaction's files are made, and their records: with the sids of
        // the `filestore` rules that marked them (the transaction's or the flow's).
        let flow_marks = &*store_files;
        let wants = |seen: &TxSeen| {
            let marked = |d| !seen.store.sids(flow_marks, d).is_empty();
            let marked = PerDir::new(marked(Direction::ToServer), marked(Direction::ToClient));
            want.file_wants(marked)
        };
        let file = |seen: &TxSeen, d, mut file: FileMeta, tx| {
            file.sids = seen.store.sids(flow_marks, d);
            Logged::File(Box::new(file), tx)
        };
        let logs = &mut self.logs;
        let mut log = |d: Direction, record: Logged| {
            let (src, dst) = match d {
                Direction::ToServer => (client, server),
                Direction::ToClient => (server, client),
            };
            logs.push(TxLog {
                packet,
                pseudo,
                ts,
                flow_id,
                src,
                dst,
                proto,
                tunnel,
                metadata: metadata(),
                record,
            });
        };
        // HTTP/1's transactions, an upgraded connection's too.
        let http1 = match &sess.parser {
            Some(Parser::Http(h)) => Some(&**h),
            Some(Parser::Http2(x)) => x.http1.as_deref(),
            _ => None,
        };
        if let Some(h) = http1 {
            for t in &h.txs {
                let seen = TxSeen::of(tx_seen, t.id);
                if seen.quiet {
                    seen.logged = true;
                    continue;
                }
                if want.file_records() {
                    for (d, f) in http_files(t, seen.files, end, wants(seen)) {
                        seen.files[d] = true;
                        log(d, file(seen, d, f, meta(TxRef::Http(t))));
                    }
                }
                // Logging is done with it once its response is complete.
                let complete = t.response.as_ref().is_some_and(|r| r.msg.complete);
                if !seen.logged && (complete || end) {
                    seen.logged = true;
                    if want.http {
                        log(Direction::ToServer, Logged::Tx(meta(TxRef::Http(t))));
                    }
                }
            }
        }
        match &sess.parser {
            Some(Parser::Http(_)) => {}
            Some(Parser::Http2(x)) => {
                for t in x.txs.iter() {
                    let seen = TxSeen::of(tx_seen, t.id);
                    // A stream's file is logged on a packet of its own direction
                    // (measured: http2-keywords' fileinfo records).
                    if want.file_records() {
                        let files = http2_files(t, seen.files, end, wants(seen));
                        for (d, f) in files
                            .into_iter()
                            .filter(|(d, _)| packet_dir.is_none_or(|p| p == *d))
                        {
                            seen.files[d] = true;
                            log(d, file(seen, d, f, meta(TxRef::Http2(t))));
                        }
                    }
                    // Logged once both sides ended (a stream-0 frame's at once), if it
                    // says anything.
                    let complete = Direction::BOTH.iter().all(|&d| t.complete(d));
                    if !seen.logged && (complete || end) {
                        seen.logged = true;
                        // A DoH stream's `dns` record: its answer, else its query
                        // (one per stream, measured: dns-over-http2).
                        let msg = [Direction::ToClient, Direction::ToServer]
                            .into_iter()
                            .find_map(|d| Some((d, t.dns[d].as_deref()?)));
                        if want.dns
                            && let Some((_, x)) = msg
                        {
                            // Written the request's way, as the stream's records are.
                            log(Direction::ToServer, Logged::Tx(meta(TxRef::Dns(x))));
                        }
                        let m = meta(TxRef::Http2(t));
                        if want.http2
                            && let crate::log::AppMeta::Http2(h) = &m.app
                            && h.says_anything()
                        {
                            log(Direction::ToServer, Logged::Tx(m));
                        }
                    }
                }
            }
            Some(Parser::Dns(x)) => {
                for t in &x.txs {
                    let seen = TxSeen::of(tx_seen, t.id);
                    if !seen.logged {
                        seen.logged = true;
                        let paired = quiet_dns.iter().position(|&q| q == t.msg.id);
                        if t.msg.response
                            && let Some(i) = paired
                        {
                            quiet_dns.swap_remove(i);
                            seen.quiet = true;
                        }
                        if !seen.quiet {
                            log(t.dir, Logged::Tx(meta(TxRef::Dns(t))));
                        }
                    }
                }
            }
            // A data channel's transfer once both directions ended (as measured on
            // Suricata 8: on the ACK of the second FIN), or at the flow's end; with its
            // file.
            Some(Parser::FtpData(x)) => {
                for t in &x.txs {
                    let seen = TxSeen::of(tx_seen, t.id);
                    if seen.quiet || seen.logged || !(both_closed || end) {
                        continue;
                    }
                    seen.logged = true;
                    // A file record goes the file's way, the transfer's the flow's.
                    if want.file_records()
                        && let Some(f) = ftpdata_file(t, wants(seen))
                    {
                        let m = meta(TxRef::FtpData(t));
                        let d = ftpdata_dir(t);
                        log(d, file(seen, d, f, m));
                    }
                    if want.ftp {
                        log(Direction::ToServer, Logged::Tx(meta(TxRef::FtpData(t))));
                    }
                }
            }
            Some(Parser::Smtp(x)) => {
                for t in &x.txs {
                    let seen = TxSeen::of(tx_seen, t.id);
                    if seen.quiet || seen.logged || !(t.complete || end) {
                        continue;
                    }
                    seen.logged = true;
                    if want.file_records() {
                        let d = Direction::ToServer;
                        for f in smtp_files(t, wants(seen)) {
                            log(d, file(seen, d, f, meta(TxRef::Smtp(t))));
                        }
                    }
                    if want.smtp {
                        log(Direction::ToServer, Logged::Tx(meta(TxRef::Smtp(t))));
                    }
                }
            }
            Some(Parser::Ssh(t)) => {
                let seen = TxSeen::of(tx_seen, 0);
                let started = t.banner.values().any(Option::is_some);
                if !seen.logged && !seen.quiet && started && (t.both() || end) {
                    seen.logged = true;
                    log(Direction::ToServer, Logged::Tx(meta(TxRef::Ssh(t))));
                }
            }
            // An FTP command, an MQTT exchange, an LDAP operation: once complete (its
            // last reply or response came), under the client's addresses.
            parser @ Some(Parser::Ftp(_) | Parser::Mqtt(_) | Parser::Ldap(_)) => {
                for t in txs(parser.as_ref()) {
                    let seen = TxSeen::of(tx_seen, t.id());
                    if !seen.logged && !seen.quiet && (t.complete() || end) {
                        seen.logged = true;
                        log(Direction::ToServer, Logged::Tx(meta(t)));
                    }
                }
            }
            Some(Parser::Sip(x)) => {
                // Under the addresses of the packet that logs it (on TCP, in IDS mode,
                // the other side's acknowledgement), as Suricata writes them.
                for t in &x.txs {
                    let seen = TxSeen::of(tx_seen, t.id);
                    if !seen.logged && !seen.quiet {
                        seen.logged = true;
                        log(packet_dir.unwrap_or(t.dir), Logged::Tx(meta(TxRef::Sip(t))));
                    }
                }
            }
            // A datagram protocol's messages: each once read, under its own direction's
            // addresses (the one side a message's transaction has).
            // A WebSocket frame once read, under the addresses of the packet that
            // logs it, as SIP's (measured: a client's frame is written with the
            // server's acknowledgement).
            Some(Parser::WebSocket(x)) => {
                for t in &x.txs {
                    let seen = TxSeen::of(tx_seen, t.id);
                    if !seen.logged && !seen.quiet {
                        seen.logged = true;
                        let m = meta(TxRef::WebSocket(t));
                        log(packet_dir.unwrap_or(t.dir), Logged::Tx(m));
                    }
                }
            }
            parser @ Some(Parser::Krb5(_) | Parser::Ntp(_) | Parser::Snmp(_) | Parser::Tftp(_)) => {
                for t in txs(parser.as_ref()) {
                    let seen = TxSeen::of(tx_seen, t.id());
                    if !seen.logged && !seen.quiet {
                        seen.logged = true;
                        log(t.sides()[0], Logged::Tx(meta(t)));
                    }
                }
            }
            // A command once answered, a file once closed, a call once complete; each
            // under the client's addresses.
            Some(Parser::Smb(x)) => {
                for t in &x.txs {
                    let seen = TxSeen::of(tx_seen, t.id);
                    let ready = match &t.kind {
                        smb::Kind::File(f) => f.closed,
                        smb::Kind::Rpc { .. } => x.call(t).is_some_and(dcerpc::Tx::complete),
                        _ => t.response,
                    };
                    if seen.logged || seen.quiet || !(ready || end) {
                        continue;
                    }
                    seen.logged = true;
                    let m = meta(TxRef::Smb(x, t));
                    if want.file_records()
                        && let Some(d) = t.file().map(|f| f.dir)
                        && let Some(f) = smb_file(t, wants(seen))
                    {
                        log(d, file(seen, d, f, m.clone()));
                    }
                    if want.smb {
                        log(Direction::ToServer, Logged::Tx(m));
                    }
                }
            }
            Some(Parser::Dcerpc(x)) => {
                for t in &x.txs {
                    let seen = TxSeen::of(tx_seen, t.id);
                    if !seen.logged && !seen.quiet && (t.complete() || end) {
                        seen.logged = true;
                        log(Direction::ToServer, Logged::Tx(meta(TxRef::Dcerpc(t))));
                    }
                }
            }
            Some(Parser::Tls(t)) => {
                let seen = TxSeen::of(tx_seen, t.tx_id);
                let started = t.client_hello.is_some() || t.server_hello.is_some();
                if !seen.logged && started && (t.handshake_done() || end) {
                    seen.logged = true;
                    if !seen.quiet {
                        log(Direction::ToServer, Logged::Tx(meta(TxRef::Tls(t))));
                    }
                }
            }
            None => {}
        }
    }

    /// Inspects the transactions of the flow that progressed in direction `d` since
    /// they were last inspected there.
    #[allow(clippy::too_many_arguments)]
    fn run_tx(
        &mut self,
        set: &RuleSet,
        ctx: &Pkt<'_>,
        f: &mut Flow<FlowData>,
        (d, window): (Direction, Option<Direction>),
        pseudo: Option<u64>,
        mut packet_dropped: bool,
        out: &mut Vec<Alert>,
    ) {
        // What Lua scripts see of the flow (copied before its parts are borrowed apart).
        let info = set.lua.then(|| FlowInfo::of(f));
        let (streams, user) = f.streams_and_user();
        // The window of direction `d`'s stream this packet inspected (`window` is that
        // direction when it did): a rule's payload matches hold on it as on the packet,
        // as Suricata's stream inspection of application-layer rules has them.
        let mut stream: Option<Vec<u8>> = None;
        let FlowData {
            app,
            tx_seen,
            quiet_dns,
            bits,
            ints,
            vars,
            passed,
            bypassed,
            dropped,
            store_files,
            ..
        } = user;
        let Some(sess) = app.as_ref() else { return };
        let Some(proto) = sess.proto else { return };
        // The groups of the protocols the flow speaks (an SMB flow's DCE/RPC calls are
        // inspected by DCE/RPC's rules too).
        let groups = || (proto.spoken().iter()).map(|&p| (p, &set.tx_groups[tx_group(p, d)]));
        let mut bufs = Vec::new();
        for tx in txs(sess.parser.as_ref()) {
            let stage = tx.stage(d);
            let updates = tx.updates(d);
            let id = tx.id();
            let entry = TxSeen::of(tx_seen, id);
            let seen = entry.stage[d];
            // It grew at a stage already inspected: the rules judged there that did not
            // match are judged again.
            let inspected = entry.updates(d);
            let grew = updates > inspected;
            let from = body_from(inspected, updates, self.opts.http.inspect_window(d));
            if stage <= seen && !grew {
                continue;
            }
            entry.stage[d] = stage;
            if grew {
                entry.growth().updates[d] = updates;
            }
            let t_pf = self.prof.is_some().then(std::time::Instant::now);
            self.cands.clear();
            // A group's rules judge the transactions of its protocol, or of one that
            // carries it (not an upgraded connection's HTTP/1 ones by HTTP/2's rules).
            // A DoH2 flow's HTTP/2 transactions are all DoH2's (measured: `alert doh2`
            // rules match its PING frames, dns-over-http2).
            let tx_proto = match (tx.proto(), proto) {
                (AppProto::Http2, AppProto::Doh2) => AppProto::Doh2,
                (p, _) => p,
            };
            for (_, g) in groups().filter(|(p, _)| tx_proto.carries(*p)) {
                for scan in &g.scans {
                    bufs.clear();
                    for buf in &scan.bufs {
                        let at = bufs.len();
                        fill(buf.buffer(), tx, d, &mut bufs);
                        if buf.windowed(d) {
                            body_window(&mut bufs[at..], from);
                        }
                    }
                    if scan.bufs.len() > 1 {
                        // Twins: the bytes they share are searched once.
                        drop_repeats(&mut bufs);
                    }
                    let pf = &scan.prefilter;
                    self.gather.start(pf);
                    for b in bufs.drain(..) {
                        let b = transform(b, &scan.transforms);
                        self.counts.scanned += b.len() as u64;
                        self.gather
                            .scan(pf, &b, &mut self.cands, &mut self.counts.hits);
                    }
                }
                self.cands.extend_from_slice(&g.always);
            }
            self.cands.sort_unstable();
            self.cands.dedup();
            self.counts.candidates += self.cands.len() as u64;
            since(t_pf, self.prof.as_mut().map(|p| &mut p.prefilter));
            for &si in &self.cands {
                let s = &set.sigs[si as usize];
                let Some(t) = &s.tx else { continue };
                if set.is_removed(si) {
                    continue;
                }
                let fresh = seen < t.stage[d] && t.stage[d] <= stage;
                let again = grew
                    && t.stage[d] == tx.grows_at()
                    && t.stage[d] <= seen
                    && !TxSeen::of(tx_seen, id).matched(si);
                if !((fresh || again) && header_ok(s, ctx)) {
                    continue;
                }
                // `alert http1`: HTTP/1's transactions only.
                if s.app_exact && s.app != Some(tx_proto) {
                    continue;
                }
                if !flowbits_ok(s, Some(bits))
                    || !flowints_ok(s, Some(ints))
                    || !self.xbits_hold(s, ctx)
                {
                    continue;
                }
                self.counts.evaluated += 1;
                self.cx.start_rule();
                if !s.lists.is_empty()
                    && stream.is_none()
                    && let Some(w) = window
                {
                    let mut window = Vec::new();
                    for v in &self.views {
                        window.extend_from_slice(streams[w].bytes(v.idx.clone()));
                    }
                    stream = Some(window);
                }
                let payloads = [Some(ctx.p.payload()), stream.as_deref()];
                if !tx_rule_ok(
                    s,
                    &t.lists,
                    (tx, d, from),
                    (ctx.p, &payloads),
                    (&mut bufs, &mut self.cx),
                ) {
                    continue;
                }
                if let Some(info) = info.as_ref().filter(|_| !s.lua.is_empty()) {
                    let fe = FlowEnv {
                        info: info.clone(),
                        ints,
                        vars,
                    };
                    if !scripts_hold(s, set, &self.cx, ctx.p, Some(fe), Some(tx)) {
                        continue;
                    }
                }
                // A rule of the stage the transaction grows at is not judged again once
                // it matched (`again` above), even when it matched before any growth:
                // an HTTP request's body can grow after it ended.
                if t.stage[d] == tx.grows_at() && t.stage[d] != Stage::None {
                    TxSeen::of(tx_seen, id).growth().matched.push(si);
                }
                apply_flowbits(s, bits);
                apply_flowints(s, ints);
                keep_captures(&mut self.cx, vars, &mut self.pkt_vars);
                self.apply_xbits(s, ctx);
                if let Some(fs) = s.rule.filestore {
                    let marks = match fs.scope {
                        FileStoreScope::Tx => &mut TxSeen::of(tx_seen, id).store,
                        FileStoreScope::Flow => &mut *store_files,
                    };
                    marks.mark(s, fs, d);
                }
                if s.rule.bypass {
                    *passed = true;
                    *bypassed = true;
                }
                if s.rule.quiet_tx {
                    TxSeen::of(tx_seen, id).quiet = true;
                    if let TxRef::Dns(t) = tx
                        && !t.msg.response
                        && quiet_dns.len() < 64
                    {
                        quiet_dns.push(t.msg.id);
                    }
                }
                let action = s.rule.action;
                let pass = action == Action::Pass;
                if pass {
                    if !packet_dropped && flow_wide(s, true) {
                        *passed = true;
                    }
                    if !s.rule.pass_alert {
                        break;
                    }
                }
                let blocked = self.opts.ips && matches!(action, Action::Drop | Action::Reject);
                if blocked {
                    packet_dropped = true;
                    *dropped |= flow_wide(s, true);
                    self.last_drop.get_or_insert(DropReason::Rules(si));
                }
                if s.rule.noalert {
                    continue;
                }
                let p = ctx.p;
                out.push(Alert {
                    bytes: self
                        .opts
                        .keep_bytes
                        .then(|| Box::new((p.payload().to_vec(), p.data.clone()))),
                    app_proto: Some(AppName::Proto(proto)),
                    tx: Some(Box::new(meta(tx))),
                    context: std::mem::take(&mut self.cx.context),
                    ..alert(p, ctx, si, blocked, pseudo)
                });
                if pass {
                    break;
                }
            }
        }
    }

    /// Transactions inspected to their end on their sides (and logged, if they are to
    /// be) are dropped, once their frames were judged too (a frame's alert carries its
    /// transaction).
    fn prune_txs(&self, f: &mut Flow<FlowData>) {
        let FlowData { app, tx_seen, .. } = &mut f.user;
        let Some(proto) = app.as_ref().and_then(|s| s.proto) else {
            return;
        };
        let logging = self.opts.log.of(proto);
        let files = self.opts.log.files;
        // An HTTP/2 stream's files are logged apart from its record, on packets of
        // their own directions.
        let files_logged = |t: &TxRef<'_>, s: &TxSeen| match t {
            TxRef::Http2(x) if files => Direction::BOTH
                .iter()
                .all(|&d| !x.has_file(d) || s.files[d]),
            _ => true,
        };
        let done = |t: &TxRef<'_>| {
            tx_seen.iter().any(|s| {
                s.id == t.id()
                    && t.sides().iter().all(|&d| s.stage[d] == Stage::Done)
                    // Grown since it was inspected (an HTTP request's body after its
                    // end): not done until inspected again.
                    && t.sides().iter().all(|&d| t.updates(d) <= s.updates(d))
                    && (s.logged || !logging)
                    && files_logged(t, s)
            })
        };
        let parser = app.as_ref().and_then(|a| a.parser.as_ref());
        if matches!(parser, Some(Parser::Tls(_) | Parser::Ssh(_)) | None) {
            return;
        }
        let keep = txs(parser).find(|t| !done(t)).map_or(u64::MAX, |t| t.id());
        if let Some(a) = app.as_mut() {
            a.prune(keep);
        }
        tx_seen.retain(|s| s.id >= keep);
    }
}

impl Detector {
    /// Frame rules over the frames of direction `d` whose bytes all reached the parser
    /// (every frame, at the flow's end): each frame's bytes, from its stream or from
    /// the datagram, judged by the rules of its type. A frame is judged once.
    fn run_frames(
        &mut self,
        set: &RuleSet,
        ctx: &Pkt<'_>,
        f: &mut Flow<FlowData>,
        d: Direction,
        pseudo: Option<u64>,
        out: &mut Vec<Alert>,
    ) {
        if set.frame_rules.is_empty() {
            return;
        }
        let (streams, user) = f.streams_and_user();
        let Some(sess) = user.app.as_mut() else {
            return;
        };
        let Some(proto) = sess.proto else { return };
        for frame in sess.take_frames(d, pseudo.is_some()) {
            let end = frame.start.saturating_add(frame.len);
            let bytes: Vec<u8> = if frame.datagram {
                let p = ctx.p.payload();
                let (a, b) = (frame.start as usize, end as usize);
                p.get(a.min(p.len())..b.min(p.len()))
                    .unwrap_or(&[])
                    .to_vec()
            } else {
                let s = &streams[d];
                let mut bytes = Vec::new();
                for v in s.runs_iter(frame.start..end) {
                    bytes.extend_from_slice(
                        &s.bytes(v.idx.clone())[(v.new.start - v.off) as usize..],
                    );
                }
                bytes
            };
            for &si in &set.frame_rules {
                let s = &set.sigs[si as usize];
                let Some(fs) = &s.frame else { continue };
                if fs.ty != frame.ty || set.is_removed(si) || !header_ok(s, ctx) {
                    continue;
                }
                if !flowbits_ok(s, Some(&user.bits))
                    || !flowints_ok(s, Some(&user.ints))
                    || !self.xbits_hold(s, ctx)
                {
                    continue;
                }
                self.counts.evaluated += 1;
                self.cx.start_rule();
                let cx = &mut self.cx;
                let hit = fs.lists.iter().all(|(xf, m)| {
                    let b = transform(Cow::Borrowed(&bytes[..]), xf);
                    matches(m, &b, cx)
                });
                if !hit {
                    continue;
                }
                apply_flowbits(s, &mut user.bits);
                apply_flowints(s, &mut user.ints);
                keep_captures(&mut self.cx, &mut user.vars, &mut self.pkt_vars);
                self.apply_xbits(s, ctx);
                let action = s.rule.action;
                if action == Action::Pass && flow_wide(s, true) {
                    user.passed = true;
                }
                let blocked = self.opts.ips && matches!(action, Action::Drop | Action::Reject);
                if blocked {
                    user.dropped |= flow_wide(s, true);
                    self.last_drop.get_or_insert(DropReason::Rules(si));
                }
                if s.rule.noalert {
                    continue;
                }
                let p = ctx.p;
                // The frame's transaction, where its protocol has one.
                let tx = frame.tx.and_then(|id| {
                    let mut all = txs(sess.parser.as_ref());
                    all.find(|t| t.id() == id).map(|t| Box::new(meta(t)))
                });
                out.push(Alert {
                    bytes: self
                        .opts
                        .keep_bytes
                        .then(|| Box::new((p.payload().to_vec(), p.data.clone()))),
                    app_proto: Some(AppName::Proto(proto)),
                    tx,
                    context: std::mem::take(&mut self.cx.context),
                    frame: Some(Box::new(FrameHit {
                        frame: frame.clone(),
                        bytes: bytes.clone(),
                    })),
                    ..alert(p, ctx, si, blocked, pseudo)
                });
            }
        }
    }
}

/// Whether rule `s`'s pass or drop reaches its whole flow: as its action's scope says
/// when written (`drop:packet`, `pass:flow`), else as the engine infers (`inferred`).
fn flow_wide(s: &Sig, inferred: bool) -> bool {
    match s.rule.scope {
        Some(Scope::Flow) => true,
        Some(Scope::Packet) => false,
        _ => inferred,
    }
}

/// Some transaction of `f` passed a state in direction `d` since the firewall judged
/// its states there (a side closed by the other side's packet).
fn fw_states_moved(f: &Flow<FlowData>, d: Direction) -> bool {
    let parser = f.user.app.as_ref().and_then(|a| a.parser.as_ref());
    txs(parser).any(|tx| {
        let seen = f.user.tx_seen.iter().find(|s| s.id == tx.id());
        let last = seen.and_then(|s| s.fw.as_ref()?.from[d]);
        firewall::progress(&tx, d).is_some_and(|p| last.is_none_or(|l| p > l))
    })
}

/// Whether rule `s` (its transaction lists `lists`) matches transaction `tx` in
/// direction `d` on packet `p`: each buffer list over the transaction, then a mixed
/// rule's payload lists over the packet's payload and its header lists (`ip.src`) over
/// its headers.
fn tx_rule_ok<'a>(
    s: &Sig,
    lists: &[TxList],
    (tx, d, body_from): (TxRef<'a>, Direction, usize),
    (p, payloads): (&Packet, &[Option<&[u8]>]),
    (bufs, cx): (&mut Vec<Cow<'a, [u8]>>, &mut Ctx),
) -> bool {
    for l in lists {
        bufs.clear();
        fill(l.buf.buffer(), tx, d, bufs);
        // A body inspected again is inspected from its window on.
        let base = match l.buf.windowed(d) {
            true => body_window(bufs, body_from),
            false => 0,
        };
        let ok = match l.absent {
            Absent::Only => bufs.is_empty(),
            Absent::OrElse if bufs.is_empty() => true,
            Absent::No | Absent::OrElse => bufs.drain(..).any(|b| {
                let b = transform(b, &l.transforms);
                matches_at(&l.matches, &b, base, cx)
            }),
        };
        if !ok {
            return false;
        }
    }
    // The payload matches on the packet's payload, or on the stream's window.
    let payload_ok = s.lists.is_empty()
        || payloads
            .iter()
            .flatten()
            .any(|b| s.lists.iter().all(|l| matches(l, b, cx)));
    payload_ok && s.hdr_lists.iter().all(|h| h.holds(p, cx))
}

/// What the firewall made of a packet, for threat detection.
enum FwOutcome {
    /// On to threat detection.
    Accepted,
    /// Dropped: threat detection never sees it.
    Dropped,
    /// Accepted by a rule with a secondary `pass`: threat detection skips it.
    Passed,
    /// Accepted on to the application states, judged after the packet rules.
    Pending,
}

/// Where transactions' records are logged.
#[derive(Clone, Copy)]
enum Logging {
    /// On a packet of the flow, sent in this direction.
    Packet(Direction),
    /// At the flow's end, on a pseudo packet: the flow's first packet's number.
    FlowEnd(u64),
}

/// An alert of rule `sig` on packet `p` (no bytes, not on the stream, no transaction).
fn alert(p: &Packet, ctx: &Pkt<'_>, sig: u32, blocked: bool, pseudo: Option<u64>) -> Alert {
    Alert {
        bytes: None,
        linktype: p.linktype,
        sig,
        packet: p.num,
        ts: p.ts,
        src: ctx.src,
        dst: ctx.dst,
        sport: ctx.sport,
        dport: ctx.dport,
        proto: ctx.proto,
        flow_id: ctx.flow_id,
        dir: ctx.dir,
        blocked,
        stream: false,
        icmp: match p.l4 {
            L4::Icmp { itype, icode, .. } => Some((itype, icode)),
            _ => None,
        },
        vlan: p.vlan,
        tunnel: p.tunnel,
        pseudo,
        app_proto: ctx.app_name,
        tx: None,
        flow: ctx.flow,
        traffic: Vec::new(),
        metadata: None,
        verdict: Verdict::Alert,
        context: Vec::new(),
        firewall: None,
        frame: None,
        ether: match p.linktype {
            1 => p.data.get(..14).and_then(|h| h.try_into().ok()),
            _ => None,
        },
        without_ip: false,
    }
}

/// Feeds direction `x` of `f`'s streams to its application layer up to offset
/// `upto`; a hole stops that direction's parser. The direction's end goes too once
/// its FIN is covered (acknowledged in IDS mode) or with `end`. A completed message
/// asks for an inspection of the direction's raw stream.
fn app_stream(f: &mut Flow<FlowData>, x: Direction, upto: u64, end: bool) {
    let (streams, user) = f.streams_and_user();
    let Some(a) = user.app.as_mut() else { return };
    let s = &streams[x];
    let from = user.app_fed[x];
    let mut done = false;
    if upto > from {
        let mut cursor = from;
        for v in s.runs_iter(from..upto) {
            if v.new.start != cursor {
                a.gap(x);
            }
            let run = s.bytes(v.idx.clone());
            let new = &run[(v.new.start - v.off) as usize..];
            done |= a.feed(x, new);
            cursor = v.new.end;
        }
        user.app_fed[x] = upto;
    }
    let fin = s
        .fin_offset()
        .is_some_and(|fo| user.app_fed[x] >= fo && s.acked_offset() > fo);
    if (fin || end) && !user.app_closed[x] {
        user.app_closed[x] = true;
        done |= a.close(x);
    }
    if done {
        user.trigger[x] = true;
    }
}

/// Some transaction of the flow progressed or grew in direction `d` past its
/// inspection.
fn tx_pending(fd: &FlowData, d: Direction) -> bool {
    let Some(a) = &fd.app else { return false };
    let seen = |id: u64| fd.tx_seen.iter().find(|x| x.id == id);
    txs(a.parser.as_ref()).any(|t| match seen(t.id()) {
        Some(x) => t.stage(d) > x.stage[d] || t.updates(d) > x.updates(d),
        None => t.stage(d) > Stage::None,
    })
}

/// Where an HTTP body inspected as it grows ([`Stage::Body`]) is inspected from, when
/// `inspected` of its bytes were and it now has `now`: all of it the first time;
/// after, its last `window` bytes, or, when more than a window is new, the new bytes
/// and a quarter window before them (Suricata's inspect window, measured on the
/// reference: a content past the first part is found on the packet that brings it,
/// and one anchored at the body's start is no longer).
fn body_from(inspected: usize, now: usize, window: usize) -> usize {
    match now.saturating_sub(inspected) {
        _ if inspected == 0 => 0,
        new if new < window => now.saturating_sub(window),
        _ => inspected.saturating_sub(window / 4),
    }
}

/// Keeps the first of equal buffers.
fn drop_repeats(bufs: &mut Vec<Cow<'_, [u8]>>) {
    let mut i = 1;
    while i < bufs.len() {
        if bufs[..i].contains(&bufs[i]) {
            bufs.remove(i);
        } else {
            i += 1;
        }
    }
}

/// `bufs`, instances of a body inspected as it grows, cut to start at `from`; returns
/// `from`, where the cut buffers start in the body.
fn body_window(bufs: &mut [Cow<'_, [u8]>], from: usize) -> usize {
    if from > 0 {
        for b in bufs.iter_mut() {
            *b = match std::mem::take(b) {
                Cow::Borrowed(x) => Cow::Borrowed(&x[from.min(x.len())..]),
                Cow::Owned(mut x) => {
                    x.drain(..from.min(x.len()));
                    Cow::Owned(x)
                }
            };
        }
    }
    from
}

fn flowbits_ok(s: &Sig, bits: Option<&[u32]>) -> bool {
    for (cmd, ids, any) in &s.flowbits {
        let has = |id: &u32| bits.is_some_and(|b| b.contains(id));
        let ok = match cmd {
            FlowbitCmd::IsSet => {
                if *any {
                    ids.iter().any(has)
                } else {
                    ids.iter().all(has)
                }
            }
            FlowbitCmd::IsNotSet => {
                if *any {
                    ids.iter().any(|i| !has(i))
                } else {
                    ids.iter().all(|i| !has(i))
                }
            }
            _ => true,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// The flowbits among `bits` that tag traffic (`traffic/id/...`, `traffic/label/...`),
/// in the order of their names.
fn traffic(set: &RuleSet, bits: &[u32]) -> Vec<u32> {
    let mut t: Vec<u32> = bits
        .iter()
        .copied()
        .filter(|&b| set.flowbit_names[b as usize].starts_with("traffic/"))
        .collect();
    t.sort_by(|a, b| set.flowbit_names[*a as usize].cmp(&set.flowbit_names[*b as usize]));
    t
}

/// The value of a `flowint` operand, if it has one (a counter that is not set has
/// none).
fn int_val(v: Option<IntVal>, ints: &[(u32, u64)]) -> Option<u64> {
    match v? {
        IntVal::Num(n) => Some(n),
        IntVal::Var(id) => ints.iter().find(|x| x.0 == id).map(|x| x.1),
    }
}

/// Whether the `flowint` tests of `s` hold (a test of a counter that is not set fails,
/// but `notset`).
fn flowints_ok(s: &Sig, ints: Option<&[(u32, u64)]>) -> bool {
    let ints = ints.unwrap_or(&[]);
    s.flowints.iter().all(|&(id, op, value)| {
        let cur = ints.iter().find(|x| x.0 == id).map(|x| x.1);
        let v = int_val(value, ints);
        match (op, cur, v) {
            (FlowintOp::IsSet, ..) => cur.is_some(),
            (FlowintOp::NotSet, ..) => cur.is_none(),
            (op, _, _) if op.changes() => true,
            (_, None, _) | (_, _, None) => false,
            (FlowintOp::Eq, Some(c), Some(v)) => c == v,
            (FlowintOp::Ne, Some(c), Some(v)) => c != v,
            (FlowintOp::Lt, Some(c), Some(v)) => c < v,
            (FlowintOp::Gt, Some(c), Some(v)) => c > v,
            (FlowintOp::Le, Some(c), Some(v)) => c <= v,
            (FlowintOp::Ge, Some(c), Some(v)) => c >= v,
            _ => true,
        }
    })
}

/// Applies the `flowint` changes of `s`, which matched: `=` sets, `+` and `-` add
/// and subtract (from 0 for a counter not set; an operand that is not set changes
/// nothing).
/// A rule matched: its `pcre` captures set the flow's and the packet's variables (its
/// `alert:` ones go to its alert's context).
/// Whether each of rule `s`'s `lua` scripts holds (or, negated, fails) on the packet,
/// its flow and the transaction being inspected.
fn scripts_hold<'a>(
    s: &'a Sig,
    set: &'a RuleSet,
    cx: &Ctx,
    p: &'a Packet,
    mut flow: Option<FlowEnv<'a>>,
    tx: Option<TxRef<'a>>,
) -> bool {
    s.lua.iter().all(|l| {
        let mut env = lua::Env {
            packet: Some(p),
            flow: flow.take(),
            tx,
            bytevars: (l.bytevars.iter())
                .map(|(n, i)| (n.as_str(), cx.vars[usize::from(*i)]))
                .collect(),
            int_names: &set.flowbit_names,
        };
        let holds = l.script.matches(&mut env) != l.negated;
        flow = env.flow;
        holds
    })
}

/// A flow as a Lua script judging one of its packets sees it, and the transaction it
/// gets: the flow's one state (TLS, SSH) or its latest transaction.
fn flow_env(f: &mut Flow<FlowData>) -> (FlowEnv<'_>, Option<TxRef<'_>>) {
    let info = FlowInfo::of(f);
    let user = &mut f.user;
    let parser = user.app.as_ref().and_then(|a| a.parser.as_ref());
    let env = FlowEnv {
        info,
        ints: &mut user.ints,
        vars: &mut user.vars,
    };
    (env, txs(parser).last())
}

impl FlowInfo {
    fn of(f: &Flow<FlowData>) -> FlowInfo {
        FlowInfo {
            id: f.id(),
            client: f.client(),
            server: f.server(),
            proto: f.proto(),
            start: f.start(),
            last: f.last(),
            pkts: f.pkts(),
            bytes: f.bytes(),
            app: f.user.app_proto().map(AppName::name),
            alerted: f.user.alerted,
        }
    }
}

fn keep_captures(cx: &mut Ctx, flow: &mut FlowVars, pkt: &mut Named<Vec<u8>>) {
    for c in cx.take_captures() {
        match c.scope {
            VarScope::Pkt => pkt.set(&c.name, c.value),
            _ => flow.vars.set(&c.name, c.value),
        }
    }
}

fn apply_flowints(s: &Sig, ints: &mut Vec<(u32, u64)>) {
    for &(id, op, value) in &s.flowints {
        if !op.changes() {
            continue;
        }
        let Some(v) = int_val(value, ints) else {
            continue;
        };
        let at = match ints.iter().position(|x| x.0 == id) {
            Some(i) => i,
            None => {
                ints.push((id, 0));
                ints.len() - 1
            }
        };
        let c = &mut ints[at].1;
        *c = match op {
            FlowintOp::Set => v,
            FlowintOp::Add => c.wrapping_add(v),
            _ => c.wrapping_sub(v),
        };
    }
}

/// The `filestore` rules that matched a transaction (or a flow): each direction whose
/// files they mark for `file-store`, with the rule's sid. Boxed, as few transactions
/// have any: it costs a transaction's record one word.
#[derive(Clone, Debug, Default)]
#[expect(
    clippy::box_collection,
    reason = "one word in every transaction's record; the marks only where a rule made some"
)]
struct StoreMarks(Option<Box<Vec<(Direction, u32)>>>);

impl StoreMarks {
    /// Rule `s`, whose `filestore` is `fs`, matched in direction `d`.
    fn mark(&mut self, s: &Sig, fs: FileStore, d: Direction) {
        for x in Direction::BOTH {
            let covered = match fs.dir {
                None => x == d,
                Some(FileStoreDir::ToServer) => x == Direction::ToServer,
                Some(FileStoreDir::ToClient) => x == Direction::ToClient,
                Some(FileStoreDir::Both) => true,
            };
            let mark = (x, s.rule.sid);
            let marks = self.0.get_or_insert_default();
            if covered && !marks.contains(&mark) {
                marks.push(mark);
            }
        }
    }

    /// The sids of the rules that marked direction `d`'s files, here or in `more`.
    fn sids(&self, more: &StoreMarks, d: Direction) -> Vec<u32> {
        let marks = self.0.iter().chain(&more.0).flat_map(|m| m.iter());
        let mut sids: Vec<u32> = marks.filter(|m| m.0 == d).map(|m| m.1).collect();
        sids.dedup();
        sids
    }
}

fn apply_flowbits(s: &Sig, bits: &mut Vec<u32>) {
    for (cmd, ids, _) in &s.flowbits {
        for id in ids {
            let at = bits.iter().position(|b| b == id);
            match (cmd, at) {
                (FlowbitCmd::Set, None) => bits.push(*id),
                (FlowbitCmd::Unset, Some(i)) => {
                    bits.swap_remove(i);
                }
                (FlowbitCmd::Toggle, None) => bits.push(*id),
                (FlowbitCmd::Toggle, Some(i)) => {
                    bits.swap_remove(i);
                }
                _ => {}
            }
        }
    }
}
