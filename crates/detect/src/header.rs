//! Header checks: whether a candidate rule's header (protocol, addresses, ports, flow
//! options) and its conditions on the packet's headers (`ttl`, `flags`, `icmp_id`,
//! `tcp.mss`, checksums, `app-layer-protocol`, ...) hold on a packet. They are cheap and
//! run before a rule's payload is evaluated (see [`crate::engine`]).

use std::borrow::Cow;
use std::net::IpAddr;

use netsieve_applayer::AppProto;
use netsieve_packet::decode::{Packet, ipopt};
use netsieve_packet::{AppEvent, Direction, L4, PerDir, StreamEvent};
use netsieve_rules::{
    AlMode, AlProto, Cmp, Cond, CsumLayer, FlagsMode, HeaderBuffer, StreamSide, VlanLayer,
};

use crate::app::transform;
use crate::engine::FlowCounts;
use crate::eval::{Ctx, matches};
use crate::log::AppName;
use crate::ruleset::{HdrList, Sig, SigProto};

/// The packet context rules are checked against: made once per packet by the
/// detector's setup phase, read by every phase after it.
pub(crate) struct Pkt<'a> {
    pub(crate) p: &'a Packet,
    pub(crate) src: IpAddr,
    pub(crate) dst: IpAddr,
    pub(crate) sport: u16,
    pub(crate) dport: u16,
    pub(crate) proto: u8,
    pub(crate) dir: Option<Direction>,
    pub(crate) established: bool,
    pub(crate) flow_id: Option<u64>,
    pub(crate) stream_sizes: Option<(u64, u64)>,
    /// The flow's application protocol, when known.
    pub(crate) app: Option<AppProto>,
    /// The protocol the flow spoke before it switched to `app` (HTTP before HTTP/2).
    pub(crate) app_orig: Option<AppProto>,
    /// What detection made of it, for the log.
    pub(crate) app_name: Option<AppName>,
    /// The protocol is known in each direction (`app-layer-protocol`'s modes).
    pub(crate) app_parsed: PerDir<bool>,
    pub(crate) flow: Option<FlowCounts>,
    /// Application-layer events raised on what this packet brought.
    pub(crate) app_events: Vec<AppEvent>,
    /// Stream events the packet raised.
    pub(crate) stream_events: Vec<StreamEvent>,
}

pub(crate) fn header_ok(s: &Sig, c: &Pkt<'_>) -> bool {
    let p = c.p;
    // A packet whose transport header did not decode has its IP protocol's.
    let proto = p.ip.map_or(0, |ip| ip.proto);
    let proto_ok = match s.proto {
        SigProto::Ip => true,
        SigProto::Tcp => matches!((p.l4, proto), (L4::Tcp(_), _) | (L4::None, 6)),
        SigProto::Udp => matches!((p.l4, proto), (L4::Udp { .. }, _) | (L4::None, 17)),
        SigProto::Icmp => matches!(p.l4, L4::Icmp { .. }),
        SigProto::Sctp => matches!((p.l4, proto), (L4::Sctp { .. }, _) | (L4::None, 132)),
    };
    if !proto_ok {
        return false;
    }
    if let Some(a) = s.app
        && !c.app.is_some_and(|f| f.carries(a))
    {
        return false;
    }
    // Ports first: they reject most candidates, and cost less than addresses.
    let r = &s.rule;
    let fwd = s.dport.contains(c.dport)
        && s.sport.contains(c.sport)
        && s.src.contains(c.src)
        && s.dst.contains(c.dst);
    let ok = fwd
        || (r.bidirectional
            && s.dport.contains(c.sport)
            && s.sport.contains(c.dport)
            && s.src.contains(c.dst)
            && s.dst.contains(c.src));
    if !ok {
        return false;
    }
    let f = &r.flow;
    if f.established && !c.established {
        return false;
    }
    if f.not_established && c.established {
        return false;
    }
    if f.to_server && c.dir != Some(Direction::ToServer) {
        return false;
    }
    if f.to_client && c.dir != Some(Direction::ToClient) {
        return false;
    }
    let ip = p.ip.expect("checked by the caller");
    if f.only_frag && !ip.reassembled {
        return false;
    }
    if f.no_frag && ip.reassembled {
        return false;
    }
    r.conds.iter().all(|cond| cond_ok(cond, c))
}

impl HdrList {
    /// Whether the list holds on the packet's header (transformed), which it must have.
    pub(crate) fn holds(&self, p: &Packet, cx: &mut Ctx) -> bool {
        header(p, self.buf).is_some_and(|b| {
            let b = transform(Cow::Borrowed(b), &self.transforms);
            matches(&self.matches, &b, cx)
        })
    }
}

/// The bytes of header `h` of packet `p`, options (IPv6: extension headers) included,
/// if it has that header (a reassembled datagram has no IP header of its own).
fn header(p: &Packet, h: HeaderBuffer) -> Option<&[u8]> {
    let ip = p.ip?;
    let l3 = (!ip.reassembled).then(|| p.data.get(p.l3_at..)).flatten();
    match h {
        HeaderBuffer::Ipv4 if ip.src.is_ipv4() => {
            let l3 = l3?;
            l3.get(..usize::from(l3.first()? & 0x0f) * 4)
        }
        // With its extension headers, up to the transport header.
        HeaderBuffer::Ipv6 if ip.src.is_ipv6() => {
            let end = match p.l4 {
                L4::None => 40,
                _ => p.l4_at.checked_sub(p.l3_at)?,
            };
            l3?.get(..end.max(40))
        }
        HeaderBuffer::Tcp if matches!(p.l4, L4::Tcp(_)) => p.data.get(p.l4_at..p.payload.start),
        HeaderBuffer::Udp if matches!(p.l4, L4::Udp { .. }) => p.data.get(p.l4_at..p.l4_at + 8),
        HeaderBuffer::Icmpv4 if matches!(p.l4, L4::Icmp { v6: false, .. }) => {
            // As Suricata counts it: 8 bytes, and a router advertisement's addresses.
            let icmp = p.data.get(p.l4_at..)?;
            let mut len = 8;
            if let [9, _, _, _, n, size, ..] = *icmp {
                let addrs = usize::from(n) * usize::from(size) * 4;
                if icmp.len() >= len + addrs {
                    len += addrs;
                }
            }
            icmp.get(..len)
        }
        HeaderBuffer::Icmpv6 if matches!(p.l4, L4::Icmp { v6: true, .. }) => {
            p.data.get(p.l4_at..p.l4_at + 8)
        }
        // The addresses, from the header (4 or 16 bytes).
        HeaderBuffer::IpSrc | HeaderBuffer::IpDst => {
            let l3 = l3?;
            let (v4, v6) = if h == HeaderBuffer::IpSrc {
                (12..16, 8..24)
            } else {
                (16..20, 24..40)
            };
            l3.get(if ip.src.is_ipv4() { v4 } else { v6 })
        }
        _ => None,
    }
}

/// Whether the checksum of header `layer` of packet `p` is right; `None` when the packet
/// has no such header (or none of its own: a reassembled datagram).
fn checksum_ok(p: &Packet, layer: CsumLayer) -> Option<bool> {
    use netsieve_packet::checksum::{pseudo, valid};
    let ip = p.ip?;
    let v4 = ip.src.is_ipv4();
    // The transport segment, summed with the pseudo-header of `proto` (none for ICMPv4).
    let segment = |proto: Option<u8>| {
        let s = p.data.get(p.l4_at..p.payload.end)?;
        let init = proto.map_or(0, |n| pseudo(ip.src, ip.dst, n, s.len()));
        Some(valid(s, init))
    };
    match (layer, p.l4) {
        (CsumLayer::Ipv4, _) if v4 => Some(valid(header(p, HeaderBuffer::Ipv4)?, 0)),
        (CsumLayer::Tcpv4, L4::Tcp(_)) if v4 => segment(Some(6)),
        (CsumLayer::Tcpv6, L4::Tcp(_)) if !v4 => segment(Some(6)),
        (CsumLayer::Udpv4 | CsumLayer::Udpv6, L4::Udp { .. })
            if v4 == (layer == CsumLayer::Udpv4) =>
        {
            // An IPv4 datagram without a checksum is neither (measured on Suricata 8).
            let field = p.data.get(p.l4_at + 6..p.l4_at + 8)?;
            if v4 && field == [0, 0] {
                return None;
            }
            segment(Some(17))
        }
        (CsumLayer::Icmpv4, L4::Icmp { v6: false, .. }) => segment(None),
        (CsumLayer::Icmpv6, L4::Icmp { v6: true, .. }) => segment(Some(58)),
        _ => None,
    }
}

/// The value of a TCP packet's MSS option (kind 2, length 4), if it has one.
fn tcp_mss(p: &Packet) -> Option<u16> {
    let opts = header(p, HeaderBuffer::Tcp)?.get(20..)?;
    let mut i = 0;
    while let Some(&kind) = opts.get(i) {
        match kind {
            0 => return None,
            1 => i += 1,
            _ => {
                let len = usize::from(*opts.get(i + 1)?);
                if kind == 2 && len == 4 {
                    return Some(u16::from_be_bytes([*opts.get(i + 2)?, *opts.get(i + 3)?]));
                }
                if len < 2 {
                    return None;
                }
                i += len;
            }
        }
    }
    None
}

/// The MTU of an ICMPv6 Packet Too Big message (type 2).
fn icmpv6_mtu(p: &Packet) -> Option<u32> {
    let L4::Icmp {
        itype: 2, v6: true, ..
    } = p.l4
    else {
        return None;
    };
    let h = header(p, HeaderBuffer::Icmpv6)?;
    Some(u32::from_be_bytes(h.get(4..8)?.try_into().ok()?))
}

/// The packet's VLAN ids, outermost first.
fn vlan_ids(p: &Packet) -> &[u16] {
    let n = p.vlan.iter().take_while(|&&v| v != 0).count();
    &p.vlan[..n]
}

/// `cmp` over a client's and a server's count, as `side` asks.
fn sides_ok(side: StreamSide, cmp: Cmp, client: u64, server: u64) -> bool {
    let t = |v: u64| cmp_u(cmp, v);
    match side {
        StreamSide::Client => t(client),
        StreamSide::Server => t(server),
        StreamSide::Both => t(client) && t(server),
        StreamSide::Either => t(client) || t(server),
    }
}

fn cond_ok(cond: &Cond, c: &Pkt<'_>) -> bool {
    let p = c.p;
    let ip = p.ip.expect("checked by the caller");
    match cond {
        Cond::Dsize(cmp) => cmp.test(p.payload.len() as i64),
        Cond::Ttl(cmp) => cmp.test(ip.ttl as i64),
        Cond::TcpMss(cmp) => tcp_mss(p).is_some_and(|m| cmp.test(i64::from(m))),
        Cond::TcpWindow { negated, size } => {
            matches!(p.l4, L4::Tcp(t) if (t.window == *size) != *negated)
        }
        Cond::Icmpv6Mtu(cmp) => icmpv6_mtu(p).is_some_and(|m| cmp.test(i64::from(m))),
        Cond::Itype(cmp) => matches!(p.l4, L4::Icmp { itype, .. } if cmp.test(itype as i64)),
        Cond::VlanId { cmp, layer } => {
            let ids = vlan_ids(p);
            let test = |v: &u16| cmp.test(i64::from(*v));
            match *layer {
                VlanLayer::Any => ids.iter().any(test),
                VlanLayer::All => !ids.is_empty() && ids.iter().all(test),
                VlanLayer::At(n) => {
                    let at = if n < 0 {
                        ids.len() as i64 + i64::from(n)
                    } else {
                        i64::from(n)
                    };
                    usize::try_from(at)
                        .ok()
                        .and_then(|i| ids.get(i))
                        .is_some_and(test)
                }
            }
        }
        Cond::VlanLayers(cmp) => cmp.test(vlan_ids(p).len() as i64),
        Cond::Icode(cmp) => matches!(p.l4, L4::Icmp { icode, .. } if cmp.test(icode as i64)),
        Cond::IcmpId(v) => {
            matches!(p.l4, L4::Icmp { id, itype, v6, .. } if id == *v && echo_like(itype, v6))
        }
        Cond::IcmpSeq(v) => {
            matches!(p.l4, L4::Icmp { seq, itype, v6, .. } if seq == *v && echo_like(itype, v6))
        }
        Cond::IpId(v) => ip.src.is_ipv4() && ip.id == u32::from(*v),
        Cond::TcpSeq(v) => matches!(p.l4, L4::Tcp(t) if t.seq == *v),
        Cond::TcpAck(v) => matches!(p.l4, L4::Tcp(t) if t.ack == *v),
        Cond::IpProto { negated, cmp } => cmp.test(ip.proto as i64) != *negated,
        Cond::Flags { mode, bits, ignore } => {
            let L4::Tcp(t) = p.l4 else { return false };
            let f = t.flags & !ignore;
            match mode {
                FlagsMode::Exact => f == *bits,
                FlagsMode::All => f & bits == *bits,
                FlagsMode::Any => f & bits != 0,
                FlagsMode::Not => f & bits == 0,
            }
        }
        Cond::SameIp => c.src == c.dst,
        Cond::FtpBounce => ftp_bounce(p.payload(), c.src),
        Cond::DecodeEvent(e) => p.events.contains(e),
        Cond::AppEvent(e) => c.app_events.contains(e),
        Cond::StreamEvent(e) => c.stream_events.contains(e),
        Cond::StreamSize { side, cmp } => c
            .stream_sizes
            .is_some_and(|(cl, sv)| sides_ok(*side, *cmp, cl, sv)),
        Cond::Checksum { layer, valid } => checksum_ok(p, *layer) == Some(*valid),
        Cond::AppLayerProtocol {
            negated,
            proto,
            mode,
        } => app_layer_protocol_ok(c, *negated, *proto, *mode),
        // The category resolved at load.
        Cond::IpRep { side, id, cmp, .. } => crate::iprep::matches(*side, *id, *cmp, c.src, c.dst),
        Cond::FlowAge(cmp) => c.flow.is_some_and(|f| {
            let age = p.ts.saturating_sub(f.start).as_secs();
            cmp_u(*cmp, age)
        }),
        Cond::FlowCount { bytes, side, cmp } => c.flow.is_some_and(|f| {
            let n = if *bytes { f.bytes } else { f.pkts };
            // The parser reads `toserver` as the server's side, `toclient` as the client's.
            sides_ok(*side, *cmp, n[Direction::ToClient], n[Direction::ToServer])
        }),
        Cond::IpOpts(name) => {
            let bit = match name.as_str() {
                "rr" => ipopt::RR,
                "eol" => ipopt::EOL,
                "nop" => ipopt::NOP,
                "ts" => ipopt::TS,
                "sec" => ipopt::SEC,
                "esec" => ipopt::ESEC,
                "lsrr" | "lsrre" => ipopt::LSRR,
                "ssrr" => ipopt::SSRR,
                "satid" => ipopt::SATID,
                _ => u16::MAX,
            };
            ip.opts & bit != 0
        }
    }
}

/// Whether `payload` holds an FTP `PORT h1,h2,h3,h4,p1,p2` command (a line of it,
/// case-insensitive) whose address is not `src`, the sender's.
/// `app-layer-protocol`: the protocol `mode` reads (per direction: known once that
/// direction's bytes were parsed) is `proto`, or with `negated` a known one that is
/// not.
fn app_layer_protocol_ok(c: &Pkt<'_>, negated: bool, proto: AlProto, mode: AlMode) -> bool {
    let failed = c.app_name == Some(AppName::Failed);
    let flow_proto = || match c.app {
        _ if failed => AlProto::Failed,
        Some(p) => al_proto(p),
        None => AlProto::Unknown,
    };
    let in_dir = |d: Direction| match c.app {
        _ if failed => AlProto::Failed,
        Some(p) if c.app_parsed[d] => al_proto(p),
        _ => AlProto::Unknown,
    };
    let is = |seen: AlProto| match (negated, seen) {
        (false, s) => s == proto,
        (true, AlProto::Unknown) => false,
        (true, s) => s != proto,
    };
    match mode {
        AlMode::Direction => is(in_dir(c.dir.unwrap_or(Direction::ToServer))),
        AlMode::ToServer => is(in_dir(Direction::ToServer)),
        AlMode::ToClient => is(in_dir(Direction::ToClient)),
        AlMode::Either => is(in_dir(Direction::ToServer)) || is(in_dir(Direction::ToClient)),
        AlMode::Final => is(flow_proto()),
        AlMode::Original => match c.app_orig {
            Some(p) if !failed => is(al_proto(p)),
            _ => is(flow_proto()),
        },
    }
}

/// The `app-layer-protocol` value of protocol `p`.
fn al_proto(p: AppProto) -> AlProto {
    static INDEX: std::sync::OnceLock<Vec<Option<u8>>> = std::sync::OnceLock::new();
    let index = INDEX.get_or_init(|| {
        AppProto::ALL
            .iter()
            .map(|p| netsieve_rules::app_protocol_index(p.name()))
            .collect()
    });
    // `ALL` lists the protocols in declaration order.
    match index.get(p as usize).copied().flatten() {
        Some(i) => AlProto::Named(i),
        None => AlProto::Unknown,
    }
}

fn ftp_bounce(payload: &[u8], src: IpAddr) -> bool {
    payload.split(|&c| c == b'\n').any(|line| {
        let line = line.trim_ascii();
        let Some(arg) = line
            .get(..5)
            .filter(|v| v.eq_ignore_ascii_case(b"PORT "))
            .map(|_| &line[5..])
        else {
            return false;
        };
        let nums: Vec<u8> = arg
            .split(|&c| c == b',')
            .take(4)
            .filter_map(|n| std::str::from_utf8(n.trim_ascii()).ok()?.parse().ok())
            .collect();
        match <[u8; 4]>::try_from(nums) {
            Ok(a) => IpAddr::from(a) != src,
            Err(_) => false,
        }
    })
}

fn cmp_u(c: Cmp, v: u64) -> bool {
    c.test(v.min(i64::MAX as u64) as i64)
}

/// ICMP messages that carry an identifier and sequence number.
fn echo_like(itype: u8, v6: bool) -> bool {
    if v6 {
        matches!(itype, 128 | 129)
    } else {
        matches!(itype, 0 | 8 | 13 | 14 | 15 | 16 | 17 | 18)
    }
}
