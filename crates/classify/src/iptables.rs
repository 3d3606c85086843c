//! `iptables-save` / `ip6tables-save` output -> an ordered [`RuleSet`].
//!
//! Only the `filter` table is read; other tables are skipped. One built-in chain (INPUT,
//! FORWARD or OUTPUT) is classified: user chains reached by `-j` are flattened into it, the
//! jump's conditions added to every rule inlined, and a conditional `RETURN` becomes an
//! [`Complex::Unless`] on the rules after it. Non-terminating targets (LOG, TCPMSS, MARK,
//! ...) do not change a verdict and are left out of the list (and counted). A rule the
//! parser cannot represent is reported with its line, column and reason and skipped; the
//! rest load.

use crate::rule::*;
use netsieve_wire::ip_proto;
use std::collections::HashMap;

/// A problem with one line of the dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.msg)
    }
}

/// Which family a dump is for: rules without addresses match only that family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    V4,
    V6,
}

/// The result of reading a dump.
#[derive(Debug)]
pub struct Parsed {
    pub set: RuleSet,
    /// Rules skipped, with why.
    pub errors: Vec<ParseError>,
    /// Rules with non-terminating targets (LOG, ...) left out, by target.
    pub non_terminating: Vec<(String, usize)>,
}

#[derive(Clone, Debug)]
enum Target {
    Verdict(Action),
    Return,
    Jump(String),
    /// `-g`: like a jump, but a packet that falls off the end of the chain does not come
    /// back to the rules after the goto.
    Goto(String),
    Other(String),
}

#[derive(Clone, Debug)]
struct Raw {
    header: Vec<Header>,
    complex: Vec<Complex>,
    target: Target,
    line: usize,
}

#[derive(Default)]
struct Chain {
    policy: Option<Action>,
    rules: Vec<Raw>,
}

/// How many header alternatives a rule may expand to before its header part goes to the
/// slow path instead.
const MAX_ALTS: usize = 64;

/// Parses `text` (an `iptables-save` dump) and flattens `chain` of its filter table.
/// Rules that cannot be read are skipped and listed in [`Parsed::errors`]; a dump with
/// no filter table, or without `chain` in it, is an error: there is no rule set to
/// classify with, and a firewall must not fall back to accepting everything.
pub fn parse(text: &str, family: Family, chain: &str, origin: &str) -> Result<Parsed, ParseError> {
    let mut chains: HashMap<String, Chain> = HashMap::new();
    let mut errors = Vec::new();
    let mut table: Option<String> = None;
    let mut saw_filter = false;
    for (n, line) in text.lines().enumerate() {
        let ln = n + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(name) = t.strip_prefix('*') {
            table = Some(name.trim().to_string());
            saw_filter |= name.trim() == "filter";
            continue;
        }
        if t == "COMMIT" {
            table = None;
            continue;
        }
        if table.as_deref() != Some("filter") {
            continue;
        }
        if let Some(rest) = t.strip_prefix(':') {
            let mut it = rest.split_whitespace();
            let name = it.next().unwrap_or("");
            let policy = match it.next() {
                Some("ACCEPT") => Some(Action::Accept),
                Some("DROP") => Some(Action::Drop),
                Some("-") | None => None,
                Some(p) => {
                    errors.push(ParseError {
                        line: ln,
                        col: 1,
                        msg: format!("unknown chain policy `{p}`"),
                    });
                    None
                }
            };
            chains.entry(name.to_string()).or_default().policy = policy;
            continue;
        }
        match parse_rule(line, ln, family) {
            Ok((Some(chain), raw)) => chains.entry(chain).or_default().rules.push(raw),
            Ok((None, _)) => errors.push(ParseError {
                line: ln,
                col: 1,
                msg: "expected `-A CHAIN`".into(),
            }),
            Err(e) => errors.push(e),
        }
    }
    if !saw_filter {
        return Err(ParseError {
            line: 1,
            col: 1,
            msg: "no `*filter` table: not an iptables-save dump (an `nft list ruleset` \
                  dump is not read)"
                .into(),
        });
    }
    if !chains.contains_key(chain) {
        let mut names: Vec<&str> = chains.keys().map(String::as_str).collect();
        names.sort();
        return Err(ParseError {
            line: 1,
            col: 1,
            msg: format!(
                "no chain `{chain}` in the filter table (it has {})",
                names.join(", ")
            ),
        });
    }
    let mut non_terminating: HashMap<String, usize> = HashMap::new();
    let base = match family {
        Family::V4 => Header::any_v4(),
        Family::V6 => Header {
            src: ANY,
            dst: ANY,
            ..Header::any_v4()
        },
    };
    let mut f = Flattener {
        chains: &chains,
        errors: &mut errors,
        non_terminating: &mut non_terminating,
        origin,
        out: Vec::new(),
        stack: Vec::new(),
        budget: MAX_FLAT_RULES,
    };
    let policy = match chains.get(chain) {
        Some(c) => {
            f.flatten(chain, &[base], &[], 0);
            c.policy.unwrap_or(Action::Accept)
        }
        None => Action::Accept,
    };
    let rules = f.out;
    let mut non_terminating: Vec<(String, usize)> = non_terminating.into_iter().collect();
    non_terminating.sort();
    errors.sort_by_key(|e| (e.line, e.col));
    errors.dedup();
    Ok(Parsed {
        set: RuleSet { rules, policy },
        errors,
        non_terminating,
    })
}

struct Flattener<'a> {
    chains: &'a HashMap<String, Chain>,
    errors: &'a mut Vec<ParseError>,
    non_terminating: &'a mut HashMap<String, usize>,
    origin: &'a str,
    out: Vec<Rule>,
    /// The chains being flattened, outermost first: a jump to one of them is a loop.
    stack: Vec<String>,
    /// Rules the flattening may still visit: chains that jump to chains many times over
    /// multiply, and a hostile dump must not make that unbounded.
    budget: usize,
}

/// The most rules flattening visits.
const MAX_FLAT_RULES: usize = 500_000;

impl Flattener<'_> {
    fn flatten(&mut self, name: &str, cond: &[Header], cond_c: &[Complex], depth: usize) {
        let Some(chain) = self.chains.get(name) else {
            return;
        };
        self.stack.push(name.to_string());
        let mut guards: Vec<Complex> = Vec::new();
        for r in &chain.rules {
            if self.budget == 0 {
                self.errors.push(ParseError {
                    line: r.line,
                    col: 1,
                    msg: format!(
                        "flattening the chains visits more than {MAX_FLAT_RULES} rules; the \
                         rest of chain `{name}` is skipped"
                    ),
                });
                break;
            }
            self.budget -= 1;
            // The conjunction of the jump's header tests and the rule's, unless it would
            // multiply into too many alternatives: then the jump's stay a slow-path test.
            let (header, extra) = if cond.len() * r.header.len() > MAX_ALTS * 4 {
                (
                    r.header.clone(),
                    Some(Complex::Header {
                        alts: cond.to_vec(),
                        negate: false,
                    }),
                )
            } else {
                (intersect_all(cond, &r.header), None)
            };
            if header.is_empty() {
                continue;
            }
            let mut complex: Vec<Complex> = extra.into_iter().collect();
            complex.extend(cond_c.iter().cloned());
            complex.extend(guards.iter().cloned());
            complex.extend(r.complex.iter().cloned());
            let err = |msg: String| ParseError {
                line: r.line,
                col: 1,
                msg,
            };
            match &r.target {
                Target::Verdict(a) => self.out.push(Rule {
                    header,
                    complex,
                    action: *a,
                    origin: format!("{}:{}", self.origin, r.line),
                }),
                Target::Return => {
                    let unconditional =
                        r.complex.is_empty() && r.header.iter().any(|h| h == &cond_any(h));
                    if unconditional {
                        break;
                    }
                    if r.complex.iter().any(Complex::is_stateful) {
                        self.errors.push(err(
                            "a RETURN with a stateful match (limit, statistic) cannot be \
                             flattened; rule skipped"
                                .into(),
                        ));
                        continue;
                    }
                    guards.push(Complex::Unless {
                        header: r.header.clone(),
                        all: r.complex.clone(),
                    });
                }
                Target::Jump(to) | Target::Goto(to) => {
                    if depth > 16 {
                        self.errors.push(err(format!(
                            "chain `{to}`: jumps nested too deep or looping"
                        )));
                        continue;
                    }
                    if !self.chains.contains_key(to) {
                        self.errors
                            .push(err(format!("jump to unknown chain `{to}`")));
                        continue;
                    }
                    if self.stack.iter().any(|c| c == to) {
                        self.errors
                            .push(err(format!("jump to `{to}` makes a loop")));
                        continue;
                    }
                    if r.complex.iter().any(Complex::is_stateful) {
                        self.errors.push(err(
                            "a jump with a stateful match (limit, statistic) cannot be \
                             flattened; rule skipped"
                                .into(),
                        ));
                        continue;
                    }
                    let to = to.clone();
                    self.flatten(&to, &header, &complex, depth + 1);
                    if matches!(r.target, Target::Goto(_)) {
                        guards.push(Complex::Unless {
                            header: r.header.clone(),
                            all: r.complex.clone(),
                        });
                    }
                }
                Target::Other(t) => *self.non_terminating.entry(t.clone()).or_default() += 1,
            }
        }
        self.stack.pop();
    }
}

/// The header that matches everything of `h`'s family.
fn cond_any(h: &Header) -> Header {
    let all = if h.src.len >= 96 && h.src.addr >> 32 == 0xffff {
        V4_ANY
    } else {
        ANY
    };
    Header {
        src: all,
        dst: all,
        ..Header::any_v4()
    }
}

fn intersect_prefix(a: Prefix, b: Prefix) -> Option<Prefix> {
    let (short, long) = if a.len <= b.len { (a, b) } else { (b, a) };
    short.contains(long.addr).then_some(long)
}

fn intersect_range(a: Range, b: Range) -> Option<Range> {
    let lo = a.lo.max(b.lo);
    let hi = a.hi.min(b.hi);
    (lo <= hi).then_some(Range::new(lo, hi))
}

/// The conjunction of two header tests, or `None` when nothing satisfies both.
pub fn intersect(a: &Header, b: &Header) -> Option<Header> {
    let common = a.flags_mask & b.flags_mask;
    if a.flags & common != b.flags & common {
        return None;
    }
    Some(Header {
        src: intersect_prefix(a.src, b.src)?,
        dst: intersect_prefix(a.dst, b.dst)?,
        sport: intersect_range(a.sport, b.sport)?,
        dport: intersect_range(a.dport, b.dport)?,
        proto: intersect_range(a.proto, b.proto)?,
        flags: a.flags | b.flags,
        flags_mask: a.flags_mask | b.flags_mask,
    })
}

fn intersect_all(a: &[Header], b: &[Header]) -> Vec<Header> {
    let mut out = Vec::new();
    for x in a {
        for y in b {
            if let Some(h) = intersect(x, y)
                && !out.contains(&h)
            {
                out.push(h);
            }
        }
    }
    out
}

/// Splits a line into words, honouring double quotes and backslash escapes; each word
/// with its 1-based column.
fn words(line: &str) -> Result<Vec<(String, usize)>, ParseError> {
    let mut out = Vec::new();
    let mut it = line.char_indices().peekable();
    while let Some(&(i, c)) = it.peek() {
        if c.is_whitespace() {
            it.next();
            continue;
        }
        let col = line[..i].chars().count() + 1;
        let mut w = String::new();
        let mut quoted = false;
        while let Some(&(_, c)) = it.peek() {
            if c == '"' {
                quoted = !quoted;
                it.next();
            } else if c == '\\' && quoted {
                it.next();
                if let Some((_, e)) = it.next() {
                    w.push(e);
                }
            } else if c.is_whitespace() && !quoted {
                break;
            } else {
                w.push(c);
                it.next();
            }
        }
        if quoted {
            return Err(ParseError {
                line: 0,
                col,
                msg: "unterminated quote".into(),
            });
        }
        out.push((w, col));
    }
    Ok(out)
}

/// `-p`'s protocol: a name (the table every netsieve layer shares) or a number.
fn proto_number(w: &str) -> Option<u8> {
    ip_proto::by_name(w).or_else(|| w.parse().ok())
}

fn tcp_flag_bits(w: &str) -> Option<u16> {
    let mut bits = 0;
    for f in w.split(',') {
        bits |= match f {
            "FIN" => 0x01,
            "SYN" => 0x02,
            "RST" => 0x04,
            "PSH" => 0x08,
            "ACK" => 0x10,
            "URG" => 0x20,
            "ECE" => 0x40,
            "CWR" => 0x80,
            "ALL" => 0xff,
            "NONE" => 0,
            _ => return None,
        };
    }
    Some(bits)
}

fn parse_prefix(w: &str, family: Family) -> Option<Prefix> {
    let (a, m) = match w.split_once('/') {
        Some((a, m)) => (a, Some(m)),
        None => (w, None),
    };
    match family {
        Family::V4 => {
            let a: std::net::Ipv4Addr = a.parse().ok()?;
            let len = match m {
                None => 32,
                Some(m) if m.contains('.') => {
                    let m: u32 = m.parse::<std::net::Ipv4Addr>().ok()?.into();
                    if m.leading_ones() + m.trailing_zeros() != 32 {
                        return None;
                    }
                    m.leading_ones() as u8
                }
                Some(m) => m.parse::<u8>().ok().filter(|l| *l <= 32)?,
            };
            Some(Prefix::v4(a.into(), len))
        }
        Family::V6 => {
            let a: std::net::Ipv6Addr = a.parse().ok()?;
            let len = match m {
                None => 128,
                Some(m) => m.parse::<u8>().ok().filter(|l| *l <= 128)?,
            };
            Some(Prefix::new(a.into(), len))
        }
    }
}

/// The prefixes covering what `p` leaves out of `within`.
fn complement(p: Prefix, within: Prefix) -> Vec<Prefix> {
    (within.len..p.len)
        .map(|l| Prefix::new(p.addr ^ (1u128 << (127 - l as u32)), l + 1))
        .collect()
}

fn complement_range(r: Range, full: Range) -> Vec<Range> {
    let mut out = Vec::new();
    if r.lo > full.lo {
        out.push(Range::new(full.lo, r.lo - 1));
    }
    if r.hi < full.hi {
        out.push(Range::new(r.hi + 1, full.hi));
    }
    out
}

fn parse_port(w: &str) -> Option<u16> {
    w.parse().ok()
}

/// `a`, `a:b`, `:b`, `a:`.
fn parse_port_range(w: &str) -> Option<Range> {
    match w.split_once(':') {
        None => parse_port(w).map(Range::exact),
        Some((a, b)) => {
            let lo = if a.is_empty() { 0 } else { parse_port(a)? };
            let hi = if b.is_empty() { 65535 } else { parse_port(b)? };
            (lo <= hi).then_some(Range::new(lo, hi))
        }
    }
}

/// One field's alternatives while a rule is read; the header is their cross product.
struct Fields {
    src: Vec<Prefix>,
    dst: Vec<Prefix>,
    sport: Vec<Range>,
    dport: Vec<Range>,
    proto: Vec<Range>,
    /// `--ports` of multiport: source or destination.
    either: Option<Vec<Range>>,
    flags: (u16, u16),
}

/// One rule given on its own (an update): iptables options ending in a verdict
/// (`-j ACCEPT`, `DROP` or `REJECT`); `-A CHAIN` may be given or left out.
pub fn parse_one(text: &str, family: Family, origin: &str) -> Result<Rule, ParseError> {
    let (_, raw) = parse_rule(text, 1, family)?;
    let Target::Verdict(action) = raw.target else {
        return Err(ParseError {
            line: 1,
            col: 1,
            msg: "an inserted rule needs -j ACCEPT, DROP or REJECT".into(),
        });
    };
    Ok(Rule {
        header: raw.header,
        complex: raw.complex,
        action,
        origin: origin.to_string(),
    })
}

fn parse_rule(line: &str, ln: usize, family: Family) -> Result<(Option<String>, Raw), ParseError> {
    let mut ws = words(line).map_err(|e| ParseError { line: ln, ..e })?;
    // `iptables-save -c` puts packet and byte counters first.
    if ws
        .first()
        .is_some_and(|w| w.0.starts_with('[') && w.0.ends_with(']') && w.0.contains(':'))
    {
        ws.remove(0);
    }
    let all = match family {
        Family::V4 => V4_ANY,
        Family::V6 => ANY,
    };
    let mut f = Fields {
        src: vec![all],
        dst: vec![all],
        sport: vec![ANY_PORT],
        dport: vec![ANY_PORT],
        proto: vec![ANY_PROTO],
        either: None,
        flags: (0, 0),
    };
    let mut complex = Vec::new();
    let mut chain = None;
    let mut target = None;
    let mut i = 0;
    let mut negate = false;
    let mut string: Option<(Vec<u8>, usize, usize, bool, bool)> = None;
    let mut limit: Option<(f64, u32)> = None;
    let mut stat: (Option<String>, f64, u32, u32) = (None, 0.0, 0, 0);
    while i < ws.len() {
        let (w, col) = (&ws[i].0, ws[i].1);
        let fail = |msg: String| ParseError { line: ln, col, msg };
        // The value after an option, with the old `-s ! x` negation form accepted.
        let value = |i: &mut usize, neg: &mut bool| -> Result<(String, usize), ParseError> {
            *i += 1;
            if ws.get(*i).is_some_and(|v| v.0 == "!") {
                *neg = !*neg;
                *i += 1;
            }
            ws.get(*i)
                .cloned()
                .ok_or_else(|| fail(format!("`{w}` needs a value")))
        };
        match w.as_str() {
            "!" => {
                negate = true;
                i += 1;
                continue;
            }
            "-A" => {
                let (c, _) = value(&mut i, &mut negate)?;
                chain = Some(c);
            }
            "-s" | "--source" | "-d" | "--destination" => {
                let (v, vcol) = value(&mut i, &mut negate)?;
                let p = parse_prefix(&v, family).ok_or_else(|| ParseError {
                    line: ln,
                    col: vcol,
                    msg: format!("invalid address or prefix `{v}` (host names are not resolved)"),
                })?;
                let alts = if negate { complement(p, all) } else { vec![p] };
                if w.starts_with("-s") || w == "--source" {
                    f.src = alts;
                } else {
                    f.dst = alts;
                }
            }
            "-p" | "--protocol" => {
                let (v, vcol) = value(&mut i, &mut negate)?;
                let r = if v == "all" {
                    ANY_PROTO
                } else {
                    let n = proto_number(&v).ok_or_else(|| ParseError {
                        line: ln,
                        col: vcol,
                        msg: format!("unknown protocol `{v}`"),
                    })?;
                    Range::exact(n as u16)
                };
                f.proto = if negate {
                    complement_range(r, ANY_PROTO)
                } else {
                    vec![r]
                };
            }
            "--sport" | "--source-port" | "--dport" | "--destination-port" => {
                let (v, vcol) = value(&mut i, &mut negate)?;
                let r = parse_port_range(&v).ok_or_else(|| ParseError {
                    line: ln,
                    col: vcol,
                    msg: format!("invalid port or range `{v}`"),
                })?;
                let alts = if negate {
                    complement_range(r, ANY_PORT)
                } else {
                    vec![r]
                };
                if w.starts_with("--s") {
                    f.sport = alts;
                } else {
                    f.dport = alts;
                }
            }
            "--sports" | "--source-ports" | "--dports" | "--destination-ports" | "--ports" => {
                let (v, vcol) = value(&mut i, &mut negate)?;
                let mut rs = Vec::new();
                for part in v.split(',') {
                    rs.push(parse_port_range(part).ok_or_else(|| ParseError {
                        line: ln,
                        col: vcol,
                        msg: format!("invalid port list `{v}`"),
                    })?);
                }
                if negate {
                    return Err(fail("a negated multiport list is not supported".into()));
                }
                match w.as_str() {
                    "--ports" => f.either = Some(rs),
                    "--sports" | "--source-ports" => f.sport = rs,
                    _ => f.dport = rs,
                }
            }
            "--tcp-flags" => {
                let (m, _) = value(&mut i, &mut negate)?;
                i += 1;
                let c = ws
                    .get(i)
                    .ok_or_else(|| fail("`--tcp-flags` needs a mask and a set".into()))?;
                let (mask, comp) = tcp_flag_bits(&m)
                    .zip(tcp_flag_bits(&c.0))
                    .ok_or_else(|| fail(format!("invalid TCP flags `{m} {}`", c.0)))?;
                if negate {
                    let mut h = Header::any_v4();
                    h.src = all;
                    h.dst = all;
                    h.flags = comp & mask;
                    h.flags_mask = mask;
                    complex.push(Complex::Header {
                        alts: vec![h],
                        negate: true,
                    });
                } else {
                    f.flags = (comp & mask, mask);
                }
            }
            "--syn" => {
                if negate {
                    let mut h = Header::any_v4();
                    h.src = all;
                    h.dst = all;
                    h.flags = 0x02;
                    h.flags_mask = 0x17;
                    complex.push(Complex::Header {
                        alts: vec![h],
                        negate: true,
                    });
                } else {
                    f.flags = (0x02, 0x17);
                }
            }
            "-m" | "--match" => {
                let (m, _) = value(&mut i, &mut negate)?;
                match m.as_str() {
                    "tcp" | "udp" | "sctp" | "multiport" | "state" | "conntrack" | "string"
                    | "length" | "ttl" | "limit" | "statistic" | "icmp" | "icmp6" | "comment" => {}
                    other => return Err(fail(format!("match `-m {other}` is not supported"))),
                }
            }
            "--state" | "--ctstate" => {
                let (v, vcol) = value(&mut i, &mut negate)?;
                let mut bits = 0;
                for s in v.split(',') {
                    bits |= match s {
                        "NEW" => CtState::New.bit(),
                        "ESTABLISHED" => CtState::Established.bit(),
                        "RELATED" => CtState::Related.bit(),
                        "INVALID" => CtState::Invalid.bit(),
                        "UNTRACKED" => CtState::Untracked.bit(),
                        _ => {
                            return Err(ParseError {
                                line: ln,
                                col: vcol,
                                msg: format!("unknown connection state `{s}`"),
                            });
                        }
                    };
                }
                complex.push(Complex::State { bits, negate });
            }
            "--string" | "--hex-string" => {
                let (v, vcol) = value(&mut i, &mut negate)?;
                let bytes = if w == "--string" {
                    v.into_bytes()
                } else {
                    hex_string(&v).map_err(|m| ParseError {
                        line: ln,
                        col: vcol,
                        msg: m,
                    })?
                };
                if bytes.is_empty() {
                    return Err(fail("empty string".into()));
                }
                let s = string.get_or_insert((Vec::new(), 0, 65535, false, false));
                s.0 = bytes;
                s.4 = negate;
            }
            "--algo" => {
                value(&mut i, &mut negate)?;
            }
            "--from" | "--to" => {
                let (v, _) = value(&mut i, &mut negate)?;
                let n: usize = v
                    .parse()
                    .map_err(|_| fail(format!("invalid offset `{v}`")))?;
                let s = string.get_or_insert((Vec::new(), 0, 65535, false, false));
                if w == "--from" {
                    s.1 = n;
                } else {
                    s.2 = n;
                }
            }
            "--icase" => {
                string.get_or_insert((Vec::new(), 0, 65535, false, false)).3 = true;
            }
            "--length" => {
                let (v, _) = value(&mut i, &mut negate)?;
                let range = parse_port_range(&v)
                    .ok_or_else(|| fail(format!("invalid length range `{v}`")))?;
                complex.push(Complex::Length { range, negate });
            }
            "--ttl-eq" | "--ttl-lt" | "--ttl-gt" => {
                let (v, _) = value(&mut i, &mut negate)?;
                let value: u8 = v.parse().map_err(|_| fail(format!("invalid TTL `{v}`")))?;
                let op = match w.as_str() {
                    "--ttl-eq" => TtlOp::Eq,
                    "--ttl-lt" => TtlOp::Lt,
                    _ => TtlOp::Gt,
                };
                if negate {
                    return Err(fail("a negated TTL test is not supported".into()));
                }
                complex.push(Complex::Ttl { op, value });
            }
            "--limit" => {
                let (v, _) = value(&mut i, &mut negate)?;
                let rate = parse_rate(&v).ok_or_else(|| fail(format!("invalid rate `{v}`")))?;
                limit.get_or_insert((0.0, 5)).0 = rate;
            }
            "--limit-burst" => {
                let (v, _) = value(&mut i, &mut negate)?;
                let b: u32 = v
                    .parse()
                    .map_err(|_| fail(format!("invalid burst `{v}`")))?;
                limit.get_or_insert((3.0 / 3600.0, 5)).1 = b;
            }
            "--mode" => stat.0 = Some(value(&mut i, &mut negate)?.0),
            "--probability" => {
                let (v, _) = value(&mut i, &mut negate)?;
                stat.1 = v
                    .parse()
                    .map_err(|_| fail(format!("invalid probability `{v}`")))?;
            }
            "--every" | "--packet" => {
                let (v, _) = value(&mut i, &mut negate)?;
                let n: u32 = v
                    .parse()
                    .map_err(|_| fail(format!("invalid count `{v}`")))?;
                if w == "--every" {
                    stat.2 = n;
                } else {
                    stat.3 = n;
                }
            }
            "--icmp-type" | "--icmpv6-type" => {
                let (v, _) = value(&mut i, &mut negate)?;
                let (t, c) = match v.split_once('/') {
                    Some((t, c)) => (t, Some(c)),
                    None => (v.as_str(), None),
                };
                let typ = icmp_type(t).ok_or_else(|| fail(format!("unknown ICMP type `{v}`")))?;
                let code = match c {
                    Some(c) => Some(c.parse().map_err(|_| fail(format!("invalid code `{c}`")))?),
                    None => None,
                };
                complex.push(Complex::IcmpType { typ, code, negate });
            }
            "-i" | "--in-interface" | "-o" | "--out-interface" => {
                let (name, _) = value(&mut i, &mut negate)?;
                complex.push(Complex::Iface {
                    out: w.starts_with("-o") || w == "--out-interface",
                    name,
                    negate,
                });
            }
            "--comment"
            | "--log-prefix"
            | "--log-level"
            | "--reject-with"
            | "--clamp-mss-to-pmtu"
            | "--set-mark"
            | "--set-xmark"
            | "--helper"
            | "--nflog-group"
            | "--nflog-prefix"
            | "--nflog-threshold"
            | "--nflog-range"
            | "--nflog-size"
            | "--log-uid"
            | "--log-tcp-options"
            | "--log-ip-options" => {
                // Options of matches or targets that do not change the verdict.
                if !matches!(
                    w.as_str(),
                    "--clamp-mss-to-pmtu" | "--log-uid" | "--log-tcp-options" | "--log-ip-options"
                ) {
                    value(&mut i, &mut negate)?;
                }
            }
            "-j" | "--jump" => {
                let (t, _) = value(&mut i, &mut negate)?;
                target = Some(match t.as_str() {
                    "ACCEPT" => Target::Verdict(Action::Accept),
                    "DROP" => Target::Verdict(Action::Drop),
                    "REJECT" => Target::Verdict(Action::Reject),
                    "RETURN" => Target::Return,
                    t if t.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                        && matches!(
                            t,
                            "LOG"
                                | "NFLOG"
                                | "ULOG"
                                | "TCPMSS"
                                | "MARK"
                                | "CONNMARK"
                                | "CT"
                                | "NOTRACK"
                                | "TRACE"
                                | "AUDIT"
                                | "CLASSIFY"
                        ) =>
                    {
                        Target::Other(t.to_string())
                    }
                    t => Target::Jump(t.to_string()),
                });
            }
            "-g" | "--goto" => {
                let (t, _) = value(&mut i, &mut negate)?;
                target = Some(Target::Goto(t));
            }
            "-f" | "--fragment" => {
                return Err(fail("fragment matching (`-f`) is not supported".into()));
            }
            other => return Err(fail(format!("option `{other}` is not supported"))),
        }
        negate = false;
        i += 1;
    }
    let target = target.ok_or_else(|| ParseError {
        line: ln,
        col: 1,
        msg: "rule without a target (`-j`)".into(),
    })?;
    if let Some((pattern, from, to, icase, neg)) = string {
        if pattern.is_empty() {
            return Err(ParseError {
                line: ln,
                col: 1,
                msg: "`-m string` without `--string` or `--hex-string`".into(),
            });
        }
        complex.push(Complex::String(StringMatch::new(
            pattern, from, to, icase, neg,
        )));
    }
    if let Some((per_sec, burst)) = limit {
        complex.push(Complex::Limit { per_sec, burst });
    }
    match stat.0.as_deref() {
        None => {}
        Some("random") => complex.push(Complex::Random {
            probability: stat.1,
        }),
        Some("nth") => {
            if stat.2 == 0 {
                return Err(ParseError {
                    line: ln,
                    col: 1,
                    msg: "`--mode nth` needs `--every`".into(),
                });
            }
            complex.push(Complex::Nth {
                every: stat.2,
                packet: stat.3,
            })
        }
        Some(m) => {
            return Err(ParseError {
                line: ln,
                col: 1,
                msg: format!("statistic mode `{m}` is not supported"),
            });
        }
    }
    let header = expand(&f);
    let (header, complex) = if header.len() > MAX_ALTS {
        let mut c = complex;
        c.insert(
            0,
            Complex::Header {
                alts: header,
                negate: false,
            },
        );
        let mut h = Header::any_v4();
        h.src = all;
        h.dst = all;
        (vec![h], c)
    } else {
        (header, complex)
    };
    Ok((
        chain,
        Raw {
            header,
            complex,
            target,
            line: ln,
        },
    ))
}

/// The cross product of a rule's field alternatives.
fn expand(f: &Fields) -> Vec<Header> {
    let ports: Vec<(Range, Range)> = match &f.either {
        Some(rs) => rs
            .iter()
            .map(|r| (*r, ANY_PORT))
            .chain(rs.iter().map(|r| (ANY_PORT, *r)))
            .collect(),
        None => f
            .sport
            .iter()
            .flat_map(|s| f.dport.iter().map(move |d| (*s, *d)))
            .collect(),
    };
    let mut out = Vec::new();
    for src in &f.src {
        for dst in &f.dst {
            for (sport, dport) in &ports {
                for proto in &f.proto {
                    out.push(Header {
                        src: *src,
                        dst: *dst,
                        sport: *sport,
                        dport: *dport,
                        proto: *proto,
                        flags: f.flags.0,
                        flags_mask: f.flags.1,
                    });
                    if out.len() > MAX_ALTS * 4 {
                        return out;
                    }
                }
            }
        }
    }
    out
}

/// `N/sec`, `N/minute`, ... as packets per second.
fn parse_rate(v: &str) -> Option<f64> {
    let (n, unit) = v.split_once('/').unwrap_or((v, "sec"));
    let n: f64 = n.parse().ok()?;
    let per = match unit {
        u if "second".starts_with(u) => 1.0,
        u if "minute".starts_with(u) => 60.0,
        u if "hour".starts_with(u) => 3600.0,
        u if "day".starts_with(u) => 86400.0,
        _ => return None,
    };
    Some(n / per)
}

fn icmp_type(t: &str) -> Option<u8> {
    Some(match t {
        "echo-reply" | "pong" => 0,
        "destination-unreachable" => 3,
        "source-quench" => 4,
        "redirect" => 5,
        "echo-request" | "ping" => 8,
        "time-exceeded" | "ttl-exceeded" => 11,
        "parameter-problem" => 12,
        "timestamp-request" => 13,
        "timestamp-reply" => 14,
        "any" => return None,
        _ => return t.parse().ok(),
    })
}

/// `|41 42|abc` style: hex between bars, text elsewhere.
fn hex_string(v: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut parts = v.split('|');
    let mut hex = false;
    for part in parts.by_ref() {
        if hex {
            let digits: String = part.chars().filter(|c| !c.is_whitespace()).collect();
            if !digits.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!("invalid hex digits in `{v}`"));
            }
            if !digits.len().is_multiple_of(2) {
                return Err(format!("odd number of hex digits in `{v}`"));
            }
            for i in (0..digits.len()).step_by(2) {
                out.push(
                    u8::from_str_radix(&digits[i..i + 2], 16)
                        .map_err(|_| format!("invalid hex digits in `{v}`"))?,
                );
            }
        } else {
            out.extend_from_slice(part.as_bytes());
        }
        hex = !hex;
    }
    if !hex {
        return Err(format!("unbalanced `|` in `{v}`"));
    }
    Ok(out)
}
