//! The pcap-filter expression compiler (see `man pcap-filter`).
//!
//! Parsing and code generation happen in one left-to-right pass, as in libpcap: some
//! primitives change the meaning of everything after them (`vlan` and `pppoes` move the
//! link-layer type field and the network header, `mpls` moves the network header), so the
//! offsets in force are state of the parser, not of the syntax tree.
//!
//! `and` and `or` have equal precedence and group to the left; `not` binds tighter. A bare
//! value after `and`/`or` takes the qualifiers of the primitive before it
//! (`tcp port 21 or 22`). Arithmetic relations (`ip[2:2] > 576`) evaluate both sides, and
//! any protocol check their packet accesses need (`tcp[13]` needs IPv4, TCP, first
//! fragment) is a condition of the relation.
//!
//! Supported link types: Ethernet, raw IP and Linux cooked capture. Host and network
//! names are not resolved (netsieve does no DNS while compiling); addresses must be
//! numeric.

use crate::codegen::{Bool, Src, Step, Tgt, emit};
use crate::insn::*;
use crate::lex::{Tok, Token, lex};
use netsieve_wire::ip_proto::{self, SCTP, TCP, UDP};
use std::fmt;
use std::net::Ipv6Addr;

/// The link types expressions can be compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkType {
    /// LINKTYPE_ETHERNET (1).
    Ethernet,
    /// LINKTYPE_RAW (101; DLT_RAW 12 and 14 on some systems): the packet starts with the
    /// IPv4 or IPv6 header.
    Raw,
    /// LINKTYPE_LINUX_SLL (113): the 16-byte Linux cooked header.
    LinuxSll,
}

impl LinkType {
    /// The link type for a capture's LINKTYPE number, if expressions can be compiled for it.
    pub fn from_linktype(n: u32) -> Option<LinkType> {
        match n {
            1 => Some(LinkType::Ethernet),
            12 | 14 | 101 => Some(LinkType::Raw),
            113 => Some(LinkType::LinuxSll),
            _ => None,
        }
    }
}

/// An expression that could not be compiled: the byte offset where the problem was found
/// and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    pub pos: usize,
    pub reason: String,
}

impl CompileError {
    pub fn at(pos: usize, reason: impl Into<String>) -> CompileError {
        CompileError {
            pos,
            reason: reason.into(),
        }
    }

    /// The error with the part of `expr` it is about: the whole expression when it is
    /// short, else a few words either side of the column (an expression may be many
    /// kilobytes long).
    pub fn in_expr(&self, expr: &str) -> String {
        const WHOLE: usize = 80;
        const SIDE: usize = 30;
        if expr.len() <= WHOLE {
            return format!("{self} in `{expr}`");
        }
        let at = self.pos.min(expr.len());
        let mut from = at.saturating_sub(SIDE);
        let mut to = (at + SIDE).min(expr.len());
        while !expr.is_char_boundary(from) {
            from -= 1;
        }
        while !expr.is_char_boundary(to) {
            to += 1;
        }
        let (pre, post) = (
            if from > 0 { "..." } else { "" },
            if to < expr.len() { "..." } else { "" },
        );
        format!(
            "{self} near `{pre}{}{post}` ({} bytes in all)",
            &expr[from..to],
            expr.len()
        )
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.pos + 1, self.reason)
    }
}

impl std::error::Error for CompileError {}

/// How to compile.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub link: LinkType,
    /// Returned for accepted packets.
    pub snaplen: u32,
    /// The IPv4 netmask `ip broadcast` needs.
    pub netmask: Option<u32>,
    /// Refuse an expression that can never match, as libpcap does when optimising
    /// ("expression rejects all packets").
    pub refuse_never: bool,
    /// Run [`crate::opt::optimize`] on the program (tcpdump's default; its `-O` turns it
    /// off).
    pub optimize: bool,
}

impl Options {
    pub fn new(link: LinkType) -> Options {
        Options {
            link,
            snaplen: 262_144,
            netmask: None,
            refuse_never: true,
            optimize: true,
        }
    }
}

/// Compiles `expr` for `link`, accepting packets with libpcap's default snap length.
pub fn compile(expr: &str, link: LinkType) -> Result<Program, CompileError> {
    compile_with(expr, &Options::new(link))
}

/// Compiles `expr` with `opts`.
pub fn compile_with(expr: &str, opts: &Options) -> Result<Program, CompileError> {
    let b = to_bool(expr, opts)?;
    if opts.refuse_never && b == Bool::Const(false) {
        return Err(CompileError::at(0, "expression rejects all packets"));
    }
    let raw = emit(&b, opts.snaplen);
    // The limit holds for the program that runs, as in libpcap: the optimiser may bring
    // a longer first draft within it.
    let best = match opts.optimize {
        true => crate::opt::optimize_insns(&raw),
        false => raw.clone(),
    };
    if best.len().min(raw.len()) > MAXINSNS {
        return Err(CompileError::at(
            0,
            format!(
                "expression too complex: program of {} instructions, more than {MAXINSNS}",
                best.len().min(raw.len())
            ),
        ));
    }
    // The optimised program if it is valid (it always should be) and shorter.
    match Program::new(best) {
        Ok(p) if p.len() < raw.len() || !opts.optimize => Ok(p),
        _ => Program::new(raw).map_err(|e| CompileError::at(0, format!("internal error: {e}"))),
    }
}

/// The expression as a tree of tests (exposed for tests of the code generator).
pub fn to_bool(expr: &str, opts: &Options) -> Result<Bool, CompileError> {
    let toks = lex(expr)?;
    let (lt, nl) = match opts.link {
        LinkType::Ethernet => (Lt::Ether(12), 14),
        LinkType::Raw => (Lt::Raw, 0),
        LinkType::LinuxSll => (Lt::Sll(14), 16),
    };
    let mut p = Parser {
        toks,
        i: 0,
        end: expr.len(),
        lt,
        nl,
        mpls: 0,
        // An all-ones netmask is libpcap's PCAP_NETMASK_UNKNOWN.
        netmask: opts.netmask.filter(|&m| m != u32::MAX),
        last: None,
        mem: 0,
        mem_top: MEMWORDS as u32,
        inner: None,
        absolute: false,
        depth: 0,
    };
    if p.toks.is_empty() {
        return Ok(Bool::Const(true));
    }
    let b = p.expr()?;
    if let Some(t) = p.toks.get(p.i) {
        return Err(CompileError::at(t.pos, "syntax error"));
    }
    Ok(b)
}

/// Where the link-layer type lives.
#[derive(Clone, Copy, Debug)]
enum Lt {
    /// An Ethernet type/length field at this offset.
    Ether(u32),
    /// The Linux cooked protocol field at this offset.
    Sll(u32),
    /// A PPP protocol field (inside PPPoE) at this offset.
    Ppp(u32),
    /// None: the version nibble of the network header tells IPv4 from IPv6.
    Raw,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proto {
    Default,
    Link,
    Ip,
    Ip6,
    Arp,
    Rarp,
    Decnet,
    Iso,
    Isis,
    /// Another protocol with an Ethernet type (`sca`, `atalk`, ...).
    Ether(u32),
    /// An IP protocol (`tcp`, `udp`, `icmp`, ...): number, and whether it exists over IPv4
    /// and over IPv6.
    Ipp(u8, bool, bool),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Default,
    Src,
    Dst,
    Or,
    And,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Typ {
    Default,
    Host,
    Net,
    Port,
    Portrange,
    Proto,
    Gateway,
    Protochain,
}

#[derive(Clone, Copy, Debug)]
struct Quals {
    proto: Proto,
    dir: Dir,
    typ: Typ,
}

/// How many headers `protochain` walks past before it gives up.
pub const PROTOCHAIN_HOPS: usize = 16;

fn proto_word(w: &str) -> Option<Proto> {
    Some(match w {
        "ether" | "fddi" | "tr" | "wlan" | "ppp" | "slip" | "link" => Proto::Link,
        "ip" => Proto::Ip,
        "ip6" => Proto::Ip6,
        "arp" => Proto::Arp,
        "rarp" => Proto::Rarp,
        "decnet" => Proto::Decnet,
        "iso" => Proto::Iso,
        "isis" | "is-is" => Proto::Isis,
        "tcp" => Proto::Ipp(TCP, true, true),
        "udp" => Proto::Ipp(UDP, true, true),
        "sctp" => Proto::Ipp(SCTP, true, true),
        "icmp" => Proto::Ipp(1, true, false),
        "igmp" => Proto::Ipp(2, true, false),
        "igrp" => Proto::Ipp(9, true, false),
        "pim" => Proto::Ipp(103, true, true),
        "vrrp" | "carp" => Proto::Ipp(112, true, false),
        "icmp6" => Proto::Ipp(58, false, true),
        "ah" => Proto::Ipp(51, true, true),
        "esp" => Proto::Ipp(50, true, true),
        "sca" => Proto::Ether(0x6007),
        "atalk" => Proto::Ether(0x809b),
        "aarp" => Proto::Ether(0x80f3),
        "lat" => Proto::Ether(0x6004),
        "mopdl" => Proto::Ether(0x6001),
        "moprc" => Proto::Ether(0x6002),
        "stp" => Proto::Ether(0x42),
        "ipx" => Proto::Ether(0x8137),
        "netbeui" => Proto::Ether(0xf0),
        _ => return None,
    })
}

fn ether_name(w: &str) -> Option<u32> {
    Some(match w {
        "ip" => 0x800,
        "ip6" => 0x86dd,
        "arp" => 0x806,
        "rarp" => 0x8035,
        "atalk" => 0x809b,
        "aarp" => 0x80f3,
        "decnet" => 0x6003,
        "lat" => 0x6004,
        "sca" => 0x6007,
        "moprc" => 0x6002,
        "mopdl" => 0x6001,
        "iso" => 0xfe,
        "stp" => 0x42,
        "ipx" => 0x8137,
        "netbeui" => 0xf0,
        "lldp" => 0x88cc,
        "loopback" => 0x9000,
        "slow" => 0x8809,
        "vlan" => 0x8100,
        "mpls" => 0x8847,
        "pppoed" => 0x8863,
        "pppoes" => 0x8864,
        _ => return None,
    })
}

/// An IP protocol by name (the table every netsieve layer shares).
fn ip_proto_name(w: &str) -> Option<u32> {
    ip_proto::by_name(w).map(u32::from)
}

/// Well-known services (the ones /etc/services gives the same number for TCP and UDP).
fn service(w: &str) -> Option<u32> {
    Some(match w {
        "ftp-data" => 20,
        "ftp" => 21,
        "ssh" => 22,
        "telnet" => 23,
        "smtp" => 25,
        "domain" => 53,
        "bootps" => 67,
        "bootpc" => 68,
        "tftp" => 69,
        "http" | "www" => 80,
        "kerberos" => 88,
        "pop3" => 110,
        "sunrpc" => 111,
        "ntp" => 123,
        "netbios-ns" => 137,
        "netbios-dgm" => 138,
        "netbios-ssn" => 139,
        "imap" | "imap2" => 143,
        "snmp" => 161,
        "snmp-trap" | "snmptrap" => 162,
        "bgp" => 179,
        "ldap" => 389,
        "https" => 443,
        "microsoft-ds" => 445,
        "isakmp" => 500,
        "syslog" => 514,
        "submission" => 587,
        "ldaps" => 636,
        "imaps" => 993,
        "pop3s" => 995,
        "openvpn" => 1194,
        "mysql" => 3306,
        "rdp" | "ms-wbt-server" => 3389,
        "sip" => 5060,
        _ => return None,
    })
}

/// The named constants of the arithmetic.
fn named_constant(w: &str) -> Option<u32> {
    Some(match w {
        "icmptype" | "icmp6type" => 0,
        "icmpcode" | "icmp6code" => 1,
        "tcpflags" => 13,
        "icmp-echoreply" => 0,
        "icmp-unreach" => 3,
        "icmp-sourcequench" => 4,
        "icmp-redirect" => 5,
        "icmp-echo" => 8,
        "icmp-routeradvert" => 9,
        "icmp-routersolicit" => 10,
        "icmp-timxceed" => 11,
        "icmp-paramprob" => 12,
        "icmp-tstamp" => 13,
        "icmp-tstampreply" => 14,
        "icmp-ireq" => 15,
        "icmp-ireqreply" => 16,
        "icmp-maskreq" => 17,
        "icmp-maskreply" => 18,
        "icmp6-destinationunreach" => 1,
        "icmp6-packettoobig" => 2,
        "icmp6-timeexceeded" => 3,
        "icmp6-parameterproblem" => 4,
        "icmp6-echo" => 128,
        "icmp6-echoreply" => 129,
        "icmp6-multicastlistenerquery" => 130,
        "icmp6-multicastlistenerreportv1" => 131,
        "icmp6-multicastlistenerdone" => 132,
        "icmp6-routersolicit" => 133,
        "icmp6-routeradvert" => 134,
        "icmp6-neighborsolicit" => 135,
        "icmp6-neighboradvert" => 136,
        "icmp6-redirect" => 137,
        "icmp6-routerrenum" => 138,
        "icmp6-nodeinformationquery" => 139,
        "icmp6-nodeinformationresponse" => 140,
        "icmp6-ineighbordiscoverysolicit" => 141,
        "icmp6-ineighbordiscoveryadvert" => 142,
        "icmp6-multicastlistenerreportv2" => 143,
        "icmp6-homeagentdiscoveryrequest" => 144,
        "icmp6-homeagentdiscoveryreply" => 145,
        "icmp6-mobileprefixsolicit" => 146,
        "icmp6-mobileprefixadvert" => 147,
        "icmp6-certpathsolicit" => 148,
        "icmp6-certpathadvert" => 149,
        "icmp6-multicastrouteradvert" => 151,
        "icmp6-multicastroutersolicit" => 152,
        "icmp6-multicastrouterterm" => 153,
        "tcp-fin" => 0x01,
        "tcp-syn" => 0x02,
        "tcp-rst" => 0x04,
        "tcp-push" => 0x08,
        "tcp-ack" => 0x10,
        "tcp-urg" => 0x20,
        "tcp-ece" => 0x40,
        "tcp-cwr" => 0x80,
        _ => return None,
    })
}

const KEYWORDS: &[&str] = &[
    "and",
    "or",
    "not",
    "host",
    "net",
    "port",
    "portrange",
    "gateway",
    "proto",
    "protochain",
    "src",
    "dst",
    "less",
    "greater",
    "len",
    "length",
    "broadcast",
    "multicast",
    "vlan",
    "mpls",
    "pppoed",
    "pppoes",
    "vxlan",
    "geneve",
    "llc",
    "inbound",
    "outbound",
    "mask",
    "ifindex",
];

/// A number as libpcap reads it: `0x` hexadecimal, a leading `0` octal, else decimal.
pub fn parse_number(w: &str) -> Result<u32, String> {
    let (digits, radix, kind) =
        if let Some(h) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
            (h, 16, "hexadecimal")
        } else if w.len() > 1 && w.starts_with('0') {
            (&w[1..], 8, "octal")
        } else {
            (w, 10, "decimal")
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        if radix == 8 && digits.chars().all(|c| c.is_ascii_digit()) {
            return Err(format!("number {w} contains non-octal digit"));
        }
        return Err(format!("`{w}` is not a number"));
    }
    u32::from_str_radix(digits, radix).map_err(|_| format!("{kind} number {w} overflows 32 bits"))
}

fn is_number(w: &str) -> bool {
    w.chars().next().is_some_and(|c| c.is_ascii_digit())
        && w.chars().all(|c| c.is_ascii_alphanumeric())
}

/// A value in the arithmetic: code leaving it in A, and the protocol checks its packet
/// accesses need.
struct Val {
    code: Vec<Insn>,
    checks: Bool,
    konst: Option<u32>,
}

impl Val {
    fn k(k: u32) -> Val {
        Val {
            code: vec![Insn::stmt(LD | W | IMM, k)],
            checks: Bool::Const(true),
            konst: Some(k),
        }
    }
}

type R<T> = Result<T, CompileError>;

struct Parser {
    toks: Vec<Token>,
    i: usize,
    end: usize,
    lt: Lt,
    /// Offset of the network-layer header.
    nl: u32,
    /// MPLS labels seen so far.
    mpls: u32,
    netmask: Option<u32>,
    last: Option<Quals>,
    /// Scratch words used by the current relation.
    mem: u32,
    /// Scratch words from here up hold the offsets of encapsulated frames.
    mem_top: u32,
    /// After `vxlan` or `geneve`: where the encapsulated frame is. Primitives are then
    /// built as if it started the packet, and [`rebase`] moves their loads onto it.
    inner: Option<Inner>,
    /// Set by a primitive whose code already has absolute offsets.
    absolute: bool,
    /// How deep the parse is nested: parentheses, brackets, unary minus, and `and`/`or`
    /// alternations (each nests the tree of tests one level deeper).
    depth: usize,
}

/// The deepest nesting an expression may have. Parsing and code generation recurse on
/// it, so it bounds their stack; libpcap's parser gives up at a few thousand.
pub const MAX_NESTING: usize = 100;

/// An encapsulated frame (after `vxlan` or `geneve`): the scratch words holding the
/// absolute offsets of its link-layer header, its type field and its network layer.
#[derive(Clone, Copy, Debug)]
struct Inner {
    frame: u32,
    lt: u32,
    nl: u32,
}

/// `b`, built for a frame at the start of the packet, moved onto the encapsulated frame
/// `to`: a load at offset k becomes an indexed load from the offset `to` holds (the
/// network layer for k >= 14, the type field for 12 and 13, the frame below). An
/// `ldxb 4*([k]&0xf)` becomes the same computation on the moved byte, plus the offset, so
/// the indexed loads after it land in the moved header. Code whose X or A use does not
/// survive the move is refused.
fn rebase(b: Bool, to: Inner) -> Result<Bool, String> {
    const REFUSE: &str = "this test is not supported after vxlan or geneve";
    Ok(match b {
        Bool::Const(c) => Bool::Const(c),
        Bool::And(a, b) => rebase(*a, to)?.and(rebase(*b, to)?),
        Bool::Or(a, b) => rebase(*a, to)?.or(rebase(*b, to)?),
        Bool::Not(a) => rebase(*a, to)?.not(),
        Bool::Block(_) => return Err(REFUSE.into()),
        Bool::Leaf { code, op, src } => {
            #[derive(PartialEq)]
            enum Xs {
                /// Not set in this code (or clobbered by a moved load).
                Unset,
                /// The moved header length: the offset plus `4*([k]&0xf)`.
                Moved,
                /// A value the move does not touch.
                Value,
            }
            let mut x = Xs::Unset;
            let mut out = Vec::with_capacity(code.len() * 2);
            let place = |k: u32| {
                if k >= 14 {
                    (to.nl, k - 14)
                } else if k >= 12 {
                    (to.lt, k - 12)
                } else {
                    (to.frame, k)
                }
            };
            for (n, i) in code.iter().enumerate() {
                match (i.class(), i.mode()) {
                    (LD, ABS) => {
                        let (slot, k) = place(i.k);
                        out.push(Insn::stmt(LDX | W | MEM, slot));
                        out.push(Insn::stmt(LD | i.size() | IND, k));
                        x = Xs::Unset;
                    }
                    (LDX, MSH) => {
                        // The sequence uses A: A must not be live across it.
                        let next_a = code[n + 1..]
                            .iter()
                            .find(|j| j.class() != LDX && j.class() != STX);
                        if !matches!(next_a, Some(j) if j.class() == LD) {
                            return Err(REFUSE.into());
                        }
                        let (slot, k) = place(i.k);
                        out.extend([
                            Insn::stmt(LDX | W | MEM, slot),
                            Insn::stmt(LD | B | IND, k),
                            Insn::stmt(ALU | AND | K, 0xf),
                            Insn::stmt(ALU | LSH | K, 2),
                            Insn::stmt(ALU | ADD | X, 0),
                            Insn::stmt(MISC | TAX, 0),
                        ]);
                        x = Xs::Moved;
                    }
                    (LD, IND) => {
                        // An index from the header length: the moved one already holds
                        // the offset; the network-layer part of k is counted in it.
                        if x != Xs::Moved || i.k < 14 {
                            return Err(REFUSE.into());
                        }
                        out.push(Insn::stmt(LD | i.size() | IND, i.k - 14));
                    }
                    (LD, IMM) | (LD, LEN) | (LD, MEM) | (ST, _) => out.push(*i),
                    (LDX, _) => {
                        out.push(*i);
                        x = Xs::Value;
                    }
                    (ALU, _) if i.op() == NEG || i.src() == K => out.push(*i),
                    (ALU, _) if x == Xs::Value => out.push(*i),
                    (MISC, _) if i.code == MISC | TAX => {
                        out.push(*i);
                        x = Xs::Value;
                    }
                    (MISC, _) if x == Xs::Value => out.push(*i), // txa
                    (STX, _) if x == Xs::Value => out.push(*i),
                    _ => return Err(REFUSE.into()),
                }
            }
            if matches!(src, Src::X) && x != Xs::Value {
                return Err(REFUSE.into());
            }
            Bool::Leaf { code: out, op, src }
        }
    })
}

impl Parser {
    fn pos(&self) -> usize {
        self.toks.get(self.i).map_or(self.end, |t| t.pos)
    }
    fn err<T>(&self, reason: impl Into<String>) -> R<T> {
        Err(CompileError::at(self.pos(), reason))
    }
    fn peek_word(&self) -> Option<&str> {
        match self.toks.get(self.i) {
            Some(Token {
                tok: Tok::Word(w, false),
                ..
            }) => Some(w),
            _ => None,
        }
    }
    fn peek_word_at(&self, n: usize) -> Option<&str> {
        match self.toks.get(self.i + n) {
            Some(Token {
                tok: Tok::Word(w, false),
                ..
            }) => Some(w),
            _ => None,
        }
    }
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.i) {
            Some(Token {
                tok: Tok::Op(o), ..
            }) => Some(o),
            _ => None,
        }
    }
    fn eat_op(&mut self, op: &str) -> bool {
        if self.peek_op() == Some(op) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if self.peek_word() == Some(w) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    /// The next word (escaped or not).
    fn word(&mut self) -> R<(String, bool, usize)> {
        match self.toks.get(self.i) {
            Some(Token {
                tok: Tok::Word(w, e),
                pos,
            }) => {
                let r = (w.clone(), *e, *pos);
                self.i += 1;
                Ok(r)
            }
            _ => self.err("syntax error: expected a value"),
        }
    }
    fn number(&mut self) -> R<u32> {
        let (w, _, pos) = self.word()?;
        parse_number(&w).map_err(|e| CompileError::at(pos, e))
    }

    /// Terms joined by `and` and `or`, which bind equally and from the left. A run of
    /// one operator becomes a balanced tree (the code is the same for any grouping),
    /// so only a change of operator nests the tree deeper.
    fn expr(&mut self) -> R<Bool> {
        let entry = self.depth;
        let r = self.expr_runs();
        self.depth = entry;
        r
    }

    fn expr_runs(&mut self) -> R<Bool> {
        let mut run = vec![self.term()?];
        let mut op: Option<bool> = None; // Some(true): and
        loop {
            let next = if self.eat_word("and") || self.eat_op("&&") {
                true
            } else if self.eat_word("or") || self.eat_op("||") {
                false
            } else {
                return Ok(join(op.unwrap_or(true), run));
            };
            if op.is_some_and(|o| o != next) {
                self.enter()?;
                run = vec![join(op.unwrap_or(true), run)];
            }
            op = Some(next);
            run.push(self.term()?);
        }
    }

    fn term(&mut self) -> R<Bool> {
        let mut negate = false;
        while self.eat_word("not") || self.eat_op("!") {
            negate = !negate;
        }
        let b = self.rterm()?;
        Ok(if negate { b.not() } else { b })
    }

    /// One level deeper; an error past [`MAX_NESTING`].
    fn enter(&mut self) -> R<()> {
        if self.depth >= MAX_NESTING {
            return self.err(format!(
                "expression nested more than {MAX_NESTING} levels deep (parentheses, brackets, \
                 or changes between `and` and `or`)"
            ));
        }
        self.depth += 1;
        Ok(())
    }

    /// Runs `f` one level deeper.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.enter()?;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// A primitive, a relation or a parenthesised expression, moved onto the encapsulated
    /// frame when there is one.
    fn rterm(&mut self) -> R<Bool> {
        let inner = self.inner;
        let pos = self.pos();
        self.absolute = false;
        let b = self.rterm_here()?;
        let absolute = std::mem::take(&mut self.absolute);
        match inner {
            Some(to) if !absolute => rebase(b, to).map_err(|r| CompileError::at(pos, r)),
            _ => Ok(b),
        }
    }

    fn rterm_here(&mut self) -> R<Bool> {
        let save = self.i;
        let mut committed = false;
        match self.relation(&mut committed) {
            Ok(Some(b)) => return Ok(b),
            Err(e) if committed => return Err(e),
            _ => self.i = save,
        }
        if self.eat_op("(") {
            let b = self.nested(Self::expr)?;
            if !self.eat_op(")") {
                return self.err("syntax error: expected `)`");
            }
            self.absolute = true; // its terms were moved already
            return Ok(b);
        }
        let Some(Token { tok, pos }) = self.toks.get(self.i).cloned() else {
            return self.err("syntax error: unexpected end of expression");
        };
        let Tok::Word(w, escaped) = tok else {
            return self.err("syntax error");
        };
        if !escaped && let Some(b) = self.keyword_primitive(&w, pos)? {
            return Ok(b);
        }
        if escaped && ether_name(&w).is_some() && proto_word(&w).is_none() {
            return Err(CompileError::at(pos, "syntax error"));
        }
        let proto = if escaped { None } else { proto_word(&w) };
        if let Some(proto) = proto {
            self.i += 1;
            return self.after_proto(proto, pos);
        }
        if !escaped
            && matches!(
                w.as_str(),
                "src"
                    | "dst"
                    | "host"
                    | "net"
                    | "port"
                    | "portrange"
                    | "gateway"
                    | "proto"
                    | "protochain"
            )
        {
            return self.qualified(Proto::Default, pos);
        }
        if !escaped && KEYWORDS.contains(&w.as_str()) {
            return Err(CompileError::at(pos, format!("syntax error at `{w}`")));
        }
        // A bare value: the qualifiers of the primitive before it, or `host`.
        let q = self.last.unwrap_or(Quals {
            proto: Proto::Default,
            dir: Dir::Default,
            typ: Typ::Default,
        });
        self.i += 1;
        self.value(q, &w, pos)
    }

    /// Primitives introduced by a keyword of their own; `None` when `w` is not one.
    fn keyword_primitive(&mut self, w: &str, pos: usize) -> R<Option<Bool>> {
        let b = match w {
            "less" | "greater" => {
                self.i += 1;
                let n = self.number()?;
                let len = Bool::leaf(vec![Insn::stmt(LD | W | LEN, 0)], JGT, n);
                if w == "less" {
                    len.not()
                } else {
                    Bool::leaf(vec![Insn::stmt(LD | W | LEN, 0)], JGE, n)
                }
            }
            "broadcast" | "multicast" => {
                self.i += 1;
                self.cast(Proto::Link, w == "broadcast", pos)?
            }
            "vlan" => {
                self.i += 1;
                self.vlan(pos)?
            }
            "mpls" => {
                self.i += 1;
                self.mpls_prim(pos)?
            }
            "pppoed" => {
                self.i += 1;
                self.linktype(0x8863)
            }
            "pppoes" => {
                self.i += 1;
                self.pppoes(pos)?
            }
            "llc" => {
                self.i += 1;
                self.llc(pos)?
            }
            "inbound" | "outbound" => {
                self.i += 1;
                let Lt::Sll(_) = self.lt else {
                    return Err(CompileError::at(
                        pos,
                        format!("`{w}` is not supported on this link type"),
                    ));
                };
                let out = Bool::eq(H, 0, 4);
                if w == "inbound" { out.not() } else { out }
            }
            "clnp" | "esis" | "es-is" => {
                self.i += 1;
                let p = if w == "clnp" { 0x81 } else { 0x82 };
                self.iso_proto(p)
            }
            "l1" | "l2" | "iih" | "lsp" | "snp" | "csnp" | "psnp" => {
                self.i += 1;
                let types: &[u32] = match w {
                    "l1" => &[0x1a, 0x18, 0x12, 0x0f, 0x11],
                    "l2" => &[0x1b, 0x19, 0x14, 0x10, 0x11],
                    "iih" => &[0x11, 0x0f, 0x10],
                    "lsp" => &[0x12, 0x14],
                    "snp" => &[0x1b, 0x1a, 0x18, 0x19],
                    "csnp" => &[0x18, 0x19],
                    _ => &[0x1a, 0x1b],
                };
                Bool::any(types.iter().map(|&t| self.isis_proto(t)))
            }
            "vxlan" | "geneve" => {
                self.i += 1;
                self.encap(w == "geneve", pos)?
            }
            "gateway" | "ifindex" => {
                return Err(CompileError::at(
                    pos,
                    format!("`{w}` is not supported by netsieve's compiler"),
                ));
            }
            _ => return Ok(None),
        };
        Ok(Some(b))
    }

    /// After a protocol word: a qualified primitive, or the protocol alone.
    fn after_proto(&mut self, proto: Proto, pos: usize) -> R<Bool> {
        let next = self.peek_word().map(str::to_string);
        let escaped_next = matches!(
            self.toks.get(self.i),
            Some(Token {
                tok: Tok::Word(_, true),
                ..
            })
        );
        match next.as_deref() {
            Some("broadcast" | "multicast") => {
                let b = next.as_deref() == Some("broadcast");
                self.i += 1;
                return self.cast(proto, b, pos);
            }
            Some(
                "src" | "dst" | "host" | "net" | "port" | "portrange" | "gateway" | "proto"
                | "protochain",
            ) => {
                return self.qualified(proto, pos);
            }
            Some(w)
                if !KEYWORDS.contains(&w)
                    && proto_word(w).is_none()
                    && !matches!(self.peek_op_at(1), Some("[")) =>
            {
                return self.qualified(proto, pos);
            }
            _ if escaped_next => return self.qualified(proto, pos),
            _ => {}
        }
        self.last = None;
        Ok(match proto {
            Proto::Link => {
                return Err(CompileError::at(
                    pos,
                    "syntax error: a link-layer qualifier needs a value",
                ));
            }
            Proto::Default => Bool::Const(true),
            Proto::Ip => self.linktype(0x800),
            Proto::Ip6 => self.linktype(0x86dd),
            Proto::Arp => self.linktype(0x806),
            Proto::Rarp => self.linktype(0x8035),
            Proto::Decnet => self.linktype(0x6003),
            Proto::Iso => self.linktype(0xfe),
            Proto::Isis => self.iso_proto(0x83),
            Proto::Ether(et) => self.linktype(et),
            Proto::Ipp(p, v4, v6) => self.ip_any_proto(p as u32, v4, v6),
        })
    }

    fn peek_op_at(&self, n: usize) -> Option<&'static str> {
        match self.toks.get(self.i + n) {
            Some(Token {
                tok: Tok::Op(o), ..
            }) => Some(o),
            _ => None,
        }
    }

    /// `[proto] [dir] [type] value`, the protocol already read.
    fn qualified(&mut self, proto: Proto, pos: usize) -> R<Bool> {
        let mut dir = Dir::Default;
        if let Some(d @ ("src" | "dst")) = self.peek_word() {
            let first = if d == "src" { Dir::Src } else { Dir::Dst };
            let other = if d == "src" { "dst" } else { "src" };
            self.i += 1;
            dir = first;
            if let Some(c @ ("or" | "and")) = self.peek_word()
                && self.peek_word_at(1) == Some(other)
            {
                dir = if c == "or" { Dir::Or } else { Dir::And };
                self.i += 2;
            }
        }
        let typ = match self.peek_word() {
            Some("host") => Typ::Host,
            Some("net") => Typ::Net,
            Some("port") => Typ::Port,
            Some("portrange") => Typ::Portrange,
            Some("gateway") => Typ::Gateway,
            Some("proto") => Typ::Proto,
            Some("protochain") => Typ::Protochain,
            _ => Typ::Default,
        };
        if typ != Typ::Default {
            self.i += 1;
        }
        if matches!(typ, Typ::Proto | Typ::Protochain) && dir != Dir::Default {
            return Err(CompileError::at(
                pos,
                "syntax error: `proto` takes no direction",
            ));
        }
        if typ == Typ::Default
            && dir != Dir::Default
            && matches!(self.peek_word(), Some("broadcast" | "multicast"))
        {
            return Err(CompileError::at(pos, "syntax error"));
        }
        let q = Quals { proto, dir, typ };
        // `host not a`: the value may be negated.
        let mut negate = false;
        while self.eat_word("not") || self.eat_op("!") {
            negate = !negate;
        }
        let (w, escaped, wpos) = self.word()?;
        if !escaped && matches!(w.as_str(), "and" | "or" | "not") {
            return Err(CompileError::at(wpos, "syntax error: expected a value"));
        }
        let b = self.value(q, &w, wpos)?;
        self.last = Some(q);
        Ok(if negate { b.not() } else { b })
    }

    /// The primitive for value `w` under qualifiers `q`.
    fn value(&mut self, q: Quals, w: &str, pos: usize) -> R<Bool> {
        let fail = |r: String| Err(CompileError::at(pos, r));
        match q.typ {
            Typ::Gateway => {
                return fail("`gateway` needs host names, which netsieve does not resolve".into());
            }
            Typ::Protochain => return self.protochain(q.proto, w, pos),
            Typ::Proto => return self.proto_value(q.proto, w, pos),
            Typ::Port | Typ::Portrange => return self.port_value(q, w, pos),
            Typ::Net => return self.net_value(q, w, pos),
            Typ::Host | Typ::Default => {}
        }
        match q.proto {
            Proto::Link => {
                let mac = parse_mac(w).ok_or_else(|| {
                    CompileError::at(pos, format!("invalid Ethernet address `{w}`"))
                })?;
                self.ether_host(q.dir, mac, pos)
            }
            Proto::Decnet => {
                let a = parse_decnet(w).ok_or_else(|| {
                    CompileError::at(pos, format!("invalid DECnet address `{w}`"))
                })?;
                Ok(self.decnet_host(q.dir, a))
            }
            Proto::Default | Proto::Ip | Proto::Arp | Proto::Rarp | Proto::Ip6 => {
                if w.contains(':') {
                    if matches!(q.proto, Proto::Ip | Proto::Arp | Proto::Rarp) {
                        return fail(format!("IPv6 address `{w}` used with an IPv4 protocol"));
                    }
                    let (a, len) = parse_ip6_prefix(self, w, pos)?;
                    return Ok(self.ip6_net(q.dir, a, len));
                }
                if q.proto == Proto::Ip6 {
                    return fail(format!("`{w}` is not an IPv6 address"));
                }
                let a = if is_number(w) {
                    parse_number(w).map_err(|e| CompileError::at(pos, e))?
                } else {
                    let (a, parts) =
                        parse_dotted(w).ok_or_else(|| CompileError::at(pos, host_error(w)))?;
                    if parts != 4 {
                        return fail(host_error(w));
                    }
                    a
                };
                Ok(self.ip4_net(q.proto, q.dir, a, u32::MAX))
            }
            _ => fail(format!("a host value cannot follow this protocol (`{w}`)")),
        }
    }

    /// `[ip|ip6] protochain N`: walks the header chain after the IP header until it finds
    /// protocol `N`. IPv4 walks AH headers; IPv6 walks hop-by-hop, routing, fragment,
    /// destination options and AH headers. libpcap loops with a backward jump; BPF proper
    /// has none, so the walk is unrolled to [`PROTOCHAIN_HOPS`] headers and a longer chain
    /// does not match.
    ///
    /// A holds the protocol of the next header and X its offset; M[0] is used while
    /// stepping and is free again after this primitive.
    fn protochain(&mut self, proto: Proto, w: &str, pos: usize) -> R<Bool> {
        let n = if is_number(w) {
            parse_number(w).map_err(|e| CompileError::at(pos, e))?
        } else {
            ip_proto_name(w)
                .ok_or_else(|| CompileError::at(pos, format!("unknown 'protochain' value '{w}'")))?
        };
        if n > 255 {
            return Err(CompileError::at(
                pos,
                format!("protocol number {n} is too high"),
            ));
        }
        let (v4, v6) = match proto {
            Proto::Default => (true, true),
            Proto::Ip => (true, false),
            Proto::Ip6 => (false, true),
            _ => {
                return Err(CompileError::at(
                    pos,
                    "`protochain` applies only to ip and ip6",
                ));
            }
        };
        let mut b = Bool::Const(false);
        if v4 {
            b = b.or(self.linktype(0x800).and(self.header_walk(false, n)));
        }
        if v6 {
            b = b.or(self.linktype(0x86dd).and(self.header_walk(true, n)));
        }
        Ok(b)
    }

    /// The unrolled header walk of `protochain n` from the IPv4 or IPv6 header.
    fn header_walk(&self, ipv6: bool, n: u32) -> Bool {
        let nl = self.nl;
        let mut s = Vec::new();
        let mut labels = 0;
        let mut label = || {
            labels += 1;
            labels - 1
        };
        let insn = |code: u16, k: u32| Step::Insn(Insn::stmt(code, k));
        let jeq = |k: u32, t: Tgt, f: Tgt| Step::Jump {
            code: JMP | JEQ | K,
            k,
            t,
            f,
        };
        if ipv6 {
            s.push(insn(LD | B | ABS, nl + 6));
            s.push(insn(LDX | W | IMM, nl + 40));
        } else {
            s.push(insn(LDX | B | MSH, nl));
            if nl > 0 {
                s.push(insn(MISC | TXA, 0));
                s.push(insn(ALU | ADD | K, nl));
                s.push(insn(MISC | TAX, 0));
            }
            s.push(insn(LD | B | ABS, nl + 9));
        }
        for _ in 0..PROTOCHAIN_HOPS {
            // A = this header's protocol, X = its offset.
            let (ext, ah, common) = (label(), label(), label());
            let mut tests = vec![(n, Tgt::True)];
            if ipv6 {
                tests.extend([0, 60, 43, 44].map(|p| (p, Tgt::L(ext))));
            }
            tests.push((51, Tgt::L(ah)));
            let last = tests.len() - 1;
            for (i, (k, t)) in tests.into_iter().enumerate() {
                if i == last {
                    s.push(jeq(k, t, Tgt::False));
                } else {
                    let l = label();
                    s.push(jeq(k, t, Tgt::L(l)));
                    s.push(Step::Label(l));
                }
            }
            // Extension headers count 8-byte units beyond the first; AH counts 4-byte
            // units beyond the first two. Both become (units + 2) * 4.
            if ipv6 {
                s.push(Step::Label(ext));
                s.push(insn(LD | B | IND, 1));
                s.push(insn(ALU | LSH | K, 1));
                s.push(Step::Ja(Tgt::L(common)));
            }
            s.push(Step::Label(ah));
            s.push(insn(LD | B | IND, 1));
            s.push(Step::Label(common));
            s.push(insn(ALU | ADD | K, 2));
            s.push(insn(ALU | LSH | K, 2));
            s.push(insn(ALU | ADD | X, 0));
            s.push(insn(ST, 0));
            s.push(insn(LD | B | IND, 0));
            s.push(insn(LDX | W | MEM, 0));
        }
        s.push(jeq(n, Tgt::True, Tgt::False));
        Bool::Block(s)
    }

    fn proto_value(&mut self, proto: Proto, w: &str, pos: usize) -> R<Bool> {
        let named = |f: fn(&str) -> Option<u32>| -> R<u32> {
            if is_number(w) {
                parse_number(w).map_err(|e| CompileError::at(pos, e))
            } else if w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.') {
                Err(CompileError::at(
                    pos,
                    "'proto' qualifier applied to IPv4 address",
                ))
            } else {
                f(w).ok_or_else(|| CompileError::at(pos, format!("unknown 'proto' value '{w}'")))
            }
        };
        let too_high =
            |what: &str, n: u32| Err(CompileError::at(pos, format!("{what} {n} is too high")));
        match proto {
            Proto::Link => {
                let n = named(ether_name)?;
                if n > 0xffff {
                    return too_high("EtherType", n);
                }
                if (256..=1500).contains(&n) {
                    return too_high("LLC DSAP", n);
                }
                Ok(self.linktype(n))
            }
            Proto::Ip | Proto::Ip6 | Proto::Default => {
                let n = named(ip_proto_name)?;
                if n > 255 {
                    return too_high("protocol number", n);
                }
                Ok(match proto {
                    Proto::Ip => self.ip_proto(n),
                    Proto::Ip6 => self.ip6_proto(n),
                    _ => self.ip_any_proto(n, true, true),
                })
            }
            Proto::Iso => {
                let n = named(|w| match w {
                    "clnp" => Some(0x81),
                    "esis" | "es-is" => Some(0x82),
                    "isis" | "is-is" => Some(0x83),
                    _ => None,
                })?;
                if n > 255 {
                    return too_high("ISO protocol", n);
                }
                Ok(self.iso_proto(n))
            }
            Proto::Isis => {
                let n = named(|_| None)?;
                if n > 31 {
                    return too_high("IS-IS PDU type", n);
                }
                Ok(self.isis_proto(n))
            }
            _ => Err(CompileError::at(pos, "`proto` cannot follow this protocol")),
        }
    }

    fn port_value(&mut self, q: Quals, w: &str, pos: usize) -> R<Bool> {
        let ipp = match q.proto {
            Proto::Default => None,
            Proto::Ipp(p @ (TCP | UDP | SCTP), ..) => Some(p),
            _ => {
                return Err(CompileError::at(
                    pos,
                    "port qualifier applied to a protocol without ports",
                ));
            }
        };
        let port = |s: &str| -> R<u32> {
            let n = if is_number(s) {
                parse_number(s).map_err(|e| CompileError::at(pos, e))?
            } else {
                service(s).ok_or_else(|| CompileError::at(pos, format!("unknown port `{s}`")))?
            };
            if n > 0xffff {
                return Err(CompileError::at(pos, format!("port {n} is too high")));
            }
            Ok(n)
        };
        let (lo, hi) = if q.typ == Typ::Portrange {
            match split_range(w) {
                Some((a, b)) => (port(a)?, port(b)?),
                None => {
                    let p = port(w)?;
                    (p, p)
                }
            }
        } else {
            let p = port(w)?;
            (p, p)
        };
        Ok(self.ports(ipp, q.dir, lo.min(hi), lo.max(hi)))
    }

    fn net_value(&mut self, q: Quals, w: &str, pos: usize) -> R<Bool> {
        if w.contains(':') {
            if !matches!(q.proto, Proto::Default | Proto::Ip6) {
                return Err(CompileError::at(
                    pos,
                    "IPv6 network used with another protocol",
                ));
            }
            let (a, len) = parse_ip6_prefix(self, w, pos)?;
            let mask = prefix_mask6(len);
            if a & !mask != 0 {
                return Err(CompileError::at(
                    pos,
                    format!("non-network bits set in \"{w}\""),
                ));
            }
            return Ok(self.ip6_net(q.dir, a, len));
        }
        if !matches!(
            q.proto,
            Proto::Default | Proto::Ip | Proto::Arp | Proto::Rarp
        ) {
            return Err(CompileError::at(pos, "`net` cannot follow this protocol"));
        }
        let dotted = w.contains('.');
        let (a, parts) = if dotted {
            parse_dotted(w).ok_or_else(|| CompileError::at(pos, host_error(w)))?
        } else {
            let n = parse_number(w).map_err(|e| CompileError::at(pos, e))?;
            if n > 255 { (n, 4) } else { (n << 24, 1) }
        };
        let mask = if self.eat_op("/") {
            if !dotted {
                return Err(CompileError::at(
                    pos,
                    "syntax error: a network with a mask length must be dotted",
                ));
            }
            let len = self.number()?;
            if len > 32 {
                return Err(CompileError::at(
                    pos,
                    format!("netmask length {len} is too high"),
                ));
            }
            prefix_mask(len)
        } else if self.eat_word("mask") {
            let (m, mp, mpos) = self.word()?;
            if !dotted || !m.contains('.') {
                return Err(CompileError::at(
                    mpos,
                    "syntax error: `mask` needs dotted addresses",
                ));
            }
            let _ = mp;
            parse_dotted(&m)
                .ok_or_else(|| CompileError::at(mpos, host_error(&m)))?
                .0
        } else {
            prefix_mask(8 * parts)
        };
        if a & !mask != 0 {
            return Err(CompileError::at(
                pos,
                format!("non-network bits set in \"{w}\""),
            ));
        }
        Ok(self.ip4_net(q.proto, q.dir, a, mask))
    }

    // ---- arithmetic ----

    /// `arith relop arith`, or `None` when the tokens do not start one.
    fn relation(&mut self, committed: &mut bool) -> R<Option<Bool>> {
        self.mem = 0;
        let Some(a) = self.arith(0, committed)? else {
            return Ok(None);
        };
        let op = match self.peek_op() {
            Some(o @ (">" | ">=" | "<" | "<=" | "=" | "==" | "!=")) => o,
            _ => return Ok(None),
        };
        *committed = true;
        self.i += 1;
        let Some(b) = self.arith(0, committed)? else {
            return self.err("syntax error: expected a value");
        };
        let (jop, negate) = match op {
            ">" => (JGT, false),
            ">=" => (JGE, false),
            "<" => (JGE, true),
            "<=" => (JGT, true),
            "!=" => (JEQ, true),
            _ => (JEQ, false),
        };
        let checks = a.checks.and(b.checks);
        let leaf = match (a.konst, b.konst) {
            (Some(x), Some(y)) => Bool::Const(match jop {
                JGT => x > y,
                JGE => x >= y,
                _ => x == y,
            }),
            (_, Some(k)) => Bool::leaf(a.code, jop, k),
            _ => {
                let s = self.scratch()?;
                let mut code = a.code;
                code.push(Insn::stmt(ST, s));
                code.extend(b.code);
                code.push(Insn::stmt(MISC | TAX, 0));
                code.push(Insn::stmt(LD | W | MEM, s));
                Bool::Leaf {
                    code,
                    op: jop,
                    src: Src::X,
                }
            }
        };
        let leaf = if negate { leaf.not() } else { leaf };
        Ok(Some(checks.and(leaf)))
    }

    fn scratch(&mut self) -> R<u32> {
        if self.mem >= self.mem_top {
            return self.err("expression too complex: out of scratch memory");
        }
        self.mem += 1;
        Ok(self.mem - 1)
    }

    /// Binary operators by precedence level, loosest first.
    fn arith(&mut self, level: usize, committed: &mut bool) -> R<Option<Val>> {
        const LEVELS: [&[&str]; 5] = [
            &["|", "^"],
            &["&"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary(committed);
        }
        let Some(mut a) = self.arith(level + 1, committed)? else {
            return Ok(None);
        };
        while let Some(op) = self.peek_op().filter(|o| LEVELS[level].contains(o)) {
            let pos = self.pos();
            self.i += 1;
            let Some(b) = self.arith(level + 1, committed)? else {
                return Ok(None);
            };
            let code = match op {
                "|" => OR,
                "^" => XOR,
                "&" => AND,
                "<<" => LSH,
                ">>" => RSH,
                "+" => ADD,
                "-" => SUB,
                "*" => MUL,
                "/" => DIV,
                _ => MOD,
            };
            a = self.binop(code, a, b, pos)?;
        }
        Ok(Some(a))
    }

    fn binop(&mut self, op: u16, a: Val, b: Val, pos: usize) -> R<Val> {
        if matches!(op, DIV | MOD) && b.konst == Some(0) {
            return Err(CompileError::at(pos, "division by zero"));
        }
        if matches!(op, LSH | RSH) && b.konst.is_some_and(|k| k >= 32) {
            return Err(CompileError::at(pos, "shift by 32 or more bits"));
        }
        // `x & 0` and `x * 0` are 0 whatever x loads; libpcap's optimiser drops the load,
        // and so do we (the protocol checks stay).
        if matches!(op, AND | MUL) && b.konst == Some(0) {
            return Ok(Val {
                code: vec![Insn::stmt(LD | W | IMM, 0)],
                checks: a.checks.and(b.checks),
                konst: Some(0),
            });
        }
        if let (Some(x), Some(y)) = (a.konst, b.konst) {
            let v = crate::interp::alu(op, x, y).unwrap_or(0);
            return Ok(Val::k(v));
        }
        let checks = a.checks.and(b.checks);
        let mut code = a.code;
        match b.konst {
            Some(k) => code.push(Insn::stmt(ALU | op | K, k)),
            None => {
                let s = self.scratch()?;
                code.push(Insn::stmt(ST, s));
                code.extend(b.code);
                code.push(Insn::stmt(MISC | TAX, 0));
                code.push(Insn::stmt(LD | W | MEM, s));
                code.push(Insn::stmt(ALU | op | X, 0));
            }
        }
        Ok(Val {
            code,
            checks,
            konst: None,
        })
    }

    fn unary(&mut self, committed: &mut bool) -> R<Option<Val>> {
        if self.eat_op("-") {
            let Some(v) = self.nested(|p| p.unary(committed))? else {
                return Ok(None);
            };
            if let Some(k) = v.konst {
                return Ok(Some(Val::k(k.wrapping_neg())));
            }
            let mut code = v.code;
            code.push(Insn::stmt(ALU | NEG, 0));
            return Ok(Some(Val {
                code,
                checks: v.checks,
                konst: None,
            }));
        }
        if self.eat_op("(") {
            let Some(v) = self.nested(|p| p.arith(0, committed))? else {
                return Ok(None);
            };
            if !self.eat_op(")") {
                return Ok(None);
            }
            return Ok(Some(v));
        }
        let Some(Token {
            tok: Tok::Word(w, escaped),
            pos,
        }) = self.toks.get(self.i).cloned()
        else {
            return Ok(None);
        };
        if escaped {
            return Ok(None);
        }
        if self.peek_op_at(1) == Some("[") {
            let Some(proto) = proto_word(&w) else {
                return Ok(None);
            };
            self.i += 2;
            *committed = true;
            return self.index(proto, pos).map(Some);
        }
        if w == "len" || w == "length" {
            self.i += 1;
            return Ok(Some(Val {
                code: vec![Insn::stmt(LD | W | LEN, 0)],
                checks: Bool::Const(true),
                konst: None,
            }));
        }
        if let Some(k) = named_constant(&w) {
            self.i += 1;
            return Ok(Some(Val::k(k)));
        }
        if is_number(&w) {
            self.i += 1;
            return match parse_number(&w) {
                Ok(k) => Ok(Some(Val::k(k))),
                Err(e) => Err(CompileError::at(pos, e)),
            };
        }
        Ok(None)
    }

    /// `proto[offset]` or `proto[offset:size]`, after the `[`.
    fn index(&mut self, proto: Proto, pos: usize) -> R<Val> {
        let Some(off) = self.nested(|p| p.arith(0, &mut true))? else {
            return self.err("syntax error in the offset");
        };
        let size = if self.eat_op(":") {
            let n = self.number()?;
            match n {
                1 => B,
                2 => H,
                4 => W,
                _ => return self.err("data size must be 1, 2, or 4"),
            }
        } else {
            B
        };
        if !self.eat_op("]") {
            return self.err("syntax error: expected `]`");
        }
        let nl = self.nl;
        // (protocol check, base offset, whether the base is the transport header of IPv4)
        let (check, base, transport) = match proto {
            Proto::Link => (Bool::Const(true), 0, false),
            Proto::Ip => (self.linktype(0x800), nl, false),
            Proto::Ip6 => (self.linktype(0x86dd), nl, false),
            Proto::Arp => (self.linktype(0x806), nl, false),
            Proto::Rarp => (self.linktype(0x8035), nl, false),
            Proto::Decnet => (self.linktype(0x6003), nl, false),
            Proto::Iso => (self.linktype(0xfe), nl, false),
            Proto::Ether(et) => (self.linktype(et), nl, false),
            Proto::Ipp(58, ..) => (
                self.linktype(0x86dd).and(Bool::eq(B, nl + 6, 58)),
                nl + 40,
                false,
            ),
            Proto::Ipp(p, true, _) if !matches!(p, 50 | 51) => {
                (self.ip_proto(p as u32).and(self.not_fragment()), nl, true)
            }
            _ => return Err(CompileError::at(pos, "this protocol cannot be indexed")),
        };
        let mut code = Vec::new();
        match off.konst {
            Some(k) => {
                let at = base
                    .checked_add(k)
                    .ok_or_else(|| CompileError::at(pos, "offset too large"))?;
                if transport {
                    code.push(Insn::stmt(LDX | B | MSH, nl));
                    code.push(Insn::stmt(LD | size | IND, at));
                } else {
                    code.push(Insn::stmt(LD | size | ABS, at));
                }
            }
            None => {
                code.extend(off.code);
                if transport {
                    let s = self.scratch()?;
                    code.push(Insn::stmt(ST, s));
                    code.push(Insn::stmt(LDX | B | MSH, nl));
                    code.push(Insn::stmt(LD | W | MEM, s));
                    code.push(Insn::stmt(ALU | ADD | X, 0));
                }
                code.push(Insn::stmt(MISC | TAX, 0));
                code.push(Insn::stmt(LD | size | IND, base));
            }
        }
        Ok(Val {
            code,
            checks: check.and(off.checks),
            konst: None,
        })
    }

    // ---- code for primitives ----

    /// The packet's link-layer protocol is `et` (an Ethernet type, or an LLC SAP up to
    /// 255), at the current offsets.
    fn linktype(&self, et: u32) -> Bool {
        let version = |nl: u32| match et {
            0x800 => Bool::cmp(B, nl, 0xf0, JEQ, 0x40),
            0x86dd => Bool::cmp(B, nl, 0xf0, JEQ, 0x60),
            _ => Bool::Const(false),
        };
        if self.mpls > 0 {
            return version(self.nl);
        }
        match self.lt {
            Lt::Raw => version(self.nl),
            Lt::Ppp(off) => {
                let ppp = match et {
                    0x800 => 0x21,
                    0x86dd => 0x57,
                    0x8847 => 0x281,
                    0x6003 => 0x27,
                    0x809b => 0x29,
                    0x8137 => 0x2b,
                    0xfe => 0x23,
                    _ => et,
                };
                Bool::eq(H, off, ppp)
            }
            Lt::Ether(off) => {
                let long = Bool::cmp(H, off, u32::MAX, JGT, 1500);
                let snap = |oui_type: u32, ctl: u32| {
                    Bool::eq(W, off + 6, oui_type).and(Bool::eq(W, off + 2, ctl))
                };
                match et {
                    // IP, NetBEUI and ISO use the same DSAP and SSAP; other SAPs are
                    // matched on the DSAP alone.
                    0x06 | 0xf0 | 0xfe => long.not().and(Bool::eq(H, off + 2, et << 8 | et)),
                    0..=0xff => long.not().and(Bool::eq(B, off + 2, et)),
                    0x8137 => Bool::eq(H, off, et).or(long.not().and(Bool::any([
                        snap(0x8137, 0xaaaa_0300),
                        Bool::eq(B, off + 2, 0xe0),
                        Bool::eq(H, off + 2, 0xffff),
                    ]))),
                    0x809b => {
                        Bool::eq(H, off, et).or(long.not().and(snap(0x0007_809b, 0xaaaa_0308)))
                    }
                    0x80f3 => Bool::eq(H, off, et).or(long.not().and(snap(0x80f3, 0xaaaa_0300))),
                    _ => Bool::eq(H, off, et),
                }
            }
            Lt::Sll(off) => match et {
                0x06 | 0xf0 | 0xfe => Bool::eq(H, off, 4).and(Bool::eq(H, off + 2, et << 8 | et)),
                0..=0xff => Bool::eq(H, off, 4).and(Bool::eq(B, off + 2, et)),
                0x8137 => Bool::eq(H, off, et)
                    .or(Bool::eq(H, off, 1))
                    .or(Bool::eq(H, off, 4).and(Bool::eq(B, off + 2, 0xe0))),
                0x809b | 0x80f3 => Bool::eq(H, off, et).or(Bool::eq(H, off, 4).and(Bool::eq(
                    W,
                    off + 6,
                    if et == 0x809b { 0x0007_809b } else { 0x80f3 },
                ))),
                _ => Bool::eq(H, off, et),
            },
        }
    }

    fn ip_proto(&self, p: u32) -> Bool {
        self.linktype(0x800).and(Bool::eq(B, self.nl + 9, p))
    }

    fn ip6_proto(&self, p: u32) -> Bool {
        let nh = self.nl + 6;
        self.linktype(0x86dd)
            .and(Bool::eq(B, nh, p).or(Bool::eq(B, nh, 44).and(Bool::eq(B, self.nl + 40, p))))
    }

    fn ip_any_proto(&self, p: u32, v4: bool, v6: bool) -> Bool {
        let a = if v4 {
            self.ip_proto(p)
        } else {
            Bool::Const(false)
        };
        let b = if v6 {
            self.ip6_proto(p)
        } else {
            Bool::Const(false)
        };
        a.or(b)
    }

    fn iso_proto(&self, p: u32) -> Bool {
        self.linktype(0xfe).and(Bool::eq(B, self.nl + 3, p))
    }

    fn isis_proto(&self, t: u32) -> Bool {
        self.iso_proto(0x83)
            .and(Bool::cmp(B, self.nl + 7, 0x1f, JEQ, t))
    }

    fn not_fragment(&self) -> Bool {
        Bool::leaf(vec![Insn::stmt(LD | H | ABS, self.nl + 6)], JSET, 0x1fff).not()
    }

    fn hostop(dir: Dir, src: u32, dst: u32, f: impl Fn(u32) -> Bool) -> Bool {
        match dir {
            Dir::Src => f(src),
            Dir::Dst => f(dst),
            Dir::And => f(src).and(f(dst)),
            Dir::Or | Dir::Default => f(src).or(f(dst)),
        }
    }

    fn ip4_net(&self, proto: Proto, dir: Dir, a: u32, mask: u32) -> Bool {
        let nl = self.nl;
        let cmp = |off: u32| {
            if mask == 0 {
                Bool::Const(true)
            } else {
                Bool::cmp(W, off, mask, JEQ, a)
            }
        };
        let ip = || {
            self.linktype(0x800)
                .and(Self::hostop(dir, nl + 12, nl + 16, cmp))
        };
        let arp = |et| {
            self.linktype(et)
                .and(Self::hostop(dir, nl + 14, nl + 24, cmp))
        };
        match proto {
            Proto::Ip => ip(),
            Proto::Arp => arp(0x806),
            Proto::Rarp => arp(0x8035),
            _ => Bool::any([ip(), arp(0x806), arp(0x8035)]),
        }
    }

    fn ip6_net(&self, dir: Dir, a: u128, len: u32) -> Bool {
        let nl = self.nl;
        let mask = prefix_mask6(len);
        let cmp = |off: u32| {
            Bool::all((0..4).filter_map(|w| {
                let shift = 96 - 32 * w;
                let m = (mask >> shift) as u32;
                (m != 0).then(|| Bool::cmp(W, off + 4 * w, m, JEQ, (a >> shift) as u32 & m))
            }))
        };
        self.linktype(0x86dd)
            .and(Self::hostop(dir, nl + 8, nl + 24, cmp))
    }

    fn ether_host(&self, dir: Dir, mac: [u8; 6], pos: usize) -> R<Bool> {
        let Lt::Ether(_) = self.lt else {
            return Err(CompileError::at(
                pos,
                "Ethernet addresses are supported on Ethernet only",
            ));
        };
        let hi = u16::from_be_bytes([mac[0], mac[1]]) as u32;
        let lo = u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]);
        let cmp = |off: u32| Bool::eq(W, off + 2, lo).and(Bool::eq(H, off, hi));
        Ok(Self::hostop(dir, 6, 0, cmp))
    }

    fn decnet_host(&self, dir: Dir, addr: u32) -> Bool {
        let nl = self.nl;
        let swapped = ((addr & 0xff) << 8) | (addr >> 8);
        // The four DECnet routing header layouts: short, padded short, long, padded long.
        let side = |short: u32, long: u32| {
            Bool::any([
                Bool::cmp(B, nl + 2, 7, JEQ, 2).and(Bool::eq(H, nl + short, swapped)),
                Bool::cmp(H, nl + 2, 0xff07, JEQ, 0x8102).and(Bool::eq(H, nl + short + 1, swapped)),
                Bool::cmp(B, nl + 2, 7, JEQ, 6).and(Bool::eq(H, nl + long, swapped)),
                Bool::cmp(H, nl + 2, 0xff07, JEQ, 0x8106).and(Bool::eq(H, nl + long + 1, swapped)),
            ])
        };
        let b = match dir {
            Dir::Src => side(5, 17),
            Dir::Dst => side(3, 9),
            Dir::And => side(5, 17).and(side(3, 9)),
            Dir::Or | Dir::Default => side(5, 17).or(side(3, 9)),
        };
        self.linktype(0x6003).and(b)
    }

    fn ports(&self, ipp: Option<u8>, dir: Dir, lo: u32, hi: u32) -> Bool {
        let nl = self.nl;
        let protos: Vec<u32> = match ipp {
            Some(p) => vec![p as u32],
            None => vec![TCP as u32, UDP as u32, SCTP as u32],
        };
        let range = |load: &dyn Fn() -> Vec<Insn>| {
            if lo == hi {
                Bool::leaf(load(), JEQ, lo)
            } else {
                Bool::leaf(load(), JGE, lo).and(Bool::leaf(load(), JGT, hi).not())
            }
        };
        let v6 = self
            .linktype(0x86dd)
            .and(Bool::any(protos.iter().map(|&p| Bool::eq(B, nl + 6, p))))
            .and(Self::hostop(dir, nl + 40, nl + 42, |off| {
                range(&|| vec![Insn::stmt(LD | H | ABS, off)])
            }));
        let v4 = self
            .linktype(0x800)
            .and(Bool::any(protos.iter().map(|&p| Bool::eq(B, nl + 9, p))))
            .and(self.not_fragment())
            .and(Self::hostop(dir, 0, 2, |rel| {
                range(&|| {
                    vec![
                        Insn::stmt(LDX | B | MSH, nl),
                        Insn::stmt(LD | H | IND, nl + rel),
                    ]
                })
            }));
        v6.or(v4)
    }

    fn cast(&self, proto: Proto, broadcast: bool, pos: usize) -> R<Bool> {
        match (proto, broadcast) {
            (Proto::Link, _) => {
                let Lt::Ether(_) = self.lt else {
                    return Err(CompileError::at(
                        pos,
                        "link-layer broadcast and multicast are supported on Ethernet only",
                    ));
                };
                Ok(if broadcast {
                    Bool::eq(W, 2, u32::MAX).and(Bool::eq(H, 0, 0xffff))
                } else {
                    Bool::leaf(vec![Insn::stmt(LD | B | ABS, 0)], JSET, 1)
                })
            }
            (Proto::Ip, true) => {
                let Some(mask) = self.netmask else {
                    return Err(CompileError::at(
                        pos,
                        "netmask not known, so 'ip broadcast' not supported",
                    ));
                };
                let host = !mask;
                let dst = self.nl + 16;
                Ok(self
                    .linktype(0x800)
                    .and(Bool::cmp(W, dst, host, JEQ, 0).or(Bool::cmp(W, dst, host, JEQ, host))))
            }
            (Proto::Ip, false) => {
                Ok(self
                    .linktype(0x800)
                    .and(Bool::cmp(B, self.nl + 16, 0xff, JGE, 224)))
            }
            (Proto::Ip6, false) => Ok(self.linktype(0x86dd).and(Bool::eq(B, self.nl + 24, 0xff))),
            _ => Err(CompileError::at(
                pos,
                "broadcast or multicast is not defined for this protocol",
            )),
        }
    }

    fn optional_number(&mut self) -> R<Option<u32>> {
        match self.peek_word() {
            Some(w) if is_number(w) => self.number().map(Some),
            Some(w) if !KEYWORDS.contains(&w) && proto_word(w).is_none() => {
                self.err(format!("syntax error at `{w}`"))
            }
            _ => Ok(None),
        }
    }

    /// `vxlan [vni]` and `geneve [vni]`: UDP to port 4789 or 6081 over IPv4 (not a
    /// fragment) or IPv6, the header's checks, then the offsets of the encapsulated frame
    /// into scratch words; the rest of the expression looks at that frame. Geneve carries
    /// an Ethernet frame (protocol type 0x6558) or a network-layer packet whose type is
    /// the protocol type.
    fn encap(&mut self, geneve: bool, pos: usize) -> R<Bool> {
        let vni = self.optional_number()?;
        if vni.is_some_and(|v| v > 0xff_ffff) {
            return Err(CompileError::at(pos, "VNI too high"));
        }
        if self.mem_top < 3 + 4 {
            return Err(CompileError::at(pos, "too many vxlan or geneve levels"));
        }
        let new = Inner {
            frame: self.mem_top - 1,
            lt: self.mem_top - 2,
            nl: self.mem_top - 3,
        };
        self.mem_top -= 3;
        let nl = self.nl;
        let port = if geneve { 6081 } else { 4789 };
        let msh = Insn::stmt(LDX | B | MSH, nl);
        let ind = |size: u16, k: u32| Insn::stmt(LD | size | IND, k);
        // The tests, in the current frame's offsets; the UDP payload is at x + nl + 8
        // (IPv4) or nl + 48 (IPv6).
        let mut v4 = self
            .linktype(0x800)
            .and(Bool::eq(B, nl + 9, UDP as u32))
            .and(self.not_fragment())
            .and(Bool::leaf(vec![msh, ind(H, nl + 2)], JEQ, port));
        let mut v6 = self
            .linktype(0x86dd)
            .and(Bool::eq(B, nl + 6, UDP as u32))
            .and(Bool::eq(H, nl + 42, port));
        if geneve {
            // Version 0 (the top two bits of the first byte), as libpcap checks.
            let version = vec![msh, ind(B, nl + 8), Insn::stmt(ALU | AND | K, 0xc0)];
            v4 = v4.and(Bool::leaf(version, JEQ, 0));
            v6 = v6.and(Bool::cmp(B, nl + 48, 0xc0, JEQ, 0));
        } else {
            v4 = v4.and(Bool::leaf(vec![msh, ind(B, nl + 8)], JEQ, 8));
            v6 = v6.and(Bool::eq(B, nl + 48, 8));
        }
        if let Some(v) = vni {
            v4 = v4.and(Bool::leaf(
                vec![msh, ind(W, nl + 12), Insn::stmt(ALU | AND | K, 0xffff_ff00)],
                JEQ,
                v << 8,
            ));
            v6 = v6.and(Bool::cmp(W, nl + 52, 0xffff_ff00, JEQ, v << 8));
        }
        if let Some(cur) = self.inner {
            v4 = rebase(v4, cur).map_err(|r| CompileError::at(pos, r))?;
            v6 = rebase(v6, cur).map_err(|r| CompileError::at(pos, r))?;
        }
        // The UDP payload's absolute offset into A.
        let payload4 = match self.inner {
            None => vec![
                msh,
                Insn::stmt(MISC | TXA, 0),
                Insn::stmt(ALU | ADD | K, nl + 8),
            ],
            Some(cur) => vec![
                Insn::stmt(LDX | W | MEM, cur.nl),
                Insn::stmt(LD | B | IND, nl - 14),
                Insn::stmt(ALU | AND | K, 0xf),
                Insn::stmt(ALU | LSH | K, 2),
                Insn::stmt(ALU | ADD | X, 0),
                Insn::stmt(ALU | ADD | K, nl - 14 + 8),
            ],
        };
        let payload6 = match self.inner {
            None => vec![Insn::stmt(LD | W | IMM, nl + 48)],
            Some(cur) => vec![
                Insn::stmt(LD | W | MEM, cur.nl),
                Insn::stmt(ALU | ADD | K, nl - 14 + 48),
            ],
        };
        // Always true: the code's side effect is the point.
        let set = |mut code: Vec<Insn>| {
            code.push(Insn::stmt(LD | W | IMM, 0));
            Bool::leaf(code, JEQ, 0)
        };
        let st = |slot: u32| Insn::stmt(ST, slot);
        let add = |k: u32| Insn::stmt(ALU | ADD | K, k);
        let offsets = |payload: Vec<Insn>| -> Bool {
            if !geneve {
                // VXLAN: an Ethernet frame after the 8-byte header.
                let mut c = payload;
                c.extend([
                    add(8),
                    st(new.frame),
                    add(12),
                    st(new.lt),
                    add(2),
                    st(new.nl),
                ]);
                return set(c);
            }
            // Geneve: the header is 8 bytes plus 4 * its option length (low 6 bits of
            // its first byte). The payload's offset is kept in the nl word meanwhile.
            let mut c = payload;
            c.extend([
                st(new.nl),
                Insn::stmt(MISC | TAX, 0),
                Insn::stmt(LD | B | IND, 0),
                Insn::stmt(ALU | AND | K, 0x3f),
                Insn::stmt(ALU | LSH | K, 2),
                Insn::stmt(ALU | ADD | X, 0),
                add(8),
                st(new.frame),
            ]);
            let ethernet = Bool::leaf(
                vec![Insn::stmt(LDX | W | MEM, new.nl), ind(H, 2)],
                JEQ,
                0x6558,
            );
            let eth = set(vec![
                Insn::stmt(LD | W | MEM, new.frame),
                add(12),
                st(new.lt),
                add(2),
                st(new.nl),
            ]);
            // Not Ethernet: the protocol type is the type field, the packet follows the
            // header (and the "frame" is placed so that its type field would be there).
            let other = set(vec![
                Insn::stmt(LD | W | MEM, new.nl),
                add(2),
                st(new.lt),
                Insn::stmt(LD | W | MEM, new.frame),
                st(new.nl),
                Insn::stmt(LD | W | MEM, new.lt),
                Insn::stmt(ALU | SUB | K, 12),
                st(new.frame),
            ]);
            set(c).and(ethernet.clone().and(eth).or(ethernet.not().and(other)))
        };
        let b = v4.and(offsets(payload4)).or(v6.and(offsets(payload6)));
        self.inner = Some(new);
        self.lt = Lt::Ether(12);
        self.nl = 14;
        self.mpls = 0;
        self.absolute = true;
        Ok(b)
    }

    fn vlan(&mut self, pos: usize) -> R<Bool> {
        let id = self.optional_number()?;
        let Lt::Ether(off) = self.lt else {
            return Err(CompileError::at(
                pos,
                "'vlan' is not supported on this link type or after pppoes",
            ));
        };
        if self.mpls > 0 {
            return Err(CompileError::at(pos, "'vlan' is not supported inside MPLS"));
        }
        let mut b = Bool::any([0x8100, 0x88a8, 0x9100].map(|t| Bool::eq(H, off, t)));
        if let Some(id) = id {
            if id > 4095 {
                return Err(CompileError::at(pos, format!("VLAN tag {id} is too high")));
            }
            b = b.and(Bool::cmp(H, off + 2, 0xfff, JEQ, id));
        }
        self.lt = Lt::Ether(off + 4);
        self.nl += 4;
        Ok(b)
    }

    fn mpls_prim(&mut self, pos: usize) -> R<Bool> {
        let label = self.optional_number()?;
        let mut b = if self.mpls == 0 {
            if let Lt::Raw = self.lt {
                return Err(CompileError::at(pos, "'mpls' is not supported on raw IP"));
            }
            self.linktype(0x8847)
        } else {
            Bool::leaf(vec![Insn::stmt(LD | B | ABS, self.nl - 2)], JSET, 1).not()
        };
        if let Some(l) = label {
            if l > 0xfffff {
                return Err(CompileError::at(pos, format!("MPLS label {l} is too high")));
            }
            b = b.and(Bool::cmp(W, self.nl, 0xffff_f000, JEQ, l << 12));
        }
        self.nl += 4;
        self.mpls += 1;
        Ok(b)
    }

    fn pppoes(&mut self, pos: usize) -> R<Bool> {
        let sid = self.optional_number()?;
        let mut b = self.linktype(0x8864);
        if let Some(s) = sid {
            if s > 0xffff {
                return Err(CompileError::at(
                    pos,
                    format!("PPPoE session number {s} is too high"),
                ));
            }
            b = b.and(Bool::eq(H, self.nl + 2, s));
        }
        self.lt = Lt::Ppp(self.nl + 6);
        self.nl += 8;
        Ok(b)
    }

    fn llc(&mut self, pos: usize) -> R<Bool> {
        let Lt::Ether(off) = self.lt else {
            return Err(CompileError::at(pos, "'llc' is supported on Ethernet only"));
        };
        let is_llc = Bool::cmp(H, off, u32::MAX, JGT, 1500)
            .not()
            .and(Bool::eq(H, off + 2, 0xffff).not());
        let ctl = off + 4;
        let kind = match self.peek_word() {
            Some(w) => w.to_string(),
            None => return Ok(is_llc),
        };
        let sub = match kind.as_str() {
            "i" => Bool::leaf(vec![Insn::stmt(LD | B | ABS, ctl)], JSET, 1).not(),
            "s" => Bool::cmp(B, ctl, 3, JEQ, 1),
            "u" => Bool::cmp(B, ctl, 3, JEQ, 3),
            "rr" => Bool::cmp(B, ctl, 0x0f, JEQ, 0x01),
            "rnr" => Bool::cmp(B, ctl, 0x0f, JEQ, 0x05),
            "rej" => Bool::cmp(B, ctl, 0x0f, JEQ, 0x09),
            "ui" => Bool::cmp(B, ctl, 0xef, JEQ, 0x03),
            "ua" => Bool::cmp(B, ctl, 0xef, JEQ, 0x63),
            "disc" => Bool::cmp(B, ctl, 0xef, JEQ, 0x43),
            "dm" => Bool::cmp(B, ctl, 0xef, JEQ, 0x0f),
            "sabme" => Bool::cmp(B, ctl, 0xef, JEQ, 0x6f),
            "test" => Bool::cmp(B, ctl, 0xef, JEQ, 0xe3),
            "xid" => Bool::cmp(B, ctl, 0xef, JEQ, 0xaf),
            "frmr" => Bool::cmp(B, ctl, 0xef, JEQ, 0x87),
            _ => return Ok(is_llc),
        };
        self.i += 1;
        Ok(is_llc.and(sub))
    }
}

/// `items` joined by `and` (or `or`) as a balanced tree.
fn join(and: bool, mut items: Vec<Bool>) -> Bool {
    if items.len() <= 1 {
        return items.pop().unwrap_or(Bool::Const(and));
    }
    let right = items.split_off(items.len() / 2);
    let (l, r) = (join(and, items), join(and, right));
    if and { l.and(r) } else { l.or(r) }
}

fn host_error(w: &str) -> String {
    // A word with letters (not an IPv6 address) is a name tcpdump would look up.
    if w.bytes().any(|b| b.is_ascii_alphabetic()) && !w.contains(':') {
        format!("`{w}` is a host name, and names are not resolved: give an address")
    } else {
        format!("invalid IPv4 address `{w}`")
    }
}

fn prefix_mask(len: u32) -> u32 {
    if len == 0 { 0 } else { u32::MAX << (32 - len) }
}

fn prefix_mask6(len: u32) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - len)
    }
}

/// Dotted IPv4 with 1 to 4 decimal parts, left-aligned: `192.168` is 192.168.0.0.
fn parse_dotted(w: &str) -> Option<(u32, u32)> {
    let parts: Vec<&str> = w.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut v: u32 = 0;
    for p in &parts {
        if p.is_empty() || p.len() > 3 || !p.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let n: u32 = p.parse().ok()?;
        if n > 255 {
            return None;
        }
        v = (v << 8) | n;
    }
    let n = parts.len() as u32;
    Some((if n == 4 { v } else { v << (32 - 8 * n) }, n))
}

fn parse_ip6_prefix(p: &mut Parser, w: &str, pos: usize) -> R<(u128, u32)> {
    let a: Ipv6Addr = w
        .parse()
        .map_err(|_| CompileError::at(pos, format!("invalid IPv6 address `{w}`")))?;
    let len = if p.eat_op("/") {
        let l = p.number()?;
        if l > 128 {
            return Err(CompileError::at(pos, "mask length must be <= 128"));
        }
        l
    } else {
        128
    };
    Ok((u128::from(a), len))
}

fn split_range(w: &str) -> Option<(&str, &str)> {
    // Split at a '-' that separates two valid ports (names may contain '-').
    w.char_indices()
        .filter(|(_, c)| *c == '-')
        .map(|(i, _)| (&w[..i], &w[i + 1..]))
        .find(|(a, b)| {
            let ok = |s: &str| is_number(s) || service(s).is_some();
            ok(a) && ok(b)
        })
}

/// `ab:cd:ef:00:00:01`, `ab-cd-ef-00-00-01`, `ab.cd.ef.00.00.01`, `abcd.ef00.0001`,
/// `abcdef000001`.
pub fn parse_mac(w: &str) -> Option<[u8; 6]> {
    let hex = |s: &str| u8::from_str_radix(s, 16).ok();
    let groups: Vec<&str> = w.split([':', '-', '.']).collect();
    let mut out = [0u8; 6];
    match groups.len() {
        6 => {
            for (o, g) in out.iter_mut().zip(&groups) {
                if g.is_empty() || g.len() > 2 {
                    return None;
                }
                *o = hex(g)?;
            }
        }
        3 => {
            for (n, g) in groups.iter().enumerate() {
                if g.len() != 4 {
                    return None;
                }
                out[2 * n] = hex(&g[..2])?;
                out[2 * n + 1] = hex(&g[2..])?;
            }
        }
        1 if w.len() == 12 => {
            for (n, o) in out.iter_mut().enumerate() {
                *o = hex(w.get(2 * n..2 * n + 2)?)?;
            }
        }
        _ => return None,
    }
    Some(out)
}

/// `area.node`: area up to 63, node up to 1023.
fn parse_decnet(w: &str) -> Option<u32> {
    let (a, n) = w.split_once('.')?;
    let (a, n): (u32, u32) = (a.parse().ok()?, n.parse().ok()?);
    (a <= 63 && n <= 1023).then_some((a << 10) | n)
}
