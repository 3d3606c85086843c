//! One rule of a dump: its options (`-s`, `-p`, `-m string --string`, `-j`, ...) read
//! in order into header alternatives, slow-path matches and a target.
//!
//! Each option is a method of [`Reader`]; the options of a `-m` module that only make
//! sense together (`string`, `limit`, `statistic`) gather in a struct of their own and
//! become one match when the rule ends.

use netsieve_wire::ip_proto;

use super::{Family, MAX_ALTS, ParseError, Raw, Target};
use crate::rule::*;

/// One rule given on its own (an update): iptables options ending in a verdict
/// (`-j ACCEPT`, `DROP` or `REJECT`); `-A CHAIN` may be given or left out.
pub fn parse_one(text: &str, family: Family, origin: &str) -> Result<Rule, ParseError> {
    let (_, raw) = parse_rule(text, 1, family)?;
    let Target::Verdict(action) = raw.target else {
        return Err(ParseError::line_error(
            1,
            1,
            "an inserted rule needs -j ACCEPT, DROP or REJECT",
        ));
    };
    Ok(Rule {
        header: raw.header,
        complex: raw.complex,
        action,
        origin: origin.to_string(),
        text: raw.text,
        chain: Vec::new(),
        top: 0,
    })
}

/// The chain a dump line appends to (`-A NAME ...`, after `iptables-save -c` counters).
pub(super) fn appended_chain(line: &str) -> Option<&str> {
    let t = line.trim();
    let t = match t.strip_prefix('[').and_then(|x| x.split_once(']')) {
        Some((_, rest)) => rest.trim_start(),
        None => t,
    };
    t.strip_prefix("-A")?
        .strip_prefix(char::is_whitespace)?
        .split_whitespace()
        .next()
}

/// Line `ln` of a dump: its chain (from `-A`) and the rule.
pub(super) fn parse_rule(
    line: &str,
    ln: usize,
    family: Family,
) -> Result<(Option<String>, Raw), ParseError> {
    let mut words = words(line).map_err(|e| e.on_line(ln))?;
    // `iptables-save -c` puts packet and byte counters first.
    if words
        .first()
        .is_some_and(|w| w.0.starts_with('[') && w.0.ends_with(']') && w.0.contains(':'))
    {
        words.remove(0);
    }
    let mut r = Reader::new(words, ln, family);
    while r.i < r.words.len() {
        let (w, col) = r.words[r.i].clone();
        if w == "!" {
            r.negate = true;
            r.i += 1;
            continue;
        }
        r.option(&w, col)?;
        r.negate = false;
        r.i += 1;
    }
    let (chain, mut raw) = r.finish()?;
    let text = line.trim();
    raw.text = match text.strip_prefix('[').and_then(|t| t.split_once(']')) {
        Some((_, rest)) => rest.trim().to_string(),
        None => text.to_string(),
    };
    Ok((chain, raw))
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
    /// TCP flags: (value, mask).
    flags: (u16, u16),
}

/// `-m string`: `--string`/`--hex-string`, `--from`, `--to`, `--icase`.
struct StringOpts {
    pattern: Vec<u8>,
    from: usize,
    to: usize,
    icase: bool,
    negate: bool,
}

impl Default for StringOpts {
    fn default() -> StringOpts {
        StringOpts {
            pattern: Vec::new(),
            from: 0,
            to: 65535,
            icase: false,
            negate: false,
        }
    }
}

/// `-m limit`: `--limit` (iptables' default 3/hour) and `--limit-burst` (default 5).
struct LimitOpts {
    per_sec: f64,
    burst: u32,
}

impl Default for LimitOpts {
    fn default() -> LimitOpts {
        LimitOpts {
            per_sec: 3.0 / 3600.0,
            burst: 5,
        }
    }
}

/// `-m statistic`: `--mode`, `--probability`, `--every`, `--packet`.
#[derive(Default)]
struct StatisticOpts {
    mode: Option<String>,
    probability: f64,
    every: u32,
    packet: u32,
}

/// The state of one rule being read.
struct Reader {
    words: Vec<(String, usize)>,
    /// The word being read.
    i: usize,
    line: usize,
    family: Family,
    /// Every address of the family.
    all: Prefix,
    /// A `!` came before this option.
    negate: bool,
    fields: Fields,
    complex: Vec<Complex>,
    chain: Option<String>,
    target: Option<Target>,
    string: Option<StringOpts>,
    limit: Option<LimitOpts>,
    statistic: StatisticOpts,
}

impl Reader {
    fn new(words: Vec<(String, usize)>, line: usize, family: Family) -> Reader {
        let all = match family {
            Family::V4 => V4_ANY,
            Family::V6 => ANY,
        };
        Reader {
            words,
            i: 0,
            line,
            family,
            all,
            negate: false,
            fields: Fields {
                src: vec![all],
                dst: vec![all],
                sport: vec![ANY_PORT],
                dport: vec![ANY_PORT],
                proto: vec![ANY_PROTO],
                either: None,
                flags: (0, 0),
            },
            complex: Vec::new(),
            chain: None,
            target: None,
            string: None,
            limit: None,
            statistic: StatisticOpts::default(),
        }
    }

    /// Option `w` at column `col`.
    fn option(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        match w {
            "-A" => self.chain = Some(self.value(w, col)?.0),
            "-s" | "--source" | "-d" | "--destination" => self.address(w, col)?,
            "-p" | "--protocol" => self.protocol(w, col)?,
            "--sport" | "--source-port" | "--dport" | "--destination-port" => self.port(w, col)?,
            "--sports" | "--source-ports" | "--dports" | "--destination-ports" | "--ports" => {
                self.multiport(w, col)?
            }
            "--tcp-flags" => self.tcp_flags(w, col)?,
            "--syn" => self.flags(0x02, 0x17),
            "-m" | "--match" => self.module(w, col)?,
            "--state" | "--ctstate" => self.state(w, col)?,
            "--string" | "--hex-string" | "--algo" | "--from" | "--to" | "--icase" => {
                self.string_option(w, col)?
            }
            "--length" => self.length(w, col)?,
            "--ttl-eq" | "--ttl-lt" | "--ttl-gt" => self.ttl(w, col)?,
            "--limit" | "--limit-burst" => self.limit_option(w, col)?,
            "--mode" | "--probability" | "--every" | "--packet" => self.statistic_option(w, col)?,
            "--icmp-type" | "--icmpv6-type" => self.icmp_type(w, col)?,
            "-i" | "--in-interface" | "-o" | "--out-interface" => self.interface(w, col)?,
            // Options of matches or targets that do not change the verdict.
            "--comment" | "--log-prefix" | "--log-level" | "--reject-with" | "--set-mark"
            | "--set-xmark" | "--helper" | "--nflog-group" | "--nflog-prefix"
            | "--nflog-threshold" | "--nflog-range" | "--nflog-size" => {
                self.value(w, col)?;
            }
            "--clamp-mss-to-pmtu" | "--log-uid" | "--log-tcp-options" | "--log-ip-options" => {}
            "-j" | "--jump" => self.jump(w, col)?,
            "-g" | "--goto" => self.target = Some(Target::Goto(self.value(w, col)?.0)),
            "-f" | "--fragment" => {
                return Err(self.unsupported(col, "fragment matching (`-f`) is not supported"));
            }
            other => {
                return Err(self.unsupported(col, format!("option `{other}` is not supported")));
            }
        }
        Ok(())
    }

    /// The value after option `w` and its column, with the old `-s ! x` negation form
    /// accepted.
    fn value(&mut self, w: &str, col: usize) -> Result<(String, usize), ParseError> {
        self.i += 1;
        if self.words.get(self.i).is_some_and(|v| v.0 == "!") {
            self.negate = !self.negate;
            self.i += 1;
        }
        self.words
            .get(self.i)
            .cloned()
            .ok_or_else(|| self.line_error(col, format!("`{w}` needs a value")))
    }

    fn line_error(&self, col: usize, message: impl Into<String>) -> ParseError {
        ParseError::line_error(self.line, col, message)
    }

    fn bad_value(&self, col: usize, message: impl Into<String>) -> ParseError {
        ParseError::bad_value(self.line, col, message)
    }

    fn unsupported(&self, col: usize, message: impl Into<String>) -> ParseError {
        ParseError::unsupported(self.line, col, message)
    }

    /// A header that tests only TCP flags (for a negated flag test, on the slow path).
    fn flags_header(&self, value: u16, mask: u16) -> Header {
        let mut h = Header::any_v4();
        h.src = self.all;
        h.dst = self.all;
        h.flags = value;
        h.flags_mask = mask;
        h
    }

    /// TCP flags `value` under `mask`; negated, a slow-path test.
    fn flags(&mut self, value: u16, mask: u16) {
        if self.negate {
            let h = self.flags_header(value, mask);
            self.complex.push(Complex::Header {
                alts: vec![h],
                negate: true,
            });
        } else {
            self.fields.flags = (value, mask);
        }
    }

    /// `-s`, `-d`: a prefix (negated: the prefixes around it).
    fn address(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (v, vcol) = self.value(w, col)?;
        let p = parse_prefix(&v, self.family).ok_or_else(|| {
            self.bad_value(
                vcol,
                format!("invalid address or prefix `{v}` (host names are not resolved)"),
            )
        })?;
        let alts = if self.negate {
            complement(p, self.all)
        } else {
            vec![p]
        };
        if w == "-s" || w == "--source" {
            self.fields.src = alts;
        } else {
            self.fields.dst = alts;
        }
        Ok(())
    }

    /// `-p`: a protocol name, a number or `all`.
    fn protocol(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (v, vcol) = self.value(w, col)?;
        let r = if v == "all" {
            ANY_PROTO
        } else {
            let n = proto_number(&v)
                .ok_or_else(|| self.bad_value(vcol, format!("unknown protocol `{v}`")))?;
            Range::exact(n as u16)
        };
        self.fields.proto = if self.negate {
            complement_range(r, ANY_PROTO)
        } else {
            vec![r]
        };
        Ok(())
    }

    /// `--sport`, `--dport`: a port or range.
    fn port(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (v, vcol) = self.value(w, col)?;
        let r = parse_port_range(&v)
            .ok_or_else(|| self.bad_value(vcol, format!("invalid port or range `{v}`")))?;
        let alts = if self.negate {
            complement_range(r, ANY_PORT)
        } else {
            vec![r]
        };
        if w.starts_with("--s") {
            self.fields.sport = alts;
        } else {
            self.fields.dport = alts;
        }
        Ok(())
    }

    /// `-m multiport`'s `--sports`, `--dports`, `--ports`: lists of ports and ranges.
    fn multiport(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (v, vcol) = self.value(w, col)?;
        let rs = v
            .split(',')
            .map(parse_port_range)
            .collect::<Option<Vec<Range>>>()
            .ok_or_else(|| self.bad_value(vcol, format!("invalid port list `{v}`")))?;
        if self.negate {
            return Err(self.unsupported(col, "a negated multiport list is not supported"));
        }
        match w {
            "--ports" => self.fields.either = Some(rs),
            "--sports" | "--source-ports" => self.fields.sport = rs,
            _ => self.fields.dport = rs,
        }
        Ok(())
    }

    /// `--tcp-flags MASK SET`.
    fn tcp_flags(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (m, _) = self.value(w, col)?;
        self.i += 1;
        let c = self
            .words
            .get(self.i)
            .map(|c| c.0.clone())
            .ok_or_else(|| self.line_error(col, "`--tcp-flags` needs a mask and a set"))?;
        let (mask, comp) = tcp_flag_bits(&m)
            .zip(tcp_flag_bits(&c))
            .ok_or_else(|| self.bad_value(col, format!("invalid TCP flags `{m} {c}`")))?;
        self.flags(comp & mask, mask);
        Ok(())
    }

    /// `-m NAME`: the modules whose options this reader knows.
    fn module(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (m, _) = self.value(w, col)?;
        match m.as_str() {
            "tcp" | "udp" | "sctp" | "multiport" | "state" | "conntrack" | "string" | "length"
            | "ttl" | "limit" | "statistic" | "icmp" | "icmp6" | "comment" => Ok(()),
            other => Err(self.unsupported(col, format!("match `-m {other}` is not supported"))),
        }
    }

    /// `--state`, `--ctstate`: connection states, comma-separated.
    fn state(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (v, vcol) = self.value(w, col)?;
        let mut bits = 0;
        for s in v.split(',') {
            bits |= match s {
                "NEW" => CtState::New.bit(),
                "ESTABLISHED" => CtState::Established.bit(),
                "RELATED" => CtState::Related.bit(),
                "INVALID" => CtState::Invalid.bit(),
                "UNTRACKED" => CtState::Untracked.bit(),
                _ => return Err(self.bad_value(vcol, format!("unknown connection state `{s}`"))),
            };
        }
        self.complex.push(Complex::State {
            bits,
            negate: self.negate,
        });
        Ok(())
    }

    /// An option of `-m string`.
    fn string_option(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        match w {
            "--string" | "--hex-string" => {
                let (v, vcol) = self.value(w, col)?;
                let bytes = if w == "--string" {
                    v.into_bytes()
                } else {
                    hex_string(&v).map_err(|m| self.bad_value(vcol, m))?
                };
                if bytes.is_empty() {
                    return Err(self.bad_value(col, "empty string"));
                }
                let negate = self.negate;
                let s = self.string.get_or_insert_with(StringOpts::default);
                s.pattern = bytes;
                s.negate = negate;
            }
            "--algo" => {
                self.value(w, col)?;
            }
            "--from" | "--to" => {
                let (v, _) = self.value(w, col)?;
                let n: usize = v
                    .parse()
                    .map_err(|_| self.bad_value(col, format!("invalid offset `{v}`")))?;
                let s = self.string.get_or_insert_with(StringOpts::default);
                if w == "--from" {
                    s.from = n;
                } else {
                    s.to = n;
                }
            }
            _ => self.string.get_or_insert_with(StringOpts::default).icase = true,
        }
        Ok(())
    }

    /// `-m length --length RANGE`.
    fn length(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (v, _) = self.value(w, col)?;
        let range = parse_port_range(&v)
            .ok_or_else(|| self.bad_value(col, format!("invalid length range `{v}`")))?;
        self.complex.push(Complex::Length {
            range,
            negate: self.negate,
        });
        Ok(())
    }

    /// `-m ttl --ttl-eq|--ttl-lt|--ttl-gt N`.
    fn ttl(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (v, _) = self.value(w, col)?;
        let value: u8 = v
            .parse()
            .map_err(|_| self.bad_value(col, format!("invalid TTL `{v}`")))?;
        let op = match w {
            "--ttl-eq" => TtlOp::Eq,
            "--ttl-lt" => TtlOp::Lt,
            _ => TtlOp::Gt,
        };
        if self.negate {
            return Err(self.unsupported(col, "a negated TTL test is not supported"));
        }
        self.complex.push(Complex::Ttl { op, value });
        Ok(())
    }

    /// An option of `-m limit`.
    fn limit_option(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (v, _) = self.value(w, col)?;
        if w == "--limit" {
            let rate =
                parse_rate(&v).ok_or_else(|| self.bad_value(col, format!("invalid rate `{v}`")))?;
            self.limit.get_or_insert_with(LimitOpts::default).per_sec = rate;
        } else {
            let burst: u32 = v
                .parse()
                .map_err(|_| self.bad_value(col, format!("invalid burst `{v}`")))?;
            self.limit.get_or_insert_with(LimitOpts::default).burst = burst;
        }
        Ok(())
    }

    /// An option of `-m statistic`.
    fn statistic_option(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (v, _) = self.value(w, col)?;
        match w {
            "--mode" => self.statistic.mode = Some(v),
            "--probability" => {
                self.statistic.probability = v
                    .parse()
                    .map_err(|_| self.bad_value(col, format!("invalid probability `{v}`")))?
            }
            _ => {
                let n: u32 = v
                    .parse()
                    .map_err(|_| self.bad_value(col, format!("invalid count `{v}`")))?;
                if w == "--every" {
                    self.statistic.every = n;
                } else {
                    self.statistic.packet = n;
                }
            }
        }
        Ok(())
    }

    /// `--icmp-type TYPE[/CODE]` (a name or a number).
    fn icmp_type(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (v, _) = self.value(w, col)?;
        let (t, c) = match v.split_once('/') {
            Some((t, c)) => (t, Some(c)),
            None => (v.as_str(), None),
        };
        let typ =
            icmp_type(t).ok_or_else(|| self.bad_value(col, format!("unknown ICMP type `{v}`")))?;
        let code = match c {
            Some(c) => Some(
                c.parse()
                    .map_err(|_| self.bad_value(col, format!("invalid code `{c}`")))?,
            ),
            None => None,
        };
        self.complex.push(Complex::IcmpType {
            typ,
            code,
            negate: self.negate,
        });
        Ok(())
    }

    /// `-i`, `-o`: an interface name.
    fn interface(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (name, _) = self.value(w, col)?;
        self.complex.push(Complex::Iface {
            out: w == "-o" || w == "--out-interface",
            name,
            negate: self.negate,
        });
        Ok(())
    }

    /// `-j TARGET`: a verdict, RETURN, a target that does not decide (LOG, MARK, ...)
    /// or a user chain.
    fn jump(&mut self, w: &str, col: usize) -> Result<(), ParseError> {
        let (t, _) = self.value(w, col)?;
        self.target = Some(match t.as_str() {
            "ACCEPT" => Target::Verdict(Action::Accept),
            "DROP" => Target::Verdict(Action::Drop),
            "REJECT" => Target::Verdict(Action::Reject),
            "RETURN" => Target::Return,
            "LOG" | "NFLOG" | "ULOG" | "TCPMSS" | "MARK" | "CONNMARK" | "CT" | "NOTRACK"
            | "TRACE" | "AUDIT" | "CLASSIFY" => Target::Other(t),
            _ => Target::Jump(t),
        });
        Ok(())
    }

    /// The rule once every option is read: the modules' matches, and the header
    /// alternatives (on the slow path when there are too many).
    fn finish(mut self) -> Result<(Option<String>, Raw), ParseError> {
        let ln = self.line;
        let target = self
            .target
            .take()
            .ok_or_else(|| self.line_error(1, "rule without a target (`-j`)"))?;
        if let Some(s) = self.string.take() {
            if s.pattern.is_empty() {
                return Err(self.line_error(1, "`-m string` without `--string` or `--hex-string`"));
            }
            self.complex.push(Complex::String(StringMatch::new(
                s.pattern, s.from, s.to, s.icase, s.negate,
            )));
        }
        if let Some(l) = self.limit.take() {
            self.complex.push(Complex::Limit {
                per_sec: l.per_sec,
                burst: l.burst,
            });
        }
        let st = &self.statistic;
        match st.mode.as_deref() {
            None => {}
            Some("random") => self.complex.push(Complex::Random {
                probability: st.probability,
            }),
            Some("nth") if st.every == 0 => {
                return Err(self.line_error(1, "`--mode nth` needs `--every`"));
            }
            Some("nth") => self.complex.push(Complex::Nth {
                every: st.every,
                packet: st.packet,
            }),
            Some(m) => {
                return Err(self.unsupported(1, format!("statistic mode `{m}` is not supported")));
            }
        }
        let header = expand(&self.fields);
        let (header, complex) = if header.len() > MAX_ALTS {
            let mut c = self.complex;
            c.insert(
                0,
                Complex::Header {
                    alts: header,
                    negate: false,
                },
            );
            let mut h = Header::any_v4();
            h.src = self.all;
            h.dst = self.all;
            (vec![h], c)
        } else {
            (header, self.complex)
        };
        Ok((
            self.chain,
            Raw {
                header,
                complex,
                target,
                line: ln,
                text: String::new(),
                nth: 0,
            },
        ))
    }
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
            return Err(ParseError::line_error(0, col, "unterminated quote"));
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
