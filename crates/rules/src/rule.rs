//! The rule IR: what a parsed rule says, in plain data.

use crate::buffer::{AppBuffer, AppNeed, HeaderBuffer, Transform};
pub use crate::hook::{AppHook, Hook, PacketHook, Scope, app_states};
use crate::vars::{AddrExpr, PortExpr};
use netsieve_wire::{FrameType, named};

named! {
    pub enum Action {
        Alert = "alert",
        Drop = "drop",
        Reject = "reject",
        Pass = "pass",
        /// A firewall rule's verdict: let the packet, flow, hook or transaction through.
        Accept = "accept",
    }
}

/// The protocol of the rule header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proto {
    Ip,
    Tcp,
    Udp,
    Icmp,
    /// SCTP, with the ports of its common header.
    Sctp,
    /// `tcp-pkt`: TCP packets only, never the reassembled stream.
    TcpPkt,
    /// `tcp-stream`: the reassembled TCP stream only.
    TcpStream,
    /// An application protocol (`http`, `dns`, `tls`, ...), carried by TCP or UDP.
    App(String),
}

impl Proto {
    /// The protocol a rule header names (lowercase), if it is one.
    pub fn by_name(name: &str) -> Option<Proto> {
        Some(match name {
            "ip" | "ipv4" | "ipv6" | "pkthdr" => Proto::Ip,
            "tcp" => Proto::Tcp,
            "udp" => Proto::Udp,
            "icmp" | "icmpv4" | "icmpv6" => Proto::Icmp,
            "sctp" => Proto::Sctp,
            "tcp-pkt" => Proto::TcpPkt,
            "tcp-stream" => Proto::TcpStream,
            p if APP_PROTOCOLS.contains(&p) => Proto::App(p.to_string()),
            _ => return None,
        })
    }

    pub fn name(&self) -> &str {
        match self {
            Proto::Ip => "ip",
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
            Proto::Icmp => "icmp",
            Proto::Sctp => "sctp",
            Proto::TcpPkt => "tcp-pkt",
            Proto::TcpStream => "tcp-stream",
            Proto::App(p) => p,
        }
    }
}

/// Application protocol names a rule header may use.
const APP_PROTOCOLS: &[&str] = &[
    "http",
    "http1",
    "http2",
    "dns",
    "tls",
    "ssl",
    "ssh",
    "smtp",
    "ftp",
    "ftp-data",
    "smb",
    "dcerpc",
    "nfs",
    "krb5",
    "dhcp",
    "snmp",
    "sip",
    "rfb",
    "mqtt",
    "modbus",
    "dnp3",
    "enip",
    "ikev2",
    "ike",
    "ntp",
    "tftp",
    "rdp",
    "pgsql",
    "quic",
    "telnet",
    "imap",
    "pop3",
    "ldap",
    "websocket",
    "bittorrent-dht",
    "doh2",
    "mdns",
    "file",
    "irc",
    "netbios-ssn",
    "dce_smb",
    "dcerpc-smb",
    "dcerpc-tcp",
    "dcerpc-udp",
];

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
    /// The bits of `mask` are those of `value` (`&0x48=0x08`; flag keywords such as
    /// `mqtt.flags:dup,!retain` become one).
    Mask(i64, i64),
}

/// Which numbers of a list a [`Match::UintList`] comparison must hold for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pick {
    /// One of them at least (the default, and `any`).
    Any,
    /// Every one, and there is one at least (`all`).
    All,
    /// The one at this index; from the end when negative (`-1` the last).
    At(i64),
}

impl Pick {
    /// Whether `cmp` holds for the numbers `list` picks.
    pub fn holds(self, cmp: Cmp, list: impl ExactSizeIterator<Item = i64>) -> bool {
        let mut list = list;
        match self {
            Pick::Any => list.any(|v| cmp.test(v)),
            Pick::All => list.len() > 0 && list.all(|v| cmp.test(v)),
            Pick::At(i) => {
                let n = list.len() as i64;
                let at = if i < 0 { n + i } else { i };
                (0..n).contains(&at) && list.nth(at as usize).is_some_and(|v| cmp.test(v))
            }
        }
    }
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
            Cmp::Mask(m, x) => v & m == x,
        }
    }
}

/// The buffer a list of matches inspects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buffer {
    /// The packet payload, and for TCP rules the reassembled stream.
    Payload,
    /// An application-layer buffer (`http.uri`, `dns.query`).
    App(AppBuffer),
    /// A header of the packet (`tcp.hdr`).
    Header(HeaderBuffer),
    /// Each frame of a type a parser marks in its stream (`frame:tls.pdu`).
    Frame(FrameType),
}

impl Buffer {
    /// The application-layer buffer, if it is one.
    pub fn app(self) -> Option<AppBuffer> {
        match self {
            Buffer::Payload | Buffer::Header(_) | Buffer::Frame(_) => None,
            Buffer::App(b) => Some(b),
        }
    }
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
    /// Where its capture groups go, in order (`flow:name`, `pkt:name`, `alert:name`
    /// after the flags). Named groups (`(?P<flow_name>...)`) go where their name says.
    pub captures: Vec<Capture>,
}

/// `entropy`: the Shannon entropy (bits per byte, 0 to 8) of the buffer's bytes from
/// `offset` (at most `bytes` of them), in millionths of a bit, compared (and the outcome
/// inverted when `negated`: `!4-5`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entropy {
    pub offset: u32,
    pub bytes: Option<u32>,
    pub negated: bool,
    pub cmp: Cmp,
    /// The name the value is logged under (EVE's `metadata.entropy`): the buffer's, with
    /// `_` for `.` (`file_data`), `content` for the payload.
    pub key: std::sync::Arc<str>,
}

impl Entropy {
    /// Whether `h` (bits per byte) passes.
    pub fn holds(&self, h: f64) -> bool {
        self.cmp.test((h * 1e6).round() as i64) != self.negated
    }
}

/// A variable a `pcre` capture group sets.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Capture {
    pub scope: VarScope,
    pub name: String,
}

impl Capture {
    /// A named group's target: `flow_x`, `pkt_x`, `alert_x` (Suricata's prefixes).
    pub fn of_group(group: &str) -> Option<Capture> {
        let (scope, name) = group.split_once('_')?;
        let scope = VarScope::by_name(scope)?;
        (!name.is_empty()).then(|| Capture {
            scope,
            name: name.to_string(),
        })
    }
}

impl std::fmt::Display for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.scope.name(), self.name)
    }
}

netsieve_wire::named! {
    /// Where a captured value lives: the flow's variables (logged with every record of
    /// the flow), the packet's (logged with its alerts), or the alert's `context`.
    pub enum VarScope {
        Flow = "flow",
        Pkt = "pkt",
        Alert = "alert",
    }
}

impl Pcre {
    pub fn has(&self, flag: char) -> bool {
        self.flags.contains(flag)
    }

    /// The buffer its flags select (`U`: the URI, `H`: the headers, ...), if any.
    pub fn buffer(&self) -> Option<AppBuffer> {
        self.flags.chars().find_map(|f| {
            Some(match f {
                'U' => AppBuffer::HttpUri,
                'I' => AppBuffer::HttpUriRaw,
                'P' => AppBuffer::HttpRequestBody,
                'Q' => AppBuffer::HttpResponseBody,
                'H' => AppBuffer::HttpHeader,
                'D' => AppBuffer::HttpHeaderRaw,
                'M' => AppBuffer::HttpMethod,
                'C' => AppBuffer::HttpCookie,
                'K' => AppBuffer::HttpCookieRaw,
                'S' => AppBuffer::HttpStatCode,
                'Y' => AppBuffer::HttpStatMsg,
                'V' => AppBuffer::HttpUserAgent,
                'W' => AppBuffer::HttpHost,
                _ => return None,
            })
        })
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

named! {
    /// The headers whose checksum a rule may test, by keyword.
    pub enum CsumLayer {
        Ipv4 = "ipv4-csum",
        Tcpv4 = "tcpv4-csum",
        Tcpv6 = "tcpv6-csum",
        Udpv4 = "udpv4-csum",
        Udpv6 = "udpv6-csum",
        Icmpv4 = "icmpv4-csum",
        Icmpv6 = "icmpv6-csum",
    }
}

named! {
    /// `byte_math`'s operators.
    pub enum MathOp {
        Add = "+",
        Sub = "-",
        Mul = "*",
        Div = "/",
        Shl = "<<",
        Shr = ">>",
    }
}

/// `byte_test`'s operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOp {
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    And,
    Or,
}

impl ByteOp {
    pub fn by_name(op: &str) -> Option<ByteOp> {
        Some(match op {
            "<" => ByteOp::Lt,
            ">" => ByteOp::Gt,
            "<=" => ByteOp::Le,
            ">=" => ByteOp::Ge,
            "=" | "" => ByteOp::Eq,
            "&" => ByteOp::And,
            "^" | "|" => ByteOp::Or,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ByteOp::Lt => "<",
            ByteOp::Gt => ">",
            ByteOp::Le => "<=",
            ByteOp::Ge => ">=",
            ByteOp::Eq => "=",
            ByteOp::And => "&",
            ByteOp::Or => "^",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    Content(Content),
    Pcre(Pcre),
    /// `count`: the bytes read, a number or a `byte_extract` variable (`read.bytes` is
    /// the number, 0 for a variable).
    ByteTest {
        read: ByteRead,
        count: Val,
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
    /// `byte_math`: a number read from the buffer (`count` bytes: a number or a
    /// variable), `oper` `rvalue`, into variable `result`. The detection pointer stays.
    ByteMath {
        read: ByteRead,
        count: Val,
        oper: MathOp,
        rvalue: Val,
        result: String,
    },
    IsDataAt {
        offset: Val,
        relative: bool,
        negated: bool,
    },
    /// The buffer's length.
    Bsize(Cmp),
    Entropy(Entropy),
    /// The buffer's value as an unsigned integer (DNS's `dns.opcode`, `dns.rcode`,
    /// `dns.rrtype`: their buffers hold the number, big-endian).
    Uint(Cmp),
    /// A comparison with the numbers of a list the buffer holds (8 bytes each,
    /// big-endian): LDAP's responses' operations and result codes
    /// (`ldap.responses.operation:search_result_done,1`).
    UintList(Cmp, Pick),
    /// `dcerpc.iface`: a DCE/RPC request on a context bound to interface `uuid` (in text
    /// order), its major version compared with `version`; without `any_frag`, only when
    /// the bind had its first-fragment flag. The buffer holds each interface bound to the
    /// request's context: UUID, version (2 bytes, big-endian), accepted, first fragment.
    DceIface {
        uuid: [u8; 16],
        version: Option<Cmp>,
        any_frag: bool,
    },
    /// `asn1`: BER objects decoded from the buffer, checked for encodings known to
    /// overflow decoders.
    Asn1(Asn1),
    /// `dataset`: the buffer tested against, added to or removed from a named set.
    Dataset(Box<Dataset>),
    /// `datarep`: the reputation a named set gives the buffer, compared.
    Datarep(Box<Datarep>),
    /// `base64_decode`: decodes base64 text from `offset` (after the detection pointer
    /// when `relative`), at most `bytes` of it; the rule's `base64_data` list inspects
    /// what it decoded.
    Base64Decode {
        bytes: Option<u64>,
        offset: u64,
        relative: bool,
    },
}

/// What `asn1` checks, and where its decoding starts: at `absolute_offset`, at
/// `relative_offset` from the detection pointer, else at the buffer's start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Asn1 {
    /// A primitive BIT STRING whose unused-bits count is over its content's bits.
    pub bitstring_overflow: bool,
    /// A primitive REAL in decimal form longer than 256 bytes.
    pub double_overflow: bool,
    /// An object whose length is over this.
    pub oversize_length: Option<u32>,
    pub absolute_offset: Option<u32>,
    pub relative_offset: Option<i32>,
}

/// What a `dataset` keyword does with the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DatasetCmd {
    /// Matches when the set holds it.
    IsSet,
    /// Matches when the set does not hold it.
    IsNotSet,
    /// Adds it; matches when it was not there.
    Set,
    /// Removes it; matches when it was there.
    Unset,
}

/// The type of a set's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// Bytes; a file gives them in base64, one per line.
    String,
    /// 16 bytes; a file gives them in hex.
    Md5,
    /// 32 bytes, in hex in a file.
    Sha256,
    /// 20 bytes, in hex in a file (`filesha1`'s lists; not a dataset type).
    Sha1,
    /// An IPv4 address (4 bytes).
    Ipv4,
    /// An IPv6 address, IPv4 ones mapped into it (16 bytes).
    Ip,
}

/// How a set's `load` file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataFormat {
    /// One value per line (`value[,reputation]`).
    Csv,
    /// A JSON array of objects (or one found at `array_key`).
    Json,
    /// One JSON object per line.
    Ndjson,
}

/// `dataset:<cmd>,<name>[,type T][,load F][,save F][,state F][,format F]
/// [,context_key K][,value_key V][,array_key A][,remove_key]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    pub cmd: DatasetCmd,
    pub name: String,
    pub kind: DataType,
    /// The file its values are read from, relative to the rule file's directory.
    pub load: Option<String>,
    /// The file it is written to at exit (`state` loads and saves the same file).
    pub save: Option<String>,
    pub format: DataFormat,
    /// JSON formats: the alert's `context` key for the matching object.
    pub context_key: Option<String>,
    /// JSON formats: the dotted path of the value in each object.
    pub value_key: Option<String>,
    /// JSON format: the dotted path of the array in the file's object.
    pub array_key: Option<String>,
    /// JSON formats: the value's key is left out of the context.
    pub remove_key: bool,
}

impl Dataset {
    /// `cmd` on set `name` of `kind`: no files, the `csv` format.
    pub fn new(cmd: DatasetCmd, name: String, kind: DataType) -> Dataset {
        Dataset {
            cmd,
            name,
            kind,
            load: None,
            save: None,
            format: DataFormat::Csv,
            context_key: None,
            value_key: None,
            array_key: None,
            remove_key: false,
        }
    }
}

/// `datarep:<name>,<op>,<value>[,type T][,load F]`: matches when the reputation the
/// set gives the buffer compares so with `value` (`op` one of `<`, `<=`, `>`, `>=`, `==`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datarep {
    pub name: String,
    pub cmp: Cmp,
    pub kind: DataType,
    pub load: Option<String>,
}

/// A list of matches over one buffer, in rule order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct List {
    pub buffer: Buffer,
    pub matches: Vec<Match>,
    /// Transforms applied to the buffer before matching (`dotprefix`, `to_lowercase`,
    /// ...), in rule order.
    pub transforms: Vec<Transform>,
    /// `absent`: what the list says of a transaction that lacks the buffer.
    pub absent: Absent,
}

/// `absent` after a buffer's name: a transaction without the buffer matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Absent {
    /// The list needs the buffer (the default).
    #[default]
    No,
    /// `absent`: the list holds only without the buffer.
    Only,
    /// `absent: or_else`: without the buffer, or when its matches hold.
    OrElse,
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

/// A field of [`FlowOpts`].
type FlowField = fn(&mut FlowOpts) -> &mut bool;

impl FlowOpts {
    /// Each word of `flow:` with the field it sets; the first word of a field is the
    /// one a printed rule uses.
    const WORDS: [(&'static str, FlowField); 11] = [
        ("established", |f| &mut f.established),
        ("not_established", |f| &mut f.not_established),
        ("stateless", |f| &mut f.stateless),
        ("to_server", |f| &mut f.to_server),
        ("to_client", |f| &mut f.to_client),
        ("only_stream", |f| &mut f.only_stream),
        ("no_stream", |f| &mut f.no_stream),
        ("only_frag", |f| &mut f.only_frag),
        ("no_frag", |f| &mut f.no_frag),
        ("from_client", |f| &mut f.to_server),
        ("from_server", |f| &mut f.to_client),
    ];

    /// Sets the option `word` names; false when it names none.
    pub fn set(&mut self, word: &str) -> bool {
        match Self::WORDS.iter().find(|(w, _)| *w == word) {
            Some((_, field)) => {
                *field(self) = true;
                true
            }
            None => false,
        }
    }

    /// The words of the options set, each field once.
    pub fn set_words(&self) -> Vec<&'static str> {
        let mut left = *self;
        let mut out = Vec::new();
        for (w, field) in Self::WORDS {
            if std::mem::take(field(&mut left)) {
                out.push(w);
            }
        }
        out
    }
}

named! {
    pub enum FlowbitCmd {
        Set = "set",
        Unset = "unset",
        Toggle = "toggle",
        IsSet = "isset",
        IsNotSet = "isnotset",
    }
}

/// A `flowbits` option. Names joined with `|` (isset: any of them) or `&` (all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flowbit {
    pub cmd: FlowbitCmd,
    pub names: Vec<String>,
    pub any: bool,
}

named! {
    /// What a `flowint` option does with its counter: changes it (after the rule
    /// matched) or tests it (before).
    pub enum FlowintOp {
        Set = "=",
        Add = "+",
        Sub = "-",
        Eq = "==",
        Ne = "!=",
        Le = "<=",
        Ge = ">=",
        Lt = "<",
        Gt = ">",
        IsSet = "isset",
        NotSet = "notset",
    }
}

/// A `flowint` operand: a number or another counter of the flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowintVal {
    Num(u64),
    Var(String),
}

/// A `flowint` option: `flowint:name,+,1;`, `flowint:name,>,5;`, `flowint:name,isset;`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flowint {
    pub name: String,
    pub op: FlowintOp,
    /// The operand (none for `isset` and `notset`).
    pub value: Option<FlowintVal>,
}

impl FlowintOp {
    /// Whether it changes the counter (rather than test it).
    pub fn changes(self) -> bool {
        matches!(self, FlowintOp::Set | FlowintOp::Add | FlowintOp::Sub)
    }
}

named! {
    /// Where an `xbits` bit is kept: on the packet's source host, its destination
    /// host, or the pair of them.
    pub enum XbitTrack {
        IpSrc = "ip_src",
        IpDst = "ip_dst",
        IpPair = "ip_pair",
    }
}

/// An `xbits` option (and `hostbits`, the same on hosts): a bit kept beyond the flow,
/// for `expire` seconds after it is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xbit {
    pub cmd: FlowbitCmd,
    pub name: String,
    pub track: XbitTrack,
    /// Seconds; Suricata's default is 30 (measured: a bit set without `expire` is gone
    /// 31 s later).
    pub expire: Option<u32>,
}

named! {
    pub enum Track {
        BySrc = "by_src",
        ByDst = "by_dst",
        ByRule = "by_rule",
        ByBoth = "by_both",
        ByFlow = "by_flow",
    }
}

named! {
    pub enum ThresholdKind {
        Limit = "limit",
        Threshold = "threshold",
        Both = "both",
        /// `detection_filter`: alert on every hit after the first `count` in the window.
        /// Not a `type` of `threshold`.
        DetectionFilter = "detection_filter",
        /// Alert on hit `count`, then `count * multiplier`, `count * multiplier²`, ...
        Backoff = "backoff",
    }
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
    /// The TCP MSS option's value (a packet without one fails).
    TcpMss(Cmp),
    /// `window` (`tcp.window`): the TCP window field, or any other value.
    TcpWindow {
        negated: bool,
        size: u16,
    },
    /// `icmpv6.mtu`: the MTU of an ICMPv6 Packet Too Big message (others fail).
    Icmpv6Mtu(Cmp),
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
    /// `ftpbounce`: the packet carries an FTP `PORT` command naming another address
    /// than its sender's.
    FtpBounce,
    /// `stream_size:server|client|both|either, op, n`.
    StreamSize {
        side: StreamSide,
        cmp: Cmp,
    },
    /// `tcpv4-csum:valid` and the like: the checksum of that header of the packet is
    /// right (`valid`) or wrong; a packet without that header fails either.
    Checksum {
        layer: CsumLayer,
        valid: bool,
    },
    /// `flow.age`: whole seconds since the flow's first packet.
    FlowAge(Cmp),
    /// `flow.pkts` and `flow.bytes` (`bytes`): the flow's packets or bytes so far, this
    /// packet's included, to the server, to the client, or in either direction.
    FlowCount {
        bytes: bool,
        side: StreamSide,
        cmp: Cmp,
    },
    /// An IPv4 option must be present (bits of `netsieve_packet::decode::ipopt`; here
    /// by name: "rr", "any", ...).
    IpOpts(String),
    /// `decode-event`: the decoder raised this event on the packet.
    DecodeEvent(netsieve_wire::DecodeEvent),
    /// `app-layer-event`: the application layer raised this event on what the packet
    /// brought.
    AppEvent(netsieve_wire::AppEvent),
    StreamEvent(netsieve_wire::StreamEvent),
    /// `vlan.id:cmp[,layer]`: a VLAN id of the packet, at a layer (0 the outermost, -1
    /// the innermost), at any layer, or at every one.
    VlanId {
        cmp: Cmp,
        layer: VlanLayer,
    },
    /// `vlan.layers:cmp`: how many VLAN tags the packet carries.
    VlanLayers(Cmp),
    /// `iprep:side,category,op,value`: the reputation score of the side's address in a
    /// category (by its short name, resolved against the process's reputation at load).
    IpRep {
        side: IpRepSide,
        category: String,
        /// The category's id, once the engine resolved it (0 until then).
        id: u8,
        cmp: Cmp,
    },
    /// `app-layer-protocol:[!]proto[,mode]`: the protocol detected, as `mode` reads it.
    AppLayerProtocol {
        negated: bool,
        proto: AlProto,
        mode: AlMode,
    },
}

named! {
    /// Whose address `iprep` looks up.
    pub enum IpRepSide {
        Any = "any",
        Src = "src",
        Dst = "dst",
        Both = "both",
    }
}

/// What `app-layer-protocol` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlProto {
    /// Not known yet (detection goes on).
    Unknown,
    /// Detection gave up.
    Failed,
    /// A protocol, by its index in the list of names rule headers may use (`http1` is `http`,
    /// `ssl` is `tls`).
    Named(u8),
}

impl AlProto {
    /// The value `name` names, if any.
    pub fn by_name(name: &str) -> Option<AlProto> {
        let canonical = match name {
            "http1" => "http",
            "ssl" => "tls",
            n => n,
        };
        match canonical {
            "unknown" => Some(AlProto::Unknown),
            "failed" => Some(AlProto::Failed),
            n => APP_PROTOCOLS
                .iter()
                .position(|p| *p == n)
                .map(|i| AlProto::Named(i as u8)),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AlProto::Unknown => "unknown",
            AlProto::Failed => "failed",
            AlProto::Named(i) => APP_PROTOCOLS[usize::from(i)],
        }
    }
}

/// The index [`AlProto::Named`] gives the application protocol named `name` (as
/// `netsieve_applayer::AppProto::name` names it), if rules know it.
pub fn app_protocol_index(name: &str) -> Option<u8> {
    APP_PROTOCOLS
        .iter()
        .position(|p| *p == name)
        .map(|i| i as u8)
}

named! {
    /// Which detected protocol `app-layer-protocol` reads.
    pub enum AlMode {
        /// The one detected in the packet's direction (the default).
        Direction = "direction",
        ToServer = "to_server",
        ToClient = "to_client",
        /// Either direction's.
        Either = "either",
        /// The flow's, as chosen for parsing.
        Final = "final",
        /// The flow's first: before a protocol change (HTTP before HTTP/2, LDAP before
        /// TLS), else the flow's.
        Original = "original",
    }
}

/// Which of a packet's VLAN tags `vlan.id` tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VlanLayer {
    Any,
    All,
    /// From the outside in; negative counts from the inside out.
    At(i8),
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

named! {
    pub enum StreamSide {
        Server = "server",
        Client = "client",
        Both = "both",
        Either = "either",
    }
}

/// TCP flags as `flags:` writes them, with their bits (`1` and `2` are older names of
/// `C` and `E`).
pub const TCP_FLAGS: [(char, u8); 8] = [
    ('F', 0x01),
    ('S', 0x02),
    ('R', 0x04),
    ('P', 0x08),
    ('A', 0x10),
    ('U', 0x20),
    ('E', 0x40),
    ('C', 0x80),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    SrcIp,
    DestIp,
}

/// A list of short strings kept in one allocation (a rule's references and metadata
/// items: a large rule set holds hundreds of thousands of them, for its log records).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Strings(String);

impl Strings {
    /// Items are separated by newlines, which a rule's text never holds.
    const SEP: char = '\n';

    pub fn push(&mut self, item: &str) {
        debug_assert!(!item.contains(Self::SEP));
        if !self.0.is_empty() {
            self.0.push(Self::SEP);
        }
        self.0.push_str(item);
    }

    /// Room for `additional` more bytes of items and separators.
    pub fn reserve(&mut self, additional: usize) {
        self.0.reserve(additional);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.split_terminator(Self::SEP)
    }
}

/// One parsed rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub file: String,
    pub line: usize,
    /// A hash of the rule's text as written, set by the loader ([`crate::Loaded`]; 0 from
    /// [`crate::parse_rule`]): two rules read with the same text and variables are the
    /// same rule, so a reload can keep what it compiled of it.
    pub text_hash: u64,
    /// The rule's text as written, when the loader keeps texts
    /// ([`crate::Loaded::keep_texts`]).
    pub text: Option<Box<str>>,
    /// Not parsed: its text was known to the loader ([`crate::Loaded::knowing`]). Only
    /// `file`, `line`, `gid`, `sid` and `text_hash` are set; whoever knew the text holds
    /// the rule.
    pub known: bool,
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
    pub references: Strings,
    pub metadata: Strings,
    pub target: Option<Target>,
    pub lists: Vec<List>,
    pub conds: Vec<Cond>,
    pub flow: FlowOpts,
    pub flowbits: Vec<Flowbit>,
    pub xbits: Vec<Xbit>,
    pub flowints: Vec<Flowint>,
    /// `lua:[!]script`: Lua scripts whose `match` must hold (or, negated, fail) once
    /// the rule's other options matched, in rule order.
    pub lua: Vec<LuaCall>,
    pub noalert: bool,
    /// `bypass`: once the rule matches, the rest of its flow is not inspected (the flow
    /// is bypassed).
    pub bypass: bool,
    /// `filestore`: once the rule matches, the files it names are stored (when the
    /// `file-store` output is on).
    pub filestore: Option<FileStore>,
    /// `tag`: the packets after a match that are logged too (each `tag` of the rule).
    pub tags: Vec<Tag>,
    /// `alert` on a pass rule: it alerts as well as passing; on a firewall rule (the
    /// keyword or a secondary `alert` action), its match alerts.
    pub pass_alert: bool,
    /// The action's scope as written (`drop:flow`), if any.
    pub scope: Option<Scope>,
    /// The hook the protocol names (`tcp:all`, `tls:client_hello_done`), if any.
    pub hook: Option<Hook>,
    /// A firewall rule's secondary `pass` action and its scope (`accept:flow,pass:flow`).
    pub also_pass: Option<Scope>,
    /// Read from a firewall rule file: judged by the firewall's tables, in file order.
    pub firewall: bool,
    /// `config: logging disable, type tx, scope tx`: the transaction the rule matches
    /// is not logged.
    pub quiet_tx: bool,
    pub threshold: Option<Threshold>,
    pub detection_filter: Option<Threshold>,
    /// Snort 3 `service:` names.
    pub services: Vec<String>,
    /// What the rule needs of the application layer (buffers, protocols), once each, in
    /// [`AppNeed`]'s order; empty for rules judged on packets and streams alone.
    pub app_layer: Vec<AppNeed>,
    /// Options that parse but that the engine does not evaluate yet, as written.
    pub unsupported: Vec<RawOption>,
}

/// `lua:[!]script`: a script's file name as written (resolved when the rule set is
/// built) and whether its verdict is negated.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LuaCall {
    pub script: String,
    pub negated: bool,
}

/// An option as written: its keyword and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawOption {
    pub name: String,
    pub value: Option<String>,
}

impl Rule {
    /// The lists over the packet payload / stream.
    pub fn payload_lists(&self) -> impl Iterator<Item = &List> {
        self.lists.iter().filter(|l| l.buffer == Buffer::Payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_keep_their_items_in_order() {
        let mut s = Strings::default();
        assert!(s.is_empty());
        assert_eq!(s.iter().count(), 0);
        for item in ["created_at 2024_01_01", "", "tag c2"] {
            s.push(item);
        }
        assert!(!s.is_empty());
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            ["created_at 2024_01_01", "", "tag c2"]
        );
    }
}

/// `tag:SCOPE[,COUNT,METRIC[,DIRECTION]]`: after a match, the next packets of the flow
/// (`session`) or of a host (`host`) are logged too, up to `count` of `metric`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    pub scope: TagScope,
    pub count: u32,
    pub metric: TagMetric,
}

impl Tag {
    /// Suricata's default reach: 256 packets.
    pub const DEFAULT_PACKETS: u32 = 256;
}

/// What a `tag` follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagScope {
    /// The flow of the matching packet.
    Session,
    /// A host of the matching packet: its source or (the default) its destination.
    Host(TagHost),
}

named! {
    /// Which host of the matching packet a host `tag` follows.
    pub enum TagHost {
        Src = "src",
        Dst = "dst",
    }
}

named! {
    /// What a `tag`'s count counts.
    pub enum TagMetric {
        Packets = "packets",
        Bytes = "bytes",
        Seconds = "seconds",
    }
}

/// `filestore[:DIRECTION[,SCOPE]]`: which files a matching rule stores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileStore {
    /// `to_server`/`request`, `to_client`/`response`, or `both`; `None`: the direction
    /// of the packet the rule matched on.
    pub dir: Option<FileStoreDir>,
    pub scope: FileStoreScope,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileStoreDir {
    ToServer,
    ToClient,
    Both,
}

/// What a `filestore` covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileStoreScope {
    /// The files of the transaction matched (`file`, the default, or `tx`).
    #[default]
    Tx,
    /// Every file of the flow, from the match on (`ssn` or `flow`).
    Flow,
}
