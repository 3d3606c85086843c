//! The compiled rule set: one immutable value, built off the packet path and shared by
//! every worker (`Arc<RuleSet>`), so a reload can replace it whole.
//!
//! Rules are split by the transport they can apply to (TCP, UDP, ICMP, other IP; an
//! `ip` rule goes to all four), then by the direction of the packet in its flow (a
//! `flow:to_client` rule is only in the to-client half), then by the server's port: the
//! destination port to the server, the source port to the client, as Suricata groups
//! them ([`crate::portgroup`]). Each port group has one prefilter over its rules' *fast
//! patterns* (one content per rule: the one marked `fast_pattern`, else the one least
//! likely in traffic, looked for from its rarest head on; see `fast_pattern`) and a list
//! of its rules without one. IP-only rules (addresses and nothing else) are indexed by
//! their narrower address list when it is narrow (see [`crate::addrindex`]) and looked
//! up only on the first packet of each direction of a flow. A prefilter hit puts the
//! rule on the candidate list; only candidates get their full option chain evaluated.

use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;
use std::borrow::Borrow;

use netsieve_rules::{
    Action, AddrExpr, AppBuffer, AppNeed, Buffer, Classifications, Cmp, Cond, FlowOpts, FlowbitCmd,
    FlowintOp, FlowintVal, FrameType, HeaderBuffer, Match, PacketHook, Proto, Rule, Transform,
};

use netsieve_applayer::AppProto;
use netsieve_packet::{Direction, L4, PerDir};

use crate::addrindex::{AddrIndex, AddrSet};
use crate::app::{Buf, Side, Stage, Xform, proto_by_name};
use crate::eval::{CMatch, ListError, attach_base64_data, compile_list};
use crate::portgroup::{PortGroups, PortSet, Ports, dest_ports};
use crate::rarity::rarity;

/// Which multi-pattern matcher runs the prefilter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mpm {
    Dfc,
    /// The `aho-corasick` crate, to measure the matcher's share in place.
    Ac,
}

/// A prefilter over one port group's fast patterns (at most 32 per protocol).
#[allow(clippy::large_enum_variant)]
pub enum Prefilter {
    None,
    Dfc(dfc::Matcher),
    Ac(aho_corasick::AhoCorasick),
}

impl Prefilter {
    /// Calls `f` with the pattern id of every occurrence in `hay`.
    pub fn scan(&self, hay: &[u8], mut f: impl FnMut(u32)) {
        match self {
            Prefilter::None => {}
            Prefilter::Dfc(m) => m.for_each_match(hay, |x| f(x.pattern)),
            Prefilter::Ac(ac) => {
                for m in ac.find_overlapping_iter(hay) {
                    f(m.pattern().as_u32());
                }
            }
        }
    }

    pub fn heap_bytes(&self) -> usize {
        match self {
            Prefilter::None => 0,
            Prefilter::Dfc(m) => m.heap_bytes(),
            Prefilter::Ac(ac) => ac.memory_usage(),
        }
    }

    /// The longest pattern: how much stream history an overlap re-scan needs.
    pub fn max_len(&self) -> usize {
        match self {
            Prefilter::None => 0,
            Prefilter::Dfc(m) => m.max_pattern_len(),
            Prefilter::Ac(ac) => ac.max_pattern_len(),
        }
    }
}

/// The transport groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupId {
    Tcp = 0,
    Udp = 1,
    Icmp = 2,
    Other = 3,
}

impl GroupId {
    /// The group of a packet; one whose transport header did not decode goes by its IP
    /// protocol (rules on its decoder events).
    pub fn of(l4: L4, proto: u8) -> GroupId {
        match (l4, proto) {
            (L4::Tcp(_), _) | (L4::None, 6) => GroupId::Tcp,
            (L4::Udp { .. }, _) | (L4::None, 17) => GroupId::Udp,
            (L4::Icmp { .. }, _) => GroupId::Icmp,
            (L4::None | L4::Sctp { .. }, _) => GroupId::Other,
        }
    }
}

/// One prefilter and the rules behind its patterns.
#[derive(Clone)]
pub struct Prefiltered {
    /// Shared with the set this one replaced when its patterns are the same.
    pub prefilter: Arc<Prefilter>,
    /// A hash of its patterns in id order: how a rebuild finds it ([`Reuse`]).
    key: u64,
    /// Pattern id to the rules that use it as their fast pattern.
    pub pattern_sigs: Arc<RuleLists>,
    /// The fast patterns of rules added since the set was built ([`RuleSet::edit`]),
    /// in a second, small prefilter; the next full build folds them in.
    pub extra: Option<Arc<Extra>>,
}

/// Patterns added to a prefilter after it was built, with their own prefilter: a hit on
/// its pattern `k` is a hit on id `pattern_sigs.len() + k` of the [`Prefiltered`].
pub struct Extra {
    pub prefilter: Prefilter,
    pats: Vec<(Vec<u8>, bool)>,
    pub pattern_sigs: Vec<Vec<u32>>,
}

impl Prefiltered {
    /// Pattern ids, the added ones included.
    pub fn ids(&self) -> usize {
        self.pattern_sigs.len() + self.extra.as_ref().map_or(0, |x| x.pattern_sigs.len())
    }

    /// This prefilter with rule `rule`'s fast pattern `fp` added to its extra patterns;
    /// `built` shares the extra prefilters made in one edit between the groups whose
    /// extra patterns are the same.
    fn with_pattern(
        &self,
        fp: &(Vec<u8>, bool),
        rule: u32,
        built: &mut HashMap<Vec<(Vec<u8>, bool)>, Arc<Extra>>,
        mpm: Mpm,
    ) -> Prefiltered {
        let (mut pats, mut sigs) = match &self.extra {
            Some(x) => (x.pats.clone(), x.pattern_sigs.clone()),
            None => (Vec::new(), Vec::new()),
        };
        match pats.iter().position(|p| p == fp) {
            Some(k) => sigs[k].push(rule),
            None => {
                pats.push(fp.clone());
                sigs.push(vec![rule]);
            }
        }
        let extra = match built.get(&pats) {
            Some(x) if x.pattern_sigs == sigs => Arc::clone(x),
            _ => {
                let x = Arc::new(Extra {
                    prefilter: build_prefilter(&pats, mpm),
                    pats: pats.clone(),
                    pattern_sigs: sigs,
                });
                built.insert(pats, Arc::clone(&x));
                x
            }
        };
        Prefiltered {
            extra: Some(extra),
            ..self.clone()
        }
    }
}

/// One transport's rules (TCP, UDP, ICMP or other IP), arranged so that a packet finds
/// its candidates with a few lookups.
#[derive(Clone)]
pub struct Group {
    /// Per direction of the packet in its flow: the rules that can see that direction,
    /// in port groups keyed by the server's port (see [`crate::portgroup`]).
    dirs: PerDir<PortIndexed>,
    /// Which side of the address space a packet's client is on: each port group is
    /// built once per side ([`Zones`]).
    zones: Zones,
    /// IP-only rules (addresses and nothing else), judged on the first packet of each
    /// direction of a flow: indexed by a narrow address list where they have one.
    pub(crate) ip_only: Arc<AddrRules>,
}

/// One direction's rules in port groups.
#[derive(Clone)]
struct PortIndexed {
    /// Per port group, its rules for a client outside and inside [`Zones`]' list.
    ports: Vec<[PortGroup; 2]>,
    port_map: Arc<PortGroups>,
}

/// The cut of the address space that splits a group's port groups in two, by where the
/// packet's client is: inside or outside the address list its rules name most
/// (`$HOME_NET`, or `$EXTERNAL_NET`, for a usual rule set). A rule whose client side
/// (its source to the server, its destination to the client) lies wholly on one side is
/// left out of the other side's port groups: its fast pattern does not make it a
/// candidate where its addresses cannot match. On ET Open 2024 over the nDPI captures
/// that halves the candidates per packet (most failed their address check). Suricata
/// groups by addresses too (its signature group heads are per address range as well as
/// per port).
#[derive(Clone, Default)]
struct Zones {
    /// The list; none when the rules name no list that cuts the address space.
    home: Option<Arc<AddrSet>>,
}

impl Zones {
    /// The list named most by the address sides of `rules` that cuts the address space
    /// (neither empty nor everything).
    fn choose(sigs: &[Arc<Sig>], rules: &[u32]) -> Zones {
        let mut uses: HashMap<*const AddrSet, (usize, &Arc<AddrSet>)> = HashMap::new();
        for &r in rules {
            let s = &sigs[r as usize];
            for a in [&s.src, &s.dst] {
                uses.entry(Arc::as_ptr(a)).or_insert((0, a)).0 += 1;
            }
        }
        let mut named: Vec<(usize, &Arc<AddrSet>)> = uses.into_values().collect();
        named.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.v4.cmp(&b.1.v4)));
        let home = named
            .into_iter()
            .map(|(_, a)| a)
            .find(|a| !a.is_empty() && AddrSet::all().leaves(a))
            .cloned();
        Zones { home }
    }

    /// The side of `client`: 1 inside the list, 0 outside (always 0 without a list).
    #[inline]
    fn of(&self, client: std::net::IpAddr) -> usize {
        self.home
            .as_ref()
            .map_or(0, |h| usize::from(h.contains(client)))
    }

    /// The sides whose packets of direction `d` rule `s` can match, by its addresses.
    fn admits(&self, s: &Sig, d: Direction) -> [bool; 2] {
        self.admits_with(s, d, &mut |a| self.sides(a))
    }

    /// [`Zones::admits`], with the sides of an address list from `sides`.
    fn admits_with(
        &self,
        s: &Sig,
        d: Direction,
        sides: &mut dyn FnMut(&Arc<AddrSet>) -> [bool; 2],
    ) -> [bool; 2] {
        if self.home.is_none() {
            return [true, true];
        }
        let (client, server) = match d {
            Direction::ToServer => (&s.src, &s.dst),
            Direction::ToClient => (&s.dst, &s.src),
        };
        let [out, inside] = sides(client);
        if !s.rule.bidirectional {
            return [out, inside];
        }
        // Either way round: the server side may hold the client.
        let [o2, i2] = sides(server);
        [out || o2, inside || i2]
    }

    /// Which sides address list `a` reaches: [outside, inside].
    fn sides(&self, a: &AddrSet) -> [bool; 2] {
        self.home
            .as_ref()
            .map_or([true, true], |h| [a.leaves(h), a.meets(h)])
    }

    /// Per rule of `rules` (by index into `sigs`, others `[true, true]`), the sides
    /// [`Zones::admits`] for direction `d`; each distinct address list is cut once.
    fn admitted(&self, sigs: &[Arc<Sig>], rules: &[u32], d: Direction) -> Vec<[bool; 2]> {
        let mut out = vec![[true, true]; sigs.len()];
        if self.home.is_none() {
            return out;
        }
        let mut cut: HashMap<*const AddrSet, [bool; 2]> = HashMap::new();
        let mut sides =
            |a: &Arc<AddrSet>| *cut.entry(Arc::as_ptr(a)).or_insert_with(|| self.sides(a));
        for &r in rules {
            out[r as usize] = self.admits_with(&sigs[r as usize], d, &mut sides);
        }
        out
    }

    /// Port group `pg` per side, each proposing only the rules its side admits
    /// (`admitted`, from [`Zones::admitted`]). The two share their prefilters: a
    /// prefilter per side was measured 2.5% faster again but took 18 MB more on ET Open
    /// 2024 (a prefilter's size barely shrinks with half its patterns).
    fn split(&self, admitted: &[[bool; 2]], pg: PortGroup) -> [PortGroup; 2] {
        if self.home.is_none() {
            return [pg.clone(), pg];
        }
        [0, 1].map(|z| pg.keep(|r| admitted[r as usize][z]))
    }
}

/// The rules of one port group, with a prefilter per place a rule's fast pattern can be
/// looked for (each rule's [`Scope`] says which).
#[derive(Clone)]
pub struct PortGroup {
    /// Over a packet's payload: the rules that judge it even when its bytes went into a
    /// stream (for UDP, ICMP and other IP: every rule that judges packets).
    pub(crate) packet: Prefiltered,
    /// Over a TCP payload that did not go into a stream: every rule that judges packets
    /// (those of `packet`, and those that otherwise judge the stream).
    pub(crate) unstreamed: Prefiltered,
    /// Over the stream (TCP only): the rules that judge streams. Its patterns include
    /// those of `packet`, so that a payload that is the stream's next bytes is searched
    /// once for both ([`crate::engine`]'s `StreamScan`).
    pub(crate) stream: Prefiltered,
    /// Per pattern of `stream`: the rules of `packet` whose fast pattern it is.
    pub(crate) stream_packet: Arc<RuleLists>,
    /// Its rules without a fast pattern, in evaluation order: candidates for every
    /// packet of the group.
    pub(crate) always: Vec<u32>,
    /// Its rules proposed by payload length ([`PacketKey::Dsize`]).
    pub(crate) by_dsize: BySize,
}

/// Rules by the one payload length they judge: (length, rule), sorted by length.
#[derive(Clone, Debug, Default)]
pub(crate) struct BySize(Vec<(u16, u32)>);

impl BySize {
    fn new(mut v: Vec<(u16, u32)>) -> BySize {
        v.sort_unstable();
        BySize(v)
    }

    fn insert(&mut self, len: u16, rule: u32) {
        let at = self.0.partition_point(|&x| x < (len, rule));
        self.0.insert(at, (len, rule));
    }

    /// The rules that judge payloads of `len` bytes.
    pub(crate) fn of(&self, len: usize) -> impl Iterator<Item = u32> + '_ {
        let len = u16::try_from(len).unwrap_or(u16::MAX);
        let from = self.0.partition_point(|&(n, _)| n < len);
        (self.0[from..].iter())
            .take_while(move |&&(n, _)| n == len)
            .map(|&(_, r)| r)
    }

    fn heap_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<(u16, u32)>()
    }
}

/// Per pattern id, the rules that use it, one list after another in one vector: a port
/// group's lists are many and short, and a vector each took more memory than the rules
/// they hold.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RuleLists {
    /// List `i` is `rules[offs[i]..offs[i + 1]]`.
    offs: Vec<u32>,
    rules: Vec<u32>,
}

impl RuleLists {
    pub fn len(&self) -> usize {
        self.offs.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u32]> {
        (0..self.len()).map(|i| &self[i])
    }
}

impl RuleLists {
    /// The lists of ids `0..n` from `(id, rule)` pairs, each list's rules in the order
    /// of the pairs: counted, then placed, with no vector per list.
    fn by_id(n: usize, pairs: &[(u32, u32)]) -> RuleLists {
        let mut offs = vec![0u32; n + 1];
        for &(id, _) in pairs {
            offs[id as usize + 1] += 1;
        }
        for i in 0..n {
            offs[i + 1] += offs[i];
        }
        let mut next: Vec<u32> = offs[..n].to_vec();
        let mut rules = vec![0u32; pairs.len()];
        for &(id, r) in pairs {
            let at = &mut next[id as usize];
            rules[*at as usize] = r;
            *at += 1;
        }
        RuleLists { offs, rules }
    }
}

impl<L: AsRef<[u32]>> FromIterator<L> for RuleLists {
    fn from_iter<I: IntoIterator<Item = L>>(lists: I) -> RuleLists {
        let mut out = RuleLists {
            offs: vec![0],
            rules: Vec::new(),
        };
        for l in lists {
            out.rules.extend_from_slice(l.as_ref());
            out.offs.push(out.rules.len() as u32);
        }
        out.offs.shrink_to_fit();
        out.rules.shrink_to_fit();
        out
    }
}

impl std::ops::Index<usize> for RuleLists {
    type Output = [u32];

    fn index(&self, i: usize) -> &[u32] {
        &self.rules[self.offs[i] as usize..self.offs[i + 1] as usize]
    }
}

impl PortGroup {
    /// The port group proposing only the rules `keep` says yes to.
    fn keep(&self, mut keep: impl FnMut(u32) -> bool) -> PortGroup {
        let mut lists = |lists: &RuleLists| -> RuleLists {
            lists
                .iter()
                .map(|rules| {
                    rules
                        .iter()
                        .copied()
                        .filter(|&r| keep(r))
                        .collect::<Vec<u32>>()
                })
                .collect()
        };
        let mut prefiltered = |pf: &Prefiltered| Prefiltered {
            pattern_sigs: Arc::new(lists(&pf.pattern_sigs)),
            ..pf.clone()
        };
        let (packet, unstreamed, stream) = (
            prefiltered(&self.packet),
            prefiltered(&self.unstreamed),
            prefiltered(&self.stream),
        );
        let stream_packet = Arc::new(lists(&self.stream_packet));
        let always = self.always.iter().copied().filter(|&r| keep(r)).collect();
        let by_dsize = BySize(
            self.by_dsize
                .0
                .iter()
                .copied()
                .filter(|&(_, r)| keep(r))
                .collect(),
        );
        PortGroup {
            packet,
            unstreamed,
            stream,
            stream_packet,
            always,
            by_dsize,
        }
    }
}

/// Rules found by the packet's addresses.
#[derive(Default)]
pub struct AddrRules {
    /// Rules without a narrow address list, in evaluation order.
    pub(crate) always: Vec<u32>,
    /// Rules indexed by a narrow address list, looked up with the packet's source.
    pub(crate) by_src: AddrIndex,
    /// The same, looked up with the packet's destination.
    pub(crate) by_dst: AddrIndex,
}

impl AddrRules {
    fn build(sigs: &[Arc<Sig>], ids: &[u32]) -> AddrRules {
        let mut always = Vec::new();
        let mut src_keyed: Vec<(u32, AddrSet)> = Vec::new();
        let mut dst_keyed: Vec<(u32, AddrSet)> = Vec::new();
        for &i in ids {
            let s = &sigs[i as usize];
            // Index by the narrower of the two address lists; a bidirectional rule
            // can see its list on either packet address.
            let side = |a: &Arc<AddrSet>| Some(AddrSet::clone(a)).filter(AddrSet::narrow);
            let pick = match (side(&s.src), side(&s.dst)) {
                (Some(a), Some(b)) if b.size() < a.size() => Some((b, false)),
                (Some(a), _) => Some((a, true)),
                (None, Some(b)) => Some((b, false)),
                (None, None) => None,
            };
            match pick {
                Some((iv, is_src)) => {
                    if is_src || s.rule.bidirectional {
                        src_keyed.push((i, iv.clone()));
                    }
                    if !is_src || s.rule.bidirectional {
                        dst_keyed.push((i, iv));
                    }
                }
                None => always.push(i),
            }
        }
        AddrRules {
            always,
            by_src: AddrIndex::build(src_keyed.iter().map(|(r, iv)| (*r, iv))),
            by_dst: AddrIndex::build(dst_keyed.iter().map(|(r, iv)| (*r, iv))),
        }
    }

    /// Appends the rules that can match addresses `src` to `dst`.
    pub(crate) fn lookup(&self, src: std::net::IpAddr, dst: std::net::IpAddr, out: &mut Vec<u32>) {
        out.extend_from_slice(&self.always);
        out.extend_from_slice(self.by_src.lookup(src));
        out.extend_from_slice(self.by_dst.lookup(dst));
    }

    fn heap_bytes(&self) -> usize {
        self.always.len() * 4 + self.by_src.heap_bytes() + self.by_dst.heap_bytes()
    }
}

/// Address sets compiled once per distinct expression: most rules of a set share a
/// few (`$HOME_NET`, `$EXTERNAL_NET`, ...). Filled by the threads that compile the
/// rules.
#[derive(Default)]
struct AddrSets(crate::once::OnceEach<netsieve_rules::AddrExpr, Arc<AddrSet>>);

impl AddrSets {
    fn of(&self, e: &netsieve_rules::AddrExpr) -> Arc<AddrSet> {
        self.0.get(e, || Arc::new(AddrSet::of(e)))
    }
}

/// Port lists compiled once per list and shared, as address sets are.
#[derive(Default)]
struct PortSets(crate::once::OnceEach<netsieve_rules::PortExpr, Arc<Ports>>);

impl PortSets {
    fn of(&self, e: &netsieve_rules::PortExpr) -> Arc<Ports> {
        self.0.get(e, || Arc::new(Ports::of(e)))
    }
}

/// What the threads compiling a build's rules share: the address sets, port lists and
/// pcres read so far.
#[derive(Default)]
struct Shared {
    addr_sets: AddrSets,
    port_sets: PortSets,
    regexes: crate::pcre::Regexes,
}

/// Which packets a rule's protocol admits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SigProto {
    Ip,
    Tcp,
    Udp,
    Icmp,
    Sctp,
}

/// Where a rule's payload keywords look, as Suricata 8 decides it (learnt by running it
/// on captures built for the purpose; ARCHITECTURE.md has the model).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope {
    /// The packet's own payload.
    pub packet: bool,
    /// The reassembled stream, when it is inspected.
    pub stream: bool,
    /// A TCP packet whose payload went into the stream is inspected on its own payload
    /// too (a packet keyword, a content with an absolute position, `stream_size`);
    /// otherwise a rule that may look at the stream looks only there.
    pub streamed_packet: bool,
}

impl Scope {
    fn of(rule: &Rule, app: Option<AppProto>) -> Scope {
        // Keywords about one packet's headers: the rule judges packets only
        // (Suricata's SIG_FLAG_REQUIRE_PACKET).
        let packet_keyword = rule.conds.iter().any(|c| {
            matches!(
                c,
                Cond::Dsize(_)
                    | Cond::Ttl(_)
                    | Cond::TcpMss(_)
                    | Cond::TcpWindow { .. }
                    | Cond::Icmpv6Mtu(_)
                    | Cond::Flags { .. }
                    | Cond::IpId(_)
                    | Cond::TcpSeq(_)
                    | Cond::TcpAck(_)
                    | Cond::IpProto { .. }
                    | Cond::IpOpts(_)
                    | Cond::SameIp
                    | Cond::FtpBounce
                    | Cond::Itype(_)
                    | Cond::VlanId { .. }
                    | Cond::VlanLayers(_)
                    | Cond::Icode(_)
                    | Cond::IcmpId(_)
                    | Cond::IcmpSeq(_)
                    | Cond::DecodeEvent(_)
                    | Cond::AppEvent(_)
                    | Cond::StreamEvent(_)
            )
        }) || rule
            .lists
            .iter()
            .any(|l| matches!(l.buffer, Buffer::Header(_)));
        let anchored = rule.payload_lists().any(|l| {
            l.matches.iter().any(|m| {
                matches!(m, Match::Content(c)
                    if c.offset.is_some() || c.depth.is_some() || c.startswith)
            })
        });
        let stream_size = rule
            .conds
            .iter()
            .any(|c| matches!(c, Cond::StreamSize { .. }));
        let packet_only = Scope {
            packet: true,
            stream: false,
            streamed_packet: true,
        };
        let f = &rule.flow;
        match &rule.proto {
            Proto::TcpPkt => packet_only,
            Proto::TcpStream => Scope {
                packet: false,
                stream: true,
                streamed_packet: false,
            },
            Proto::Udp | Proto::Icmp | Proto::Sctp => packet_only,
            Proto::App(_) if app.is_some_and(AppProto::over_udp) => packet_only,
            Proto::Tcp | Proto::Ip | Proto::App(_) => Scope {
                packet: !f.only_stream,
                stream: !f.no_stream && !packet_keyword,
                streamed_packet: packet_keyword || anchored || stream_size,
            },
        }
    }
}

/// One list of a transaction rule: matches over an application-layer buffer.
pub struct TxList {
    pub buf: Buf,
    pub transforms: Vec<Xform>,
    pub matches: Vec<CMatch>,
    /// What a transaction without the buffer gives (`absent`).
    pub absent: netsieve_rules::Absent,
}

/// How a rule inspects frames: the frame type, and its lists over each frame's bytes.
pub struct FrameSig {
    pub ty: FrameType,
    pub lists: Vec<(Vec<Xform>, Vec<CMatch>)>,
}

/// How a port group proposes a rule for a packet.
pub(crate) enum PacketKey<'a> {
    /// When the prefilter finds its fast pattern.
    Pattern(&'a (Vec<u8>, bool)),
    /// When the payload has the one length the rule judges (`dsize:N`). Such rules'
    /// fast patterns are mostly short and common (`|00 00|`, `|01 00 00 00|`): looked
    /// for, they cost every payload their hits; by length, only the payloads of that
    /// length are judged. (Measured: ET 2019's 458 such rules, 1-4% of the scan.)
    Dsize(u16),
    /// For every packet.
    Always,
}

impl Sig {
    /// How a port group proposes the rule for a packet.
    pub(crate) fn packet_key(&self) -> PacketKey<'_> {
        match (&self.fast, self.dsize) {
            (Some(_), Some(n)) if self.needs_payload => PacketKey::Dsize(n),
            (Some(fp), None) if self.needs_payload => PacketKey::Pattern(fp),
            _ => PacketKey::Always,
        }
    }

    /// The rule is judged on packets without an IP layer too (a frame the decoder could
    /// not take to its IP header, as Suricata judges its `pkthdr` rules): it tests
    /// decoder events and nothing else, on any address and port.
    pub fn judges_without_ip(&self) -> bool {
        let r = &self.rule;
        let everywhere = AddrSet::all();
        r.proto == Proto::Ip
            && self.app.is_none()
            && *self.src == everywhere
            && *self.dst == everywhere
            && r.sport.is_any()
            && r.dport.is_any()
            && self.lists.is_empty()
            && self.hdr_lists.is_empty()
            && self.flowbits.is_empty()
            && self.xbits.is_empty()
            && self.flowints.is_empty()
            && self.lua.is_empty()
            && !r.conds.is_empty()
            && r.conds.iter().all(|c| matches!(c, Cond::DecodeEvent(_)))
    }

    /// The rule needs flows parsed: it names a protocol, or judges payloads (which
    /// an encrypted flow stops offering, and only its parser tells when).
    pub fn needs_app_layer(&self) -> bool {
        self.app.is_some() || self.payload_rule
    }

    /// The rule inspects a JA3 or JA3S buffer.
    fn uses_ja3(&self) -> bool {
        use netsieve_rules::AppBuffer::{Ja3Hash, Ja3String, Ja3sHash, Ja3sString};
        self.tx.as_ref().is_some_and(|t| {
            t.lists
                .iter()
                .any(|l| matches!(l.buf.buffer(), Ja3Hash | Ja3String | Ja3sHash | Ja3sString))
        })
    }
}

/// How a rule inspects transactions.
pub struct TxSig {
    pub lists: Vec<TxList>,
    /// The directions it is inspected in.
    pub dirs: PerDir<bool>,
    /// Per direction, the transaction stage its buffers need (see [`crate::app`]).
    pub stage: PerDir<Stage>,
}

/// The transaction rules of one application protocol and direction, with a
/// prefilter per buffer.
#[derive(Clone, Default)]
pub struct TxGroup {
    /// Per buffer (or pair of twins), with the transforms its rules apply.
    pub scans: Vec<TxScan>,
    /// Rules without a fast pattern: candidates for every transaction.
    pub always: Vec<u32>,
}

/// One prefilter of a transaction group: over the bytes of a buffer, transformed as
/// its rules transform them.
#[derive(Clone)]
pub struct TxScan {
    /// The buffer, or two twins ([`Buf::twin`]): one prefilter holds both buffers'
    /// patterns, and bytes that both hold are searched once. (A pattern found in the
    /// other twin's bytes only makes a candidate that its rule then rejects.)
    pub bufs: Vec<Buf>,
    pub transforms: Vec<Xform>,
    pub prefilter: Prefiltered,
}

impl TxScan {
    /// Searches buffer `buf` (with the group's direction `d`): it is its own or its
    /// twin's.
    fn searches(&self, buf: &TxBuf, d: Direction) -> bool {
        self.transforms == buf.1
            && (self.bufs.contains(&buf.0) || buf.0.twin(d).is_some_and(|t| self.bufs.contains(&t)))
    }
}

/// The index of an application protocol's transaction groups.
pub fn tx_group(p: AppProto, dir: Direction) -> usize {
    let i = match p {
        AppProto::Http => 0,
        AppProto::Tls => 1,
        AppProto::Dns => 2,
        AppProto::Smtp => 3,
        AppProto::Ssh => 4,
        AppProto::Ftp => 5,
        AppProto::Pop3 => 6,
        AppProto::Imap => 7,
        AppProto::Smb => 8,
        AppProto::Dcerpc => 9,
        AppProto::FtpData => 10,
        AppProto::Sip => 11,
        AppProto::Mqtt => 12,
        AppProto::Krb5 => 13,
        AppProto::Snmp => 14,
        AppProto::Ntp => 15,
        AppProto::Http2 => 16,
        AppProto::Doh2 => 17,
        AppProto::WebSocket => 18,
        AppProto::Ldap => 19,
        AppProto::Tftp => 20,
    };
    i * 2 + dir.index()
}

/// A `flowint` operand, resolved: a number or a counter's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntVal {
    Num(u64),
    Var(u32),
}

/// A list over a packet header (`ip.src`, `tcp.hdr`): the header, its transforms and
/// the matches.
pub struct HdrList {
    pub buf: HeaderBuffer,
    pub transforms: Vec<Xform>,
    pub matches: Vec<CMatch>,
}

/// A rule's `lua` keyword: its script, whether its verdict is negated, and the rule's
/// byte variables the script reads (name, and index into the rule's variables).
#[derive(Clone, Debug)]
pub struct SigLua {
    pub script: Arc<crate::lua::Script>,
    pub negated: bool,
    pub bytevars: Vec<(String, u8)>,
}

/// A compiled rule.
pub struct Sig {
    /// The application protocol the flow must speak (`alert http`, or implied by an
    /// application-layer buffer).
    pub app: Option<AppProto>,
    /// The flow must speak `app` itself, not carry it inside another protocol.
    pub app_exact: bool,
    /// Transaction inspection, for rules with application-layer buffers (or an
    /// application protocol and nothing else to match).
    pub tx: Option<TxSig>,
    /// The rule as parsed, without its option lists: those are compiled (`lists`,
    /// `tx`) and the parsed form is dropped at load (a quarter of a large rule set's
    /// memory).
    pub rule: Rule,
    /// The content the packet and stream prefilters look for, if any.
    fast: Option<(Vec<u8>, bool)>,
    /// The buffer and content the transaction prefilter looks for, if any.
    tx_fast: Option<(TxBuf, (Vec<u8>, bool))>,
    /// The rule's address lists, compiled (shared between the rules that write the same
    /// list: most use `$HOME_NET` or `$EXTERNAL_NET`).
    pub src: Arc<AddrSet>,
    pub dst: Arc<AddrSet>,
    /// The rule's port lists, compiled for the header check (shared like the
    /// addresses).
    pub sport: Arc<Ports>,
    pub dport: Arc<Ports>,
    pub proto: SigProto,
    /// Payload lists (each evaluated over the packet payload or the stream).
    pub lists: Vec<Vec<CMatch>>,
    /// Lists over the packet's headers (`tcp.hdr`), evaluated before the payload's.
    pub hdr_lists: Vec<HdrList>,
    /// Frame inspection, for rules with `frame:`: judged on each frame of its type,
    /// and on nothing else.
    pub frame: Option<FrameSig>,
    /// Flowbit commands with the bits' ids.
    pub flowbits: Vec<(FlowbitCmd, Vec<u32>, bool)>,
    /// `xbits` and `hostbits`: bits kept on hosts, by name (they outlive the rule set).
    pub xbits: Vec<crate::hostbits::XbitOp>,
    /// `flowint` options: (counter id, operator, operand), ids shared with flowbits.
    pub flowints: Vec<(u32, FlowintOp, Option<IntVal>)>,
    /// `lua` scripts, judged once the rule's other options matched.
    pub lua: Vec<SigLua>,
    pub category: String,
    pub severity: u8,
    /// Needs the payload to be non-empty (has a content list).
    pub needs_payload: bool,
    /// The one payload length the rule judges (`dsize:N`), if it names one.
    pub(crate) dsize: Option<u16>,
    /// Judges a packet only by its payload (Suricata's `SIG_MASK_REQUIRE_PAYLOAD`):
    /// payload keywords, or a `dsize` an empty payload fails. Such a rule is not
    /// judged on a packet whose payload is not inspected (an encrypted flow's).
    pub payload_rule: bool,
    /// Where its payload keywords look.
    pub scope: Scope,
    /// Judged on addresses alone (no payload, packet or flow keywords, any ports, no
    /// flowbit tests): checked on the first packet of each direction of a flow only, as
    /// Suricata's IP-only engine does.
    pub ip_only: bool,
    /// Judged on the first packet of each direction of a flow only: IP-only rules and
    /// rules at the `flow_start` hook.
    pub first_packets: bool,
    /// No payload or packet keywords (IP-only or "like IP-only"): a pass or drop
    /// decides the whole flow. Other rules' pass and drop act on the packet, unless they
    /// matched on the stream.
    pub flow_action: bool,
}

/// Rules that did not make it into the inspected set, and why.
#[derive(Clone, Debug, Default)]
pub struct LoadStats {
    pub inspected: usize,
    /// Rules inspected per application-layer transaction.
    pub app_layer: usize,
    /// Rules that need an application-layer buffer, protocol or transform the engine
    /// does not have (not inspected), by the first such name.
    pub waiting_app_layer: usize,
    pub app_missing: HashMap<String, usize>,
    /// Rules that use a keyword the engine parses but does not evaluate.
    pub unsupported: HashMap<String, usize>,
    /// Rules whose options could not be compiled (a pcre neither engine accepts): sid,
    /// and the error with file, line and (when known) column.
    pub compile_errors: Vec<(u32, String)>,
    pub pcre_linear: usize,
    pub pcre_backtracking: usize,
    /// Each rule not inspected (waiting for a parser, or using a keyword the engine
    /// does not evaluate): its sid and the first name it needs.
    pub not_inspected: Vec<(u32, String)>,
}

impl LoadStats {
    /// Counts a rule left out.
    fn skip(&mut self, c: Compiled) {
        match c {
            Compiled::WaitsForApp(sid, m) => {
                self.waiting_app_layer += 1;
                *self.app_missing.entry(m.clone()).or_default() += 1;
                self.not_inspected.push((sid, m));
            }
            Compiled::Unsupported(sid, k) => {
                *self.unsupported.entry(k.clone()).or_default() += 1;
                self.not_inspected.push((sid, k));
            }
            Compiled::Failed(sid, located) => self.compile_errors.push((sid, located)),
            Compiled::Kept(_) | Compiled::Ready(_) => {}
        }
    }

    /// Adds the rules `other` left out to this one's.
    fn merge_skipped(&mut self, other: LoadStats) {
        self.waiting_app_layer += other.waiting_app_layer;
        for (k, n) in other.app_missing {
            *self.app_missing.entry(k).or_default() += n;
        }
        for (k, n) in other.unsupported {
            *self.unsupported.entry(k).or_default() += n;
        }
        self.compile_errors.extend(other.compile_errors);
        self.not_inspected.extend(other.not_inspected);
    }
}

pub struct RuleSet {
    /// Shared with the set this one replaced where a rule's text is the same.
    pub(crate) sigs: Vec<Arc<Sig>>,
    pub(crate) groups: [Group; 4],
    /// Transaction rules by [`tx_group`].
    pub(crate) tx_groups: Vec<TxGroup>,
    /// The firewall's rules by table, in file order (empty outside firewall mode).
    pub(crate) firewall: Arc<crate::firewall::Tables>,
    /// The rules that inspect frames, in evaluation order.
    pub(crate) frame_rules: Vec<u32>,
    /// The rules judged on packets without an IP layer ([`Sig::judges_without_ip`]).
    pub(crate) no_ip_rules: Vec<u32>,
    /// Some rule needs the application layer (see [`Sig::needs_app_layer`]): flows
    /// are parsed.
    pub(crate) needs_app: bool,
    /// Some rule inspects a JA3 or JA3S buffer (Suricata's `ja3-fingerprints: auto`
    /// then writes them in `tls` objects).
    ja3: bool,
    /// Some rule runs a Lua script.
    pub(crate) lua: bool,
    pub(crate) flowbit_names: Vec<String>,
    stats: LoadStats,
    opts: BuildOptions,
    /// What the rules' categories and severities were read from.
    classes: Classifications,
    /// Per rule, what the candidate loop checks before it reads the rule ([`RuleHead`]).
    heads: Vec<RuleHead>,
    /// The first rule appended by an edit (the number of rules when there is none).
    appended: u32,
    /// Tells sets apart (see [`RuleSet::extends`]).
    id: u64,
    /// The set this one was edited from in place, if it was.
    edited_from: Option<u64>,
}

/// What the candidate loop checks of a rule before it reads the rule: whether an edit
/// removed it (it stays in place, so that no index changes, and is never evaluated),
/// and the bounds of its ports. Of the candidates the header check rejects, most fail
/// on a port: rules without a fast pattern that name one port (`-> $EXTERNAL_NET 2319`)
/// share the port group of the ports no group of their own was left for. A few bytes
/// per rule in one array tell most of them apart without reading the rule.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RuleHead {
    removed: bool,
    /// The lowest and highest destination port, and source port, the rule matches
    /// (every port for a `<>` rule, which may match either way).
    dport: (u16, u16),
    sport: (u16, u16),
}

impl RuleHead {
    fn of(s: &Sig) -> RuleHead {
        let every = (0, u16::MAX);
        let (dport, sport) = if s.rule.bidirectional {
            (every, every)
        } else {
            (s.dport.bounds(), s.sport.bounds())
        };
        RuleHead {
            removed: false,
            dport,
            sport,
        }
    }

    /// A necessary condition of the header check ([`crate::engine`]'s `header_ok`),
    /// and the rule is in force.
    #[inline]
    fn may_hold(&self, sport: u16, dport: u16) -> bool {
        let within = |(lo, hi): (u16, u16), p: u16| lo <= p && p <= hi;
        !self.removed && within(self.dport, dport) && within(self.sport, sport)
    }
}

/// A new rule set's [`RuleSet::id`].
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// What a set derived from another shares with it ([`RuleSet::kept_from`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kept {
    /// Rules not compiled again.
    pub rules: usize,
    /// Prefilters not built again, of `prefilters_in_set`.
    pub prefilters: usize,
    pub prefilters_in_set: usize,
}

/// How a rule set is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildOptions {
    pub mpm: Mpm,
    /// The order in which actions are evaluated on a packet (suricata.yaml's
    /// `action-order`); Suricata's default is pass, drop, reject, alert.
    pub action_order: [Action; 4],
}

impl Default for BuildOptions {
    fn default() -> BuildOptions {
        BuildOptions {
            mpm: Mpm::Dfc,
            action_order: [Action::Pass, Action::Drop, Action::Reject, Action::Alert],
        }
    }
}

impl BuildOptions {
    /// Where rule `s` goes in evaluation order, before its place in the files: its
    /// action's rank, then rules that set flowbits before rules that test them, then
    /// priority.
    fn order_key(&self, s: &Sig) -> (u8, u8, u8) {
        let cmds = || {
            s.flowbits
                .iter()
                .map(|f| f.0)
                .chain(s.xbits.iter().map(|x| x.cmd))
        };
        let sets = cmds()
            .any(|c| matches!(c, FlowbitCmd::Set | FlowbitCmd::Unset | FlowbitCmd::Toggle))
            || s.flowints.iter().any(|f| f.1.changes());
        let reads = cmds().any(|c| matches!(c, FlowbitCmd::IsSet | FlowbitCmd::IsNotSet))
            || s.flowints.iter().any(|f| !f.1.changes());
        let fb = match (sets, reads) {
            (true, false) => 0,
            (true, true) => 1,
            (false, true) => 2,
            (false, false) => 3,
        };
        (self.action_rank(s.rule.action) as u8, fb, s.severity)
    }

    /// Reads an `action-order` list (`drop,pass,reject,alert`). Actions left out keep
    /// their default relative order after the listed ones.
    pub fn set_action_order(&mut self, list: &str) -> Result<(), String> {
        let mut order = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let a = match name {
                "pass" => Action::Pass,
                "drop" => Action::Drop,
                "reject" => Action::Reject,
                "alert" => Action::Alert,
                _ => return Err(format!("action-order: unknown action {name:?}")),
            };
            if order.contains(&a) {
                return Err(format!("action-order: {name} listed twice"));
            }
            order.push(a);
        }
        for a in BuildOptions::default().action_order {
            if !order.contains(&a) {
                order.push(a);
            }
        }
        self.action_order.copy_from_slice(&order);
        Ok(())
    }

    fn action_rank(&self, a: Action) -> usize {
        self.action_order.iter().position(|&x| x == a).unwrap_or(4)
    }
}

/// How good a content is as a fast pattern: the one marked `fast_pattern`, else the one
/// least likely to occur in traffic ([`rarity`]), ties broken by length. Any content
/// the rule needs is a correct prefilter (the rule is checked in full after it), so the
/// choice only decides how often the rule is a candidate. Suricata picks the longest
/// content (ties by distinct bytes); a run of zeros then wins over a short word, and
/// in binary traffic it is found at almost every byte.
fn score(c: &netsieve_rules::Content) -> (bool, u32, usize) {
    let pat = prefilter_bytes(c);
    (c.fast_pattern, rarity(pat, c.nocase), pat.len())
}

/// The bytes of a fast pattern the prefilter looks for: the part
/// `fast_pattern:offset,length` names, if any, from its rarest head on
/// ([`rare_start`]).
fn prefilter_bytes(c: &netsieve_rules::Content) -> &[u8] {
    let mut pat = c.pattern.as_slice();
    if let Some((off, len)) = c.fast_pattern_chop {
        let s = (off as usize).min(pat.len());
        let e = s.saturating_add(len as usize).min(pat.len());
        if e > s {
            pat = &pat[s..e];
        }
    }
    &pat[rare_start(pat, c.nocase)..]
}

/// Where the prefilter's copy of a content starts. DFC's work is in the windows whose
/// first bytes pass its filters, and a pattern's first 8 bytes are its hash key and
/// the head it compares, so a content that opens with common bytes (a run of zeros
/// before a few distinctive ones) makes it stop and compare at every such run. Its
/// suffix from the rarest 8-byte head on ([`rarity`]; at least 4 bytes kept, and only
/// when that head is much rarer) is a prefilter as correct, ends where the content
/// ends, and is cheap to look for.
fn rare_start(pat: &[u8], nocase: bool) -> usize {
    const HEAD: usize = 8;
    const KEEP: usize = 4;
    /// Tenths of a bit the head must gain: a shorter pattern is found more often.
    const GAIN: u32 = 20;
    let head = |i: usize| rarity(&pat[i..(i + HEAD).min(pat.len())], nocase);
    let first = head(0);
    let (best, at) = (0..=pat.len().saturating_sub(KEEP))
        .map(|i| (head(i), i))
        .fold((first, 0), |b, x| if x.0 > b.0 { x } else { b });
    if best >= first + GAIN { at } else { 0 }
}

/// The content a rule's prefilter should look for, from its payload lists.
fn fast_pattern(rule: &Rule) -> Option<(Vec<u8>, bool)> {
    let contents = rule
        .lists
        .iter()
        .filter(|l| l.buffer == Buffer::Payload)
        .flat_map(|l| l.matches.iter())
        .filter_map(|m| match m {
            Match::Content(c) if !c.negated => Some(c),
            _ => None,
        });
    // The first of the best.
    let c = contents.rev().max_by_key(|c| score(c))?;
    let pat = prefilter_bytes(c);
    Some((pat.to_vec(), c.nocase))
}

/// Puts `v` in the order `order` gives (`order[k]` is the index of the element that goes
/// to place `k`), in place: the rules of a large set are too big to hold twice.
fn permute<T>(v: &mut [T], order: &[usize]) {
    debug_assert_eq!(v.len(), order.len());
    let mut done = vec![false; v.len()];
    for start in 0..v.len() {
        if done[start] {
            continue;
        }
        // Follow the cycle through `start`: each place takes the element it is owed.
        let mut k = start;
        loop {
            done[k] = true;
            let from = order[k];
            if from == start {
                break;
            }
            v.swap(k, from);
            k = from;
        }
    }
}

/// The step of making a [`Sig`] that needs the whole set in rule order: flowbit (and
/// flowint) ids by name. The rest is done on the threads that compile the rules.
struct Linker {
    bit_ids: HashMap<String, u32>,
    flowbit_names: Vec<String>,
}

impl Linker {
    /// A linker whose flowbit ids start with `names` (a kept rule's ids stay valid).
    fn new(names: &[String]) -> Linker {
        Linker {
            bit_ids: names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i as u32))
                .collect(),
            flowbit_names: names.to_vec(),
        }
    }

    /// Gives `s`, a rule just compiled and not shared yet, its flowbit and flowint ids,
    /// in the order its rule names them.
    fn link(&mut self, s: &mut Arc<Sig>) {
        let s = Arc::get_mut(s).expect("a rule just compiled is not shared yet");
        for l in &s.lua {
            for name in l.script.flowints() {
                self.bit_id(name);
            }
        }
        s.flowbits = s
            .rule
            .flowbits
            .iter()
            .map(|fb| {
                let ids = fb.names.iter().map(|n| self.bit_id(n)).collect();
                (fb.cmd, ids, fb.any)
            })
            .collect();
        s.flowints = s
            .rule
            .flowints
            .iter()
            .map(|f| {
                let value = f.value.as_ref().map(|v| match v {
                    FlowintVal::Num(n) => IntVal::Num(*n),
                    FlowintVal::Var(name) => IntVal::Var(self.bit_id(name)),
                });
                (self.bit_id(&f.name), f.op, value)
            })
            .collect();
    }

    fn bit_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.bit_ids.get(name) {
            return id;
        }
        self.flowbit_names.push(name.to_string());
        let id = (self.flowbit_names.len() - 1) as u32;
        self.bit_ids.insert(name.to_string(), id);
        id
    }
}

impl Ready {
    /// This compiled rule as a [`Sig`], on the thread that compiled it; its flowbit and
    /// flowint ids are left to [`Linker::link`], the one step in rule order.
    fn into_sig(self, classes: &Classifications) -> Sig {
        let rule = &self.rule;
        let ct = rule.classtype.as_ref().and_then(|c| classes.0.get(c));
        let category = ct.map(|c| c.description.clone()).unwrap_or_default();
        let severity = rule.priority.or(ct.map(|c| c.priority)).unwrap_or(3);
        let needs_payload = self.lists.iter().any(|l| {
            l.iter()
                .any(|m| matches!(m, CMatch::Content(c) if !c.negated))
        });
        let dsize = rule.conds.iter().find_map(|c| match c {
            Cond::Dsize(Cmp::Eq(n)) => u16::try_from(*n).ok(),
            _ => None,
        });
        let payload_rule = !self.lists.is_empty()
            || rule
                .conds
                .iter()
                .any(|c| matches!(c, Cond::Dsize(cmp) if !cmp.test(0)));
        let flowbit_test = rule
            .flowbits
            .iter()
            .map(|f| f.cmd)
            .chain(rule.xbits.iter().map(|x| x.cmd))
            .any(|c| matches!(c, FlowbitCmd::IsSet | FlowbitCmd::IsNotSet));
        let xbits = rule.xbits.iter().map(crate::hostbits::XbitOp::of).collect();
        let flowint_test = rule.flowints.iter().any(|f| !f.op.changes());
        let flow_action = (!self.had_lists
            && rule.conds.is_empty()
            && !flowbit_test
            && !flowint_test
            && self.lua.is_empty())
            || self.tx.is_some()
            || self.frame.is_some();
        let ip_only = flow_action
            && self.app.is_none()
            && rule.flow == FlowOpts::default()
            && rule.sport.is_any()
            && rule.dport.is_any();
        let first_packets =
            ip_only || rule.hook == Some(netsieve_rules::Hook::Packet(PacketHook::FlowStart));
        // `alert http1`: HTTP/1 only, not the HTTP an HTTP/2 flow carries.
        let app_exact = matches!(&rule.proto, Proto::App(p) if p == "http1");

        Sig {
            app: self.app,
            app_exact,
            tx: self.tx,
            frame: self.frame,
            fast: self.fast,
            tx_fast: self.tx_fast,
            ip_only,
            first_packets,
            flow_action,
            src: self.src,
            dst: self.dst,
            sport: self.sport,
            dport: self.dport,
            rule: self.rule,
            proto: self.proto,
            lists: self.lists,
            hdr_lists: self.hdr_lists,
            // Ids are the linker's ([`Linker::link`]).
            flowbits: Vec::new(),
            xbits,
            flowints: Vec::new(),
            lua: self.lua,
            category,
            severity,
            needs_payload,
            dsize,
            payload_rule,
            scope: self.scope,
        }
    }
}

/// A rule going into a build. (The list of them takes the place of the list of parsed
/// rules, the same size: boxing the large variant would add an allocation per rule.)
#[allow(clippy::large_enum_variant)]
enum Item {
    Parsed(Rule),
    /// Compiled already, in the set being replaced.
    Kept(Arc<Sig>),
}

/// What a build takes from the set it replaces: its prefilters, by their patterns; and
/// the prefilters it built so far, shared by the port groups, directions and zones that
/// have the same patterns (on ET Open 2024, 245 distinct pattern lists of 428).
struct Reuse {
    mpm: Mpm,
    prefilters: HashMap<u64, Arc<Prefilter>>,
    built: std::sync::Mutex<HashMap<u64, Vec<BuiltPrefilter>>>,
}

/// A prefilter this build made, with the patterns it was made of ([`packed`]; a key is
/// a hash).
type BuiltPrefilter = (Vec<u8>, Arc<Prefilter>);

/// A pattern list as one byte string (each pattern's case flag, length and bytes): kept
/// to tell lists with the same hash apart, without a vector per pattern.
fn packed(pats: &[&(Vec<u8>, bool)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pats.iter().map(|(p, _)| p.len() + 5).sum());
    for (p, nocase) in pats.iter().copied() {
        out.push(u8::from(*nocase));
        out.extend_from_slice(&(p.len() as u32).to_le_bytes());
        out.extend_from_slice(p);
    }
    out
}

impl Reuse {
    fn of(prev: Option<&RuleSet>, mpm: Mpm) -> Reuse {
        let prefilters = prev
            .into_iter()
            .flat_map(RuleSet::prefilters)
            .map(|pf| (pf.key, Arc::clone(&pf.prefilter)))
            .collect();
        Reuse {
            mpm,
            prefilters,
            built: Default::default(),
        }
    }

    /// The prefilter over `pats` (pattern id = index): the previous set's if it had
    /// one over the same patterns, else this build's if it made one, else a new one.
    fn prefilter(&self, pats: &[&(Vec<u8>, bool)]) -> (Arc<Prefilter>, u64) {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        pats.hash(&mut h);
        let key = h.finish();
        if let Some(pf) = self.prefilters.get(&key) {
            return (Arc::clone(pf), key);
        }
        let packed = packed(pats);
        let built = |b: &HashMap<u64, Vec<BuiltPrefilter>>| {
            b.get(&key)?
                .iter()
                .find(|(p, _)| *p == packed)
                .map(|(_, pf)| Arc::clone(pf))
        };
        if let Some(pf) = built(&self.built.lock().expect("not poisoned")) {
            return (pf, key);
        }
        // Built unlocked: two threads may build the same one, and both are right.
        let pf = Arc::new(build_prefilter(pats, self.mpm));
        let mut b = self.built.lock().expect("not poisoned");
        b.entry(key).or_default().push((packed, Arc::clone(&pf)));
        (pf, key)
    }
}

/// One rule compiled on its own: what [`RuleSet::build`] needs of it besides the steps
/// that need the whole set.
enum Compiled {
    /// Compiled in the set being replaced.
    Kept(Arc<Sig>),
    /// It needs an application protocol, buffer or transform the engine lacks: sid and
    /// this one.
    WaitsForApp(u32, String),
    /// Its first keyword the engine does not evaluate: sid and keyword.
    Unsupported(u32, String),
    /// Its options do not compile: sid and located message.
    Failed(u32, String),
    /// Compiled, but for the ids [`Linker::link`] gives it; not shared yet.
    Ready(Arc<Sig>),
}

struct Ready {
    rule: Rule,
    /// The rule's addresses, compiled; the lists as parsed are dropped from `rule`.
    src: Arc<AddrSet>,
    dst: Arc<AddrSet>,
    /// The rule's ports, compiled (`rule` keeps them as parsed).
    sport: Arc<Ports>,
    dport: Arc<Ports>,
    lua: Vec<SigLua>,
    app: Option<AppProto>,
    proto: SigProto,
    scope: Scope,
    lists: Vec<Vec<CMatch>>,
    hdr_lists: Vec<HdrList>,
    tx: Option<TxSig>,
    frame: Option<FrameSig>,
    fast: Option<(Vec<u8>, bool)>,
    tx_fast: Option<(TxBuf, (Vec<u8>, bool))>,
    /// The rule had option lists (before they were dropped).
    had_lists: bool,
}

/// A rule's `dataset` and `datarep` files, resolved from its file's directory (see
/// [`crate::dataset::resolve`]).
fn resolve_set_files(rule: &mut Rule) {
    let file = rule.file.to_string();
    for m in rule.lists.iter_mut().flat_map(|l| l.matches.iter_mut()) {
        match m {
            Match::Dataset(d) => crate::dataset::resolve(&file, &mut d.load, &mut d.save),
            Match::Datarep(d) => crate::dataset::resolve(&file, &mut d.load, &mut None),
            _ => {}
        }
    }
}

fn compile_rule(rule: Rule, shared: &Shared, classes: &Classifications) -> Compiled {
    if rule.known {
        // A stand-in for a rule of the set being replaced, which does not hold it.
        let m = "not parsed (its text was known) and not in the rule set replaced";
        return Compiled::Failed(
            rule.sid,
            format!("{}:{}: sid {}: {m}", rule.file, rule.line, rule.sid),
        );
    }
    let (app, missing) = app_needs(&rule);
    if let Some(m) = missing {
        return Compiled::WaitsForApp(rule.sid, m);
    }
    if let Some(k) = rule.unsupported.first() {
        return Compiled::Unsupported(rule.sid, k.name.clone());
    }
    // A reputation category the process's reputation does not have fails the rule, as
    // in Suricata; the others are resolved to their ids here.
    let mut rule = rule;
    for c in &mut rule.conds {
        if let Cond::IpRep { category, id, .. } = c {
            match crate::iprep::category(category) {
                Some(i) => *id = i,
                None => {
                    let m = format!("iprep: unknown reputation category '{category}'");
                    return Compiled::Failed(
                        rule.sid,
                        format!("{}:{}: sid {}: {m}", rule.file, rule.line, rule.sid),
                    );
                }
            }
        }
    }
    let proto = match rule.proto {
        Proto::Ip => SigProto::Ip,
        Proto::Tcp | Proto::TcpPkt | Proto::TcpStream => SigProto::Tcp,
        Proto::Udp => SigProto::Udp,
        Proto::Icmp => SigProto::Icmp,
        Proto::Sctp => SigProto::Sctp,
        // HTTP and TLS run over TCP; DNS and SIP over UDP and TCP.
        Proto::App(_) if app.is_some_and(AppProto::over_udp) => SigProto::Ip,
        Proto::App(_) => SigProto::Tcp,
    };
    let scope = Scope::of(&rule, app);
    resolve_set_files(&mut rule);
    let scripts = match load_scripts(&rule) {
        Ok(s) => s,
        Err(m) => {
            return Compiled::Failed(
                rule.sid,
                format!("{}:{}: sid {}: {m}", rule.file, rule.line, rule.sid),
            );
        }
    };
    // Scripts that read no packet judge a rule at a state of its application protocol
    // (`alert dns:request_complete`) on its transactions; without a state, on packets
    // (measured on Suricata 8: `alert http (lua:...)` alerts on every packet).
    let lua_tx = !scripts.is_empty()
        && scripts.iter().all(|(s, _)| !s.needs().packet)
        && rule.payload_lists().next().is_none()
        && matches!(rule.hook, Some(netsieve_rules::Hook::App(_)));
    let mut vars = Vec::new();
    let regexes = &shared.regexes;
    let compiled = packet_lists(&rule, &mut vars, regexes)
        .and_then(|(lists, hdr_lists)| match app {
            Some(_) => Ok((lists, hdr_lists, tx_sig(&rule, &mut vars, lua_tx, regexes)?)),
            None => Ok((lists, hdr_lists, None)),
        })
        .and_then(|(mut lists, hdr_lists, mut tx)| {
            // The `base64_data` list goes to the `base64_decode` that fills it.
            let Some(l) = rule.lists.iter().find(|l| l.buffer == BASE64_DATA) else {
                return Ok((lists, hdr_lists, tx));
            };
            let data = compile_list(&l.matches, &mut vars, regexes)?;
            let tx_lists = tx
                .iter_mut()
                .flat_map(|t| t.lists.iter_mut().map(|l| &mut l.matches));
            match attach_base64_data(lists.iter_mut().chain(tx_lists), data) {
                None => Ok((lists, hdr_lists, tx)),
                Some(_) => Err(ListError::from(
                    "base64_data without base64_decode".to_string(),
                )),
            }
        });
    let compiled = compiled.and_then(|(lists, hdr_lists, tx)| {
        let frame = frame_sig(&rule, &mut vars, regexes)?;
        if frame.is_some() && (tx.is_some() || !lists.is_empty()) {
            return Err(ListError::from(
                "frame with other buffers or the payload".to_string(),
            ));
        }
        Ok((lists, hdr_lists, tx, frame))
    });
    match compiled {
        Ok((lists, hdr_lists, tx, frame)) => {
            let fast = fast_pattern(&rule);
            let tx_fast = tx_fast_pattern(&rule);
            let mut rule = rule;
            let had_lists = !rule.lists.is_empty();
            rule.lists = Vec::new();
            let src = shared
                .addr_sets
                .of(&std::mem::replace(&mut rule.src, AddrExpr::Any));
            let dst = shared
                .addr_sets
                .of(&std::mem::replace(&mut rule.dst, AddrExpr::Any));
            let lua = scripts
                .into_iter()
                .map(|(script, negated)| {
                    let bytevars = (script.bytevars().iter())
                        .filter_map(|n| {
                            let i = vars.iter().position(|v| v == n)?;
                            Some((n.clone(), u8::try_from(i).ok()?))
                        })
                        .collect();
                    SigLua {
                        script,
                        negated,
                        bytevars,
                    }
                })
                .collect();
            Compiled::Ready(Arc::new(
                Ready {
                    sport: shared.port_sets.of(&rule.sport),
                    dport: shared.port_sets.of(&rule.dport),
                    rule,
                    src,
                    dst,
                    lua,
                    app,
                    proto,
                    scope,
                    lists,
                    hdr_lists,
                    tx,
                    frame,
                    fast,
                    tx_fast,
                    had_lists,
                }
                .into_sig(classes),
            ))
        }
        Err(e) => {
            let at = match e.column {
                Some(c) => format!("{}:{}:{c}", rule.file, rule.line),
                None => format!("{}:{}", rule.file, rule.line),
            };
            Compiled::Failed(rule.sid, format!("{at}: sid {}: {}", rule.sid, e.message))
        }
    }
}

/// A rule's `lua` scripts, loaded and checked (their `init` run), with whether each is
/// negated.
fn load_scripts(rule: &Rule) -> Result<Vec<(Arc<crate::lua::Script>, bool)>, String> {
    (rule.lua.iter())
        .map(|l| {
            let s = crate::lua::Script::load(&l.script, &rule.file, crate::lua::Kind::Match)?;
            Ok((s, l.negated))
        })
        .collect()
}

/// A rule's lists over the packet, compiled in rule order (a variable one extracts is
/// seen by the next): its payload lists, and its lists over headers (`tcp.hdr`).
type PacketLists = (Vec<Vec<CMatch>>, Vec<HdrList>);

fn packet_lists(
    rule: &Rule,
    vars: &mut Vec<String>,
    regexes: &crate::pcre::Regexes,
) -> Result<PacketLists, ListError> {
    let (mut lists, mut hdr_lists) = (Vec::new(), Vec::new());
    for l in &rule.lists {
        match l.buffer {
            Buffer::Payload => lists.push(compile_list(&l.matches, vars, regexes)?),
            Buffer::Header(h) => hdr_lists.push(HdrList {
                buf: h,
                transforms: (l.transforms.iter())
                    .map(|t| Xform::new(t, &rule.file))
                    .collect::<Result<_, _>>()
                    .map_err(ListError::from)?,
                matches: compile_list(&l.matches, vars, regexes)?,
            }),
            Buffer::App(_) | Buffer::Frame(_) => {}
        }
    }
    Ok((lists, hdr_lists))
}

impl RuleSet {
    /// Compiles `rules`. Rules that need the application layer or an unsupported keyword
    /// are counted in [`LoadStats`] and left out; so are rules whose pcre compiles with
    /// neither engine.
    pub fn build(rules: Vec<Rule>, classes: &Classifications, opts: BuildOptions) -> RuleSet {
        let items = rules.into_iter().map(Item::Parsed).collect();
        RuleSet::assemble(items, classes, opts, None)
    }

    /// The texts of this set's rules ([`Rule::text_hash`]) with their gid and sid, for a
    /// loader that need not parse them again ([`netsieve_rules::Loaded::knowing`]):
    /// what [`RuleSet::rebuild`] with `classes` keeps. Empty when `classes` are not this
    /// set's (every rule's category is read again).
    pub fn known_texts(&self, classes: &Classifications) -> HashMap<u64, (u32, u32)> {
        self.kept_by_text(classes)
            .into_iter()
            .map(|(h, s)| (h, (s.rule.gid, s.rule.sid)))
            .collect()
    }

    fn kept_by_text(&self, classes: &Classifications) -> HashMap<u64, &Arc<Sig>> {
        if *classes != self.classes {
            return HashMap::new();
        }
        self.sigs
            .iter()
            .filter(|s| s.rule.text_hash != 0)
            .map(|s| (s.rule.text_hash, s))
            .collect()
    }

    /// Builds `rules` as [`RuleSet::build`] does, keeping what this set compiled: a
    /// rule whose text ([`Rule::text_hash`]) is one of this set's is not compiled again,
    /// and a prefilter whose patterns are one of this set's is shared, not built again.
    /// The rules must have been read with the variables this set's were.
    pub fn rebuild(
        &self,
        rules: Vec<Rule>,
        classes: &Classifications,
        opts: BuildOptions,
    ) -> RuleSet {
        let kept = self.kept_by_text(classes);
        let items = rules
            .into_iter()
            .map(|r| match kept.get(&r.text_hash) {
                Some(s) if r.text_hash != 0 => Item::Kept(Arc::clone(s)),
                _ => Item::Parsed(r),
            })
            .collect();
        RuleSet::assemble(items, classes, opts, Some(self))
    }

    /// This set with the rules of signature ids `remove` taken out and `add` put in,
    /// everything else kept: Reinhardt's one-rule change, without reading the files.
    /// The rules not inspected (waiting for a parser, failed) are counted as they were.
    pub fn edit(&self, remove: &[u32], add: Vec<Rule>, opts: BuildOptions) -> RuleSet {
        if opts == self.opts
            && let Some(set) = self.edit_in_place(remove, &add)
        {
            return set;
        }
        let mut items: Vec<Item> = self
            .in_force()
            .filter(|s| !remove.contains(&s.rule.sid))
            .map(|s| Item::Kept(Arc::clone(s)))
            .collect();
        items.extend(add.into_iter().map(Item::Parsed));
        let classes = self.classes.clone();
        let mut set = RuleSet::assemble(items, &classes, opts, Some(self));
        let fresh = std::mem::take(&mut set.stats);
        set.stats = LoadStats {
            inspected: fresh.inspected,
            app_layer: fresh.app_layer,
            pcre_linear: fresh.pcre_linear,
            pcre_backtracking: fresh.pcre_backtracking,
            ..self.stats.clone()
        };
        set.stats.merge_skipped(fresh);
        set
    }

    /// [`RuleSet::edit`] without moving a rule, in time proportional to the change:
    /// removed rules stay in place, marked, and added rules are appended, their fast
    /// patterns in the extra prefilters ([`Extra`]) of the groups they belong to; every
    /// other part is shared. `None` where that would not inspect as a full build does:
    /// an added pass rule or flowbit rule that a full build would evaluate before rules
    /// in force ([`RuleSet::appendable`]), or an IP-only rule; and, to keep
    /// inspection fast, when extras grow past [`EXTRA_MAX`] patterns or the removed
    /// rules past an eighth of the set. A full build folds all of them in.
    fn edit_in_place(&self, remove: &[u32], add: &[Rule]) -> Option<RuleSet> {
        let mut set = RuleSet {
            sigs: self.sigs.clone(),
            groups: self.groups.clone(),
            tx_groups: self.tx_groups.clone(),
            firewall: Arc::clone(&self.firewall),
            frame_rules: self.frame_rules.clone(),
            no_ip_rules: self.no_ip_rules.clone(),
            needs_app: self.needs_app,
            ja3: self.ja3,
            lua: self.lua,
            flowbit_names: Vec::new(),
            stats: self.stats.clone(),
            opts: self.opts,
            classes: self.classes.clone(),
            heads: self.heads.clone(),
            appended: self.appended,
            id: next_id(),
            edited_from: Some(self.id),
        };
        for i in 0..set.sigs.len() {
            let s = &set.sigs[i];
            if remove.contains(&s.rule.sid) && !set.is_removed(i as u32) {
                set.heads[i].removed = true;
                set.stats.inspected -= 1;
                set.stats.app_layer -= usize::from(s.tx.is_some());
            }
        }
        if set.heads.iter().filter(|h| h.removed).count() * 8 > set.sigs.len() {
            return None;
        }
        let mut linker = Linker::new(&self.flowbit_names);
        let mut built = HashMap::new();
        let shared = Shared::default();
        for r in add {
            let sig = match compile_rule(r.clone(), &shared, &self.classes) {
                Compiled::Ready(mut s) => {
                    linker.link(&mut s);
                    s
                }
                skipped => {
                    set.stats.skip(skipped);
                    continue;
                }
            };
            if sig.ip_only || sig.rule.firewall || sig.frame.is_some() || !set.appendable(&sig) {
                return None;
            }
            let i = set.sigs.len() as u32;
            set.add_to_groups(&sig, i, &mut built)?;
            if sig.judges_without_ip() {
                set.no_ip_rules.push(i);
            }
            set.heads.push(RuleHead::of(&sig));
            set.needs_app |= sig.needs_app_layer();
            set.ja3 |= sig.uses_ja3();
            set.lua |= !sig.lua.is_empty();
            set.stats.inspected += 1;
            set.stats.app_layer += usize::from(sig.tx.is_some());
            set.sigs.push(sig);
        }
        set.flowbit_names = linker.flowbit_names;
        Some(set)
    }

    /// Whether `sig` can be evaluated after every rule in force and inspect as it would
    /// in its place. Within a packet, only two orders change what is found: a pass rule
    /// stops the rules after it, and a rule that sets a flowbit must come before one
    /// that tests it. A rule that does neither may come last (its alerts are put in
    /// rule order afterwards, [`RuleSet::sort_alerts`]); one that does must come last in
    /// rule order anyway. Every rule in force is compared, not only the last: rules
    /// appended by earlier edits are not in rule order.
    fn appendable(&self, sig: &Sig) -> bool {
        let (action, fb, _) = self.opts.order_key(sig);
        let pass = self.opts.action_rank(Action::Pass) as u8;
        if action != pass && fb == 3 {
            return true;
        }
        self.in_force().all(|s| {
            let (a, f, _) = self.opts.order_key(s);
            (a, f) <= (action, fb)
        })
    }

    /// Puts rule `i` (`sig`) into the groups it belongs to, as [`RuleSet::build`] would
    /// have; `None` when an extra prefilter would grow past [`EXTRA_MAX`].
    fn add_to_groups(
        &mut self,
        sig: &Sig,
        i: u32,
        built: &mut HashMap<Vec<(Vec<u8>, bool)>, Arc<Extra>>,
    ) -> Option<()> {
        let mpm = self.opts.mpm;
        let mut add = |pf: &mut Prefiltered, fp: &(Vec<u8>, bool)| {
            *pf = pf.with_pattern(fp, i, built, mpm);
            pf.extra.as_ref().is_none_or(|x| x.pats.len() <= EXTRA_MAX)
        };
        if let (Some(t), Some(p)) = (&sig.tx, sig.app) {
            for d in [Direction::ToServer, Direction::ToClient] {
                if !t.dirs[d] {
                    continue;
                }
                let g = &mut self.tx_groups[tx_group(p, d)];
                let Some((buf, fp)) = &sig.tx_fast else {
                    g.always.push(i);
                    continue;
                };
                match g.scans.iter_mut().find(|x| x.searches(buf, d)) {
                    Some(x) => {
                        if !x.bufs.contains(&buf.0) {
                            x.bufs.push(buf.0);
                        }
                        add(&mut x.prefilter, fp).then_some(())?
                    }
                    None => {
                        let mut pats = Patterns::default();
                        pats.add(fp, i);
                        g.scans.push(TxScan {
                            bufs: vec![buf.0],
                            transforms: buf.1.clone(),
                            prefilter: pats.build(&Reuse::of(None, mpm)),
                        });
                    }
                }
            }
            return Some(());
        }
        for g in [GroupId::Tcp, GroupId::Udp, GroupId::Icmp, GroupId::Other] {
            if !in_group(sig, g) {
                continue;
            }
            for d in [Direction::ToServer, Direction::ToClient] {
                if !sees(sig, d) {
                    continue;
                }
                let group = &mut self.groups[g as usize];
                let admits = group.zones.admits(sig, d);
                let pi = &mut group.dirs[d];
                for k in pi.port_map.groups_of(&server_ports(sig, g, d)) {
                    for (pg, _) in pi.ports[k].iter_mut().zip(admits).filter(|(_, a)| *a) {
                        let fp = match sig.packet_key() {
                            PacketKey::Pattern(fp) => fp,
                            PacketKey::Dsize(n) => {
                                pg.by_dsize.insert(n, i);
                                continue;
                            }
                            PacketKey::Always => {
                                pg.always.push(i);
                                continue;
                            }
                        };
                        let [packet, unstreamed, stream] = prefilters_of(sig.scope, g);
                        if packet && !add(&mut pg.packet, fp)
                            || unstreamed && !add(&mut pg.unstreamed, fp)
                            || stream && !add(&mut pg.stream, fp)
                        {
                            return None;
                        }
                    }
                }
            }
        }
        Some(())
    }

    /// The one build: `items` compiled where they are not kept, put in evaluation
    /// order, and grouped; flowbit ids and prefilters are `prev`'s where it has them.
    fn assemble(
        items: Vec<Item>,
        classes: &Classifications,
        opts: BuildOptions,
        prev: Option<&RuleSet>,
    ) -> RuleSet {
        let mpm = opts.mpm;
        let mut stats = LoadStats::default();
        // A kept rule's flowbit ids are the previous set's: its names keep their ids.
        let mut linker = Linker::new(prev.map_or(&[][..], |p| &p.flowbit_names));
        // Each rule compiled on its own (on every core; address sets and pcres shared
        // between them), then the step that needs the whole set in rule order: flowbit
        // ids.
        let shared = Shared::default();
        let compiled: Vec<Compiled> = items
            .into_par_iter()
            .map(|it| match it {
                Item::Parsed(r) => compile_rule(r, &shared, classes),
                Item::Kept(s) => Compiled::Kept(s),
            })
            .collect();
        let mut sigs = Vec::with_capacity(compiled.len());
        for c in compiled {
            let mut r = match c {
                Compiled::Kept(s) => {
                    sigs.push(s);
                    continue;
                }
                Compiled::Ready(s) => s,
                skipped => {
                    stats.skip(skipped);
                    continue;
                }
            };
            linker.link(&mut r);
            sigs.push(r);
        }
        for m in sigs.iter().flat_map(|s| s.lists.iter().flatten()) {
            if let CMatch::Pcre { re, .. } = m {
                if re.is_linear() {
                    stats.pcre_linear += 1;
                } else {
                    stats.pcre_backtracking += 1;
                }
            }
        }
        // Evaluation order: action order, then rules that set flowbits before rules
        // that test them, then priority, then file order.
        let mut order: Vec<usize> = (0..sigs.len()).collect();
        order.sort_by_cached_key(|&i| (opts.order_key(&sigs[i]), i));
        permute(&mut sigs, &order);
        let firewall = crate::firewall::Tables::build(&sigs, &order);
        let frame_rules = (0..sigs.len() as u32)
            .filter(|&i| sigs[i as usize].frame.is_some())
            .collect();
        let no_ip_rules = (0..sigs.len() as u32)
            .filter(|&i| sigs[i as usize].judges_without_ip())
            .collect();
        stats.inspected = sigs.len();
        stats.app_layer = sigs.iter().filter(|s| s.tx.is_some()).count();
        let needs_app = sigs.iter().any(|s| s.needs_app_layer());
        let ja3 = sigs.iter().any(|s| s.uses_ja3());
        let lua = sigs.iter().any(|s| !s.lua.is_empty());
        let reuse = Reuse::of(prev.filter(|p| p.opts.mpm == mpm), mpm);
        // The groups, and the port groups in them, are independent: built on every core.
        let (groups, tx_groups) = rayon::join(
            || {
                let v: Vec<Group> = [GroupId::Tcp, GroupId::Udp, GroupId::Icmp, GroupId::Other]
                    .into_par_iter()
                    .map(|g| build_group(&sigs, g, &reuse))
                    .collect();
                <[Group; 4]>::try_from(v).unwrap_or_else(|_| unreachable!("four groups"))
            },
            || {
                (0..AppProto::ALL.len() * 2)
                    .into_par_iter()
                    .map(|g| build_tx_group(&sigs, g, &reuse))
                    .collect::<Vec<TxGroup>>()
            },
        );
        RuleSet {
            appended: sigs.len() as u32,
            firewall,
            frame_rules,
            no_ip_rules,
            heads: sigs.iter().map(|s| RuleHead::of(s)).collect(),
            sigs,
            groups,
            tx_groups,
            needs_app,
            ja3,
            lua,
            flowbit_names: linker.flowbit_names,
            stats,
            opts,
            classes: classes.clone(),
            id: next_id(),
            edited_from: None,
        }
    }

    /// What this set shares with `prev`, the set it was derived from.
    pub fn kept_from(&self, prev: &RuleSet) -> Kept {
        let old: std::collections::HashSet<*const Sig> =
            prev.sigs.iter().map(Arc::as_ptr).collect();
        let old_pf: std::collections::HashSet<*const Prefilter> = prev
            .prefilters()
            .map(|p| Arc::as_ptr(&p.prefilter))
            .collect();
        let built: Vec<&Prefiltered> = self
            .prefilters()
            .filter(|p| !matches!(*p.prefilter, Prefilter::None))
            .collect();
        Kept {
            rules: self
                .sigs
                .iter()
                .filter(|s| old.contains(&Arc::as_ptr(s)))
                .count(),
            prefilters: built
                .iter()
                .filter(|p| old_pf.contains(&Arc::as_ptr(&p.prefilter)))
                .count(),
            prefilters_in_set: built.len(),
        }
    }

    /// Every prefilter of the set.
    fn prefilters(&self) -> impl Iterator<Item = &Prefiltered> {
        let ports = self
            .groups
            .iter()
            .flat_map(|g| g.dirs.iter().flat_map(|(_, d)| d.ports.iter().flatten()))
            .flat_map(|p| [&p.packet, &p.unstreamed, &p.stream]);
        let tx = self
            .tx_groups
            .iter()
            .flat_map(|t| t.scans.iter().map(|x| &x.prefilter));
        ports.chain(tx)
    }

    /// The compiled rules, in load order; an alert's `sig` indexes them.
    pub fn sigs(&self) -> &[Arc<Sig>] {
        &self.sigs
    }

    /// The rule an alert names.
    pub fn sig(&self, i: u32) -> &Sig {
        &self.sigs[i as usize]
    }

    /// What loading the rules made of them.
    /// Firewall mode: a firewall rule was loaded (see [`crate::firewall`]).
    pub fn firewall_mode(&self) -> bool {
        self.firewall.on
    }

    pub fn stats(&self) -> &LoadStats {
        &self.stats
    }

    /// The name of flowbit `id`.
    pub fn flowbit_name(&self, id: u32) -> &str {
        &self.flowbit_names[id as usize]
    }

    /// Some rule needs an application protocol: flows are parsed.
    pub fn needs_app(&self) -> bool {
        self.needs_app
    }

    /// Some rule inspects a JA3 or JA3S buffer.
    pub fn uses_ja3(&self) -> bool {
        self.ja3
    }

    /// The prefilter engine the set was built with.
    pub fn mpm(&self) -> Mpm {
        self.opts.mpm
    }

    /// Whether this set was edited in place from `old` ([`RuleSet::edit`] without a
    /// rebuild): every rule of `old` keeps its index, every flowbit its id and every
    /// prefilter its patterns, so what flows and counters hold for `old` holds for it.
    pub fn extends(&self, old: &RuleSet) -> bool {
        self.edited_from == Some(old.id)
    }

    /// Whether rule `i` was removed by an edit (it is never evaluated).
    #[inline]
    pub fn is_removed(&self, i: u32) -> bool {
        self.heads[i as usize].removed
    }

    /// Whether rule `i` is in force and may hold on a packet with these ports, as far
    /// as [`RuleHead`] tells: the candidate loop's first test, before the rule is read.
    #[inline]
    pub(crate) fn may_hold(&self, i: u32, sport: u16, dport: u16) -> bool {
        self.heads[i as usize].may_hold(sport, dport)
    }

    /// The rules in force: [`RuleSet::sigs`] without those removed by edits.
    pub fn in_force(&self) -> impl Iterator<Item = &Arc<Sig>> {
        self.sigs
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.is_removed(*i as u32))
            .map(|(_, s)| s)
    }

    /// Whether an edit appended rules (their index is not their place in rule order).
    #[inline]
    pub fn has_appended(&self) -> bool {
        (self.appended as usize) < self.sigs.len()
    }

    /// Puts the alerts of one packet in rule order (evaluation order, which is index
    /// order unless an edit appended rules: those are placed where a full build would
    /// put them).
    pub fn sort_alerts<T>(&self, alerts: &mut [T], sig: impl Fn(&T) -> u32) {
        if !self.has_appended() {
            alerts.sort_by_key(sig);
        } else {
            alerts.sort_by_key(|a| {
                let i = sig(a);
                (self.opts.order_key(&self.sigs[i as usize]), i)
            });
        }
    }

    /// Port groups of TCP and of UDP (both directions).
    pub fn port_groups(&self) -> (usize, usize) {
        (self.groups[0].port_groups(), self.groups[1].port_groups())
    }

    /// Heap bytes of the prefilters and candidate lists.
    pub fn prefilter_bytes(&self) -> usize {
        self.groups.iter().map(Group::heap_bytes).sum()
    }
}

fn in_group(s: &Sig, g: GroupId) -> bool {
    s.tx.is_none()
        && s.frame.is_none()
        && !s.rule.firewall
        && matches!(
            (s.proto, g),
            (SigProto::Ip, _)
                | (SigProto::Tcp, GroupId::Tcp)
                | (SigProto::Udp, GroupId::Udp)
                | (SigProto::Icmp, GroupId::Icmp)
                | (SigProto::Sctp, GroupId::Other)
        )
}

impl Group {
    /// The port group of a packet in direction `dir` of its flow (to the server when it
    /// has none) whose server port is `port`: the destination port to the server, the
    /// source port to the client.
    #[inline]
    pub(crate) fn for_packet(
        &self,
        dir: Direction,
        port: u16,
        client: std::net::IpAddr,
    ) -> &PortGroup {
        let d = &self.dirs[dir];
        &d.ports[d.port_map.group_of(port)][self.zones.of(client)]
    }

    /// Port groups per direction.
    fn port_groups(&self) -> usize {
        self.dirs.iter().map(|(_, d)| d.ports.len()).sum()
    }

    fn heap_bytes(&self) -> usize {
        // The two sides may share a prefilter (or a port group, without a list).
        let mut seen = std::collections::HashSet::new();
        let ports: usize = self
            .dirs
            .iter()
            .flat_map(|(_, d)| d.ports.iter().flatten())
            .map(|p| {
                [&p.packet, &p.unstreamed, &p.stream]
                    .iter()
                    .filter(|pf| seen.insert(Arc::as_ptr(&pf.prefilter)))
                    .map(|pf| pf.prefilter.heap_bytes())
                    .sum::<usize>()
                    + p.always.len() * 4
                    + p.by_dsize.heap_bytes()
            })
            .sum();
        ports + self.ip_only.heap_bytes()
    }
}

/// Whether rule `s` can see packets of direction `dir` (flow:to_server rules only the
/// ones to the server, and so on).
fn sees(s: &Sig, dir: Direction) -> bool {
    match dir {
        Direction::ToServer => !s.rule.flow.to_client,
        Direction::ToClient => !s.rule.flow.to_server,
    }
}

fn build_group(sigs: &[Arc<Sig>], g: GroupId, reuse: &Reuse) -> Group {
    let members: Vec<u32> = (0..sigs.len() as u32)
        .filter(|&i| in_group(&sigs[i as usize], g))
        .collect();
    let (ip_only, port_keyed): (Vec<u32>, Vec<u32>) =
        members.iter().partition(|&&i| sigs[i as usize].ip_only);
    let fast: HashMap<u32, &(Vec<u8>, bool)> = port_keyed
        .iter()
        .filter_map(|&i| match sigs[i as usize].packet_key() {
            PacketKey::Pattern(fp) => Some((i, fp)),
            _ => None,
        })
        .collect();
    let zones = Zones::choose(sigs, &port_keyed);
    let dir = |d: Direction| {
        // The server's port: the destination to the server, the source to the client.
        let port_sets: Vec<(u32, PortSet)> = port_keyed
            .iter()
            .filter(|&&i| sees(&sigs[i as usize], d))
            .map(|&i| (i, server_ports(&sigs[i as usize], g, d)))
            .collect();
        let mut port_map = PortGroups::build(&port_sets);
        let admitted = zones.admitted(sigs, &port_keyed, d);
        let ports = std::mem::take(&mut port_map.groups)
            .into_par_iter()
            .map(|rules| zones.split(&admitted, port_group(sigs, g, &rules, &fast, reuse)))
            .collect();
        PortIndexed {
            ports,
            port_map: Arc::new(port_map),
        }
    };
    Group {
        dirs: PerDir::new(dir(Direction::ToServer), dir(Direction::ToClient)),
        zones,
        ip_only: Arc::new(AddrRules::build(sigs, &ip_only)),
    }
}

/// The server's ports of rule `s` in transport group `g`, for packets of direction `d`:
/// what its port group is chosen by.
fn server_ports(s: &Sig, g: GroupId, d: Direction) -> PortSet {
    let r = &s.rule;
    match (g, d) {
        (GroupId::Icmp | GroupId::Other, _) => vec![(0, 65535)],
        (_, Direction::ToServer) => dest_ports(&r.dport, &r.sport, r.bidirectional),
        (_, Direction::ToClient) => dest_ports(&r.sport, &r.dport, r.bidirectional),
    }
}

/// Which of a port group's prefilters (packet, unstreamed, stream) hold the fast pattern
/// of a rule with `scope` in transport group `g`.
fn prefilters_of(scope: Scope, g: GroupId) -> [bool; 3] {
    let tcp = g == GroupId::Tcp;
    [
        scope.packet && !(tcp && scope.stream && !scope.streamed_packet),
        scope.packet && tcp,
        scope.stream && tcp,
    ]
}

/// Patterns an edit may add to one prefilter before the set is built again.
const EXTRA_MAX: usize = 64;

/// A port group of `rules` (in evaluation order): the fast patterns of those that have
/// one go to the prefilters their scope asks for, the others on its `always` list.
fn port_group(
    sigs: &[Arc<Sig>],
    g: GroupId,
    rules: &[u32],
    fast: &HashMap<u32, &(Vec<u8>, bool)>,
    reuse: &Reuse,
) -> PortGroup {
    let (mut packet, mut unstreamed, mut stream) = Default::default();
    let mut always = Vec::new();
    // (stream pattern id, rule) of the packet rules of a TCP group.
    let mut in_stream_packet = Vec::new();
    let mut by_dsize = Vec::new();
    for &r in rules {
        let Some(fp) = fast.get(&r) else {
            match sigs[r as usize].packet_key() {
                PacketKey::Dsize(n) => by_dsize.push((n, r)),
                _ => always.push(r),
            }
            continue;
        };
        let [in_packet, in_unstreamed, in_stream] = prefilters_of(sigs[r as usize].scope, g);
        for (yes, pats) in [
            (in_packet, &mut packet),
            (in_unstreamed, &mut unstreamed),
            (in_stream, &mut stream),
        ] {
            if yes {
                Patterns::add(pats, fp, r);
            }
        }
        if in_packet && g == GroupId::Tcp {
            in_stream_packet.push((Patterns::intern(&mut stream, fp), r));
        }
    }
    // The stream's prefilter also finds the packet rules' patterns, each with its
    // packet rules beside the stream rules.
    let stream_packet = RuleLists::by_id(stream.pats.len(), &in_stream_packet);
    PortGroup {
        packet: Patterns::build(packet, reuse),
        unstreamed: Patterns::build(unstreamed, reuse),
        stream: Patterns::build(stream, reuse),
        stream_packet: Arc::new(stream_packet),
        always,
        by_dsize: BySize::new(by_dsize),
    }
}

/// Fast patterns being collected for one prefilter: each distinct pattern once, with
/// the rules that use it.
#[derive(Default)]
struct Patterns<'a> {
    pats: Vec<&'a (Vec<u8>, bool)>,
    /// Keyed with foldhash, seeded per process (SipHash cost 4% of a load).
    index: HashMap<&'a (Vec<u8>, bool), u32, foldhash::fast::RandomState>,
    /// (pattern id, rule), in the order the rules were added.
    uses: Vec<(u32, u32)>,
}

impl<'a> Patterns<'a> {
    fn add(&mut self, fp: &'a (Vec<u8>, bool), rule: u32) {
        let id = self.intern(fp);
        self.uses.push((id, rule));
    }

    /// The id of pattern `fp`, added (with no rules) if it is new.
    fn intern(&mut self, fp: &'a (Vec<u8>, bool)) -> u32 {
        *self.index.entry(fp).or_insert_with(|| {
            self.pats.push(fp);
            (self.pats.len() - 1) as u32
        })
    }

    fn build(self, reuse: &Reuse) -> Prefiltered {
        let (prefilter, key) = reuse.prefilter(&self.pats);
        Prefiltered {
            prefilter,
            key,
            pattern_sigs: Arc::new(RuleLists::by_id(self.pats.len(), &self.uses)),
            extra: None,
        }
    }
}

/// The buffer of what a rule's `base64_decode` decoded: not an application layer's.
const BASE64_DATA: Buffer = Buffer::App(AppBuffer::Base64Data);

/// The application protocol a rule's header names (`alert smtp`), if netsieve parses it.
fn header_proto(rule: &Rule) -> Option<AppProto> {
    match &rule.proto {
        Proto::App(p) => proto_by_name(p),
        _ => None,
    }
}

/// The application protocol a rule needs, or the first name that needs one the
/// engine does not parse (a protocol, buffer or transform).
fn app_needs(rule: &Rule) -> (Option<AppProto>, Option<String>) {
    let mut app = None;
    let mut set = |p: AppProto, name: &str| -> Option<String> {
        match app {
            Some(q) if q != p => Some(format!("{name} (mixes protocols)")),
            _ => {
                app = Some(p);
                None
            }
        }
    };
    for need in &rule.app_layer {
        let r = match need {
            AppNeed::Buffer(AppBuffer::Base64Data) => None,
            AppNeed::Buffer(b) => match Buf::new(*b, header_proto(rule)) {
                Some(b) => set(b.proto(), b.buffer().name()),
                None => Some(b.name().to_string()),
            },
            // Snort 3's `service:` widens a rule to a service; it does not restrict it.
            AppNeed::Protocol(p) if rule.services.contains(p) => None,
            AppNeed::Protocol(p) => match proto_by_name(p) {
                Some(ap) => set(ap, p),
                None => Some(p.clone()),
            },
        };
        if r.is_some() {
            return (None, r);
        }
    }
    for l in &rule.lists {
        if l.buffer == Buffer::Payload && !l.transforms.is_empty() {
            return (None, Some(format!("{} on the payload", l.transforms[0])));
        }
    }
    (app, None)
}

/// A rule's lists over frames, if it has any: all of one frame type.
fn frame_sig(
    rule: &Rule,
    vars: &mut Vec<String>,
    regexes: &crate::pcre::Regexes,
) -> Result<Option<FrameSig>, ListError> {
    let mut frame: Option<FrameSig> = None;
    for l in &rule.lists {
        let Buffer::Frame(ty) = l.buffer else {
            continue;
        };
        let f = frame.get_or_insert_with(|| FrameSig {
            ty,
            lists: Vec::new(),
        });
        if f.ty != ty {
            return Err(ListError::from(format!("frames {} and {ty}", f.ty)));
        }
        let transforms = l
            .transforms
            .iter()
            .map(|t| Xform::new(t, &rule.file))
            .collect::<Result<_, _>>()
            .map_err(ListError::from)?;
        f.lists
            .push((transforms, compile_list(&l.matches, vars, regexes)?));
    }
    Ok(frame)
}

/// A rule's transaction lists, directions and stages; `None` for an application-layer
/// rule that has only payload lists (it is judged on packets and streams).
fn tx_sig(
    rule: &Rule,
    vars: &mut Vec<String>,
    lua_tx: bool,
    regexes: &crate::pcre::Regexes,
) -> Result<Option<TxSig>, ListError> {
    let mut lists = Vec::new();
    for l in &rule.lists {
        let Buffer::App(b) = l.buffer else {
            continue;
        };
        if l.buffer == BASE64_DATA {
            continue;
        }
        let buf = Buf::new(b, header_proto(rule))
            .ok_or_else(|| ListError::from(format!("buffer {b}")))?;
        lists.push(TxList {
            buf,
            transforms: l
                .transforms
                .iter()
                .map(|t| Xform::new(t, &rule.file))
                .collect::<Result<_, _>>()
                .map_err(ListError::from)?,
            matches: compile_list(&l.matches, vars, regexes)?,
            absent: l.absent,
        });
    }
    // No buffer of its protocol: a rule with payload lists is judged on packets and
    // streams; one with none at all (`alert http any any -> any any (sid:1;)`) is
    // Suricata's "application layer protocol" type, judged on every packet of a flow
    // that speaks the protocol.
    // A rule whose scripts read transactions is judged on them, at its hook's state.
    if lists.is_empty() && !lua_tx {
        return Ok(None);
    }
    if lists.is_empty()
        && let Some(netsieve_rules::Hook::App(h)) = rule.hook
    {
        let proto = match &rule.proto {
            Proto::App(p) => p.as_str(),
            _ => "",
        };
        let last = netsieve_rules::app_states(proto, h.dir).len() - 1;
        let st = match usize::from(h.state) {
            0 => Stage::Line,
            s if s >= last => Stage::Done,
            _ => Stage::Head,
        };
        let mut stage = PerDir::splat(Stage::Done);
        stage[h.dir] = st;
        let dirs = PerDir::new(h.dir == Direction::ToServer, h.dir == Direction::ToClient);
        return Ok(Some(TxSig { lists, dirs, stage }));
    }
    let req = lists.iter().any(|l| l.buf.side() == Side::Request);
    let resp = lists.iter().any(|l| l.buf.side() == Side::Response);
    let f = &rule.flow;
    let dirs = if f.to_server {
        PerDir::new(true, false)
    } else if f.to_client || resp {
        PerDir::new(false, true)
    } else if req || lists.is_empty() {
        PerDir::new(true, false)
    } else {
        PerDir::splat(true)
    };
    // A rule without buffers waits for the head, as it did before request
    // lines were a stage of their own; one with buffers, for what they need.
    let mut stage = if lists.is_empty() {
        PerDir::splat(Stage::Head)
    } else {
        PerDir::splat(Stage::Line)
    };
    for (d, st) in stage.iter_mut() {
        for l in &lists {
            let own = match l.buf.side() {
                Side::Either => true,
                Side::Request => d == Direction::ToServer,
                Side::Response => d == Direction::ToClient,
            };
            // A buffer of the other message only needs this one to have begun.
            *st = (*st).max(if own { l.buf.stage() } else { Stage::Line });
        }
    }
    Ok(Some(TxSig { lists, dirs, stage }))
}

/// A transaction buffer as rules see it: the buffer and the transforms applied to it.
type TxBuf = (Buf, Vec<Xform>);

/// A transaction rule's fast pattern: the buffer (with the transforms its list applies)
/// and the bytes the prefilter looks for there.
fn tx_fast_pattern(rule: &Rule) -> Option<(TxBuf, (Vec<u8>, bool))> {
    let mut best: Option<(_, Buf, &[Transform], &netsieve_rules::Content)> = None;
    // A list that may hold without its buffer (`absent`) cannot prefilter.
    for l in rule
        .lists
        .iter()
        .filter(|l| l.absent == netsieve_rules::Absent::No)
    {
        let Some(buf) = l.buffer.app().and_then(|b| Buf::new(b, header_proto(rule))) else {
            continue;
        };
        for m in &l.matches {
            if let Match::Content(c) = m
                && !c.negated
            {
                let sc = score(c);
                if best.as_ref().is_none_or(|b| sc > b.0) {
                    best = Some((sc, buf, &l.transforms, c));
                }
            }
        }
    }
    let (_, buf, transforms, c) = best?;
    // A transform that does not compile fails the rule where its lists are compiled.
    let transforms = transforms
        .iter()
        .map(|t| Xform::new(t, &rule.file))
        .collect::<Result<_, _>>()
        .ok()?;
    Some(((buf, transforms), (prefilter_bytes(c).to_vec(), c.nocase)))
}

fn build_tx_group(sigs: &[Arc<Sig>], g: usize, reuse: &Reuse) -> TxGroup {
    let d = Direction::from_index(g % 2);
    let mut fast = Vec::new();
    let mut always = Vec::new();
    for (i, s) in sigs.iter().enumerate() {
        let (Some(t), Some(p)) = (&s.tx, s.app) else {
            continue;
        };
        if tx_group(p, d) != g || !t.dirs[d] || s.rule.firewall {
            continue;
        }
        match s.tx_fast.clone() {
            Some(fp) => fast.push((i as u32, fp)),
            None => always.push(i as u32),
        }
    }
    // Per buffer as the rules see it (transformed), twins together: one prefilter over
    // their patterns. (A `pcrexform`'s compiled expression has a cache inside; an
    // `Xform` is hashed and compared by its rule text only, which does not change.)
    #[allow(clippy::mutable_key_type)]
    let mut by_scan: HashMap<&TxBuf, (Vec<Buf>, Patterns)> = HashMap::new();
    // Each buffer's scan: its own, or its twin's if the twin came first.
    #[allow(clippy::mutable_key_type)]
    let mut scan_of: HashMap<&TxBuf, &TxBuf> = HashMap::new();
    let mut order = Vec::new();
    for (rule, (buf, pat)) in &fast {
        let key = match scan_of.get(buf) {
            Some(k) => *k,
            None => {
                let twin = buf.0.twin(d).map(|t| (t, buf.1.clone()));
                let k = twin.and_then(|t| scan_of.get(&t).copied()).unwrap_or(buf);
                scan_of.insert(buf, k);
                k
            }
        };
        let (bufs, pats) = by_scan.entry(key).or_insert_with(|| {
            order.push(key);
            Default::default()
        });
        if !bufs.contains(&buf.0) {
            bufs.push(buf.0);
        }
        pats.add(pat, *rule);
    }
    TxGroup {
        scans: order
            .into_iter()
            .map(|key| {
                let (bufs, pats) = by_scan.remove(key).expect("collected");
                TxScan {
                    bufs,
                    transforms: key.1.clone(),
                    prefilter: pats.build(reuse),
                }
            })
            .collect(),
        always,
    }
}

/// DFC's length classes for rule prefilters: 1, 2, 3, 4-7 and 8+ bytes. The paper's
/// default puts 2- and 3-byte patterns in one class keyed by their first two bytes, so
/// that a common pair (`|00 00|` in binary payloads) is looked up and compared for
/// every 3-byte content that opens with it (`|00 00 04|`, `|00 00 FC|`, ...). Their own
/// class is keyed by all three bytes. Measured over ndpi1 (callgrind, scan only):
/// ET 2024 1.622 -> 1.558 G instructions, ET 2019 1.918 -> 1.897 G; `[1, 2, 3, 4, 6,
/// 8]`, `[1, 2, 3, 4, 5, 8]` and `[1, 2, 3, 4, 8, 16]` did less well.
const PREFILTER_LENGTH_CLASSES: [usize; 5] = [1, 2, 3, 4, 8];

fn build_prefilter<P: Borrow<(Vec<u8>, bool)>>(pats: &[P], mpm: Mpm) -> Prefilter {
    if pats.is_empty() {
        Prefilter::None
    } else {
        match mpm {
            Mpm::Dfc => {
                let mut b = dfc::Builder::new();
                b.length_classes(&PREFILTER_LENGTH_CLASSES);
                for (id, pat) in pats.iter().enumerate() {
                    let (p, nocase) = pat.borrow();
                    b.add(id as u32, p, *nocase);
                }
                match b.build() {
                    Ok(m) => Prefilter::Dfc(m),
                    // Cannot happen for rule contents (never empty); if it did, the
                    // other matcher keeps every rule reachable.
                    Err(_) => ac_prefilter(pats),
                }
            }
            Mpm::Ac => ac_prefilter(pats),
        }
    }
}

fn ac_prefilter<P: Borrow<(Vec<u8>, bool)>>(pats: &[P]) -> Prefilter {
    // The aho-corasick crate has one case setting per automaton: fold everything
    // (nocase) and let the full evaluation check case.
    aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(pats.iter().map(|p| &p.borrow().0))
        .map(Prefilter::Ac)
        .expect("aho-corasick accepts any set of non-empty literals")
}

#[cfg(test)]
mod permute_tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn permute_in_place_equals_building_a_new_vector(
            order in (0usize..60).prop_flat_map(|n| Just((0..n).collect::<Vec<_>>()).prop_shuffle())
        ) {
            let v: Vec<usize> = (0..order.len()).map(|i| i * 10).collect();
            let want: Vec<usize> = order.iter().map(|&i| v[i]).collect();
            let mut got = v.clone();
            super::permute(&mut got, &order);
            prop_assert_eq!(got, want);
        }
    }
}

#[cfg(test)]
mod rule_lists_tests {
    use super::RuleLists;
    use proptest::prelude::*;

    proptest! {
        /// Counting and placing gives the lists a vector per id gives.
        #[test]
        fn lists_by_id_equal_a_vector_per_id(
            n in 0usize..20,
            raw in proptest::collection::vec((0u32..20, any::<u32>()), 0..200),
        ) {
            let pairs: Vec<(u32, u32)> = raw
                .into_iter()
                .filter(|&(id, _)| (id as usize) < n)
                .collect();
            let mut per_id = vec![Vec::new(); n];
            for &(id, r) in &pairs {
                per_id[id as usize].push(r);
            }
            let want: RuleLists = per_id.into_iter().collect();
            prop_assert_eq!(RuleLists::by_id(n, &pairs), want);
        }
    }
}

#[cfg(test)]
mod fast_pattern_tests {
    use netsieve_rules::{Vars, parse_rule};

    fn fast(options: &str) -> Vec<u8> {
        let rule = parse_rule(
            &format!("alert udp any any -> any any ({options} sid:1;)"),
            &Vars::default(),
        )
        .unwrap();
        super::fast_pattern(&rule).expect("a fast pattern").0
    }

    #[test]
    fn the_rarest_content_is_the_fast_pattern_unless_one_is_marked() {
        // Suricata would take the longer run of zeros.
        assert_eq!(
            fast(r#"content:"|00 00 00 00 00 00|"; content:"evil";"#),
            b"evil"
        );
        assert_eq!(
            fast(r#"content:"|00 00 00 00 00 00|"; fast_pattern; content:"evil";"#),
            b"\0\0\0\0\0\0"
        );
        // Among words, the longer.
        assert_eq!(fast(r#"content:"abc"; content:"abcd";"#), b"abcd");
    }

    proptest::proptest! {
        /// The prefilter's bytes are a suffix of the content (so every buffer that holds
        /// the content holds them, and they end where it ends), at least 4 bytes long
        /// unless the content is shorter.
        #[test]
        fn the_prefilter_looks_for_a_suffix_of_the_content(
            pat in proptest::collection::vec(
                proptest::sample::select(vec![0u8, 0, 0, b'a', b'Z', 0x17, 0xff, b' ']),
                1..40,
            ),
            nocase: bool,
        ) {
            let c = netsieve_rules::Content {
                pattern: pat.clone(),
                nocase,
                ..Default::default()
            };
            let got = super::prefilter_bytes(&c);
            proptest::prop_assert!(pat.ends_with(got));
            proptest::prop_assert!(got.len() >= pat.len().min(4));
        }
    }

    #[test]
    fn a_common_head_is_left_to_the_rule_a_rare_suffix_is_looked_for() {
        // Eleven zeros then "2": the prefilter looks for the end of the run and the "2",
        // so it does not stop at every run of zeros.
        let got = fast(r#"content:"|00 00 00 00 00 00 00 00 00 00 00 32|"; fast_pattern:only;"#);
        assert!(got.len() >= 4 && got.len() < 12, "{got:?}");
        assert!(b"\0\0\0\0\0\0\0\0\0\0\0\x32".ends_with(&got));
        // Applied to the part `fast_pattern:offset,length` names.
        let got = fast(r#"content:"|00 00 00 00 00 00 00 00 00 00|Linux|20|"; fast_pattern:1,15;"#);
        assert!(got.len() >= 4 && got.ends_with(b"Linux "), "{got:?}");
        // Text is kept whole.
        assert_eq!(
            fast(r#"content:"User-Agent|3a 20|curl";"#),
            b"User-Agent: curl"
        );
    }
}
