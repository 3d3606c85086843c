//! Flows: the bidirectional 5-tuple, client and server, TCP state, and per-direction
//! reassembly.
//!
//! The client is the side that sent the first SYN. A connection whose handshake was not
//! seen is tracked only when `midstream` is on; its first packet's sender is then taken
//! as the client and the connection counts as established at once (as Suricata does).
//! Without `midstream` such a flow still exists, for packet rules, but has no stream.
//!
//! Memory is bounded: at most `max_flows` flows (`max_tcp_sessions` of them TCP), and at
//! most `stream_memcap` bytes held by all reassemblers together. When a new flow would
//! pass a count, expired flows are dropped first, then an eighth of the table: flows
//! that are not established (half-open, a SYN flood's) before established ones, the
//! least recently seen first. When new data would pass the memory cap, the least
//! recently seen flows that hold stream data go. Evictions are counted.

use std::hash::{BuildHasher, Hash};
use std::net::IpAddr;
use std::ops::Range;
use std::time::Duration;

use crate::decode::{L4, Packet, tcp_flags as F};
use crate::reassembly::{OverlapPolicy, Reassembler};
use netsieve_wire::{Direction, PerDir, StreamEvent};

/// What a flow costs against `flow.memcap` (its state, the detector's, and the table's):
/// Suricata's default 128 MiB holds 65,536 flows.
pub const FLOW_BYTES: usize = 2048;

/// What a TCP session costs against `stream.memcap`: Suricata's default 64 MiB holds
/// 65,536 sessions.
pub const TCP_SESSION_BYTES: usize = 1024;

/// Settings of the flow table (Suricata's names in brackets).
#[derive(Clone, Debug)]
pub struct FlowConfig {
    /// Track TCP sessions whose handshake was not seen [stream.midstream].
    pub midstream: bool,
    /// Bytes per direction reassembled [stream.reassembly.depth]; 0 means unlimited.
    pub depth: u64,
    /// Flows held at most [flow.memcap, at [`FLOW_BYTES`] a flow].
    pub max_flows: usize,
    /// TCP flows held at most [stream.memcap, at [`TCP_SESSION_BYTES`] a session].
    pub max_tcp_sessions: usize,
    /// Bytes of stream data held by all flows [stream.reassembly.memcap].
    pub stream_memcap: usize,
    /// Out-of-order bytes a stream keeps waiting for a hole (netsieve's
    /// stream.reassembly.max-pending); past it the hole is skipped as a gap.
    pub max_pending: usize,
    /// Idle time after which a flow is forgotten, before and after establishment.
    pub timeout_new: Duration,
    pub timeout_established: Duration,
    /// Overlap policy by receiving host: (network, prefix length, policy), the longest
    /// prefix wins [host-os-policy]; others get [`OverlapPolicy::First`].
    pub policies: Vec<(IpAddr, u8, OverlapPolicy)>,
    /// Inline (IPS): report what the stream holds where a segment overlaps it with
    /// other bytes ([`Observed::normalized`]).
    pub inline: bool,
    /// VLAN ids are part of a flow's key [vlan.use-for-tracking]: off, the two
    /// directions of a conversation tagged differently are one flow.
    pub vlan_tracking: bool,
    /// Only one side of a TCP conversation may be seen [stream.async-oneside]: a
    /// client's ACK after its SYN, with no SYN/ACK seen, establishes the session, and
    /// its data counts as acknowledged as it comes.
    pub async_oneside: bool,
    /// What becomes of a segment's urgent byte [stream.reassembly.urgent.policy].
    pub urgent: UrgentPolicy,
}

impl FlowConfig {
    /// The overlap policy of streams received by `host`.
    pub fn policy_for(&self, host: IpAddr) -> OverlapPolicy {
        self.policies
            .iter()
            .filter(|(net, len, _)| in_prefix(host, *net, *len))
            .max_by_key(|(_, len, _)| *len)
            .map_or(OverlapPolicy::First, |(_, _, p)| *p)
    }

    /// Whether `f`, last seen before `now`, has been idle past its timeout: it is over.
    fn idle_past_timeout<T>(&self, f: &Flow<T>, now: Duration) -> bool {
        let timeout = if f.established() {
            self.timeout_established
        } else {
            self.timeout_new
        };
        now.saturating_sub(f.last) > timeout
    }
}

fn in_prefix(a: IpAddr, net: IpAddr, len: u8) -> bool {
    match (a, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let len = len.min(32) as u32;
            let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let len = len.min(128) as u32;
            let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig {
            midstream: false,
            depth: 1 << 20,
            max_flows: 65_536,
            max_tcp_sessions: 65_536,
            stream_memcap: 256 << 20,
            max_pending: 256 << 10,
            timeout_new: Duration::from_secs(60),
            timeout_established: Duration::from_secs(600),
            policies: Vec::new(),
            inline: false,
            vlan_tracking: true,
            async_oneside: false,
            urgent: UrgentPolicy::Inline,
        }
    }
}

/// What becomes of the urgent byte a segment with the URG flag points at (the one
/// before its urgent pointer, RFC 6093 section 3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrgentPolicy {
    /// Nothing: it stays in the stream.
    Inline,
    /// It is read out of band: taken out of the stream, where the bytes around it
    /// join up. A pointer past the segment's payload takes nothing out.
    Oob,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    lo: (IpAddr, u16),
    hi: (IpAddr, u16),
    proto: u8,
    vlan: [u16; crate::VLAN_LAYERS],
}

/// TCP connection state, as far as detection needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpState {
    /// Not a TCP flow, or TCP not tracked (picked up midstream with midstream off).
    None,
    SynSent,
    SynRecv,
    Established,
    Closing,
    Closed,
}

/// One flow: its endpoints, TCP state, counters and streams, which the table keeps, and
/// `user`, the data its owner attaches.
#[derive(Debug)]
pub struct Flow<T> {
    id: u64,
    client: (IpAddr, u16),
    server: (IpAddr, u16),
    proto: u8,
    first_packet: u64,
    start: Duration,
    last: Duration,
    state: TcpState,
    tracked: bool,
    /// Handshake progress: which side sent the SYN/ACK, and whether the server sent a
    /// SYN of its own (a split handshake: SYN, SYN back, SYN/ACK from the client).
    synack: Option<Direction>,
    server_syn: bool,
    /// Established on the client's side alone ([`FlowConfig::async_oneside`]).
    one_sided: bool,
    /// The side that sent the first FIN.
    first_fin: Option<Direction>,
    /// The side whose RST closed the session, and the state the RST found: if that
    /// side goes on as if it had not sent it, the session goes back to that state.
    reset_by: Option<(Direction, TcpState)>,
    /// The direction's stream reached its depth (raised once).
    depth_reached: PerDir<bool>,
    /// While the handshake waits for its SYN/ACK: the sequence numbers of the client's
    /// other SYNs, one of which the SYN/ACK may answer (at most [`MAX_SYNS_QUEUED`]).
    syns: Vec<u32>,
    /// The Timestamps option of the client's SYNs, while the handshake waits.
    syn_ts: SynTimestamps,
    pkts: PerDir<u64>,
    bytes: PerDir<u64>,
    /// The lowest and highest TTL (IPv6: hop limit) seen in each direction.
    ttl: PerDir<[u8; 2]>,
    /// The TCP flags seen in each direction, OR-ed.
    tcp_flags: PerDir<u8>,
    /// Why the flow ended, once it did.
    end: EndReason,
    streams: PerDir<Reassembler>,
    /// The owner's data (the detector's per-flow state).
    pub user: T,
}

/// Why a flow ended (Suricata's `flow.reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// Idle past its timeout.
    Timeout,
    /// Evicted to make room.
    Forced,
    /// The input ended (or the run was stopped).
    Shutdown,
}

impl EndReason {
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Timeout => "timeout",
            EndReason::Forced => "forced",
            EndReason::Shutdown => "shutdown",
        }
    }
}

impl<T> Flow<T> {
    /// A stable identifier (Suricata's `flow_id`).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The side that opened the flow: address and port.
    pub fn client(&self) -> (IpAddr, u16) {
        self.client
    }

    pub fn server(&self) -> (IpAddr, u16) {
        self.server
    }

    /// The IP protocol.
    pub fn proto(&self) -> u8 {
        self.proto
    }

    /// The number of the packet that created it (orders flows deterministically).
    pub fn first_packet(&self) -> u64 {
        self.first_packet
    }

    /// When its first packet was seen.
    pub fn start(&self) -> Duration {
        self.start
    }

    /// When its last packet was seen.
    pub fn last(&self) -> Duration {
        self.last
    }

    pub fn state(&self) -> TcpState {
        self.state
    }

    /// The stream is reassembled (handshake seen, or midstream pickup).
    pub fn tracked(&self) -> bool {
        self.tracked
    }

    pub fn established(&self) -> bool {
        matches!(self.state, TcpState::Established | TcpState::Closing)
    }

    /// Packets per direction.
    /// The TCP flags seen in each direction, OR-ed.
    pub fn tcp_flags(&self) -> PerDir<u8> {
        self.tcp_flags
    }

    /// Why the flow ended (for a flow the table gave back).
    pub fn end_reason(&self) -> EndReason {
        self.end
    }

    /// The lowest and highest TTL (IPv6: hop limit) of each direction's packets.
    pub fn ttl(&self) -> PerDir<[u8; 2]> {
        self.ttl
    }

    fn see_ttl(&mut self, dir: Direction, p: &Packet) {
        if let Some(ip) = p.ip {
            let [lo, hi] = &mut self.ttl[dir];
            *lo = (*lo).min(ip.ttl);
            *hi = (*hi).max(ip.ttl);
        }
    }

    pub fn pkts(&self) -> PerDir<u64> {
        self.pkts
    }

    /// Bytes on the wire per direction.
    pub fn bytes(&self) -> PerDir<u64> {
        self.bytes
    }

    /// The side that sent the first FIN, once one has.
    pub fn first_fin(&self) -> Option<Direction> {
        self.first_fin
    }

    /// Both directions sent their FIN and saw it acknowledged.
    pub fn closed(&self) -> bool {
        self.streams
            .values()
            .all(|s| s.fin_offset().is_some_and(|fo| s.acked_offset() > fo))
    }

    /// Established on the client's side alone (`stream.async-oneside`): its own
    /// packets carry what the other side would have acknowledged.
    pub fn one_sided(&self) -> bool {
        self.one_sided
    }

    /// Both directions have sent a packet.
    pub fn both_sides_seen(&self) -> bool {
        self.pkts.values().all(|&n| n > 0)
    }

    /// The reassembled stream of direction `d`.
    pub fn stream(&self, d: Direction) -> &Reassembler {
        &self.streams[d]
    }

    pub fn stream_mut(&mut self, d: Direction) -> &mut Reassembler {
        &mut self.streams[d]
    }

    /// The streams and the owner's data, borrowed apart.
    pub fn streams_and_user(&mut self) -> (&mut PerDir<Reassembler>, &mut T) {
        (&mut self.streams, &mut self.user)
    }

    /// Stream bytes held in both directions.
    fn held_bytes(&self) -> usize {
        self.streams.values().map(Reassembler::held_bytes).sum()
    }
}

/// What the flow table made of one packet.
#[derive(Clone, Debug)]
pub struct Observed {
    pub dir: Direction,
    /// The packet created the flow.
    pub new_flow: bool,
    /// The flow is established as of this packet (`flow:established`).
    pub established: bool,
    /// Stream offsets that became in order in the packet's direction.
    pub stream: Range<u64>,
    /// The packet's payload went into its direction's stream (Suricata's
    /// `PKT_STREAM_ADD`): rules that may match either way judge it there.
    pub added: bool,
    /// The stream offsets the packet's payload covers (when added).
    pub seg: Range<u64>,
    /// Inline only: the packet's payload as the stream holds it, where the stream
    /// kept other bytes than the packet carries (a retransmission with new content).
    pub normalized: Option<Vec<u8>>,
    /// Stream offsets that became in order in the other direction (its holes acknowledged
    /// by this packet).
    pub other: Range<u64>,
    /// The packet opened a new TCP session in the flow, whose last one was reset
    /// (Suricata's session reuse): the streams start over.
    pub reused: bool,
    /// Stream events the packet raised.
    pub events: Vec<StreamEvent>,
}

/// Other SYNs the client may send while its handshake waits for the SYN/ACK (Suricata's
/// `stream.max-syn-queued`).
const MAX_SYNS_QUEUED: usize = 10;

/// In `SynSent`: a client SYN with another sequence number becomes the client stream's
/// ISN, the one it replaces being kept (past [`MAX_SYNS_QUEUED`] kept, the SYN raises
/// `3whs_syn_flood`); a SYN/ACK that answers a kept one makes it the ISN again. This is
/// Suricata's SYN queue, as its events and its choice of ISN show (bug-7657).
/// The Timestamps options of a client's SYNs (RFC 7323).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SynTimestamps {
    /// No SYN seen (a session picked up midstream).
    Unseen,
    /// The SYN had no Timestamps option: the session uses none.
    Without,
    /// The TSval of the first SYN and of the last (a retransmission's).
    With { first: u32, last: u32 },
}

impl SynTimestamps {
    /// After one more client SYN, with `ts` (TSval, TSecr) if it had the option.
    fn with(self, ts: Option<(u32, u32)>) -> SynTimestamps {
        match (self, ts) {
            (SynTimestamps::With { first, .. }, Some((v, _))) => {
                SynTimestamps::With { first, last: v }
            }
            (_, Some((v, _))) => SynTimestamps::With { first: v, last: v },
            (_, None) => SynTimestamps::Without,
        }
    }
}

/// Whether the client would take this server segment while its SYN waits for an
/// answer (RFC 7323, as Linux and Windows check it): a segment other than the SYN/ACK
/// that acknowledges the SYN carries Timestamps only if the SYN did, and then echoes
/// (TSecr) one of the SYN's TSvals. Suricata raises `pkt_invalid_timestamp` on the
/// others, which an attacker sends to make a monitor believe a session was reset or
/// closed (measured: bug-3286's RST and FIN with TSecr 100; a RST/ACK echoing
/// nothing sent, and a FIN/ACK with Timestamps after a SYN without, are refused; a
/// SYN/ACK is not checked).
fn timestamps_acceptable<T>(f: &Flow<T>, dir: Direction, t: crate::decode::Tcp) -> bool {
    let syn = t.flags & F::SYN != 0;
    if f.state != TcpState::SynSent || dir != Direction::ToClient || t.flags & F::ACK == 0 || syn {
        return true;
    }
    match (f.syn_ts, t.timestamp) {
        (SynTimestamps::Unseen, _) | (_, None) => true,
        (SynTimestamps::Without, Some(_)) => false,
        (SynTimestamps::With { first, last }, Some((_, echo))) => {
            // Serial-number order: `echo` lies from `first` to `last`.
            echo == 0 || echo.wrapping_sub(first) <= last.wrapping_sub(first)
        }
    }
}

fn queue_syn<T>(f: &mut Flow<T>, dir: Direction, t: crate::decode::Tcp) -> Option<StreamEvent> {
    let syn = t.flags & F::SYN != 0;
    let ack = t.flags & F::ACK != 0;
    let client = &mut f.streams[Direction::ToServer];
    let mut event = None;
    match dir {
        Direction::ToServer if syn && !ack => {
            // The first SYN sets the ISN; its retransmissions are known.
            let isn = client.isn().filter(|&isn| isn != t.seq)?;
            if f.syns.len() == MAX_SYNS_QUEUED {
                event = Some(StreamEvent::ThreeWhsSynFlood);
            } else if !f.syns.contains(&isn) {
                f.syns.push(isn);
            }
            client.reset_isn(t.seq);
        }
        Direction::ToClient if syn && ack => {
            let answered = t.ack.wrapping_sub(1);
            if f.syns.contains(&answered) {
                client.reset_isn(answered);
            }
            f.syns = Vec::new();
        }
        _ => {}
    }
    event
}

/// Counters of the table's life.
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    pub created: u64,
    /// Of those, by protocol.
    pub tcp: u64,
    pub udp: u64,
    pub icmpv4: u64,
    pub icmpv6: u64,
    /// Flows ended to make room (a cap was reached); `evicted_established` of them were
    /// established.
    pub evicted: u64,
    pub evicted_established: u64,
    pub expired: u64,
    /// TCP flows whose session is tracked (a SYN seen first, or picked up midstream);
    /// Suricata's `tcp.sessions`.
    pub tcp_sessions: u64,
    /// TCP packets with SYN alone, SYN and ACK, RST (`tcp.syn`, `tcp.synack`,
    /// `tcp.rst`).
    pub tcp_syn: u64,
    pub tcp_synack: u64,
    pub tcp_rst: u64,
    /// Stream events raised, in the order of [`StreamEvent::ALL`].
    pub stream_events: [u64; StreamEvent::ALL.len()],
}

impl FlowStats {
    /// Adds another table's counters (of another worker).
    pub fn add(&mut self, o: &FlowStats) {
        self.created += o.created;
        self.tcp += o.tcp;
        self.udp += o.udp;
        self.icmpv4 += o.icmpv4;
        self.icmpv6 += o.icmpv6;
        self.evicted += o.evicted;
        self.evicted_established += o.evicted_established;
        self.expired += o.expired;
        self.tcp_sessions += o.tcp_sessions;
        self.tcp_syn += o.tcp_syn;
        self.tcp_synack += o.tcp_synack;
        self.tcp_rst += o.tcp_rst;
        for (n, m) in self.stream_events.iter_mut().zip(o.stream_events) {
            *n += m;
        }
    }

    /// How many times each stream event was raised, by name.
    pub fn stream_events(&self) -> impl Iterator<Item = (StreamEvent, u64)> + '_ {
        StreamEvent::ALL.iter().copied().zip(self.stream_events)
    }
}

/// All flows.
pub struct FlowTable<T> {
    /// Flows by key, hashed with `hasher`: a packet computes its key's hash once, for
    /// both of its lookups ([`FlowTable::packet`]). Flows are boxed: a flow is over a
    /// kilobyte, and the table's growth, its empty slots and the sort of retired flows
    /// would otherwise move and hold that much per slot.
    flows: hashbrown::HashTable<(Key, Box<Flow<T>>)>,
    /// foldhash, seeded per process (SipHash cost 3% of a scan).
    hasher: foldhash::fast::RandomState,
    config: FlowConfig,
    stats: FlowStats,
    held: usize,
    /// TCP flows in the table.
    tcp: usize,
    /// Flows that ended (expired or evicted) since the last [`FlowTable::take_retired`].
    retired: Vec<Box<Flow<T>>>,
}

/// Which cap a flow table must make room under.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pressure {
    /// Too many flows (or TCP sessions): half-open flows go first.
    Count,
    /// Too many stream bytes: flows holding stream data go.
    Memory,
}

/// When to sweep idle flows out of a table: every 5 seconds of capture time. Kept by
/// whoever sees every packet (the capture reader), so that with one table per worker
/// thread the sweeps happen at the same packets whatever the number of threads.
#[derive(Clone, Debug, Default)]
pub struct SweepClock {
    last: Duration,
}

impl SweepClock {
    /// Whether a sweep is due at `now` (and if so, the clock restarts).
    pub fn due(&mut self, now: Duration) -> bool {
        if now.saturating_sub(self.last) > Duration::from_secs(5) {
            self.last = now;
            true
        } else {
            false
        }
    }
}

/// A hash of the hosts of the packet's flow (the two addresses, and the VLAN ids when
/// they key flows), the same for both directions, for spreading flows over workers.
/// `None` for packets without a flow.
///
/// Every flow between two hosts gets the same hash, as Suricata's `ippair` scheduler
/// places them: state such flows share (an FTP data channel announced on the control
/// channel, `xbits` on the pair) is then in one worker, seen in packet order.
pub fn flow_hash(p: &Packet, vlan_tracking: bool) -> Option<u64> {
    // An ICMP error goes where the flow it is about is.
    let key = match quoted_flow(p, vlan_tracking) {
        Some((key, _)) => key,
        None => key_of(p, vlan_tracking)?.0,
    };
    let word = |ip: IpAddr| match ip {
        IpAddr::V4(a) => u64::from(u32::from(a)),
        IpAddr::V6(a) => {
            let a = u128::from(a);
            (a as u64) ^ ((a >> 64) as u64).rotate_left(21)
        }
    };
    // The key orders its ends by address first. (Two IPv4 addresses fill the word
    // side by side.)
    let vlan = key.vlan.iter().fold(0u64, |h, &v| h << 16 | u64::from(v));
    let h = word(key.lo.0) ^ word(key.hi.0).rotate_left(32) ^ vlan.rotate_left(48);
    Some(mix(h))
}

/// MurmurHash3's 64-bit finalizer: a bijection after which every bit of the output
/// depends on every bit of the input.
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The flow an ICMPv4 error (unreachable, source quench, redirect, time exceeded,
/// parameter problem) is about: the key of the TCP or UDP packet it quotes, and that
/// packet's sender.
fn quoted_flow(p: &Packet, vlan_tracking: bool) -> Option<(Key, (IpAddr, u16))> {
    let L4::Icmp {
        v6: false, itype, ..
    } = p.l4
    else {
        return None;
    };
    if !matches!(itype, 3 | 4 | 5 | 11 | 12) {
        return None;
    }
    let q = p.payload();
    let vihl = *q.first()?;
    let ihl = usize::from(vihl & 0x0f) * 4;
    if vihl >> 4 != 4 || ihl < 20 || q.len() < ihl + 4 || !matches!(q[9], 6 | 17) {
        return None;
    }
    let ip4 = |at: usize| IpAddr::from([q[at], q[at + 1], q[at + 2], q[at + 3]]);
    let port = |at: usize| u16::from_be_bytes([q[at], q[at + 1]]);
    let sender = (ip4(12), port(ihl));
    let receiver = (ip4(16), port(ihl + 2));
    let (lo, hi) = if sender <= receiver {
        (sender, receiver)
    } else {
        (receiver, sender)
    };
    let key = Key {
        lo,
        hi,
        proto: q[9],
        vlan: vlans(p, vlan_tracking),
    };
    Some((key, sender))
}

/// FNV-1a, 64 bits: a hash with a fixed definition (Rust does not promise to keep
/// `DefaultHasher`'s output, and flow ids are written to EVE).
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
}

impl Key {
    /// The key's fields in a fixed layout: each address as 16 bytes (IPv4 mapped into
    /// IPv6) then its port, big-endian; the protocol; the VLAN ids.
    fn fnv(&self) -> Fnv {
        let mut h = Fnv::new();
        for (ip, port) in [self.lo, self.hi] {
            let a = match ip {
                IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
                IpAddr::V6(a) => a.octets(),
            };
            h.bytes(&a);
            h.bytes(&port.to_be_bytes());
        }
        h.bytes(&[self.proto]);
        // Two VLAN ids always, a third when there is one: the ids of flows with up to
        // two tags stay as they were defined when packets kept two.
        for v in &self.vlan[..2] {
            h.bytes(&v.to_be_bytes());
        }
        if let Some(&v) = self.vlan.get(2).filter(|&&v| v != 0) {
            h.bytes(&v.to_be_bytes());
        }
        h
    }
}

/// A flow's id (EVE's `flow_id`): the hash of its key and first packet's time, kept
/// below 2^53 so that JSON readers that hold numbers as doubles (jq, JavaScript) read it
/// exactly, as Suricata keeps it.
fn flow_id(key: &Key, first: Duration) -> u64 {
    let mut h = key.fnv();
    h.bytes(&first.as_nanos().to_le_bytes());
    h.0 & ((1 << 53) - 1)
}

/// A new flow's streams, each reassembled as its receiver would.
fn new_streams(config: &FlowConfig, client: IpAddr, server: IpAddr) -> PerDir<Reassembler> {
    let depth = if config.depth == 0 {
        u64::MAX
    } else {
        config.depth
    };
    let stream = |receiver: IpAddr| {
        let policy = config.policy_for(receiver);
        Reassembler::with(depth, policy, config.max_pending)
    };
    PerDir::new(stream(server), stream(client))
}

/// The VLAN ids a flow key holds: the packet's, or none when VLANs are not tracked.
fn vlans(p: &Packet, tracking: bool) -> [u16; crate::VLAN_LAYERS] {
    if tracking {
        p.vlan
    } else {
        [0; crate::VLAN_LAYERS]
    }
}

fn key_of(p: &Packet, vlan_tracking: bool) -> Option<(Key, bool)> {
    let ip = p.ip.as_ref()?;
    // A fragment waits for its datagram; a packet the decoder gave up on has no flow
    // (as in Suricata: its transport header cannot be trusted).
    if ip.fragment || p.error.is_some() {
        return None;
    }
    // Flows of the protocols Suricata tracks (IP-in-IP and IPv6-in-IP tunnels' outer
    // packets too); another protocol's packets (IGMP, GRE, ...) stand alone, each
    // inspected on its own (measured: Suricata 8 writes no flow record for them and
    // alerts on each of their packets).
    use netsieve_wire::ip_proto::{ESP, ICMP, ICMPV6, IPIP, IPV6, SCTP, TCP, UDP};
    if !matches!(
        ip.proto,
        TCP | UDP | ICMP | ICMPV6 | SCTP | ESP | IPIP | IPV6
    ) {
        return None;
    }
    let (sp, dp) = p.l4.ports();
    let a = (ip.src, sp);
    let b = (ip.dst, dp);
    let fwd = a <= b;
    let (lo, hi) = if fwd { (a, b) } else { (b, a) };
    Some((
        Key {
            lo,
            hi,
            proto: ip.proto,
            vlan: vlans(p, vlan_tracking),
        },
        fwd,
    ))
}

/// The flow under `key`, whose hash is `h`, in `flows`.
fn find_mut<'a, T>(
    flows: &'a mut hashbrown::HashTable<(Key, Box<Flow<T>>)>,
    h: u64,
    key: &Key,
) -> Option<&'a mut Flow<T>> {
    flows.find_mut(h, |(k, _)| k == key).map(|(_, f)| &mut **f)
}

impl<T: Default> FlowTable<T> {
    pub fn new(config: FlowConfig) -> FlowTable<T> {
        FlowTable {
            flows: hashbrown::HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
            config,
            stats: FlowStats::default(),
            held: 0,
            tcp: 0,
            retired: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// Counters of the table's life so far.
    pub fn stats(&self) -> &FlowStats {
        &self.stats
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Bytes of stream data held by all flows.
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    /// An ICMPv4 error about a TCP or UDP packet belongs to that packet's flow: it
    /// counts there, toward the quoted packet's sender, as Suricata counts it, and makes
    /// no flow of its own (nor when the table does not hold that flow: where it is
    /// handled follows the quoted flow, not its own addresses).
    fn icmp_error_of_a_flow(&mut self, p: &Packet) -> bool {
        let Some((key, sender)) = quoted_flow(p, self.config.vlan_tracking) else {
            return false;
        };
        let h = self.hasher.hash_one(key);
        let Some(f) = find_mut(&mut self.flows, h, &key) else {
            return true;
        };
        let dir = if sender == f.client {
            Direction::ToClient
        } else {
            Direction::ToServer
        };
        f.pkts[dir] += 1;
        f.bytes[dir] += u64::from(p.wire_len);
        f.see_ttl(dir, p);
        true
    }

    /// Adds a flow for the packet's key, which is not in the table, making room first
    /// when the table is full.
    fn start_flow(&mut self, h: u64, key: Key, p: &Packet, ip: crate::decode::Ip, now: Duration) {
        let tcp = ip.proto == 6;
        if self.flows.len() >= self.config.max_flows
            || (tcp && self.tcp >= self.config.max_tcp_sessions)
        {
            self.make_room(now, None, Pressure::Count);
        }
        let (sport, dport) = p.l4.ports();
        let mut client = (ip.src, sport);
        let mut server = (ip.dst, dport);
        let mut state = TcpState::None;
        let mut tracked = false;
        if let L4::Tcp(t) = p.l4 {
            let syn = t.flags & F::SYN != 0;
            let ack = t.flags & F::ACK != 0;
            if syn && !ack {
                state = TcpState::SynSent;
                tracked = true;
            } else if self.config.midstream && t.flags & F::RST == 0 {
                tracked = true;
                if syn && ack {
                    // A SYN/ACK comes from the server.
                    std::mem::swap(&mut client, &mut server);
                    state = TcpState::SynRecv;
                } else {
                    state = TcpState::Established;
                }
            }
        }
        let streams = new_streams(&self.config, client.0, server.0);
        let flow = Box::new(Flow {
            id: flow_id(&key, now),
            client,
            server,
            proto: ip.proto,
            first_packet: p.num,
            start: now,
            last: now,
            state,
            tracked,
            synack: (state == TcpState::SynRecv).then_some(Direction::ToClient),
            server_syn: false,
            // A session picked up midstream may stay one-sided.
            one_sided: tracked && state == TcpState::Established && self.config.async_oneside,
            first_fin: None,
            reset_by: None,
            depth_reached: PerDir::default(),
            syns: Vec::new(),
            syn_ts: SynTimestamps::Unseen,
            pkts: PerDir::default(),
            bytes: PerDir::default(),
            ttl: PerDir::splat([u8::MAX, 0]),
            tcp_flags: PerDir::default(),
            end: EndReason::Shutdown,
            streams,
            user: T::default(),
        });
        let hasher = &self.hasher;
        self.flows
            .insert_unique(h, (key, flow), |(k, _)| hasher.hash_one(k));
        self.stats.created += 1;
        match ip.proto {
            6 => self.stats.tcp += 1,
            17 => self.stats.udp += 1,
            1 => self.stats.icmpv4 += 1,
            58 => self.stats.icmpv6 += 1,
            _ => {}
        }
        self.tcp += usize::from(tcp);
        self.stats.tcp_sessions += u64::from(tracked);
    }

    /// Finds or creates the packet's flow and updates its state. `None` for packets
    /// without a flow (not IP, or an unreassembled fragment). `track_stream` false keeps
    /// the TCP payload out of reassembly (a packet with a bad checksum).
    pub fn packet(&mut self, p: &Packet, track_stream: bool) -> Option<(&mut Flow<T>, Observed)> {
        if self.icmp_error_of_a_flow(p) {
            return None;
        }
        let (key, _) = key_of(p, self.config.vlan_tracking)?;
        let ip = p.ip?;
        let now = p.ts;
        // A packet of a live flow looks its key up twice, with one hash: to update the
        // flow, and (as the table may change in between) to return it. A new flow, or
        // one idle past its timeout, needs one more lookup after the table changed.
        let h = self.hasher.hash_one(key);
        let mut found = find_mut(&mut self.flows, h, &key);
        let expired = found
            .as_ref()
            .is_some_and(|f| self.config.idle_past_timeout(f, now));
        let new_flow = found.is_none() || expired;
        if new_flow {
            // A flow idle past its timeout is over; a new one starts.
            if expired {
                self.remove(&key, EndReason::Timeout);
                self.stats.expired += 1;
            }
            self.start_flow(h, key, p, ip, now);
            found = find_mut(&mut self.flows, h, &key);
        }
        let f = found.expect("present");
        let (sport, _) = p.l4.ports();
        let dir = if (ip.src, sport) == f.client {
            Direction::ToServer
        } else {
            Direction::ToClient
        };
        // The other side spoke: the session is not one-sided after all.
        if dir == Direction::ToClient {
            f.one_sided = false;
        }
        f.last = now;
        f.pkts[dir] += 1;
        f.bytes[dir] += p.wire_len as u64;
        f.see_ttl(dir, p);
        if let L4::Tcp(t) = p.l4 {
            f.tcp_flags[dir] |= t.flags;
            let st = &mut self.stats;
            match (t.flags & F::SYN != 0, t.flags & F::ACK != 0) {
                (true, false) => st.tcp_syn += 1,
                (true, true) => st.tcp_synack += 1,
                _ => {}
            }
            st.tcp_rst += u64::from(t.flags & F::RST != 0);
        }
        let mut stream = 0..0;
        let mut other = 0..0;
        let mut added = false;
        let mut seg = 0..0;
        let mut normalized = None;
        let held_before = f.held_bytes();
        // `flow:established` sees the state before this packet: the ACK that completes
        // the handshake is not yet established (Suricata sets the packet's flow flags
        // before its stream engine runs), unless it carries data (measured: a request
        // on the handshake's last ACK is established for Suricata 8, a bare ACK not).
        let mut established = f.established();
        let mut reused = false;
        let mut events = Vec::new();
        // A segment whose timestamps its receiver would refuse is left out of the
        // session: it changes no state and adds nothing to the streams.
        let refused = match p.l4 {
            L4::Tcp(t) if f.tracked => !timestamps_acceptable(f, dir, t),
            _ => false,
        };
        if refused {
            events.push(StreamEvent::PktInvalidTimestamp);
        }
        if let L4::Tcp(t) = p.l4
            && f.tracked
            && !refused
        {
            let d = dir;
            let o = dir.reverse();
            let syn = t.flags & F::SYN != 0;
            let ack = t.flags & F::ACK != 0;
            // Closed -> SynSent: the client opens a new session on the same ports after
            // the last one was reset. The flow goes on (its counters too); its streams
            // start over, as Suricata's do on session reuse.
            if f.state == TcpState::Closed && syn && !ack && dir == Direction::ToServer {
                f.state = TcpState::SynSent;
                f.synack = None;
                f.server_syn = false;
                f.one_sided = false;
                f.first_fin = None;
                f.reset_by = None;
                f.depth_reached = PerDir::default();
                f.syns = Vec::new();
                f.syn_ts = SynTimestamps::Unseen;
                f.streams = new_streams(&self.config, f.client.0, f.server.0);
                reused = true;
            }
            // Closed -> the state the RST found: the side that sent the RST goes on
            // sending new data as if it had not (Suricata's suspected RST injection; a
            // retransmission of what came before is no sign).
            if let Some((by, before)) = f.reset_by
                && f.state == TcpState::Closed
                && by == dir
                && t.flags & (F::RST | F::SYN) == 0
                && !p.payload().is_empty()
                && f.streams[d].span(t.seq, p.payload().len()).end > f.streams[d].offset()
            {
                f.state = before;
                f.reset_by = None;
                events.push(StreamEvent::SuspectedRstInject);
            }
            if f.state == TcpState::SynSent {
                events.extend(queue_syn(f, dir, t));
                if dir == Direction::ToServer && syn && !ack {
                    f.syn_ts = f.syn_ts.with(t.timestamp);
                }
            }
            match (f.state, dir) {
                (TcpState::SynSent, Direction::ToClient) if syn && ack => {
                    f.state = TcpState::SynRecv;
                    f.synack = Some(dir);
                }
                (TcpState::SynSent, Direction::ToClient) if syn => f.server_syn = true,
                (TcpState::SynSent, Direction::ToServer) if syn && ack && f.server_syn => {
                    f.state = TcpState::SynRecv;
                    f.synack = Some(dir);
                }
                (TcpState::SynRecv, _) if ack && !syn && f.synack != Some(dir) => {
                    f.state = TcpState::Established;
                    established |= !p.payload().is_empty();
                }
                // SynSent -> Established with async-oneside: the client's ACK, the
                // server's SYN/ACK never seen.
                (TcpState::SynSent, Direction::ToServer)
                    if ack && !syn && !f.server_syn && self.config.async_oneside =>
                {
                    f.state = TcpState::Established;
                    f.one_sided = true;
                    established |= !p.payload().is_empty();
                }
                _ => {}
            }
            if t.flags & F::FIN != 0 && f.first_fin.is_none() {
                f.first_fin = Some(dir);
            }
            // SynSent keeps on a RST from the client: only the server's answer to the
            // SYN can reset it (measured on Suricata 8: a client's RST after its SYN,
            // whatever its sequence and acknowledgement numbers, leaves the session
            // waiting for the SYN/ACK, and bug-3286's session goes on after one).
            let ignored_rst = f.state == TcpState::SynSent && dir == Direction::ToServer;
            if t.flags & F::RST != 0 && ignored_rst {
            } else if t.flags & F::RST != 0 {
                if f.state != TcpState::Closed {
                    f.reset_by = Some((dir, f.state));
                }
                f.state = TcpState::Closed;
            } else if t.flags & F::FIN != 0 && f.established() {
                f.state = TcpState::Closing;
            }
            if syn {
                f.streams[d].set_isn(t.seq);
            } else if f.streams[d].isn().is_none() {
                // Picked up midstream: this segment starts the stream.
                f.streams[d].set_isn(t.seq.wrapping_sub(1));
            }
            let payload = p.payload();
            // Data enters the stream once the connection is established; data in a broken
            // handshake stays out, and so does a SYN's, unless it is the client's first
            // SYN with a TCP Fast Open option: that data follows the SYN's sequence number
            // (and, in IDS mode, is passed on once the SYN/ACK acknowledges it).
            let fast_open = syn
                && !ack
                && t.fast_open
                && dir == Direction::ToServer
                && f.state == TcpState::SynSent;
            if track_stream && !payload.is_empty() && (fast_open || (!syn && f.established())) {
                let seq = if syn { t.seq.wrapping_add(1) } else { t.seq };
                added = !f.streams[d].at_depth();
                seg = f.streams[d].span(seq, payload.len());
                let depth = self.config.depth;
                // The segment reaches past the depth from within it, or the stream is
                // at its depth already (not a segment far out of the window).
                let past = seg.end > depth && (seg.start <= depth || !added);
                if depth > 0 && past && !f.depth_reached[d] {
                    f.depth_reached[d] = true;
                    events.push(StreamEvent::ReassemblyDepthReached);
                }
                if self.config.inline {
                    normalized = f.streams[d].held_view(seq, payload);
                }
                // The urgent byte the pointer names within the payload.
                let urgent = (t.flags & F::URG != 0 && self.config.urgent == UrgentPolicy::Oob)
                    .then_some(t.urgent as usize)
                    .filter(|&u| (1..=payload.len()).contains(&u));
                stream = match urgent {
                    Some(u) => {
                        normalized = None;
                        f.streams[d].insert_without(seq, payload, u - 1)
                    }
                    None => f.streams[d].insert(seq, payload),
                };
                // One side only: its data is acknowledged by nobody, so as it comes.
                if f.one_sided {
                    f.streams[d].acked(seq.wrapping_add(payload.len() as u32));
                }
            }
            if t.flags & F::FIN != 0 {
                f.streams[d].set_fin(t.seq, payload.len());
            }
            if ack {
                other = f.streams[o].acked(t.ack);
            }
        }
        let held_after = f.held_bytes();
        self.held = (self.held + held_after).saturating_sub(held_before);
        if self.held > self.config.stream_memcap {
            self.make_room(now, Some(key), Pressure::Memory);
        }
        let f = find_mut(&mut self.flows, h, &key)?;
        for &e in &events {
            if let Some(i) = StreamEvent::ALL.iter().position(|&x| x == e) {
                self.stats.stream_events[i] += 1;
            }
        }
        Some((
            f,
            Observed {
                dir,
                new_flow,
                established,
                stream,
                added,
                seg,
                normalized,
                other,
                reused,
                events,
            },
        ))
    }

    fn remove(&mut self, key: &Key, why: EndReason) {
        let h = self.hasher.hash_one(key);
        if let Ok(entry) = self.flows.find_entry(h, |(k, _)| k == key) {
            let ((_, f), _) = entry.remove();
            self.retire(f, why);
        }
    }

    /// A flow taken out of the table, counted out and kept for [`FlowTable::take_retired`].
    fn retire(&mut self, mut f: Box<Flow<T>>, why: EndReason) {
        f.end = why;
        self.held = self.held.saturating_sub(f.held_bytes());
        self.tcp -= usize::from(f.proto == 6);
        self.retired.push(f);
    }

    /// The flows that ended (idle past their timeout, or evicted to make room) since
    /// the last call, in the order they were created. Their owner finishes them (a
    /// final inspection of their streams) and drops them.
    pub fn take_retired(&mut self) -> Vec<Box<Flow<T>>> {
        let mut v = std::mem::take(&mut self.retired);
        v.sort_by_key(|f| (f.first_packet, f.id));
        v
    }

    /// Ends every flow (end of input): all flows, in the order they were created.
    pub fn drain(&mut self) -> Vec<Box<Flow<T>>> {
        let all: Vec<_> = self.flows.drain().collect();
        for (_, f) in all {
            self.retire(f, EndReason::Shutdown);
        }
        self.take_retired()
    }

    /// Drops flows idle past their timeout. Call it when a [`SweepClock`] says so; a
    /// full table also drops expired flows before it evicts live ones.
    pub fn sweep(&mut self, now: Duration) {
        let config = &self.config;
        let expired: Vec<_> = self
            .flows
            .extract_if(|(_, f)| config.idle_past_timeout(f, now))
            .collect();
        for (_, f) in expired {
            self.retire(f, EndReason::Timeout);
            self.stats.expired += 1;
        }
    }

    /// Drops expired flows, then, if the cap still holds, an eighth of the table (never
    /// `keep`): under [`Pressure::Count`] flows that are not established before
    /// established ones, under [`Pressure::Memory`] only flows holding stream data;
    /// least recently seen first either way.
    fn make_room(&mut self, now: Duration, keep: Option<Key>, pressure: Pressure) {
        self.sweep(now);
        let full = match pressure {
            Pressure::Count => {
                self.flows.len() >= self.config.max_flows
                    || self.tcp >= self.config.max_tcp_sessions
            }
            Pressure::Memory => self.held > self.config.stream_memcap,
        };
        if !full {
            return;
        }
        // (rank, last seen, first packet, id, key): the lowest go first; the packet and
        // id make the order total, so what goes does not depend on the table's layout.
        let mut ranked: Vec<(bool, Duration, u64, u64, Key)> = self
            .flows
            .iter()
            .filter(|(k, _)| Some(*k) != keep)
            .filter(|(_, f)| pressure == Pressure::Count || f.held_bytes() > 0)
            .map(|(k, f)| {
                let established = pressure == Pressure::Count && f.established();
                (established, f.last, f.first_packet, f.id, *k)
            })
            .collect();
        let n = (self.flows.len() / 8).max(1).min(ranked.len());
        if n == 0 {
            return;
        }
        ranked.select_nth_unstable_by_key(n - 1, |r| (r.0, r.1, r.2, r.3));
        for &(.., k) in &ranked[..n] {
            let h = self.hasher.hash_one(k);
            if find_mut(&mut self.flows, h, &k).is_some_and(|f| f.established()) {
                self.stats.evicted_established += 1;
            }
            self.remove(&k, EndReason::Forced);
            self.stats.evicted += 1;
        }
    }

    /// Visits every flow (for end-of-capture accounting).
    pub fn for_each(&self, mut f: impl FnMut(&Flow<T>)) {
        for (_, fl) in self.flows.iter() {
            f(fl);
        }
    }

    /// Visits every flow's user data (a rule reload rebases what detection keeps).
    pub fn for_each_user_mut(&mut self, mut f: impl FnMut(&mut T)) {
        for (_, fl) in self.flows.iter_mut() {
            f(&mut fl.user);
        }
    }
}
