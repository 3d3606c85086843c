//! Address and port expressions, and the variables (`$HOME_NET`, `$HTTP_PORTS`) they use.
//!
//! Both follow Suricata's list semantics: a list matches what its positive items match
//! minus what its negated items match; a list of only negated items matches everything
//! but them. Lists nest (`[10.0.0.0/8, ![10.1.0.0/16, 10.2.0.0/16]]`).

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;

/// An address expression, variables resolved.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AddrExpr {
    Any,
    /// A network: address and prefix length.
    Net(IpAddr, u8),
    /// An inclusive range of addresses of one family.
    Range(IpAddr, IpAddr),
    Not(Box<AddrExpr>),
    List(Vec<AddrExpr>),
}

/// A port expression, variables resolved.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PortExpr {
    Any,
    Range(u16, u16),
    Not(Box<PortExpr>),
    List(Vec<PortExpr>),
}

fn v6(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => u32::from(a) as u128,
        IpAddr::V6(a) => u128::from(a),
    }
}

impl AddrExpr {
    pub fn matches(&self, a: IpAddr) -> bool {
        match self {
            AddrExpr::Any => true,
            AddrExpr::Net(n, len) => {
                if n.is_ipv4() != a.is_ipv4() {
                    return false;
                }
                let bits = if n.is_ipv4() { 32 } else { 128 };
                let shift = bits - *len as u32;
                if shift >= 128 {
                    return true;
                }
                (v6(*n) >> shift) == (v6(a) >> shift)
            }
            AddrExpr::Range(lo, hi) => {
                lo.is_ipv4() == a.is_ipv4() && v6(*lo) <= v6(a) && v6(a) <= v6(*hi)
            }
            AddrExpr::Not(e) => !e.matches(a),
            AddrExpr::List(items) => list_matches(
                items,
                |e| e.matches(a),
                |e| match e {
                    AddrExpr::Not(inner) => Some(inner.as_ref()),
                    _ => None,
                },
            ),
        }
    }

    pub fn is_any(&self) -> bool {
        matches!(self, AddrExpr::Any)
    }
}

impl PortExpr {
    pub fn matches(&self, p: u16) -> bool {
        match self {
            PortExpr::Any => true,
            PortExpr::Range(lo, hi) => *lo <= p && p <= *hi,
            PortExpr::Not(e) => !e.matches(p),
            PortExpr::List(items) => list_matches(
                items,
                |e| e.matches(p),
                |e| match e {
                    PortExpr::Not(inner) => Some(inner.as_ref()),
                    _ => None,
                },
            ),
        }
    }

    pub fn is_any(&self) -> bool {
        matches!(self, PortExpr::Any)
    }
}

/// Positive items OR-ed, minus the negated ones; only negated items: all but them.
fn list_matches<E>(
    items: &[E],
    m: impl Fn(&E) -> bool,
    negated: impl Fn(&E) -> Option<&E>,
) -> bool {
    let mut any_positive = false;
    let mut hit = false;
    for e in items {
        match negated(e) {
            Some(inner) => {
                if m(inner) {
                    return false;
                }
            }
            None => {
                any_positive = true;
                hit = hit || m(e);
            }
        }
    }
    hit || !any_positive
}

/// Address and port variables.
#[derive(Clone, Debug)]
pub struct Vars {
    addresses: HashMap<String, String>,
    ports: HashMap<String, String>,
    /// Expressions with variables read so far, by their text: a rule set writes a few
    /// (`$HOME_NET`, `$EXTERNAL_NET`) thousands of times, and expanding them again for
    /// every rule was 7% of loading ET Open. Emptied when a variable is set.
    addr_memo: Memo<AddrExpr>,
    port_memo: Memo<PortExpr>,
}

/// Expressions read, by text, and what reading them gave, errors included (a text reads
/// the same way every time while the variables stay the same). Shared by the threads
/// that parse rules; a copy of the [`Vars`] starts empty.
struct Memo<T>(std::sync::Mutex<MemoMap<T>>);

struct MemoMap<T> {
    map: HashMap<Box<str>, Result<T, ExprError>, foldhash::fast::RandomState>,
    /// Entries the kept expressions expanded to, together.
    entries: usize,
}

/// Entries (addresses, networks, ports, ranges) a memo keeps at most, all its
/// expressions together: past that, other texts are read every time. One expression may
/// expand to [`MAX_ENTRIES`], and a rule file could write many different ones.
const MEMO_ENTRIES: usize = MAX_ENTRIES;

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo(std::sync::Mutex::new(MemoMap {
            map: HashMap::default(),
            entries: 0,
        }))
    }
}

impl<T> Clone for Memo<T> {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

impl<T> fmt::Debug for Memo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Memo")
    }
}

impl<T: Clone> Memo<T> {
    /// What `read` gives for `text` (with the entries it expanded to), read once if
    /// `text` names a variable.
    fn get(
        &self,
        text: &str,
        read: impl FnOnce() -> (Result<T, ExprError>, usize),
    ) -> Result<T, ExprError> {
        if !text.contains('$') {
            return read().0;
        }
        if let Some(r) = self.0.lock().expect("not poisoned").map.get(text) {
            return r.clone();
        }
        let (r, entries) = read();
        let weight = entries.max(1);
        let mut m = self.0.lock().expect("not poisoned");
        if m.entries + weight <= MEMO_ENTRIES && !m.map.contains_key(text) {
            m.entries += weight;
            m.map.insert(text.into(), r.clone());
        }
        r
    }

    fn clear(&mut self) {
        let m = self.0.get_mut().expect("not poisoned");
        m.map.clear();
        m.entries = 0;
    }
}

impl Default for Vars {
    /// Suricata's default `vars` section.
    fn default() -> Self {
        let mut addresses = HashMap::new();
        addresses.insert(
            "HOME_NET".into(),
            "[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]".into(),
        );
        addresses.insert("EXTERNAL_NET".into(), "!$HOME_NET".into());
        addresses.insert("AIM_SERVERS".into(), "$EXTERNAL_NET".into());
        for v in [
            "HTTP_SERVERS",
            "SMTP_SERVERS",
            "SQL_SERVERS",
            "DNS_SERVERS",
            "TELNET_SERVERS",
            "DC_SERVERS",
            "DNP3_SERVER",
            "DNP3_CLIENT",
            "MODBUS_CLIENT",
            "MODBUS_SERVER",
            "ENIP_CLIENT",
            "ENIP_SERVER",
            // Snort 3's snort.lua also defines this one as HOME_NET.
            "SIP_SERVERS",
        ] {
            addresses.insert(v.into(), "$HOME_NET".into());
        }
        let mut ports = HashMap::new();
        for (k, v) in [
            ("HTTP_PORTS", "80"),
            ("SHELLCODE_PORTS", "!80"),
            ("ORACLE_PORTS", "1521"),
            ("SSH_PORTS", "22"),
            ("DNP3_PORTS", "20000"),
            ("MODBUS_PORTS", "502"),
            ("FILE_DATA_PORTS", "[$HTTP_PORTS,110,143]"),
            ("FTP_PORTS", "21"),
            ("GENEVE_PORTS", "6081"),
            ("VXLAN_PORTS", "4789"),
            ("TEREDO_PORTS", "3544"),
            ("SIP_PORTS", "[5060,5061]"),
        ] {
            ports.insert(k.into(), v.into());
        }
        Vars {
            addresses,
            ports,
            addr_memo: Memo::default(),
            port_memo: Memo::default(),
        }
    }
}

/// Why an expression could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError(pub String);

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const MAX_NESTING: usize = 16;

/// The most entries (addresses, networks, ports, ranges) an expression may expand to,
/// variables included: variables that list each other many times grow exponentially.
pub const MAX_ENTRIES: usize = 100_000;

impl Vars {
    /// Sets address variable `name` (without its `$`) to the expression `value`.
    pub fn set_address(&mut self, name: &str, value: &str) {
        self.addresses.insert(name.to_string(), value.to_string());
        self.addr_memo.clear();
    }

    /// Sets port variable `name` (without its `$`) to the expression `value`.
    pub fn set_port(&mut self, name: &str, value: &str) {
        self.ports.insert(name.to_string(), value.to_string());
        self.port_memo.clear();
    }

    /// The address variables, by name, as written.
    pub fn addresses(&self) -> &HashMap<String, String> {
        &self.addresses
    }

    /// The port variables, by name, as written.
    pub fn ports(&self) -> &HashMap<String, String> {
        &self.ports
    }

    pub fn address(&self, text: &str) -> Result<AddrExpr, ExprError> {
        self.addr_memo.get(text, || self.read(text))
    }

    pub fn port(&self, text: &str) -> Result<PortExpr, ExprError> {
        self.port_memo.get(text, || self.read(text))
    }

    /// An expression of kind `E` read from its text, and the entries it expanded to:
    /// [`Vars::address`] and [`Vars::port`] without the memo.
    fn read<E: Expr>(&self, text: &str) -> (Result<E, ExprError>, usize) {
        // A bare comma list, as some rules write it, is a list.
        let bracketed;
        let text = if bare_list(text) {
            bracketed = format!("[{text}]");
            &bracketed
        } else {
            text
        };
        let mut p = ExprParser {
            s: text.as_bytes(),
            i: 0,
            entries: 0,
        };
        let e = p.expr(self, 0).and_then(|e| p.end(text).map(|()| e));
        (e, p.entries)
    }
}

/// A list written without its brackets (`1.1.1.1,2.2.2.2`): a comma outside any
/// brackets. (`![a,b]` is one negated list.)
fn bare_list(text: &str) -> bool {
    let mut depth = 0i32;
    for c in text.bytes() {
        match c {
            b'[' => depth += 1,
            b']' => depth -= 1,
            b',' if depth <= 0 => return true,
            _ => {}
        }
    }
    false
}

struct ExprParser<'a> {
    s: &'a [u8],
    i: usize,
    /// Entries read so far, in this text and the variables it expands.
    entries: usize,
}

impl ExprParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn end(&mut self, text: &str) -> Result<(), ExprError> {
        self.ws();
        if self.i != self.s.len() {
            return Err(ExprError(format!("unexpected text in '{text}'")));
        }
        Ok(())
    }

    /// Counts one more entry; an error past [`MAX_ENTRIES`].
    fn count(&mut self) -> Result<(), ExprError> {
        self.entries += 1;
        if self.entries > MAX_ENTRIES {
            return Err(ExprError(format!(
                "expands to more than {MAX_ENTRIES} entries"
            )));
        }
        Ok(())
    }

    fn word(&mut self) -> &str {
        let start = self.i;
        while self.i < self.s.len() && !matches!(self.s[self.i], b',' | b']' | b'[' | b' ') {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i]).unwrap_or("")
    }

    fn list<E: Expr>(&mut self, vars: &Vars, depth: usize) -> Result<Vec<E>, ExprError> {
        // At '['.
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.s.get(self.i) == Some(&b']') {
                self.i += 1;
                break;
            }
            items.push(self.expr(vars, depth + 1)?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    break;
                }
                _ => return Err(ExprError("unterminated list (missing ']')".into())),
            }
        }
        if items.is_empty() {
            return Err(ExprError("empty list".into()));
        }
        Ok(items)
    }

    /// An expression of kind `E`: a negation, a list, a variable or one word.
    fn expr<E: Expr>(&mut self, vars: &Vars, depth: usize) -> Result<E, ExprError> {
        if depth > MAX_NESTING {
            return Err(ExprError(format!(
                "{} lists or variables nested too deep",
                E::KIND
            )));
        }
        self.ws();
        match self.s.get(self.i) {
            Some(b'!') => {
                self.i += 1;
                Ok(E::not(self.expr(vars, depth + 1)?))
            }
            Some(b'[') => Ok(E::list(self.list(vars, depth)?)),
            Some(b'$') => {
                self.i += 1;
                let name = self.word().to_string();
                let val = E::variables(vars)
                    .get(&name)
                    .ok_or_else(|| ExprError(format!("unknown {} variable ${name}", E::KIND)))?;
                let mut sub = ExprParser {
                    s: val.as_bytes(),
                    i: 0,
                    entries: self.entries,
                };
                let e = sub.expr(vars, depth + 1).map_err(|e| through(&name, e))?;
                sub.end(val)?;
                self.entries = sub.entries;
                Ok(e)
            }
            _ => {
                self.count()?;
                let w = self.word().to_string();
                E::word(&w)
            }
        }
    }
}

/// What address and port expressions share: how one is negated, listed, named by a
/// variable and read from one word.
trait Expr: Sized {
    /// `address` or `port`, for messages.
    const KIND: &'static str;
    /// The variables that name expressions of this kind.
    fn variables(vars: &Vars) -> &HashMap<String, String>;
    fn not(e: Self) -> Self;
    fn list(items: Vec<Self>) -> Self;
    fn word(w: &str) -> Result<Self, ExprError>;
}

impl Expr for AddrExpr {
    const KIND: &'static str = "address";
    fn variables(vars: &Vars) -> &HashMap<String, String> {
        &vars.addresses
    }
    fn not(e: Self) -> Self {
        AddrExpr::Not(Box::new(e))
    }
    fn list(items: Vec<Self>) -> Self {
        AddrExpr::List(items)
    }
    fn word(w: &str) -> Result<Self, ExprError> {
        parse_addr(w)
    }
}

impl Expr for PortExpr {
    const KIND: &'static str = "port";
    fn variables(vars: &Vars) -> &HashMap<String, String> {
        &vars.ports
    }
    fn not(e: Self) -> Self {
        PortExpr::Not(Box::new(e))
    }
    fn list(items: Vec<Self>) -> Self {
        PortExpr::List(items)
    }
    fn word(w: &str) -> Result<Self, ExprError> {
        parse_port(w)
    }
}

fn through(name: &str, e: ExprError) -> ExprError {
    match e.0.strip_prefix('$') {
        Some(rest) => ExprError(format!("${name} -> ${rest}")),
        None => ExprError(format!("${name}: {}", e.0)),
    }
}

fn parse_addr(w: &str) -> Result<AddrExpr, ExprError> {
    if w.eq_ignore_ascii_case("any") {
        return Ok(AddrExpr::Any);
    }
    let bad = || ExprError(format!("bad address '{w}'"));
    if let Some((a, len)) = w.split_once('/') {
        let ip: IpAddr = a.parse().map_err(|_| bad())?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        let len: u8 = match len.parse::<u8>() {
            Ok(l) if l <= max => l,
            // A dotted netmask (255.255.0.0).
            _ => match len.parse::<std::net::Ipv4Addr>() {
                Ok(m) if ip.is_ipv4() => u32::from(m).count_ones() as u8,
                _ => return Err(bad()),
            },
        };
        return Ok(AddrExpr::Net(ip, len));
    }
    if let Some((a, b)) = w.split_once('-') {
        let lo: IpAddr = a.parse().map_err(|_| bad())?;
        let hi: IpAddr = b.parse().map_err(|_| bad())?;
        if lo.is_ipv4() != hi.is_ipv4() {
            return Err(bad());
        }
        return Ok(AddrExpr::Range(lo, hi));
    }
    let ip: IpAddr = w.parse().map_err(|_| bad())?;
    Ok(AddrExpr::Net(ip, if ip.is_ipv4() { 32 } else { 128 }))
}

fn parse_port(w: &str) -> Result<PortExpr, ExprError> {
    if w.eq_ignore_ascii_case("any") {
        return Ok(PortExpr::Any);
    }
    let bad = || ExprError(format!("bad port '{w}'"));
    let num = |s: &str| s.trim().parse::<u16>().map_err(|_| bad());
    if let Some((a, b)) = w.split_once(':') {
        let lo = if a.trim().is_empty() { 0 } else { num(a)? };
        let hi = if b.trim().is_empty() { 65535 } else { num(b)? };
        if lo > hi {
            return Err(bad());
        }
        return Ok(PortExpr::Range(lo, hi));
    }
    let p = num(w)?;
    Ok(PortExpr::Range(p, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn defaults_and_negation() {
        let v = Vars::default();
        let home = v.address("$HOME_NET").unwrap();
        let ext = v.address("$EXTERNAL_NET").unwrap();
        assert!(home.matches(ip("10.1.2.3")) && !ext.matches(ip("10.1.2.3")));
        assert!(!home.matches(ip("8.8.8.8")) && ext.matches(ip("8.8.8.8")));
        assert!(!home.matches(ip("::1")));
    }

    #[test]
    fn lists_with_exceptions() {
        let v = Vars::default();
        let e = v.address("[10.0.0.0/8, !10.1.0.0/16]").unwrap();
        assert!(e.matches(ip("10.2.0.1")) && !e.matches(ip("10.1.0.1")));
        let e = v.address("![1.1.1.1,2.2.2.2]").unwrap();
        assert!(e.matches(ip("3.3.3.3")) && !e.matches(ip("2.2.2.2")));
        let p = v.port("[80:90,!85,$HTTP_PORTS]").unwrap();
        assert!(p.matches(80) && p.matches(90) && !p.matches(85) && !p.matches(91));
        let p = v.port("1024:").unwrap();
        assert!(p.matches(65535) && !p.matches(1023));
        let p = v.port("!$HTTP_PORTS").unwrap();
        assert!(!p.matches(80) && p.matches(81));
    }

    #[test]
    fn errors() {
        let v = Vars::default();
        assert!(v.address("$NOPE").is_err());
        assert!(v.address("[1.2.3.4").is_err());
        assert!(v.address("1.2.3.4/33").is_err());
        assert!(v.port("70000").is_err());
        assert!(v.port("90:80").is_err());
        let mut v = Vars::default();
        v.set_address("LOOP", "$LOOP");
        assert!(v.address("$LOOP").is_err(), "self-reference ends");
    }

    /// Variables that list each other many times (100^4 entries) are cut off at
    /// MAX_ENTRIES, and the error names the chain of variables.
    #[test]
    fn expansion_is_bounded() {
        let mut v = Vars::default();
        let list = |name: &str| format!("[{}]", vec![format!("${name}"); 100].join(","));
        v.set_address("A", &list("B"));
        v.set_address("B", &list("C"));
        v.set_address("C", &list("D"));
        v.set_address("D", &list("E"));
        v.set_address("E", "10.0.0.1");
        let e = v.address("$A").unwrap_err().to_string();
        assert!(
            e.starts_with("$A -> $B -> $C -> $D -> $E: expands to more than"),
            "{e}"
        );
        v.set_port("P", &list("Q"));
        v.set_port("Q", &list("R"));
        v.set_port("R", &list("S"));
        v.set_port("S", "[80,81,82]");
        let e = v.port("$P").unwrap_err().to_string();
        assert!(e.contains("expands to more than"), "{e}");
        // Up to the bound, it expands.
        v.set_address("WIDE", &list("E"));
        assert!(v.address("$WIDE").is_ok());
    }

    /// Address and port texts made of variables (known, unknown, looping), negations,
    /// lists, bare lists and broken ones.
    fn expr_text(words: &'static [&'static str]) -> impl Strategy<Value = String> {
        let word = proptest::sample::select(words);
        proptest::collection::vec((word, 0u8..4), 1..4).prop_map(|parts| {
            let items: Vec<String> = parts
                .iter()
                .map(|(w, k)| match k {
                    0 => format!("!{w}"),
                    _ => w.to_string(),
                })
                .collect();
            match parts[0].1 {
                0 | 1 => format!("[{}]", items.join(",")),
                2 => items.join(","),
                _ => format!("[{}", items.join(",")),
            }
        })
    }

    #[test]
    fn the_memo_holds_at_most_its_entries() {
        let mut v = Vars::default();
        let wide = format!("[{}]", vec!["10.0.0.1"; 40_000].join(","));
        v.set_address("W", &wide);
        for t in ["$W", "[$W]", "[$W,1.1.1.1]", "![$W]", "$W"] {
            assert_eq!(v.address(t), v.read::<AddrExpr>(t).0);
        }
        let m = v.addr_memo.0.lock().unwrap();
        assert!(m.entries <= MEMO_ENTRIES, "{}", m.entries);
        // Two of the 40,000-entry texts fit; the others are read every time.
        assert_eq!(m.map.len(), 2);
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_memo_gives_what_reading_gives(
            addrs in proptest::collection::vec(expr_text(&[
                "$HOME_NET", "$EXTERNAL_NET", "$X", "$NOPE", "$LOOP", "any", "10.0.0.1", "bad",
            ]), 1..12),
            ports in proptest::collection::vec(expr_text(&[
                "$HTTP_PORTS", "$P", "$NOPE", "80", "1024:", "!22", "x",
            ]), 1..12),
        ) {
            let mut v = Vars::default();
            v.set_address("X", "[1.2.3.4,$HOME_NET]");
            v.set_address("LOOP", "$LOOP");
            v.set_port("P", "[$HTTP_PORTS,443]");
            for round in 0..2 {
                // Each text twice: read, then from the memo.
                for t in addrs.iter().chain(&addrs) {
                    prop_assert_eq!(v.address(t), v.read::<AddrExpr>(t).0);
                }
                for t in ports.iter().chain(&ports) {
                    prop_assert_eq!(v.port(t), v.read::<PortExpr>(t).0);
                }
                // A variable set anew is seen by the texts read before.
                if round == 0 {
                    v.set_address("HOME_NET", "[10.0.0.0/8,!10.1.0.0/16]");
                    v.set_port("HTTP_PORTS", "[8080,8081]");
                }
            }
        }
    }
}
