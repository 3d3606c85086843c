//! Rule text to [`Rule`].
//!
//! A rule is `action proto src sport dir dst dport (name:value; name; ...)`. The options
//! are read in order; detection options build lists of matches per buffer:
//!
//! - a *sticky buffer* (`http.uri;`, `dns_query;`, `file_data;`, and in Snort 3 rules
//!   `http_uri;`) sends the options after it to that buffer, `pkt_data;` back to the
//!   payload;
//! - a *legacy modifier* (`content:"x"; http_uri;`) moves the content just before it;
//! - Snort 3 writes content modifiers after commas: `content:"x",depth 4,nocase;`.
//!
//! A rule is a Snort 3 rule when it uses `service:` or a comma modifier; then buffer
//! names are sticky. Errors carry the column of the option that failed.
//!
//! Each keyword is one entry of the table in `keywords.rs`, which points at its setup
//! function in the module of its group: `meta` (sid, msg, thresholds), `content`
//! (content, pcre and their modifiers), `byte` (`byte_*`), `flow` (flow, flowbits,
//! stream_size), `packet` (header fields: dsize, ttl, flags, ...) and `app` (buffers and
//! transforms).

mod app;
mod byte;
mod content;
mod error;
mod flow;
mod keywords;
mod meta;
mod packet;
mod script;
mod transform;

pub use app::KRB5_WEAK;
pub(crate) use app::file_hash;
pub use error::ParseError;
pub use keywords::{KeywordClass, is_keyword, keyword_list};
pub use meta::threshold_fields;

use crate::buffer::{AppNeed, Transform};
use crate::rule::*;
use crate::vars::{AddrExpr, PortExpr, Vars};
use keywords::Kind;

/// One `name[:value]` option of a rule, and the column it starts at.
pub(crate) struct Opt<'a> {
    name: &'a str,
    value: Option<&'a str>,
    column: usize,
}

impl<'a> Opt<'a> {
    /// Its value; an error naming the option when it has none.
    fn need(&self) -> Result<&'a str, ParseError> {
        self.value
            .filter(|v| !v.is_empty())
            .ok_or_else(|| ParseError::missing_value(self.column, self.name))
    }

    /// Its value as a number of type `T`; `why` when it is not one.
    fn number<T: std::str::FromStr>(&self, why: &str) -> Result<T, ParseError> {
        self.need()?.parse().map_err(|_| self.bad(why))
    }

    /// Its value as comma-separated items of a word and at most one argument
    /// (`bytes 6, offset 4, relative`).
    fn items(&self) -> Result<Vec<(&'a str, Option<&'a str>)>, ParseError> {
        let mut out = Vec::new();
        for part in self.value.unwrap_or("").split(',').map(str::trim) {
            let mut words = part.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (None, ..) => {}
                (Some(k), v, None) => out.push((k, v)),
                _ => return Err(self.bad(&format!("unknown option '{part}'"))),
            }
        }
        Ok(out)
    }

    /// An item's argument `v` as a number (an error naming item `k` otherwise).
    fn item_number<T: std::str::FromStr>(&self, k: &str, v: &str) -> Result<T, ParseError> {
        v.parse().map_err(|_| self.bad(&format!("bad {k} '{v}'")))
    }

    /// An error: its value is wrong, and `why`.
    fn bad(&self, why: &str) -> ParseError {
        ParseError::bad_value(self.column, self.name, self.value.unwrap_or_default(), why)
    }
}

/// Splits the option body into `name[:value]` items at unescaped `;`.
fn split_options(body: &str, base_col: usize) -> Result<Vec<Opt<'_>>, ParseError> {
    let b = body.as_bytes();
    // At most one option per ';'.
    let mut out = Vec::with_capacity(memchr::memchr_iter(b';', b).count());
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let start = i;
        // As Suricata: quotes do not protect ';' (write it `\;` or `|3b|`).
        // The next byte that matters found with memchr: an escape, the first ':', the end.
        let mut colon = None;
        while i < b.len() {
            let next = match colon {
                None => memchr::memchr3(b'\\', b':', b';', &b[i..]),
                Some(_) => memchr::memchr2(b'\\', b';', &b[i..]),
            };
            let Some(k) = next else {
                i = b.len();
                break;
            };
            i += k;
            match b[i] {
                b'\\' => i += 2,
                b':' => {
                    colon = Some(i);
                    i += 1;
                }
                _ => break,
            }
        }
        if i >= b.len() {
            let rest = body[start..].trim();
            if rest.is_empty() {
                break;
            }
            return Err(ParseError::unterminated(base_col + start, rest));
        }
        let item = &body[start..i];
        let (name, value) = match colon {
            Some(c) => (body[start..c].trim(), Some(body[c + 1..i].trim())),
            None => (item.trim(), None),
        };
        out.push(Opt {
            name,
            value,
            column: base_col + start,
        });
        i += 1;
    }
    Ok(out)
}

/// Strips surrounding double quotes.
fn unquote(v: &str) -> &str {
    let v = v.trim();
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// A decimal or `0x` hexadecimal number.
fn parse_num(v: &str) -> Option<i64> {
    let v = v.trim();
    if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok();
    }
    v.parse().ok()
}

/// A number or the name of a `byte_extract` variable.
fn parse_val(v: &str) -> Option<Val> {
    let v = v.trim();
    if v.is_empty() {
        return None;
    }
    match parse_num(v) {
        Some(n) => Some(Val::Num(n)),
        None if v
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')) =>
        {
            Some(Val::Var(v.to_string()))
        }
        None => None,
    }
}

/// `N`, `<N`, `>N`, `<=N`, `>=N`, `!N`, `=N`, `N<>M`, `N-M`.
pub fn parse_cmp(v: &str) -> Option<Cmp> {
    let v = v.trim();
    if let Some((m, x)) = v.strip_prefix('&').and_then(|r| r.split_once('=')) {
        return Some(Cmp::Mask(parse_num(m)?, parse_num(x)?));
    }
    if let Some((a, b)) = v.split_once("<=>") {
        return Some(Cmp::Range(parse_num(a)?, parse_num(b)?));
    }
    if let Some((a, b)) = v.split_once("<>") {
        return Some(Cmp::Between(parse_num(a)?, parse_num(b)?));
    }
    for (p, f) in [
        ("<=", Cmp::Le as fn(i64) -> Cmp),
        (">=", Cmp::Ge),
        ("<", Cmp::Lt),
        (">", Cmp::Gt),
        ("!=", Cmp::Ne),
        ("!", Cmp::Ne),
        ("=", Cmp::Eq),
    ] {
        if let Some(r) = v.strip_prefix(p) {
            return Some(f(parse_num(r)?));
        }
    }
    if let Some((a, b)) = v.split_once('-')
        && !a.trim().is_empty()
    {
        return Some(Cmp::Range(parse_num(a)?, parse_num(b)?));
    }
    Some(Cmp::Eq(parse_num(v)?))
}

/// The parser's running state for one rule.
pub(crate) struct Builder {
    rule: Rule,
    /// The list of the last sticky buffer (or `pkt_data`): detection options go there.
    sticky: Option<usize>,
    /// Before any sticky buffer, the payload list options go to (started with the
    /// first of them).
    payload: Option<usize>,
    snort3: bool,
    /// `(list, index)` of the last content, for modifiers.
    last_content: Option<(usize, usize)>,
    /// The list of the last content or pcre, for relative options before any sticky
    /// buffer.
    last_match: Option<usize>,
    /// The previous option was a content or one of its modifiers (so a legacy buffer
    /// modifier may follow).
    prev_was_content: bool,
    sid_seen: bool,
}

impl Builder {
    /// Starts a new list over `buf` and returns its index.
    fn list_for(&mut self, buf: Buffer) -> usize {
        // A new sticky buffer starts a new list, even for a buffer seen before
        // (relative matches do not cross from one to the other).
        self.rule.lists.push(List {
            buffer: buf,
            matches: Vec::new(),
            transforms: Vec::new(),
            absent: Absent::No,
        });
        self.rule.lists.len() - 1
    }

    /// Starts a list over `buf` that the options after it go to (a sticky buffer).
    fn stick(&mut self, buf: Buffer) {
        // A header buffer named again right after its own options goes on with its
        // list (issue-3267-tcphdr: `tcp.hdr; content:...; tcp.hdr; content:...;
        // distance:8;`). Application buffers start a new list instead: Suricata
        // matches each instance of a multi-buffer (one DNS query, one header) apart.
        if let Some(l) = self.sticky
            && matches!(buf, Buffer::Header(_))
            && self.rule.lists[l].buffer == buf
        {
            return;
        }
        self.sticky = Some(self.list_for(buf));
    }

    /// Adds a transform to the current list. After matches, it starts a new instance of
    /// the buffer with the transforms so far and this one (as Suricata reads
    /// `http.uri; content:"/?a="; from_base64: offset 4; content:"x";`: the first content
    /// sees the URI, the second the decoded bytes).
    fn transform(&mut self, t: Transform) {
        let mut cur = self.cur();
        if !self.rule.lists[cur].matches.is_empty() {
            let (buffer, transforms) = {
                let l = &self.rule.lists[cur];
                (l.buffer, l.transforms.clone())
            };
            cur = self.list_for(buffer);
            self.rule.lists[cur].transforms = transforms;
            if self.sticky.is_some() {
                self.sticky = Some(cur);
            } else {
                self.payload = Some(cur);
            }
        }
        self.rule.lists[cur].transforms.push(t);
    }

    /// The list options go to: the sticky buffer's, else the payload's.
    fn cur(&mut self) -> usize {
        if let Some(l) = self.sticky.or(self.payload) {
            return l;
        }
        let l = self.list_for(Buffer::Payload);
        self.payload = Some(l);
        l
    }

    /// Adds a match where it goes: the current list, except that before any sticky
    /// buffer a relative match goes to the list of the content or pcre before it (as
    /// Suricata places it: `uricontent:"a"; pcre:"/b/R";` looks in the URI).
    fn push(&mut self, m: Match) {
        let l = match self.last_match {
            Some(l) if self.sticky.is_none() && is_relative(&m) => l,
            _ => self.cur(),
        };
        self.push_to(l, m);
    }

    /// Adds a match to list `l`.
    fn push_to(&mut self, l: usize, m: Match) {
        let kind = (matches!(m, Match::Content(_)), matches!(m, Match::Pcre(_)));
        let list = &mut self.rule.lists[l];
        list.matches.push(m);
        let at = list.matches.len() - 1;
        if kind.0 {
            self.last_content = Some((l, at));
        }
        if kind.0 || kind.1 {
            self.last_match = Some(l);
        }
    }

    /// The content a modifier applies to: the last one.
    fn last_content(&mut self, o: &Opt<'_>) -> Result<&mut Content, ParseError> {
        let Some((l, i)) = self.last_content else {
            return Err(ParseError::no_content(o.column, o.name));
        };
        match &mut self.rule.lists[l].matches[i] {
            Match::Content(c) => Ok(c),
            _ => unreachable!("last_content points at a content"),
        }
    }

    /// Records that the rule needs this of the application layer.
    fn note_app(&mut self, need: AppNeed) {
        if !self.rule.app_layer.contains(&need) {
            self.rule.app_layer.push(need);
        }
    }
}

/// Parses one rule. `vars` resolves address and port variables.
pub fn parse_rule(text: &str, vars: &Vars) -> Result<Rule, ParseError> {
    parse_whole(text, vars).or_else(|e| unmet_requirements(text).ok_or(e))
}

/// A rule that does not parse but whose `requires` netsieve does not meet is skipped,
/// not refused, as Suricata reads `requires` first (its version-gated rules may use
/// syntax this version lacks): it comes back uninspected, with its sid, its options
/// dropped.
fn unmet_requirements(text: &str) -> Option<Rule> {
    let text = text.trim_end();
    let open = text.find('(')?;
    let body = text.get(open + 1..text.len().checked_sub(1)?)?;
    let opts = split_options(body, open + 2).ok()?;
    let requires = opts.iter().find(|o| o.name == "requires")?.value?;
    if meta::requirements_met(requires) {
        return None;
    }
    let sid = opts
        .iter()
        .find(|o| o.name == "sid")?
        .value?
        .trim()
        .parse()
        .ok()?;
    let mut rule = parse_header("alert ip any any -> any any ", &Vars::default()).ok()?;
    rule.sid = sid;
    rule.unsupported.push(RawOption {
        name: "requires".to_string(),
        value: Some(requires.to_string()),
    });
    Some(rule)
}

fn parse_whole(text: &str, vars: &Vars) -> Result<Rule, ParseError> {
    let text = text.trim_end();
    let open = text
        .find('(')
        .ok_or_else(|| ParseError::no_options(1, "no '(' starting the options"))?;
    if !text.ends_with(')') {
        return Err(ParseError::no_options(
            text.len(),
            "rule does not end with ')'",
        ));
    }
    let header = &text[..open];
    let body = &text[open + 1..text.len() - 1];
    let mut b = Builder {
        rule: parse_header(header, vars)?,
        sticky: None,
        payload: None,
        snort3: false,
        last_content: None,
        last_match: None,
        prev_was_content: false,
        sid_seen: false,
    };
    let opts = split_options(body, open + 2)?;
    b.snort3 = opts.iter().any(is_snort3);
    for o in &opts {
        option(&mut b, o)?;
    }
    if !b.sid_seen {
        return Err(ParseError::no_sid(open + 1));
    }
    finish(b)
}

/// A match that starts where the one before it ended.
fn is_relative(m: &Match) -> bool {
    match m {
        Match::Content(c) => c.is_relative(),
        Match::Pcre(p) => p.relative,
        Match::ByteTest { read, .. }
        | Match::ByteJump { read, .. }
        | Match::ByteExtract { read, .. }
        | Match::ByteMath { read, .. } => read.relative,
        Match::IsDataAt { relative, .. } | Match::Base64Decode { relative, .. } => *relative,
        Match::Asn1(a) => a.relative_offset.is_some(),
        Match::Dataset(_) | Match::Datarep(_) => false,
        Match::Bsize(_)
        | Match::Entropy(_)
        | Match::Uint(_)
        | Match::UintList(..)
        | Match::DceIface { .. } => false,
    }
}

/// An option only Snort 3 writes: `service:`, or a content or pcre with modifiers after
/// a comma.
fn is_snort3(o: &Opt<'_>) -> bool {
    o.name == "service"
        || (matches!(o.name, "content" | "pcre")
            && o.value.is_some_and(|v| {
                let v = v.trim();
                v.rfind('"')
                    .is_some_and(|q| q + 1 < v.len() && v[q + 1..].trim_start().starts_with(','))
            }))
}

/// One option: its keyword's setup, found in the table.
fn option(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let kind =
        keywords::lookup(o.name).ok_or_else(|| ParseError::unknown_keyword(o.column, o.name))?;
    let after_content = std::mem::take(&mut b.prev_was_content);
    match kind {
        Kind::Setup(setup) => setup(b, o),
        Kind::Modifier(modify) => {
            modify(b.last_content(o)?, o)?;
            b.prev_was_content = after_content;
            Ok(())
        }
        Kind::Buffer(buf, spelling) => app::buffer(b, o, buf, spelling, after_content),
        Kind::Header(h) => {
            b.stick(Buffer::Header(h));
            Ok(())
        }
        Kind::Transform(t) => {
            b.transform(Transform::Plain(t));
            Ok(())
        }
        Kind::Hint => Ok(()),
        Kind::Unsupported => {
            b.rule.unsupported.push(RawOption {
                name: o.name.to_string(),
                value: o.value.map(str::to_string),
            });
            Ok(())
        }
    }
}

/// The rule once every option is read: lists emptied by legacy modifiers dropped (one
/// that says `absent` stays), and what it needs of the application layer in one order,
/// whatever the options' order.
fn finish(mut b: Builder) -> Result<Rule, ParseError> {
    b.rule
        .lists
        .retain(|l| !l.matches.is_empty() || l.absent != Absent::No);
    if let Proto::App(p) = &b.rule.proto {
        let p = p.clone();
        b.note_app(AppNeed::Protocol(p));
    }
    b.rule.app_layer.sort();
    Ok(b.rule)
}

fn parse_header(h: &str, vars: &Vars) -> Result<Rule, ParseError> {
    let toks = header_tokens(h);
    let col = |k: usize| toks.get(k).map(|t| t.0).unwrap_or(1);
    let (action, scope, also_pass, also_alert) = match toks.first() {
        Some(&(c, a)) => parse_actions(a).ok_or_else(|| ParseError::unknown_action(c, a))?,
        None => return Err(ParseError::empty_rule()),
    };
    let config_rule = toks.first().is_some_and(|t| t.1 == "config");
    let proto_s = toks
        .get(1)
        .map(|t| t.1.to_ascii_lowercase())
        .ok_or_else(|| ParseError::no_protocol(col(0)))?;
    // `tcp:all`, `tls:client_hello_done`: the protocol and the hook it is evaluated at.
    let (base, hook_s) = match proto_s.split_once(':') {
        Some((b, h)) => (b, Some(h)),
        None => (proto_s.as_str(), None),
    };
    let proto = Proto::by_name(base).ok_or_else(|| ParseError::unknown_protocol(col(1), base))?;
    let hook = match hook_s {
        Some(h) => Some(
            Hook::parse(base, matches!(proto, Proto::App(_)), h)
                .ok_or_else(|| ParseError::unknown_hook(col(1), &proto_s))?,
        ),
        None => None,
    };
    let mut rule = Rule::new(action, proto);
    rule.noalert = config_rule;
    rule.scope = scope;
    rule.hook = hook;
    rule.also_pass = also_pass;
    rule.pass_alert = also_alert;
    // Snort 3 allows `alert http (...)`: no addresses.
    if toks.len() == 2 {
        return Ok(rule);
    }
    if toks.len() != 7 {
        return Err(ParseError::header_fields(col(0), toks.len()));
    }
    let addr = |k: usize| {
        vars.address(toks[k].1)
            .map_err(|e| ParseError::bad_address(col(k), e.0))
    };
    let port = |k: usize| {
        vars.port(toks[k].1)
            .map_err(|e| ParseError::bad_port(col(k), e.0))
    };
    rule.src = addr(2)?;
    rule.sport = port(3)?;
    rule.bidirectional = match toks[4].1 {
        "->" => false,
        "<>" => true,
        d => return Err(ParseError::bad_direction(col(4), d)),
    };
    rule.dst = addr(5)?;
    rule.dport = port(6)?;
    Ok(rule)
}

/// The actions a rule header starts with: the action and its scope (`drop:flow`), then
/// a firewall rule's secondary actions (`accept:flow,pass:flow,alert`): a pass with its
/// scope, and whether it alerts. `None` for a word that is no action.
fn parse_actions(text: &str) -> Option<(Action, Option<Scope>, Option<Scope>, bool)> {
    let mut parts = text.split(',');
    let (name, scope) = split_scope(parts.next()?)?;
    let action = match name {
        "alert" => Action::Alert,
        "drop" => Action::Drop,
        "reject" | "rejectsrc" | "rejectdst" | "rejectboth" | "sdrop" => Action::Reject,
        "pass" => Action::Pass,
        "accept" => Action::Accept,
        // Suricata's `config` rules change what is logged and never alert: an alert
        // rule that does not alert, whose `config` option says what it changes.
        "config" => Action::Alert,
        _ => return None,
    };
    let (mut pass, mut alert) = (None, false);
    for p in parts {
        match split_scope(p)? {
            ("alert", None) => alert = true,
            ("pass", s) => pass = Some(s.unwrap_or(Scope::Flow)),
            _ => return None,
        }
    }
    Some((action, scope, pass, alert))
}

/// `drop:flow` -> ("drop", Some(Flow)); `None` for an unknown scope.
fn split_scope(a: &str) -> Option<(&str, Option<Scope>)> {
    match a.split_once(':') {
        Some((n, s)) => Some((n, Some(Scope::by_name(s)?))),
        None => Some((a, None)),
    }
}

/// The header's whitespace-separated fields and their columns, bracketed lists (which
/// may hold spaces) kept whole.
fn header_tokens(h: &str) -> Vec<(usize, &str)> {
    let mut toks = Vec::new();
    let bytes = h.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        let start = i;
        let mut depth = 0i32;
        while i < bytes.len() && (depth > 0 || !bytes[i].is_ascii_whitespace()) {
            match bytes[i] {
                b'[' => depth += 1,
                b']' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        toks.push((start + 1, &h[start..i]));
    }
    toks
}

impl Rule {
    /// The stand-in for a rule whose text the loader knew ([`Rule::known`]).
    pub(crate) fn stand_in(text_hash: u64, gid: u32, sid: u32) -> Rule {
        Rule {
            text_hash,
            gid,
            sid,
            known: true,
            ..Rule::new(Action::Alert, Proto::Ip)
        }
    }

    /// A rule with this action and protocol, any addresses and ports, and no options.
    fn new(action: Action, proto: Proto) -> Rule {
        Rule {
            file: String::new(),
            line: 0,
            text_hash: 0,
            text: None,
            known: false,
            action,
            proto,
            src: AddrExpr::Any,
            sport: PortExpr::Any,
            bidirectional: false,
            dst: AddrExpr::Any,
            dport: PortExpr::Any,
            sid: 0,
            gid: 1,
            rev: 0,
            msg: String::new(),
            classtype: None,
            priority: None,
            references: Strings::default(),
            metadata: Strings::default(),
            target: None,
            lists: Vec::new(),
            conds: Vec::new(),
            flow: FlowOpts::default(),
            flowbits: Vec::new(),
            xbits: Vec::new(),
            flowints: Vec::new(),
            lua: Vec::new(),
            noalert: false,
            bypass: false,
            filestore: None,
            tags: Vec::new(),
            pass_alert: false,
            scope: None,
            hook: None,
            also_pass: None,
            firewall: false,
            quiet_tx: false,
            threshold: None,
            detection_filter: None,
            services: Vec::new(),
            app_layer: Vec::new(),
            unsupported: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Split = Result<Vec<(String, Option<String>, usize)>, String>;

    /// `split_options` as first written, a byte at a time: the reference for the
    /// memchr version.
    fn split_reference(body: &str, base_col: usize) -> Split {
        let b = body.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i >= b.len() {
                break;
            }
            let start = i;
            let mut colon = None;
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 1,
                    b':' if colon.is_none() => colon = Some(i),
                    b';' => break,
                    _ => {}
                }
                i += 1;
            }
            if i >= b.len() {
                let rest = body[start..].trim();
                if rest.is_empty() {
                    break;
                }
                return Err(ParseError::unterminated(base_col + start, rest).to_string());
            }
            let (name, value) = match colon {
                Some(c) => (body[start..c].trim(), Some(body[c + 1..i].trim())),
                None => (body[start..i].trim(), None),
            };
            out.push((name.into(), value.map(Into::into), base_col + start));
            i += 1;
        }
        Ok(out)
    }

    fn split(body: &str) -> Split {
        split_options(body, 7)
            .map(|v| {
                v.iter()
                    .map(|o| (o.name.into(), o.value.map(Into::into), o.column))
                    .collect()
            })
            .map_err(|e| e.to_string())
    }

    #[test]
    fn options_split_at_unescaped_semicolons() {
        for body in [
            r#"msg:"a\;b"; content:"x:y"; sid:1;"#,
            r"pcre:/a\\/; sid:2;",
            "nocase; sid:3",
            r"content:a\",
            "  ",
        ] {
            assert_eq!(split(body), split_reference(body, 7), "{body:?}");
        }
    }

    proptest! {
        #[test]
        fn options_split_as_the_reference_does(body in r#"[a-c:;\\" ]{0,40}"#) {
            prop_assert_eq!(split(&body), split_reference(&body, 7));
        }
    }
}
