//! The rule IR: what a parsed rule says, in plain data.

use crate::vars::{AddrExpr, PortExpr};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Alert,
    Drop,
    Reject,
    Pass,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Alert => "alert",
            Action::Drop => "drop",
            Action::Reject => "reject",
            Action::Pass => "pass",
        }
    }
}

/// The protocol of the rule header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proto {
    Ip,
    Tcp,
    Udp,
    Icmp,
    /// `tcp-pkt`: TCP packets only, never the reassembled stream.
    TcpPkt,
    /// `tcp-stream`: the reassembled TCP stream only.
    TcpStream,
    /// An application protocol (`http`, `dns`, `tls`, ...), carried by TCP or UDP.
    App(String),
}

/// A number or the name of a `byte_extract` variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    Num(i64),
    Var(String),
}

/// A comparison as `dsize`, `ttl`, `itype`, `bsize` and friends write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq(i64),
    Ne(i64),
    Lt(i64),
    Le(i64),
    Gt(i64),
    Ge(i64),
    /// Exclusive range `a<>b`.
    Between(i64, i64),
    /// Inclusive range `a-b`.
    Range(i64, i64),
}

impl Cmp {
    pub fn test(self, v: i64) -> bool {
        match self {
            Cmp::Eq(a) => v == a,
            Cmp::Ne(a) => v != a,
            Cmp::Lt(a) => v < a,
            Cmp::Le(a) => v <= a,
            Cmp::Gt(a) => v > a,
            Cmp::Ge(a) => v >= a,
            Cmp::Between(a, b) => a < v && v < b,
            Cmp::Range(a, b) => a <= v && v <= b,
        }
    }
}

/// The buffer a list of matches inspects.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Buffer {
    /// The packet payload, and for TCP rules the reassembled stream.
    Payload,
    /// An application-layer buffer, by its Suricata 5+ name (`http.uri`, `dns.query`).
    App(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Content {
    pub pattern: Vec<u8>,
    pub nocase: bool,
    pub negated: bool,
    pub offset: Option<Val>,
    pub depth: Option<Val>,
    pub distance: Option<Val>,
    pub within: Option<Val>,
    pub fast_pattern: bool,
    pub fast_pattern_only: bool,
    /// `fast_pattern:offset,length`: only this part goes to the prefilter.
    pub fast_pattern_chop: Option<(u16, u16)>,
    pub rawbytes: bool,
    pub startswith: bool,
    pub endswith: bool,
}

impl Content {
    /// Relative to the previous match (distance/within).
    pub fn is_relative(&self) -> bool {
        self.distance.is_some() || self.within.is_some()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Pcre {
    /// The expression between the slashes, as written.
    pub pattern: String,
    /// Modifier letters after the closing slash.
    pub flags: String,
    pub negated: bool,
    /// `R`: starts where the previous match ended.
    pub relative: bool,
    /// Where the `pcre` option starts in its line (1-based; 0 when not parsed from a
    /// line), for errors found when it is compiled.
    pub column: usize,
}

impl Pcre {
    pub fn has(&self, flag: char) -> bool {
        self.flags.contains(flag)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    Big,
    Little,
}

/// How `byte_test`/`byte_jump`/`byte_extract` read their number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteRead {
    pub bytes: u8,
    pub offset: Val,
    pub relative: bool,
    pub endian: Endian,
    /// Digits in this base instead of binary.
    pub string_base: Option<u32>,
    pub bitmask: Option<u64>,
    pub dce: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ByteOp {
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    And,
    Or,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    Content(Content),
    Pcre(Pcre),
    ByteTest {
        read: ByteRead,
        negated: bool,
        op: ByteOp,
        value: Val,
    },
    ByteJump {
        read: ByteRead,
        multiplier: u64,
        align: bool,
        from_beginning: bool,
        from_end: bool,
        post_offset: i64,
    },
    ByteExtract {
        read: ByteRead,
        name: String,
        multiplier: u64,
        align: u8,
    },
    IsDataAt {
        offset: Val,
        relative: bool,
        negated: bool,
    },
    /// The buffer's length.
    Bsize(Cmp),
    /// The buffer's value as an unsigned integer (DNS's `dns.opcode`, `dns.rcode`,
    /// `dns.rrtype`: their buffers hold the number, big-endian).
    Uint(Cmp),
}

/// A list of matches over one buffer, in rule order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct List {
    pub buffer: Buffer,
    pub matches: Vec<Match>,
    /// Transforms applied to the buffer before matching (`dotprefix`, `to_lowercase`,
    /// ...), in rule order.
    pub transforms: Vec<String>,
}

/// `flow:` options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FlowOpts {
    pub established: bool,
    pub not_established: bool,
    pub stateless: bool,
    pub to_server: bool,
    pub to_client: bool,
    pub only_stream: bool,
    pub no_stream: bool,
    pub only_frag: bool,
    pub no_frag: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowbitCmd {
    Set,
    Unset,
    Toggle,
    IsSet,
    IsNotSet,
}

/// A `flowbits` option. Names joined with `|` (isset: any of them) or `&` (all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flowbit {
    pub cmd: FlowbitCmd,
    pub names: Vec<String>,
    pub any: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    BySrc,
    ByDst,
    ByRule,
    ByBoth,
    ByFlow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdKind {
    Limit,
    Threshold,
    Both,
    /// `detection_filter`: alert on every hit after the first `count` in the window.
    DetectionFilter,
    /// Alert on hit `count`, then `count * multiplier`, `count * multiplier²`, ...
    Backoff,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Threshold {
    pub kind: ThresholdKind,
    pub track: Track,
    pub count: u64,
    /// The window; 0 for `backoff`, which has none.
    pub seconds: u64,
    /// `backoff` only.
    pub multiplier: u64,
}

/// Header-level conditions that inspect no buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    Dsize(Cmp),
    Ttl(Cmp),
    Itype(Cmp),
    Icode(Cmp),
    IcmpId(u16),
    IcmpSeq(u16),
    /// `id`: the IPv4 identification field.
    IpId(u16),
    /// `seq` and `ack`: the TCP sequence and acknowledgement numbers.
    TcpSeq(u32),
    TcpAck(u32),
    IpProto {
        negated: bool,
        cmp: Cmp,
    },
    /// TCP flags: the bits that must be set (`mode` says how), and bits ignored.
    Flags {
        mode: FlagsMode,
        bits: u8,
        ignore: u8,
    },
    SameIp,
    /// `stream_size:server|client|both|either, op, n`.
    StreamSize {
        side: StreamSide,
        cmp: Cmp,
    },
    /// An IPv4 option must be present (bits of `netsieve_packet::decode::ipopt`; here
    /// by name: "rr", "any", ...).
    IpOpts(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagsMode {
    /// Exactly these bits (among those not ignored).
    Exact,
    /// `+`: at least these bits.
    All,
    /// `*`: any of these bits.
    Any,
    /// `!`: not exactly these bits.
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamSide {
    Server,
    Client,
    Both,
    Either,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    SrcIp,
    DestIp,
}

/// One parsed rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub file: String,
    pub line: usize,
    pub action: Action,
    pub proto: Proto,
    pub src: AddrExpr,
    pub sport: PortExpr,
    /// `<>`: also matches with source and destination swapped.
    pub bidirectional: bool,
    pub dst: AddrExpr,
    pub dport: PortExpr,
    pub sid: u32,
    pub gid: u32,
    pub rev: u32,
    pub msg: String,
    pub classtype: Option<String>,
    pub priority: Option<u8>,
    pub references: Vec<String>,
    pub metadata: Vec<String>,
    pub target: Option<Target>,
    pub lists: Vec<List>,
    pub conds: Vec<Cond>,
    pub flow: FlowOpts,
    pub flowbits: Vec<Flowbit>,
    pub noalert: bool,
    pub threshold: Option<Threshold>,
    pub detection_filter: Option<Threshold>,
    /// Snort 3 `service:` names.
    pub services: Vec<String>,
    /// Keywords that need the application layer (buffers, app-layer protocols), in the
    /// order first seen; empty for rules judged on packets and streams alone.
    pub app_layer: Vec<String>,
    /// Keywords that parse but that the engine does not evaluate yet.
    pub unsupported: Vec<String>,
}

impl Rule {
    /// The lists over the packet payload / stream.
    pub fn payload_lists(&self) -> impl Iterator<Item = &List> {
        self.lists.iter().filter(|l| l.buffer == Buffer::Payload)
    }
}
