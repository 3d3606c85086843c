//! [`Rule`] to rule text: `rule.to_string()` parses back to the same rule.
//!
//! The text is Suricata 5+ syntax: sticky buffers by their canonical names, each list
//! printed in order with its transforms and matches. Legacy forms appear only where the
//! rule's lists cannot be written otherwise: a list started by a pcre whose flags select
//! its buffer (`pcre:"/x/U"`) is printed as that pcre, and the contents moved into it
//! after it with their legacy modifiers (`content:"y"; http_uri;`), as are the lists of
//! buffers that have only a legacy name (`http_raw_cookie`). Options the engine does not
//! evaluate are printed as written, after the detection options; `prefilter` and `tag`
//! are not kept by the parser and are not printed.

use std::fmt::{self, Display, Write};

use crate::buffer::{AppBuffer, AppNeed, Spelling, Transform};
use crate::rule::*;
use crate::vars::{AddrExpr, PortExpr};

impl Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = if self.bidirectional { "<>" } else { "->" };
        write!(f, "{}", self.actions())?;
        let proto = match self.hook {
            Some(h) => format!("{}:{}", self.proto.name(), h.name(self.proto.name())),
            None => self.proto.name().to_string(),
        };
        write!(
            f,
            " {proto} {} {} {dir} {} {} (",
            self.src, self.sport, self.dst, self.dport
        )?;
        let mut p = Printer {
            rule: self,
            out: Vec::new(),
            sticky: None,
            legacy: needs_legacy(self),
        };
        p.print();
        write!(f, "{})", p.out.join(" "))
    }
}

/// A comparison written as an operator apart from its number (`stream_size`, `iprep`).
fn side_op(cmp: Cmp) -> (&'static str, i64) {
    match cmp {
        Cmp::Lt(n) => ("<", n),
        Cmp::Gt(n) => (">", n),
        Cmp::Eq(n) => ("=", n),
        Cmp::Ne(n) => ("!=", n),
        Cmp::Le(n) => ("<=", n),
        Cmp::Ge(n) => (">=", n),
        // The parser makes no range or mask here.
        Cmp::Between(n, _) | Cmp::Range(n, _) | Cmp::Mask(n, _) => ("=", n),
    }
}

impl Rule {
    /// The header's actions as written: the action with its scope, then a secondary
    /// `pass` (`accept:flow,pass:flow`). A secondary `alert` is printed as the `alert`
    /// option, which reads back the same.
    pub fn actions(&self) -> String {
        let mut a = self.action.name().to_string();
        if let Some(s) = self.scope {
            a = format!("{a}:{s}");
        }
        if let Some(s) = self.also_pass {
            a = format!("{a},pass:{s}");
        }
        a
    }
}

/// Builds the options of one rule, following the parser's state as it goes.
struct Printer<'a> {
    rule: &'a Rule,
    out: Vec<String>,
    /// The buffer of the last sticky buffer (or `pkt_data`) printed: the parser sends
    /// options to its list.
    sticky: Option<Buffer>,
    /// Print every list that can be with legacy modifiers, and no sticky buffer before
    /// them (see [`needs_legacy`]).
    legacy: bool,
}

/// A rule whose lists can only be written without sticky buffers: one where a relative
/// option follows a pcre that started its own list (`pcre:"/a/PR"; isdataat:1,relative;`
/// in a Snort 2 rule). Only before any sticky buffer does the parser send such an
/// option to the pcre's list.
fn needs_legacy(r: &Rule) -> bool {
    r.services.is_empty()
        && r.lists.iter().any(|l| match (&l.matches[..], l.buffer) {
            // Contents, and pcres flagged for the same buffer, join the list as printed.
            ([Match::Pcre(p), rest @ ..], Buffer::App(b)) => {
                p.buffer() == Some(b)
                    && rest.iter().any(|m| match m {
                        Match::Content(_) => false,
                        Match::Pcre(q) => q.buffer() != Some(b),
                        _ => true,
                    })
            }
            _ => false,
        })
}

impl Printer<'_> {
    fn opt(&mut self, name: &str, value: Option<&dyn Display>) {
        self.out.push(match value {
            Some(v) => format!("{name}:{v};"),
            None => format!("{name};"),
        });
    }

    fn print(&mut self) {
        let r = self.rule;
        if !r.msg.is_empty() {
            let msg = format!("\"{}\"", escape_msg(&r.msg));
            self.opt("msg", Some(&msg));
        }
        let flow = r.flow.set_words();
        if !flow.is_empty() {
            self.opt("flow", Some(&flow.join(",")));
        }
        self.bare_buffers();
        for (i, l) in r.lists.iter().enumerate() {
            self.list(i, l);
        }
        self.conditions();
        self.alert_control();
        for u in &r.unsupported {
            self.opt(&u.name, u.value.as_ref().map(|v| v as &dyn Display));
        }
        self.metadata();
    }

    /// One list: how it starts, then its transforms and matches.
    fn list(&mut self, index: usize, l: &List) {
        let buf = match l.buffer {
            // The first list needs no keyword: the parser starts a payload list for it.
            Buffer::Payload if index == 0 && self.sticky.is_none() => {
                return self.matches(&l.transforms, &l.matches);
            }
            Buffer::Payload => {
                self.stick(Buffer::Payload);
                return self.matches(&l.transforms, &l.matches);
            }
            Buffer::Header(_) | Buffer::Frame(_) => {
                self.stick(l.buffer);
                return self.matches(&l.transforms, &l.matches);
            }
            Buffer::App(b) => b,
        };
        let (keyword, spelling) = buf.keyword();
        let started_by_pcre =
            matches!(&l.matches[..], [Match::Pcre(p), ..] if p.buffer() == Some(buf));
        if spelling == Spelling::Integer {
            for m in &l.matches {
                match m {
                    Match::Uint(c) => self.opt(keyword, Some(c)),
                    Match::UintList(c, pick) => self.opt(keyword, Some(&format!("{c},{pick}"))),
                    // `filemd5:[!]list`: the set the parser made of the list.
                    Match::Dataset(d) if crate::parse::file_hash(buf).is_some() => {
                        let not = if d.cmd == DatasetCmd::IsNotSet {
                            "!"
                        } else {
                            ""
                        };
                        let list = d.load.as_deref().unwrap_or("");
                        self.opt(keyword, Some(&format!("{not}{list}")));
                    }
                    Match::DceIface {
                        uuid,
                        version,
                        any_frag,
                    } => self.opt(keyword, Some(&dce_iface(uuid, *version, *any_frag))),
                    m => self.detection(m),
                }
            }
        } else if l.absent == Absent::No
            && (started_by_pcre
                || (spelling == Spelling::Modifier && !self.snort3())
                || (self.legacy && modifier(buf).is_some()))
        {
            self.legacy(buf, l);
        } else {
            self.stick(Buffer::App(buf));
            match l.absent {
                Absent::No => {}
                Absent::Only => self.opt("absent", None),
                Absent::OrElse => self.opt("absent", Some(&"or_else")),
            }
            self.matches(&l.transforms, &l.matches);
        }
    }

    /// Prints the keyword that makes `buf` the sticky buffer.
    fn stick(&mut self, buf: Buffer) {
        let keyword = match buf {
            Buffer::Payload => "pkt_data",
            Buffer::App(b) => b.keyword().0,
            Buffer::Header(h) => h.name(),
            Buffer::Frame(t) => {
                self.opt("frame", Some(&t.name()));
                self.sticky = Some(buf);
                return;
            }
        };
        self.opt(keyword, None);
        self.sticky = Some(buf);
    }

    /// A list written without a sticky buffer: contents followed by the buffer's legacy
    /// modifier, which moves them into its latest list.
    fn legacy(&mut self, buf: AppBuffer, l: &List) {
        // A modifier leaves a content in place when the sticky buffer is its own buffer.
        if self.sticky == Some(Buffer::App(buf)) {
            self.stick(Buffer::Payload);
        }
        let modifier = modifier(buf);
        for t in &l.transforms {
            self.opt(t.name(), None);
        }
        for m in &l.matches {
            self.detection(m);
            if let (Match::Content(_), Some(k)) = (m, modifier) {
                self.opt(k, None);
            }
        }
    }

    fn matches(&mut self, transforms: &[Transform], matches: &[Match]) {
        for t in transforms {
            match t.value() {
                Some(v) => self.opt(t.name(), Some(&v)),
                None => self.opt(t.name(), None),
            }
        }
        for m in matches {
            self.detection(m);
        }
    }

    /// A Snort 3 rule (one with `service:`) reads legacy modifiers as sticky buffers.
    fn snort3(&self) -> bool {
        !self.rule.services.is_empty()
    }

    /// Buffers the rule names without a match in them (`http.uri; sid:1;`): printed
    /// before the lists, where no content comes before them to be moved.
    fn bare_buffers(&mut self) {
        for need in &self.rule.app_layer {
            let AppNeed::Buffer(b) = need else { continue };
            let in_list = self.rule.lists.iter().any(|l| l.buffer == Buffer::App(*b));
            if !in_list {
                self.stick(Buffer::App(*b));
            }
        }
    }

    fn detection(&mut self, m: &Match) {
        match m {
            Match::Content(c) => self.content(c),
            Match::Pcre(p) => {
                let neg = if p.negated { "!" } else { "" };
                let mut flags = p.flags.clone();
                for c in &p.captures {
                    flags.push(',');
                    flags.push_str(&c.to_string());
                }
                let v = format!("{neg}\"/{}/{flags}\"", p.pattern);
                self.opt("pcre", Some(&v));
            }
            Match::ByteTest {
                read,
                count,
                negated,
                op,
                value,
            } => {
                let neg = if *negated { "!" } else { "" };
                let mut v = format!("{count},{neg}{},{value},{}", op.name(), read.offset);
                byte_read(&mut v, read);
                self.opt("byte_test", Some(&v));
            }
            Match::ByteJump {
                read,
                multiplier,
                align,
                from_beginning,
                from_end,
                post_offset,
            } => {
                let mut v = format!("{},{}", read.bytes, read.offset);
                byte_read(&mut v, read);
                if *multiplier != 1 {
                    let _ = write!(v, ",multiplier {}", *multiplier as i64);
                }
                for (set, word) in [
                    (*align, "align"),
                    (*from_beginning, "from_beginning"),
                    (*from_end, "from_end"),
                ] {
                    if set {
                        let _ = write!(v, ",{word}");
                    }
                }
                if *post_offset != 0 {
                    let _ = write!(v, ",post_offset {post_offset}");
                }
                self.opt("byte_jump", Some(&v));
            }
            Match::ByteExtract {
                read,
                name,
                multiplier,
                align,
            } => {
                let mut v = format!("{},{},{name}", read.bytes, read.offset);
                byte_read(&mut v, read);
                if *multiplier != 1 {
                    let _ = write!(v, ",multiplier {}", *multiplier as i64);
                }
                if *align != 0 {
                    let _ = write!(v, ",align {align}");
                }
                self.opt("byte_extract", Some(&v));
            }
            Match::ByteMath {
                read,
                count,
                oper,
                rvalue,
                result,
            } => {
                let mut v = format!(
                    "bytes {count},offset {},oper {},rvalue {rvalue},result {result}",
                    read.offset,
                    oper.name()
                );
                byte_read(&mut v, read);
                self.opt("byte_math", Some(&v));
            }
            Match::IsDataAt {
                offset,
                relative,
                negated,
            } => {
                let neg = if *negated { "!" } else { "" };
                let rel = if *relative { ",relative" } else { "" };
                self.opt("isdataat", Some(&format!("{neg}{offset}{rel}")));
            }
            Match::Bsize(c) => self.opt("bsize", Some(c)),
            Match::Entropy(Entropy {
                offset,
                bytes,
                negated,
                cmp,
                ..
            }) => {
                let bits = |m: &i64| *m as f64 / 1e6;
                let value = match cmp {
                    Cmp::Lt(m) => format!("<{}", bits(m)),
                    Cmp::Le(m) => format!("<={}", bits(m)),
                    Cmp::Gt(m) => format!(">{}", bits(m)),
                    Cmp::Ge(m) => format!(">={}", bits(m)),
                    Cmp::Ne(m) => format!("!={}", bits(m)),
                    Cmp::Between(a, b) | Cmp::Range(a, b) => {
                        let neg = if *negated { "!" } else { "" };
                        format!("{neg}{}-{}", bits(a), bits(b))
                    }
                    Cmp::Eq(m) | Cmp::Mask(_, m) => format!("={}", bits(m)),
                };
                let bytes = bytes.map(|n| format!("bytes {n}, ")).unwrap_or_default();
                self.opt(
                    "entropy",
                    Some(&format!("{bytes}offset {offset}, value {value}")),
                );
            }
            Match::Dataset(d) => {
                let cmd = match d.cmd {
                    DatasetCmd::IsSet => "isset",
                    DatasetCmd::IsNotSet => "isnotset",
                    DatasetCmd::Set => "set",
                    DatasetCmd::Unset => "unset",
                };
                let mut v = vec![cmd.to_string(), d.name.clone(), data_type(d.kind)];
                v.extend(d.load.iter().map(|f| format!("load {f}")));
                v.extend(d.save.iter().map(|f| format!("save {f}")));
                match d.format {
                    DataFormat::Csv => {}
                    DataFormat::Json => v.push("format json".into()),
                    DataFormat::Ndjson => v.push("format ndjson".into()),
                }
                v.extend(d.context_key.iter().map(|k| format!("context_key {k}")));
                v.extend(d.value_key.iter().map(|k| format!("value_key {k}")));
                v.extend(d.array_key.iter().map(|k| format!("array_key {k}")));
                if d.remove_key {
                    v.push("remove_key".into());
                }
                self.opt("dataset", Some(&v.join(",")));
            }
            Match::Datarep(d) => {
                let (op, n) = match d.cmp {
                    Cmp::Lt(n) => ("<", n),
                    Cmp::Le(n) => ("<=", n),
                    Cmp::Gt(n) => (">", n),
                    Cmp::Ge(n) => (">=", n),
                    Cmp::Eq(n) => ("==", n),
                    // The parser makes no other comparison for it.
                    _ => ("==", 0),
                };
                let mut v = vec![
                    d.name.clone(),
                    op.to_string(),
                    n.to_string(),
                    data_type(d.kind),
                ];
                v.extend(d.load.iter().map(|f| format!("load {f}")));
                self.opt("datarep", Some(&v.join(",")));
            }
            Match::Asn1(a) => {
                let mut v = Vec::new();
                if a.bitstring_overflow {
                    v.push("bitstring_overflow".to_string());
                }
                if a.double_overflow {
                    v.push("double_overflow".to_string());
                }
                v.extend(a.oversize_length.map(|n| format!("oversize_length {n}")));
                v.extend(a.absolute_offset.map(|n| format!("absolute_offset {n}")));
                v.extend(a.relative_offset.map(|n| format!("relative_offset {n}")));
                self.opt("asn1", Some(&v.join(", ")));
            }
            Match::Base64Decode {
                bytes,
                offset,
                relative,
            } => {
                let mut v = Vec::new();
                if let Some(n) = bytes {
                    v.push(format!("bytes {n}"));
                }
                if *offset != 0 || v.is_empty() {
                    v.push(format!("offset {offset}"));
                }
                if *relative {
                    v.push("relative".to_string());
                }
                self.opt("base64_decode", Some(&v.join(",")));
            }
            // The parser puts these only in integer buffers' lists, which `list` prints
            // with their keyword; a hand-made rule may put one elsewhere, where no
            // keyword can say it: the nearest is its length.
            Match::Uint(c) | Match::UintList(c, _) => self.opt("bsize", Some(c)),
            Match::DceIface {
                uuid,
                version,
                any_frag,
            } => self.opt("dcerpc.iface", Some(&dce_iface(uuid, *version, *any_frag))),
        }
    }

    fn content(&mut self, c: &Content) {
        let neg = if c.negated { "!" } else { "" };
        let v = format!("{neg}\"{}\"", escape_content(&c.pattern));
        self.opt("content", Some(&v));
        for (set, word) in [
            (c.nocase, "nocase"),
            (c.rawbytes, "rawbytes"),
            (c.startswith, "startswith"),
            (c.endswith, "endswith"),
        ] {
            if set {
                self.opt(word, None);
            }
        }
        for (v, word) in [
            (&c.offset, "offset"),
            (&c.depth, "depth"),
            (&c.distance, "distance"),
            (&c.within, "within"),
        ] {
            if let Some(v) = v {
                self.opt(word, Some(v));
            }
        }
        if c.fast_pattern_only {
            self.opt("fast_pattern", Some(&"only"));
        }
        if let Some((off, len)) = c.fast_pattern_chop {
            self.opt("fast_pattern", Some(&format!("{off},{len}")));
        }
        if c.fast_pattern && !c.fast_pattern_only && c.fast_pattern_chop.is_none() {
            self.opt("fast_pattern", None);
        }
    }

    /// Header and flow conditions.
    fn conditions(&mut self) {
        for c in &self.rule.conds {
            match c {
                Cond::Dsize(c) => self.opt("dsize", Some(c)),
                Cond::Ttl(c) => self.opt("ttl", Some(c)),
                Cond::TcpMss(c) => self.opt("tcp.mss", Some(c)),
                Cond::TcpWindow { negated, size } => {
                    let neg = if *negated { "!" } else { "" };
                    self.opt("window", Some(&format!("{neg}{size}")))
                }
                Cond::Icmpv6Mtu(c) => self.opt("icmpv6.mtu", Some(c)),
                Cond::Itype(c) => self.opt("itype", Some(c)),
                Cond::VlanId { cmp, layer } => {
                    let v = match layer {
                        VlanLayer::Any => cmp.to_string(),
                        VlanLayer::All => format!("{cmp},all"),
                        VlanLayer::At(n) => format!("{cmp},{n}"),
                    };
                    self.opt("vlan.id", Some(&v));
                }
                Cond::VlanLayers(c) => self.opt("vlan.layers", Some(c)),
                Cond::Icode(c) => self.opt("icode", Some(c)),
                Cond::IcmpId(n) => self.opt("icmp_id", Some(n)),
                Cond::IcmpSeq(n) => self.opt("icmp_seq", Some(n)),
                Cond::IpId(n) => self.opt("id", Some(n)),
                Cond::TcpSeq(n) => self.opt("seq", Some(n)),
                Cond::TcpAck(n) => self.opt("ack", Some(n)),
                Cond::IpProto { negated, cmp } => {
                    let neg = if *negated { "!" } else { "" };
                    self.opt("ip_proto", Some(&format!("{neg}{cmp}")));
                }
                Cond::Flags { mode, bits, ignore } => {
                    let mut v = match mode {
                        FlagsMode::Exact => String::new(),
                        FlagsMode::All => "+".into(),
                        FlagsMode::Any => "*".into(),
                        FlagsMode::Not => "!".into(),
                    };
                    v.push_str(&flag_letters(*bits));
                    if *ignore != 0 {
                        v.push(',');
                        v.push_str(&flag_letters(*ignore));
                    }
                    self.opt("flags", Some(&v));
                }
                Cond::SameIp => self.opt("sameip", None),
                Cond::FtpBounce => self.opt("ftpbounce", None),
                Cond::StreamSize { side, cmp } => {
                    let (op, n) = side_op(*cmp);
                    self.opt("stream_size", Some(&format!("{side},{op},{n}")));
                }
                Cond::FlowAge(c) => self.opt("flow.age", Some(c)),
                Cond::IpRep {
                    side,
                    category,
                    cmp,
                    ..
                } => {
                    let (op, n) = side_op(*cmp);
                    self.opt("iprep", Some(&format!("{side},{category},{op},{n}")));
                }
                Cond::AppLayerProtocol {
                    negated,
                    proto,
                    mode,
                } => {
                    let not = if *negated { "!" } else { "" };
                    self.opt(
                        "app-layer-protocol",
                        Some(&format!("{not}{},{mode}", proto.name())),
                    );
                }
                Cond::Checksum { layer, valid } => {
                    let v = if *valid { "valid" } else { "invalid" };
                    self.opt(layer.name(), Some(&v));
                }
                Cond::FlowCount { bytes, side, cmp } => {
                    let name = if *bytes { "flow.bytes" } else { "flow.pkts" };
                    let side = match side {
                        StreamSide::Server => "toserver",
                        StreamSide::Client => "toclient",
                        StreamSide::Both | StreamSide::Either => "either",
                    };
                    self.opt(name, Some(&format!("{side},{cmp}")));
                }
                Cond::IpOpts(o) => self.opt("ipopts", Some(o)),
                Cond::DecodeEvent(e) => self.opt("decode-event", Some(&e.name())),
                Cond::StreamEvent(e) => self.opt("stream-event", Some(&e.name())),
                Cond::AppEvent(e) => self.opt("app-layer-event", Some(&e.name())),
            }
        }
    }

    /// Flowbits, thresholds and what the alert targets.
    fn alert_control(&mut self) {
        let r = self.rule;
        for fb in &r.flowbits {
            let mut names = fb.names.join(if fb.any { "|" } else { "&" });
            if fb.any && fb.names.len() == 1 {
                names.push('|');
            }
            self.opt("flowbits", Some(&format!("{},{names}", fb.cmd)));
        }
        for fi in &r.flowints {
            let v = match &fi.value {
                Some(FlowintVal::Num(n)) => format!("{},{},{n}", fi.name, fi.op),
                Some(FlowintVal::Var(v)) => format!("{},{},{v}", fi.name, fi.op),
                None => format!("{},{}", fi.name, fi.op),
            };
            self.opt("flowint", Some(&v));
        }
        for x in &r.xbits {
            let mut v = format!("{},{},track {}", x.cmd, x.name, x.track);
            if let Some(e) = x.expire {
                v.push_str(&format!(",expire {e}"));
            }
            self.opt("xbits", Some(&v));
        }
        for l in &r.lua {
            let bang = if l.negated { "!" } else { "" };
            self.opt("lua", Some(&format!("{bang}{}", l.script)));
        }
        if r.noalert {
            self.opt("noalert", None);
        }
        if r.bypass {
            self.opt("bypass", None);
        }
        if let Some(fs) = r.filestore {
            use crate::rule::{FileStoreDir, FileStoreScope};
            let dir = fs.dir.map(|d| match d {
                FileStoreDir::ToServer => "to_server",
                FileStoreDir::ToClient => "to_client",
                FileStoreDir::Both => "both",
            });
            let scope = match fs.scope {
                FileStoreScope::Tx => "tx",
                FileStoreScope::Flow => "flow",
            };
            match dir {
                Some(d) => self.opt("filestore", Some(&format!("{d},{scope}"))),
                None => self.opt("filestore", None),
            }
        }
        for t in &r.tags {
            use crate::rule::TagScope;
            let scope = match t.scope {
                TagScope::Session => String::from("session"),
                TagScope::Host(_) => String::from("host"),
            };
            let host = match t.scope {
                TagScope::Host(h) => format!(",{h}"),
                TagScope::Session => String::new(),
            };
            self.opt(
                "tag",
                Some(&format!("{scope},{},{}{host}", t.count, t.metric)),
            );
        }
        if r.pass_alert {
            self.opt("alert", None);
        }
        if r.quiet_tx {
            self.opt("config", Some(&"logging disable, type tx, scope tx"));
        }
        if let Some(t) = &r.threshold {
            self.opt("threshold", Some(&threshold(t)));
        }
        if let Some(t) = &r.detection_filter {
            self.opt("detection_filter", Some(&threshold(t)));
        }
        if let Some(t) = r.target {
            let v = match t {
                Target::SrcIp => "src_ip",
                Target::DestIp => "dest_ip",
            };
            self.opt("target", Some(&v));
        }
    }

    /// What identifies and describes the rule.
    fn metadata(&mut self) {
        let r = self.rule;
        if !r.services.is_empty() {
            self.opt("service", Some(&r.services.join(",")));
        }
        for reference in r.references.iter() {
            self.opt("reference", Some(&reference));
        }
        if let Some(c) = &r.classtype {
            self.opt("classtype", Some(c));
        }
        if let Some(p) = r.priority {
            self.opt("priority", Some(&p));
        }
        if !r.metadata.is_empty() {
            self.opt(
                "metadata",
                Some(&r.metadata.iter().collect::<Vec<_>>().join(", ")),
            );
        }
        self.opt("sid", Some(&r.sid));
        self.opt("rev", Some(&r.rev));
        if r.gid != 1 {
            self.opt("gid", Some(&r.gid));
        }
    }
}

/// The legacy modifier that moves a content into `buf`, if it has one.
fn modifier(buf: AppBuffer) -> Option<&'static str> {
    buf.keywords()
        .iter()
        .find(|(_, s)| *s == Spelling::Modifier)
        .map(|(k, _)| *k)
}

/// The options every byte keyword shares, after a comma each.
fn byte_read(v: &mut String, r: &ByteRead) {
    if r.relative {
        v.push_str(",relative");
    }
    if r.endian == Endian::Little {
        v.push_str(",little");
    }
    if let Some(base) = r.string_base {
        let name = match base {
            16 => "hex",
            8 => "oct",
            _ => "dec",
        };
        let _ = write!(v, ",string,{name}");
    }
    if r.dce {
        v.push_str(",dce");
    }
    if let Some(m) = r.bitmask {
        let _ = write!(v, ",bitmask {}", m as i64);
    }
}

fn threshold(t: &Threshold) -> String {
    let mut v = String::new();
    if t.kind != ThresholdKind::DetectionFilter {
        let _ = write!(v, "type {}, ", t.kind);
    }
    let _ = write!(v, "track {}, count {}", t.track, t.count);
    if t.kind == ThresholdKind::Backoff {
        let _ = write!(v, ", multiplier {}", t.multiplier);
    } else {
        let _ = write!(v, ", seconds {}", t.seconds);
    }
    v
}

fn flag_letters(bits: u8) -> String {
    if bits == 0 {
        return "0".into();
    }
    TCP_FLAGS
        .iter()
        .filter(|(_, b)| bits & b != 0)
        .map(|(l, _)| *l)
        .collect()
}

/// `msg` text: a backslash before `\`, `"` and `;`.
fn escape_msg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '"' | ';') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A content's bytes: printable ASCII as itself, the rest (and `"`, `;`, `\`, `|`,
/// `:`) in `|hex|` runs.
fn escape_content(p: &[u8]) -> String {
    let mut out = String::with_capacity(p.len());
    let mut in_hex = false;
    for &b in p {
        let plain = (0x20..0x7f).contains(&b) && !b"\";\\|:".contains(&b);
        if plain {
            if in_hex {
                out.push('|');
                in_hex = false;
            }
            out.push(b as char);
        } else {
            if in_hex {
                out.push(' ');
            } else {
                out.push('|');
                in_hex = true;
            }
            let _ = write!(out, "{b:02X}");
        }
    }
    if in_hex {
        out.push('|');
    }
    out
}

/// A set's `type` option.
fn data_type(t: DataType) -> String {
    let name = match t {
        DataType::String => "string",
        DataType::Md5 => "md5",
        DataType::Sha256 => "sha256",
        DataType::Sha1 => "sha1",
        DataType::Ipv4 => "ipv4",
        DataType::Ip => "ip",
    };
    format!("type {name}")
}

/// `dcerpc.iface`'s value: the UUID as text, then the version's comparison (`=1`).
fn dce_iface(uuid: &[u8; 16], version: Option<Cmp>, any_frag: bool) -> String {
    let hex = |r: std::ops::Range<usize>| -> String { netsieve_wire::hex::lower(&uuid[r]) };
    let mut s = [hex(0..4), hex(4..6), hex(6..8), hex(8..10), hex(10..16)].join("-");
    match version {
        Some(Cmp::Eq(n)) => s.push_str(&format!(",={n}")),
        Some(c) => s.push_str(&format!(",{c}")),
        None => {}
    }
    if any_frag {
        s.push_str(",any_frag");
    }
    s
}

impl Display for Pick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pick::Any => f.write_str("any"),
            Pick::All => f.write_str("all"),
            Pick::At(i) => write!(f, "{i}"),
        }
    }
}

impl Display for Cmp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Cmp::Eq(a) => write!(f, "{a}"),
            Cmp::Ne(a) => write!(f, "!{a}"),
            Cmp::Lt(a) => write!(f, "<{a}"),
            Cmp::Le(a) => write!(f, "<={a}"),
            Cmp::Gt(a) => write!(f, ">{a}"),
            Cmp::Ge(a) => write!(f, ">={a}"),
            Cmp::Between(a, b) => write!(f, "{a}<>{b}"),
            // `a-b` reads a negative `a` as a sign: that range needs `<=>`.
            Cmp::Range(a, b) if a < 0 => write!(f, "{a}<=>{b}"),
            Cmp::Range(a, b) => write!(f, "{a}-{b}"),
            Cmp::Mask(m, x) => write!(f, "&{m}={x}"),
        }
    }
}

impl Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Num(n) => write!(f, "{n}"),
            Val::Var(v) => f.write_str(v),
        }
    }
}

impl Display for AddrExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddrExpr::Any => f.write_str("any"),
            AddrExpr::Net(ip, len) => {
                let full = if ip.is_ipv4() { 32 } else { 128 };
                if *len == full {
                    write!(f, "{ip}")
                } else {
                    write!(f, "{ip}/{len}")
                }
            }
            AddrExpr::Range(lo, hi) => write!(f, "{lo}-{hi}"),
            AddrExpr::Not(e) => write!(f, "!{e}"),
            AddrExpr::List(items) => list(f, items),
        }
    }
}

impl Display for PortExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortExpr::Any => f.write_str("any"),
            PortExpr::Range(lo, hi) if lo == hi => write!(f, "{lo}"),
            PortExpr::Range(lo, hi) => write!(f, "{lo}:{hi}"),
            PortExpr::Not(e) => write!(f, "!{e}"),
            PortExpr::List(items) => list(f, items),
        }
    }
}

fn list<T: Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    f.write_str("[")?;
    for (i, e) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{e}")?;
    }
    f.write_str("]")
}
