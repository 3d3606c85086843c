//! The rule model: what a rule matches, what it does, and how a packet is described to it.
//!
//! A rule has a *header part* (address prefixes, port ranges, protocol range, TCP flags
//! under a mask) that the fast path can index, and a list of *complex* matches (connection
//! state, payload strings, length, TTL, rate limits, sampling, interfaces) that only the
//! slow path evaluates. A rule without complex matches is *simple*.
//!
//! Addresses are 128-bit: an IPv4 address `a.b.c.d` is the IPv4-mapped `::ffff:a.b.c.d`,
//! so an IPv4 prefix `/n` is a 128-bit prefix `/96+n` and an IPv4 rule never matches an
//! IPv6 packet.

use std::fmt;

/// A 128-bit address prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Prefix {
    pub addr: u128,
    pub len: u8,
}

/// The IPv4-mapped prefix `::ffff:0:0/96`: every IPv4 address.
pub const V4_ANY: Prefix = Prefix {
    addr: 0xffff_0000_0000,
    len: 96,
};
/// Every address of either family.
pub const ANY: Prefix = Prefix { addr: 0, len: 0 };

impl Prefix {
    pub fn new(addr: u128, len: u8) -> Prefix {
        Prefix {
            addr: addr & mask(len),
            len,
        }
    }
    /// An IPv4 prefix.
    pub fn v4(addr: u32, len: u8) -> Prefix {
        Prefix::new(0xffff_0000_0000 | addr as u128, 96 + len.min(32))
    }
    pub fn contains(&self, a: u128) -> bool {
        a & mask(self.len) == self.addr
    }
}

/// The mask of a `/len` prefix.
pub fn mask(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - len.min(128) as u32)
    }
}

/// The IPv4-mapped form of an IPv4 address.
pub fn v4(a: u32) -> u128 {
    0xffff_0000_0000 | a as u128
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.len >= 96 && self.addr >> 32 == 0xffff {
            let a = std::net::Ipv4Addr::from(self.addr as u32);
            write!(f, "{a}/{}", self.len - 96)
        } else {
            write!(f, "{}/{}", std::net::Ipv6Addr::from(self.addr), self.len)
        }
    }
}

/// An inclusive range of port or protocol numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    pub lo: u16,
    pub hi: u16,
}

impl Range {
    pub const fn new(lo: u16, hi: u16) -> Range {
        Range { lo, hi }
    }
    pub const fn exact(v: u16) -> Range {
        Range { lo: v, hi: v }
    }
    pub fn contains(&self, v: u16) -> bool {
        self.lo <= v && v <= self.hi
    }
}

pub const ANY_PORT: Range = Range::new(0, 65535);
pub const ANY_PROTO: Range = Range::new(0, 255);

/// The header part of a rule as the fast path sees it: one conjunction of field tests.
/// A rule may need several (`-m multiport`, a negated address), see [`Rule::header`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    pub src: Prefix,
    pub dst: Prefix,
    pub sport: Range,
    pub dport: Range,
    pub proto: Range,
    /// TCP flags: `flags & mask == value`. A mask of 0 matches everything.
    pub flags: u16,
    pub flags_mask: u16,
}

impl Header {
    /// Matches every IPv4 packet.
    pub fn any_v4() -> Header {
        Header {
            src: V4_ANY,
            dst: V4_ANY,
            sport: ANY_PORT,
            dport: ANY_PORT,
            proto: ANY_PROTO,
            flags: 0,
            flags_mask: 0,
        }
    }
    pub fn matches(&self, k: &Key) -> bool {
        self.src.contains(k.src)
            && self.dst.contains(k.dst)
            && self.sport.contains(k.sport)
            && self.dport.contains(k.dport)
            && self.proto.contains(k.proto as u16)
            && k.flags & self.flags_mask == self.flags
    }
}

/// The header fields of a packet the fast path classifies on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Key {
    pub src: u128,
    pub dst: u128,
    /// Ports; 0 for protocols without ports. For ICMP, iptables' `--icmp-type` is a
    /// complex match, not a port.
    pub sport: u16,
    pub dport: u16,
    pub proto: u8,
    /// TCP flags (the low 12 bits of the flags word); 0 for other protocols.
    pub flags: u16,
}

/// Connection-tracking states, as iptables' `-m state` / `-m conntrack --ctstate` name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CtState {
    New,
    Established,
    Related,
    Invalid,
    Untracked,
}

impl CtState {
    pub fn bit(self) -> u8 {
        match self {
            CtState::New => 1,
            CtState::Established => 2,
            CtState::Related => 4,
            CtState::Invalid => 8,
            CtState::Untracked => 16,
        }
    }
}

/// Everything a rule may look at: the header key and, for complex matches, the rest.
#[derive(Clone, Copy, Debug)]
pub struct Packet<'a> {
    pub key: Key,
    /// The packet from its IP header on (what `-m string` offsets and `-m length` count).
    pub ip: &'a [u8],
    /// IP total length (IPv4) or payload length + 40 (IPv6).
    pub len: u16,
    pub ttl: u8,
    pub icmp_type: Option<(u8, u8)>,
    pub state: CtState,
    /// Seconds since the start of the capture; `-m limit` refills by it.
    pub time: f64,
    pub iif: &'a str,
    pub oif: &'a str,
}

impl<'a> Packet<'a> {
    /// A packet with only header fields, for rule sets without complex matches
    /// (ClassBench traces).
    pub fn header_only(key: Key) -> Packet<'static> {
        Packet {
            key,
            ip: &[],
            len: 0,
            ttl: 64,
            icmp_type: None,
            state: CtState::New,
            time: 0.0,
            iif: "",
            oif: "",
        }
    }
}

/// What happens to a packet whose first match is a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Accept,
    Drop,
    Reject,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Accept => "ACCEPT",
            Action::Drop => "DROP",
            Action::Reject => "REJECT",
        }
    }
}

/// A match only the slow path evaluates.
#[derive(Clone, Debug)]
pub enum Complex {
    /// `-m state --state` / `-m conntrack --ctstate`: a set of [`CtState::bit`]s.
    State { bits: u8, negate: bool },
    /// `-m string`: the pattern must lie within bytes `from..to` of the packet (counted
    /// from the IP header).
    String(StringMatch),
    /// `-m length --length lo:hi`.
    Length { range: Range, negate: bool },
    /// `-m ttl --ttl-eq/--ttl-lt/--ttl-gt`.
    Ttl { op: TtlOp, value: u8 },
    /// `-m limit --limit N/unit --limit-burst B`: a token bucket.
    Limit { per_sec: f64, burst: u32 },
    /// `-m statistic --mode random --probability p`.
    Random { probability: f64 },
    /// `-m statistic --mode nth --every n --packet p`.
    Nth { every: u32, packet: u32 },
    /// `-p icmp --icmp-type T[/C]`.
    IcmpType {
        typ: u8,
        code: Option<u8>,
        negate: bool,
    },
    /// `-i` / `-o`: an interface name, `+` at the end matching any suffix.
    Iface {
        out: bool,
        name: String,
        negate: bool,
    },
    /// A header test the fast path cannot index for this rule (a TCP-flags test under
    /// `!`, or a header part that would expand to too many entries).
    Header { alts: Vec<Header>, negate: bool },
    /// Holds unless the header and every match of a `RETURN` rule hold: flattening a user
    /// chain puts this on the rules after a conditional `RETURN`.
    Unless {
        header: Vec<Header>,
        all: Vec<Complex>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtlOp {
    Eq,
    Lt,
    Gt,
}

/// A payload string test, with its DFC matcher.
#[derive(Clone)]
pub struct StringMatch {
    pub pattern: Vec<u8>,
    pub from: usize,
    pub to: usize,
    pub icase: bool,
    pub negate: bool,
    matcher: std::sync::Arc<dfc::Matcher>,
}

impl fmt::Debug for StringMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StringMatch")
            .field("pattern", &String::from_utf8_lossy(&self.pattern))
            .field("from", &self.from)
            .field("to", &self.to)
            .field("icase", &self.icase)
            .field("negate", &self.negate)
            .finish()
    }
}

impl StringMatch {
    pub fn new(pattern: Vec<u8>, from: usize, to: usize, icase: bool, negate: bool) -> Self {
        let mut b = dfc::Builder::new();
        b.add(0, &pattern, icase);
        // An empty pattern is refused by the parser; a build error cannot happen for one
        // non-empty pattern, but stay total.
        let matcher = b
            .build()
            .unwrap_or_else(|_| dfc::Builder::new().build().unwrap());
        StringMatch {
            pattern,
            from,
            to,
            icase,
            negate,
            matcher: std::sync::Arc::new(matcher),
        }
    }
    pub fn matches(&self, ip: &[u8]) -> bool {
        let end = self.to.min(ip.len());
        let found = self.from < end && self.matcher.is_match(&ip[self.from..end]);
        found != self.negate
    }
}

/// Per-rule mutable state of stateful matches (`limit`, `statistic`). Both the linear
/// reference and the hybrid classifier keep their own, so they can be compared.
#[derive(Clone, Debug, Default)]
pub struct MatchState {
    tokens: f64,
    last: f64,
    started: bool,
    count: u32,
    rng: u64,
}

/// One rule of an ordered rule set.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Alternatives for the header part; the rule's header matches if any does. Most
    /// rules have one.
    pub header: Vec<Header>,
    pub complex: Vec<Complex>,
    pub action: Action,
    /// Where the rule came from (`file:line`, or ClassBench line), for reports.
    pub origin: String,
    /// The rule as its file writes it (empty for rules made in code).
    pub text: String,
    /// The chains a packet goes through to reach it, the classified one first
    /// (`INPUT`, `IN_public`, `IN_public_allow`); empty for ClassBench rules.
    pub chain: Vec<String>,
    /// Its number in the classified chain, as `iptables -L --line-numbers` counts (from
    /// 1): its own, or that of the jump that leads to it; 0 for ClassBench rules.
    pub top: u32,
}

impl Rule {
    pub fn is_simple(&self) -> bool {
        self.complex.is_empty()
    }
    pub fn header_matches(&self, k: &Key) -> bool {
        self.header.iter().any(|h| h.matches(k))
    }
    /// The whole rule. `state` holds one [`MatchState`] per complex match; a stateful
    /// match changes it only when it is evaluated, as in netfilter, where a match after a
    /// failed one is not reached.
    pub fn matches(&self, p: &Packet<'_>, state: &mut [MatchState]) -> bool {
        if !self.header_matches(&p.key) {
            return false;
        }
        self.complex
            .iter()
            .zip(state.iter_mut())
            .all(|(c, st)| c.matches(p, st))
    }
    /// Fresh state for [`Rule::matches`].
    pub fn new_state(&self) -> Vec<MatchState> {
        vec![MatchState::default(); self.complex.len()]
    }
}

impl Complex {
    /// Whether evaluating the match changes its state.
    pub fn is_stateful(&self) -> bool {
        match self {
            Complex::Limit { .. } | Complex::Random { .. } | Complex::Nth { .. } => true,
            Complex::Unless { all, .. } => all.iter().any(Complex::is_stateful),
            _ => false,
        }
    }
    pub fn matches(&self, p: &Packet<'_>, st: &mut MatchState) -> bool {
        match self {
            Complex::State { bits, negate } => (bits & p.state.bit() != 0) != *negate,
            Complex::String(s) => s.matches(p.ip),
            Complex::Length { range, negate } => range.contains(p.len) != *negate,
            Complex::Ttl { op, value } => match op {
                TtlOp::Eq => p.ttl == *value,
                TtlOp::Lt => p.ttl < *value,
                TtlOp::Gt => p.ttl > *value,
            },
            Complex::Limit { per_sec, burst } => {
                if !st.started {
                    st.started = true;
                    st.tokens = *burst as f64;
                    st.last = p.time;
                }
                let dt = (p.time - st.last).max(0.0);
                st.last = p.time;
                st.tokens = (st.tokens + dt * per_sec).min(*burst as f64);
                if st.tokens >= 1.0 {
                    st.tokens -= 1.0;
                    true
                } else {
                    false
                }
            }
            Complex::Random { probability } => {
                // xorshift64*, seeded the same in every evaluator.
                if st.rng == 0 {
                    st.rng = 0x9e37_79b9_7f4a_7c15;
                }
                st.rng ^= st.rng >> 12;
                st.rng ^= st.rng << 25;
                st.rng ^= st.rng >> 27;
                let r = st.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
                (r as f64) / ((1u64 << 53) as f64) < *probability
            }
            Complex::Nth { every, packet } => {
                let hit = st.count == *packet;
                st.count = if st.count + 1 >= *every {
                    0
                } else {
                    st.count + 1
                };
                hit
            }
            Complex::IcmpType { typ, code, negate } => {
                let m = p
                    .icmp_type
                    .is_some_and(|(t, c)| t == *typ && code.is_none_or(|k| k == c));
                m != *negate
            }
            Complex::Iface { out, name, negate } => {
                let have = if *out { p.oif } else { p.iif };
                let m = match name.strip_suffix('+') {
                    Some(prefix) => have.starts_with(prefix),
                    None => have == name,
                };
                m != *negate
            }
            Complex::Header { alts, negate } => alts.iter().any(|h| h.matches(&p.key)) != *negate,
            Complex::Unless { header, all } => {
                // Stateless by construction: the parser refuses a stateful match in a
                // conditional RETURN, whose state would be consumed once per later rule.
                let mut scratch = MatchState::default();
                !(header.iter().any(|h| h.matches(&p.key))
                    && all.iter().all(|c| c.matches(p, &mut scratch)))
            }
        }
    }
}

/// An ordered rule set with the action for packets no rule matches.
#[derive(Clone, Debug)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    pub policy: Action,
}
