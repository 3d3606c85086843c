//! The `alert` record: the header every record shares, the rule, and what the alert's
//! packet, flow and transaction add, in the order Suricata 8 writes them.

use std::collections::BTreeMap;

use base64::Engine;
use netsieve_detect::log::AppMeta;
use netsieve_detect::{Alert, FrameHit, RuleSet, Verdict};
use netsieve_packet::Direction;
use netsieve_rules::References;
use serde::Serialize;

use super::{
    AlertMeta, EveOptions, Traffic, fileinfo, ip_str, linktype_name, proto_name, timestamp, tx,
};

#[derive(Serialize)]
pub(super) struct Record<'a> {
    timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    flow_id: Option<u64>,
    /// None for an alert of a flow-end pseudo packet, which was not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pcap_cnt: Option<u64>,
    event_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    vlan: Option<Vec<u16>>,
    /// The addresses, ports and protocol: none for a packet without an IP layer.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    ip: Option<IpFields>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icmp_type: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icmp_code: Option<u8>,
    pkt_src: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ether: Option<Ether>,
    #[serde(skip_serializing_if = "Option::is_none")]
    traffic: Option<Traffic<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<super::metadata::Object<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tx_id: Option<u64>,
    alert: Rule<'a>,
    /// A firewall rule's alert: its hook and actions.
    #[serde(skip_serializing_if = "Option::is_none")]
    firewall: Option<Firewall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tunnel: Option<Tunnel>,
    /// The transaction's object, under its protocol's name (`http`, `dns`, `tls`).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    app: Option<tx::App<'a>>,
    /// The files of the transaction (an SMTP mail's attachments).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    files: Vec<fileinfo::Object<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    app_proto: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    direction: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    flow: Option<Flow>,
    /// The frame a frame rule matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<Frame>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload_printable: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    packet: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    packet_info: Option<PacketInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<VerdictInfo>,
    /// The capture file the packet came from (`outputs.eve-log.pcap-file`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pcap_filename: Option<&'a str>,
}

/// A packet's addresses, ports and protocol, as an alert's record (or a decoder
/// anomaly's) writes them.
#[derive(Clone, Serialize)]
pub(super) struct IpFields {
    src_ip: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    src_port: Option<u16>,
    dest_ip: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    dest_port: Option<u16>,
    proto: String,
    ip_v: u8,
}

impl IpFields {
    fn of(al: &Alert) -> Option<IpFields> {
        if al.without_ip {
            return None;
        }
        let has_ports = netsieve_wire::ip_proto::has_ports(al.proto);
        Some(IpFields {
            src_ip: ip_str(al.src),
            src_port: has_ports.then_some(al.sport),
            dest_ip: ip_str(al.dst),
            dest_port: has_ports.then_some(al.dport),
            proto: proto_name(al.proto),
            ip_v: if al.src.is_ipv4() { 4 } else { 6 },
        })
    }

    /// Packet `p`'s; `None` without an IP layer.
    pub fn of_packet(p: &netsieve_packet::Packet) -> Option<IpFields> {
        let ip = p.ip?;
        let ends = super::Endpoints::of(p)?;
        Some(IpFields {
            src_ip: ends.src_ip.to_string(),
            src_port: ends.src_port,
            dest_ip: ends.dest_ip.to_string(),
            dest_port: ends.dest_port,
            proto: proto_name(ip.proto),
            ip_v: if ip.src.is_ipv4() { 4 } else { 6 },
        })
    }
}

/// The address an HTTP alert's X-Forwarded-For header gives the client, as `xff`'s
/// deployment reads it: the first of the list (forward) or the last (reverse).
fn xff_address(al: &Alert, opts: EveOptions) -> Option<String> {
    let AppMeta::Http(h) = &al.tx.as_ref()?.app else {
        return None;
    };
    let list = h.xff.as_deref()?;
    let pick = match opts.xff?.reverse {
        true => list.rsplit(',').next(),
        false => list.split(',').next(),
    };
    let ip: std::net::IpAddr = pick?.trim().parse().ok()?;
    Some(ip_str(ip))
}

/// An Ethernet frame's header (`outputs.eve-log.ethernet`).
#[derive(Serialize)]
pub(super) struct Ether {
    ether_type: u16,
    src_mac: String,
    dest_mac: String,
}

impl Ether {
    pub fn of(h: &[u8; 14]) -> Ether {
        let mac = |m: &[u8]| netsieve_wire::hex::lower_sep(m, ':');
        Ether {
            ether_type: u16::from_be_bytes([h[12], h[13]]),
            src_mac: mac(&h[6..12]),
            dest_mac: mac(&h[..6]),
        }
    }
}

/// Where a firewall rule alerted: its hook (none for protocols whose states have no
/// names of their own) and its actions as written.
#[derive(Serialize)]
struct Firewall<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    hook: Option<&'a str>,
    policy: &'a str,
}

/// The rule that matched (EVE's `alert` object).
#[derive(Serialize)]
pub(super) struct Rule<'a> {
    action: &'static str,
    /// `fw` for a firewall rule's alert.
    #[serde(skip_serializing_if = "Option::is_none")]
    engine: Option<&'static str>,
    gid: u32,
    signature_id: u32,
    rev: u32,
    signature: &'a str,
    category: &'a str,
    severity: u8,
    /// With the rule's `target` keyword: the attacker's and the target's side.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<Endpoint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<Endpoint>,
    /// The rule's `metadata` keyword: each key with its values, keys sorted.
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<BTreeMap<&'a str, Vec<&'a str>>>,
    /// The objects JSON datasets gave the alert, by context key.
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<BTreeMap<&'a str, Box<serde_json::value::RawValue>>>,
    /// An HTTP alert's X-Forwarded-For address (`xff.mode: extra-data`).
    #[serde(skip_serializing_if = "Option::is_none")]
    xff: Option<String>,
    /// The rule's references as URLs (`metadata.rule.reference`).
    #[serde(skip_serializing_if = "Option::is_none")]
    references: Option<Vec<String>>,
    /// The rule's text (`metadata.rule.raw`).
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<&'a str>,
}

impl<'a> Rule<'a> {
    /// The `alert` object of rule `sig` of `set`; `blocked` when it dropped its packet.
    pub(super) fn of(set: &'a RuleSet, sig: u32, blocked: bool) -> Rule<'a> {
        let s = set.sig(sig);
        let r = &s.rule;
        Rule {
            action: if blocked { "blocked" } else { "allowed" },
            engine: r.firewall.then_some("fw"),
            gid: r.gid,
            signature_id: r.sid,
            rev: r.rev,
            signature: &r.msg,
            category: &s.category,
            severity: s.severity,
            source: None,
            target: None,
            metadata: (!r.metadata.is_empty()).then(|| metadata(&r.metadata)),
            context: None,
            xff: None,
            references: None,
            rule: r.text.as_deref(),
        }
    }

    /// As `meta` asks: without the rule's metadata, with its references as the
    /// systems `refs` names give them.
    fn with_meta(
        mut self,
        set: &RuleSet,
        sig: u32,
        (meta, refs): (AlertMeta, Option<&References>),
    ) -> Rule<'a> {
        if !meta.rule {
            self.metadata = None;
        }
        if let Some(t) = refs.filter(|_| meta.reference) {
            let urls: Vec<String> = set
                .sig(sig)
                .rule
                .references
                .iter()
                .filter_map(|r| t.url(r))
                .collect();
            self.references = (!urls.is_empty()).then_some(urls);
        }
        self
    }

    /// With the objects JSON datasets gave alert `al` (`context`).
    fn with_context(mut self, al: &'a Alert) -> Rule<'a> {
        let raw = |t: &str| serde_json::value::RawValue::from_string(t.to_string()).ok();
        let context: BTreeMap<_, _> = al
            .context
            .iter()
            .filter_map(|(k, v)| Some((&**k, raw(v)?)))
            .collect();
        self.context = (!context.is_empty()).then_some(context);
        self
    }

    /// The `source` and `target` objects of a rule with `target`: the alert's packet's
    /// destination is the target for `target:dest_ip`, its source for `src_ip`.
    fn with_target(mut self, set: &RuleSet, al: &Alert) -> Rule<'a> {
        let Some(t) = set.sig(al.sig).rule.target.filter(|_| !al.without_ip) else {
            return self;
        };
        let src = Endpoint {
            ip: ip_str(al.src),
            port: al.sport,
        };
        let dst = Endpoint {
            ip: ip_str(al.dst),
            port: al.dport,
        };
        let (source, target) = match t {
            netsieve_rules::Target::DestIp => (src, dst),
            netsieve_rules::Target::SrcIp => (dst, src),
        };
        self.source = Some(source);
        self.target = Some(target);
        self
    }
}

/// One side of an alert: an address and a port.
#[derive(Serialize)]
struct Endpoint {
    ip: String,
    port: u16,
}

/// The tunnel the packet came out of, and the packet that carried it (Suricata writes
/// the capture's packet number here, not at the top, for a tunnelled packet).
#[derive(Serialize)]
struct Tunnel {
    src_ip: String,
    src_port: u16,
    dest_ip: String,
    dest_port: u16,
    proto: String,
    depth: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pcap_cnt: Option<u64>,
    pkt_src: &'static str,
}

/// The frame a frame rule matched, with its bytes.
#[derive(Serialize)]
struct Frame {
    #[serde(rename = "type")]
    ty: &'static str,
    id: u64,
    direction: &'static str,
    /// None for a datagram's frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_offset: Option<u64>,
    length: u64,
    payload: String,
    payload_printable: String,
    complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    tx_id: Option<u64>,
}

impl Frame {
    fn of(h: &FrameHit) -> Frame {
        let f = &h.frame;
        Frame {
            ty: f.ty.short(),
            id: f.id,
            direction: match f.dir {
                Direction::ToServer => "toserver",
                Direction::ToClient => "toclient",
            },
            stream_offset: (!f.datagram).then_some(f.start),
            length: f.len,
            payload: base64::engine::general_purpose::STANDARD.encode(&h.bytes),
            payload_printable: printable(&h.bytes),
            complete: h.complete(),
            tx_id: f.tx,
        }
    }
}

/// Bytes as text: what is not printable ASCII becomes a dot.
fn printable(b: &[u8]) -> String {
    b.iter()
        .map(|&c| {
            if c.is_ascii_graphic() || c == b' ' {
                c as char
            } else {
                '.'
            }
        })
        .collect()
}

/// The flow's counters as of the alert's packet.
#[derive(Serialize)]
struct Flow {
    pkts_toserver: u64,
    pkts_toclient: u64,
    bytes_toserver: u64,
    bytes_toclient: u64,
    start: String,
    src_ip: String,
    dest_ip: String,
    src_port: u16,
    dest_port: u16,
}

/// `packet_info`: the link type of a record's `packet`.
#[derive(Serialize)]
pub(super) struct PacketInfo {
    linktype: u32,
    linktype_name: &'static str,
}

impl PacketInfo {
    pub(super) fn of(linktype: u32) -> PacketInfo {
        PacketInfo {
            linktype,
            linktype_name: linktype_name(linktype),
        }
    }
}

#[derive(Serialize)]
struct VerdictInfo {
    action: &'static str,
}

impl<'a> Record<'a> {
    /// The record of alert `al`; `file`: the capture file it came from, when named.
    pub(super) fn new(
        set: &'a RuleSet,
        al: &'a Alert,
        (opts, refs): (EveOptions, Option<&References>),
        file: Option<&'a str>,
    ) -> Record<'a> {
        let pkt_src = match &al.tunnel {
            Some(t) if t.src.is_ipv4() => "ipv4 tunnel",
            Some(_) => "ipv6 tunnel",
            None if al.pseudo.is_some() => "stream (flow timeout)",
            None => "wire/pcap",
        };
        let mut rec = Record {
            timestamp: timestamp(al.ts),
            flow_id: al.flow_id,
            pcap_cnt: (al.pseudo.is_none() && al.tunnel.is_none()).then_some(al.packet),
            event_type: "alert",
            vlan: (al.vlan[0] != 0).then(|| al.vlan.iter().copied().filter(|&v| v != 0).collect()),
            ip: IpFields::of(al),
            icmp_type: al.icmp.map(|i| i.0),
            icmp_code: al.icmp.map(|i| i.1),
            pkt_src,
            ether: al.ether.as_ref().filter(|_| opts.ethernet).map(Ether::of),
            traffic: Traffic::of(set, &al.traffic),
            metadata: super::metadata::Object::of(al.metadata.as_deref(), set),
            tx_id: None,
            alert: Rule::of(set, al.sig, al.blocked)
                .with_target(set, al)
                .with_context(al)
                .with_meta(set, al.sig, (opts.alert_meta, refs)),
            firewall: al.firewall.as_deref().map(|f| Firewall {
                hook: f.hook.as_deref(),
                policy: &f.policy,
            }),
            tunnel: al.tunnel.as_ref().map(|t| Tunnel {
                src_ip: ip_str(t.src),
                src_port: t.sport,
                dest_ip: ip_str(t.dst),
                dest_port: t.dport,
                proto: proto_name(t.proto),
                depth: t.depth,
                pcap_cnt: al.pseudo.is_none().then_some(al.packet),
                pkt_src: "wire/pcap",
            }),
            app: None,
            files: Vec::new(),
            app_proto: al.app_proto.map(|p| p.name()),
            direction: al.dir.map(|d| match d {
                Direction::ToServer => "to_server",
                Direction::ToClient => "to_client",
            }),
            flow: al
                .flow
                .as_ref()
                .filter(|_| opts.alert_meta.flow)
                .map(|f| Flow {
                    pkts_toserver: f.pkts[Direction::ToServer],
                    pkts_toclient: f.pkts[Direction::ToClient],
                    bytes_toserver: f.bytes[Direction::ToServer],
                    bytes_toclient: f.bytes[Direction::ToClient],
                    start: timestamp(f.start),
                    src_ip: ip_str(f.client.0),
                    dest_ip: ip_str(f.server.0),
                    src_port: f.client.1,
                    dest_port: f.server.1,
                }),
            frame: al.frame.as_deref().map(Frame::of),
            payload: None,
            payload_printable: None,
            stream: None,
            packet: None,
            packet_info: None,
            verdict: opts.verdict.then_some(VerdictInfo {
                action: match al.verdict {
                    Verdict::Alert => "alert",
                    Verdict::Pass => "pass",
                    Verdict::Drop => "drop",
                },
            }),
            pcap_filename: file,
        };
        if let (Some(x), Some(ip)) = (opts.xff, xff_address(al, opts)) {
            // The client's side of the record: the source to the server, else the
            // destination.
            match (x.overwrite, al.dir, rec.ip.as_mut()) {
                (true, Some(Direction::ToClient), Some(f)) => f.dest_ip = ip,
                (true, _, Some(f)) => f.src_ip = ip,
                _ => rec.alert.xff = Some(ip),
            }
        }
        if let Some(t) = al.tx.as_ref().filter(|_| opts.alert_meta.app) {
            rec.tx_id = Some(t.tx_id);
            rec.files = t
                .app
                .files(al.dir)
                .iter()
                .map(fileinfo::Object::of)
                .collect();
            rec.app = Some(tx::App {
                tx: t,
                ja3: set.uses_ja3(),
                email_fields: opts.email_fields,
                dir: al.dir,
            });
        }
        if let Some(b) = &al.bytes {
            rec.add_bytes(&b.0, &b.1, al, opts);
        }
        rec
    }

    /// The inspected buffer and the packet, as the alert options ask.
    fn add_bytes(&mut self, payload: &[u8], packet: &[u8], al: &Alert, opts: EveOptions) {
        let b64 = base64::engine::general_purpose::STANDARD;
        if opts.payload {
            self.payload = Some(b64.encode(payload));
        }
        if opts.payload_printable {
            self.payload_printable = Some(printable(payload));
        }
        if opts.payload || opts.payload_printable {
            self.stream = Some(u8::from(al.stream));
        }
        if opts.packet {
            if !packet.is_empty() {
                self.packet = Some(b64.encode(packet));
            }
            self.packet_info = Some(PacketInfo::of(al.linktype));
        }
    }
}

/// The rule's metadata items (`key value`) grouped by key, each key's values in the
/// reverse of the rule's order, as Suricata 8 writes them.
fn metadata(items: &netsieve_rules::Strings) -> BTreeMap<&str, Vec<&str>> {
    let mut meta: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for m in items.iter() {
        let mut it = m.splitn(2, char::is_whitespace);
        if let (Some(k), Some(v)) = (it.next(), it.next()) {
            // Suricata lists a key's values last first.
            meta.entry(k).or_default().insert(0, v.trim());
        }
    }
    meta
}
