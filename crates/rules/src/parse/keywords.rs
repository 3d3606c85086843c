//! The keyword table: every option a rule may use, and what sets it up. This is the one
//! place to add a keyword (its setup function goes in the module of its group).

use std::collections::HashMap;
use std::sync::LazyLock;

use super::{Builder, Opt, ParseError, app, byte, content, flow, meta, packet, script, transform};
use crate::buffer::{AppBuffer, HeaderBuffer, Plain, Spelling};
use crate::rule::{Content, CsumLayer};

/// Sets an option up on the rule being built.
pub(super) type Setup = fn(&mut Builder, &Opt<'_>) -> Result<(), ParseError>;

/// Changes the content before it.
pub(super) type Modify = fn(&mut Content, &Opt<'_>) -> Result<(), ParseError>;

/// What a keyword does.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    /// Sets itself up on the rule.
    Setup(Setup),
    /// Modifies the last content (`nocase`, `depth`); a legacy buffer modifier may still
    /// follow it.
    Modifier(Modify),
    /// Names an application-layer buffer.
    Buffer(AppBuffer, Spelling),
    /// Names a packet header as a sticky buffer.
    Header(HeaderBuffer),
    /// Transforms the current list's buffer (a transform without arguments; those
    /// with arguments are set up by a function).
    Transform(Plain),
    /// A hint that does not change whether a rule matches: `prefilter` (use this option
    /// as the prefilter).
    Hint,
    /// Parses, and the engine does not evaluate it yet: the rule loads and is counted as
    /// not inspected.
    Unsupported,
}

/// Keywords with a setup of their own, by group.
const KEYWORDS: &[(&str, Kind)] = &[
    // Rule metadata and alert control.
    ("msg", Kind::Setup(meta::msg)),
    ("sid", Kind::Setup(meta::sid)),
    ("rev", Kind::Setup(meta::rev)),
    ("gid", Kind::Setup(meta::gid)),
    ("classtype", Kind::Setup(meta::classtype)),
    ("priority", Kind::Setup(meta::priority)),
    ("reference", Kind::Setup(meta::reference)),
    ("metadata", Kind::Setup(meta::metadata)),
    ("target", Kind::Setup(meta::target)),
    ("service", Kind::Setup(meta::service)),
    ("noalert", Kind::Setup(meta::noalert)),
    ("bypass", Kind::Setup(meta::bypass)),
    ("filestore", Kind::Setup(meta::filestore)),
    ("alert", Kind::Setup(meta::alert)),
    ("requires", Kind::Setup(meta::requires)),
    ("config", Kind::Setup(meta::config)),
    ("threshold", Kind::Setup(meta::threshold)),
    ("detection_filter", Kind::Setup(meta::detection_filter)),
    // Contents, pcre and the buffer-level checks.
    ("content", Kind::Setup(content::content)),
    ("uricontent", Kind::Setup(content::uricontent)),
    ("nocase", Kind::Modifier(content::nocase)),
    ("rawbytes", Kind::Modifier(content::rawbytes)),
    ("startswith", Kind::Modifier(content::startswith)),
    ("endswith", Kind::Modifier(content::endswith)),
    ("offset", Kind::Modifier(content::offset)),
    ("depth", Kind::Modifier(content::depth)),
    ("distance", Kind::Modifier(content::distance)),
    ("within", Kind::Modifier(content::within)),
    ("fast_pattern", Kind::Modifier(content::fast_pattern)),
    ("pcre", Kind::Setup(content::pcre)),
    ("isdataat", Kind::Setup(content::isdataat)),
    ("asn1", Kind::Setup(content::asn1)),
    ("dataset", Kind::Setup(content::dataset)),
    ("datarep", Kind::Setup(content::datarep)),
    ("base64_decode", Kind::Setup(content::base64_decode)),
    ("tls.subject", Kind::Setup(content::tls_legacy)),
    ("tls.issuerdn", Kind::Setup(content::tls_legacy)),
    ("tls.fingerprint", Kind::Setup(content::tls_legacy)),
    ("filename", Kind::Setup(content::file_legacy)),
    ("fileext", Kind::Setup(content::file_legacy)),
    ("pcrexform", Kind::Setup(transform::pcrexform)),
    ("xor", Kind::Setup(transform::xor)),
    ("from_base64", Kind::Setup(transform::from_base64)),
    ("gunzip", Kind::Setup(transform::gunzip)),
    ("zlib_deflate", Kind::Setup(transform::zlib_deflate)),
    ("luaxform", Kind::Setup(transform::luaxform)),
    ("bsize", Kind::Setup(content::bsize)),
    ("entropy", Kind::Setup(content::entropy)),
    ("bufferlen", Kind::Setup(content::bsize)),
    // Numbers read from the buffer.
    ("byte_test", Kind::Setup(byte::byte_test)),
    ("byte_jump", Kind::Setup(byte::byte_jump)),
    ("byte_extract", Kind::Setup(byte::byte_extract)),
    ("byte_math", Kind::Setup(byte::byte_math)),
    // Flow state.
    ("flow", Kind::Setup(flow::flow)),
    ("flowbits", Kind::Setup(flow::flowbits)),
    ("xbits", Kind::Setup(flow::xbits)),
    ("flowint", Kind::Setup(flow::flowint)),
    ("hostbits", Kind::Setup(flow::hostbits)),
    ("stream_size", Kind::Setup(flow::stream_size)),
    ("flow.age", Kind::Setup(flow::flow_age)),
    ("app-layer-protocol", Kind::Setup(flow::app_layer_protocol)),
    ("iprep", Kind::Setup(flow::iprep)),
    ("flow.pkts", Kind::Setup(flow::flow_count)),
    ("flow.bytes", Kind::Setup(flow::flow_count)),
    ("flow.pkts_toserver", Kind::Setup(flow::flow_count)),
    ("flow.pkts_toclient", Kind::Setup(flow::flow_count)),
    ("flow.bytes_toserver", Kind::Setup(flow::flow_count)),
    ("flow.bytes_toclient", Kind::Setup(flow::flow_count)),
    // Packet header fields.
    ("dsize", Kind::Setup(packet::dsize)),
    ("ttl", Kind::Setup(packet::ttl)),
    ("tcp.mss", Kind::Setup(packet::tcp_mss)),
    ("itype", Kind::Setup(packet::itype)),
    ("vlan.id", Kind::Setup(packet::vlan_id)),
    ("vlan.layers", Kind::Setup(packet::vlan_layers)),
    ("icode", Kind::Setup(packet::icode)),
    ("icmp_id", Kind::Setup(packet::icmp_id)),
    ("icmp_seq", Kind::Setup(packet::icmp_seq)),
    ("id", Kind::Setup(packet::ip_id)),
    ("seq", Kind::Setup(packet::seq)),
    ("tcp.seq", Kind::Setup(packet::seq)),
    ("ack", Kind::Setup(packet::ack)),
    ("tcp.ack", Kind::Setup(packet::ack)),
    ("window", Kind::Setup(packet::window)),
    ("tcp.window", Kind::Setup(packet::window)),
    ("icmpv6.mtu", Kind::Setup(packet::icmpv6_mtu)),
    ("ip_proto", Kind::Setup(packet::ip_proto)),
    ("flags", Kind::Setup(packet::flags)),
    ("tcp.flags", Kind::Setup(packet::flags)),
    ("sameip", Kind::Setup(packet::sameip)),
    ("ftpbounce", Kind::Setup(packet::ftpbounce)),
    ("decode-event", Kind::Setup(packet::decode_event)),
    ("stream-event", Kind::Setup(packet::stream_event)),
    ("app-layer-event", Kind::Setup(packet::app_layer_event)),
    ("ipopts", Kind::Setup(packet::ipopts)),
    // Buffers: back to the payload, and keywords over application buffers that are not
    // a buffer's name (the buffers themselves come from `AppBuffer`'s table).
    ("pkt_data", Kind::Setup(app::pkt_data)),
    ("absent", Kind::Setup(app::absent)),
    ("raw_data", Kind::Setup(app::pkt_data)),
    ("urilen", Kind::Setup(app::urilen)),
    ("frame", Kind::Setup(app::frame)),
    // Scripts.
    ("lua", Kind::Setup(script::lua)),
    ("luajit", Kind::Setup(script::lua)),
    ("prefilter", Kind::Hint),
    ("tag", Kind::Setup(meta::tag)),
];

/// Keywords that parse and that the engine does not evaluate yet.
const UNSUPPORTED: &[&str] = &[
    "ssl_state",
    "ssl_version",
    "fragbits",
    "fragoffset",
    "tos",
    "icmp_id_",
    "tls.store",
    "tls_cert_notbefore",
    "tls_cert_notafter",
    "tls_cert_expired",
    "tls_cert_valid",
    "filemagic",
    "file.magic",
    "geoip",
    "replace",
    "ssh.protoversion",
    "ssh.softwareversion",
    "rpc",
    "sd_pattern",
    "file_type",
    "bufferlen_",
    "rem",
    "pkthdr",
    "dhcp.leasetime",
    "ja4.hash",
    "decode_event",
    "app-layer-state",
    "template",
    "appid",
];

/// Every keyword, by name: the setups, the buffers' names, the transforms and the
/// unsupported keywords. Keyed with foldhash: every option of every rule is looked up
/// (SipHash cost 3% of loading ET Open).
static TABLE: LazyLock<HashMap<&'static str, Kind, foldhash::fast::RandomState>> =
    LazyLock::new(|| {
        let mut t = HashMap::default();
        t.extend(KEYWORDS.iter().copied());
        for &buf in AppBuffer::ALL {
            for &(name, spelling) in buf.keywords() {
                t.insert(name, Kind::Buffer(buf, spelling));
            }
        }
        for &h in HeaderBuffer::ALL {
            t.insert(h.name(), Kind::Header(h));
        }
        for &tr in Plain::ALL {
            t.insert(tr.name(), Kind::Transform(tr));
        }
        for &c in CsumLayer::ALL {
            t.insert(c.name(), Kind::Setup(packet::checksum));
        }
        for &name in UNSUPPORTED {
            t.insert(name, Kind::Unsupported);
        }
        t
    });

pub(super) fn lookup(name: &str) -> Option<Kind> {
    TABLE.get(name).copied()
}

/// What a keyword is, for listing them (`netsieve scan --list-keywords`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeywordClass {
    /// An option the parser sets up (a match, a condition, metadata).
    Option,
    /// Names an application-layer buffer.
    Buffer(AppBuffer),
    Transform,
    /// Changes nothing a rule matches (`prefilter`, `tag`).
    Hint,
    /// Parses; a rule using it is not inspected.
    Unsupported,
}

/// Every keyword the parser knows, by name.
pub fn keyword_list() -> Vec<(&'static str, KeywordClass)> {
    let mut v: Vec<(&'static str, KeywordClass)> = TABLE
        .iter()
        .map(|(&name, kind)| {
            let class = match kind {
                Kind::Setup(_) | Kind::Modifier(_) | Kind::Header(_) => KeywordClass::Option,
                Kind::Buffer(b, _) => KeywordClass::Buffer(*b),
                Kind::Transform(_) => KeywordClass::Transform,
                Kind::Hint => KeywordClass::Hint,
                Kind::Unsupported => KeywordClass::Unsupported,
            };
            (name, class)
        })
        .collect();
    v.sort_unstable_by_key(|(name, _)| *name);
    v
}

/// Whether `name` is a rule keyword netsieve reads (evaluated or not).
pub fn is_keyword(name: &str) -> bool {
    TABLE.contains_key(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No name is in the table twice (a later entry would hide an earlier one).
    #[test]
    fn each_keyword_once() {
        let buffers: usize = AppBuffer::ALL.iter().map(|b| b.keywords().len()).sum();
        let all = KEYWORDS.len()
            + buffers
            + HeaderBuffer::ALL.len()
            + Plain::ALL.len()
            + CsumLayer::ALL.len()
            + UNSUPPORTED.len();
        assert_eq!(TABLE.len(), all);
    }
}
