//! Decoding a frame into plain packet fields.
//!
//! The link layer and the IP headers are decoded here (they are a few fixed fields, and
//! fragments need control over them); TCP, UDP and ICMP headers are sliced with
//! `etherparse`. The result is a [`Packet`]: numbers, addresses and the payload's range
//! in the packet's own buffer, which holds either the frame or, for a reassembled
//! fragmented datagram, the datagram's transport bytes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::ops::Range;
use std::time::Duration;

use etherparse::{Icmpv4Slice, Icmpv6Slice, TcpSlice, UdpSlice};

use crate::capture::Frame;
use crate::checksum;
use crate::defrag::{Defrag, Fragment};
use netsieve_wire::DecodeEvent;

/// TCP flag bits as in the header's flags byte.
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// IPv4 options present, one bit per kind (for the `ipopts` keyword).
pub mod ipopt {
    pub const EOL: u16 = 1 << 0;
    pub const NOP: u16 = 1 << 1;
    pub const RR: u16 = 1 << 2;
    pub const TS: u16 = 1 << 3;
    pub const SEC: u16 = 1 << 4;
    pub const ESEC: u16 = 1 << 5;
    pub const LSRR: u16 = 1 << 6;
    pub const SSRR: u16 = 1 << 7;
    pub const SATID: u16 = 1 << 8;
    pub const OTHER: u16 = 1 << 9;
}

/// IPv4 option kinds (the type byte, copy flag and class included).
mod optkind {
    pub const EOL: u8 = 0;
    pub const NOP: u8 = 1;
    pub const RR: u8 = 7;
    /// Quick-Start (RFC 4782).
    pub const QS: u8 = 25;
    pub const TS: u8 = 68;
    pub const SEC: u8 = 130;
    pub const LSRR: u8 = 131;
    pub const ESEC: u8 = 133;
    pub const CIPSO: u8 = 134;
    /// Stream identifier.
    pub const SATID: u8 = 136;
    pub const SSRR: u8 = 137;
    /// Router alert (RFC 2113).
    pub const RTRALT: u8 = 148;
}

/// Walks IPv4 options (the header's bytes past its first 20), raising the events
/// Suricata raises, as measured on its reference with built packets: the options' length
/// not a multiple of 8, a lone byte starting an option at the end, an unknown kind, a
/// known kind twice, a length or pointer wrong for the kind (these mark the packet
/// invalid). Returns the kinds present (for `ipopts`); an option whose length is below 2
/// or runs past the options ends the decoding.
fn ipv4_options(opts: &[u8], p: &mut Packet) -> Result<u16, &'static str> {
    if !opts.len().is_multiple_of(8) {
        p.raise(DecodeEvent::Ipv4OptPadRequired);
    }
    let mut present = 0u16;
    let mut seen: Vec<u8> = Vec::new();
    let mut rest = opts;
    use optkind::*;
    while let Some(&kind) = rest.first() {
        present |= match kind {
            EOL => ipopt::EOL,
            NOP => ipopt::NOP,
            RR => ipopt::RR,
            TS => ipopt::TS,
            SEC => ipopt::SEC,
            ESEC => ipopt::ESEC,
            LSRR => ipopt::LSRR,
            SSRR => ipopt::SSRR,
            SATID => ipopt::SATID,
            _ => ipopt::OTHER,
        };
        match kind {
            EOL => break,
            NOP => {
                rest = &rest[1..];
                continue;
            }
            _ => {}
        }
        let Some(&len) = rest.get(1) else {
            p.raise(DecodeEvent::Ipv4OptEolRequired);
            break;
        };
        let len = usize::from(len);
        if len < 2 || len > rest.len() {
            p.raise(DecodeEvent::Ipv4OptInvalidLen);
            return Err("IPv4 option length invalid");
        }
        let opt = &rest[..len];
        rest = &rest[len..];
        // Kinds Suricata knows: the least (or exact) length each needs, and where a
        // pointer into its data starts (route and timestamp options).
        let (min, exact, first_ptr) = match kind {
            RR | LSRR | SSRR => (3, false, Some(4)),
            TS => (5, false, Some(5)),
            SEC | ESEC => (3, false, None),
            CIPSO => (10, false, None),
            QS => (8, true, None),
            SATID | RTRALT => (4, true, None),
            _ => {
                p.raise(DecodeEvent::Ipv4OptInvalid);
                continue;
            }
        };
        if seen.contains(&kind) {
            p.raise(DecodeEvent::Ipv4OptDuplicate);
            continue;
        }
        seen.push(kind);
        if len < min || (exact && len != min) {
            p.raise(DecodeEvent::Ipv4OptInvalidLen);
            p.invalid = true;
        } else if let Some(first) = first_ptr
            && usize::from(opt[2]) < first
        {
            p.raise(DecodeEvent::Ipv4OptMalformed);
            p.invalid = true;
        }
    }
    Ok(present)
}

/// The network layer of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ip {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// The transport protocol number (after IPv6 extension headers).
    pub proto: u8,
    pub ttl: u8,
    pub tos: u8,
    pub id: u32,
    /// IPv4 options present ([`ipopt`] bits).
    pub opts: u16,
    /// A fragment not (yet) reassembled: no transport header decoded.
    pub fragment: bool,
    /// The transport bytes came from reassembled fragments.
    pub reassembled: bool,
}

/// A TCP header's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tcp {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    /// [`tcp_flags`] bits.
    pub flags: u8,
    pub window: u16,
    /// The header carries a TCP Fast Open option (kind 34, RFC 7413, or the experimental
    /// kind 254 with magic 0xF989 that came before it).
    pub fast_open: bool,
    /// The Timestamps option's TSval and TSecr (RFC 7323), when the header has one.
    pub timestamp: Option<(u32, u32)>,
    /// The urgent pointer (meaningful with the URG flag): the offset from `seq` of the
    /// byte after the urgent data.
    pub urgent: u16,
}

/// The transport layer of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum L4 {
    #[default]
    None,
    Tcp(Tcp),
    Udp {
        sport: u16,
        dport: u16,
    },
    Icmp {
        v6: bool,
        itype: u8,
        icode: u8,
        /// Identifier and sequence number, for echo messages.
        id: u16,
        seq: u16,
    },
    /// SCTP's common header (RFC 9260 3.1); its chunks are the payload.
    Sctp {
        sport: u16,
        dport: u16,
    },
}

impl L4 {
    /// Source and destination ports (0 for portless protocols).
    pub fn ports(&self) -> (u16, u16) {
        match *self {
            L4::Tcp(t) => (t.sport, t.dport),
            L4::Udp { sport, dport } | L4::Sctp { sport, dport } => (sport, dport),
            _ => (0, 0),
        }
    }
}

/// The outer layer of a packet that arrived inside a tunnel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunnel {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// The outer IP protocol: 4 (IP-in-IP), 41 (IPv6), 47 (GRE), 17 (UDP: VXLAN).
    pub proto: u8,
    pub sport: u16,
    pub dport: u16,
    /// Tunnel layers around this packet (1 for a packet in one tunnel).
    pub depth: u8,
}

/// What a tunnel carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InnerKind {
    Ipv4,
    Ipv6,
    Ethernet,
}

/// Tunnels nested deeper than this are not opened.
const MAX_TUNNEL_DEPTH: u8 = 4;

/// VXLAN's UDP port.
pub const VXLAN_PORT: u16 = 4789;

/// VLAN tags a packet keeps (Suricata's three).
pub const VLAN_LAYERS: usize = 3;

/// The most decoder events a packet keeps (Suricata's limit).
pub const MAX_EVENTS: usize = 15;

/// A decoded packet. Reused from packet to packet by the reader.
#[derive(Clone, Debug, Default)]
pub struct Packet {
    /// 1-based position in the capture (Suricata's `pcap_cnt`).
    pub num: u64,
    pub ts: Duration,
    /// Bytes on the wire.
    pub wire_len: u32,
    /// The frame, or a reassembled datagram's transport bytes.
    pub data: Vec<u8>,
    /// VLAN ids, outermost first (0: no tag there).
    pub vlan: [u16; VLAN_LAYERS],
    pub ip: Option<Ip>,
    pub l4: L4,
    /// The application payload: `data[payload]`.
    pub payload: Range<usize>,
    /// The transport checksum was checked and is wrong.
    pub bad_checksum: bool,
    /// Why decoding stopped early, if it did.
    pub error: Option<&'static str>,
    /// A header was found invalid though decoding went on (Suricata counts such a
    /// packet in `decoder.invalid` too).
    pub invalid: bool,
    /// What is wrong with the packet's headers, in the order found (an event raised
    /// twice is there twice, as Suricata lists it; at most [`MAX_EVENTS`]).
    pub events: Vec<DecodeEvent>,
    /// For a packet decoded out of a tunnel: the tunnel's outer layer.
    pub tunnel: Option<Tunnel>,
    /// The capture's link type (LINKTYPE_* number) of the frame; 12 (raw) for packets
    /// taken out of a tunnel.
    pub linktype: u32,
    /// Where the transport header starts in `data`.
    pub l4_at: usize,
    /// Where the IP header starts in `data` (when `ip` is set and the packet is not a
    /// reassembled datagram).
    pub l3_at: usize,
}

impl Packet {
    pub fn payload(&self) -> &[u8] {
        &self.data[self.payload.clone()]
    }

    /// Notes a decoder event.
    fn raise(&mut self, e: DecodeEvent) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(e);
        }
    }

    /// Replaces a TCP packet's payload with `bytes` (as long as it) and recomputes the
    /// TCP checksum (an IPS normalising a segment to what the stream holds).
    pub fn rewrite_tcp_payload(&mut self, bytes: &[u8]) {
        let (Some(ip), L4::Tcp(_)) = (self.ip, self.l4) else {
            return;
        };
        if bytes.len() != self.payload.len() || self.l4_at + 18 > self.payload.start {
            return;
        }
        self.data[self.payload.clone()].copy_from_slice(bytes);
        let seg = &mut self.data[self.l4_at..self.payload.end];
        crate::checksum::set_l4(seg, ip.src, ip.dst, 6);
    }

    pub fn tcp(&self) -> Option<&Tcp> {
        match &self.l4 {
            L4::Tcp(t) => Some(t),
            _ => None,
        }
    }
}

/// Where a fragment's IP header is, to rebuild the packet of a reassembled datagram.
#[derive(Clone, Copy)]
enum Refit {
    V4 {
        ip_at: usize,
    },
    /// `next_at`: the byte naming the fragment header; `frag_at`: the fragment header.
    V6 {
        ip_at: usize,
        next_at: usize,
        frag_at: usize,
    },
}

impl Refit {
    /// Fixes the headers in `data` (headers up to `start`, then the datagram).
    /// `frag_next`: for IPv6, the fragment header's next-header byte.
    fn apply(self, data: &mut [u8], start: usize, frag_next: u8) {
        let clamp = |n: usize| (n.min(0xffff) as u16).to_be_bytes();
        match self {
            Refit::V4 { ip_at } => {
                let total = clamp(data.len() - ip_at);
                data[ip_at + 2..ip_at + 4].copy_from_slice(&total);
                // Keep DF; clear MF and the offset.
                data[ip_at + 6] &= 0x40;
                data[ip_at + 7] = 0;
                data[ip_at + 10] = 0;
                data[ip_at + 11] = 0;
                let hlen = start - ip_at;
                let sum = checksum::sum(&data[ip_at..ip_at + hlen], 0) as u16;
                data[ip_at + 10..ip_at + 12].copy_from_slice(&(!sum).to_be_bytes());
            }
            Refit::V6 { ip_at, next_at, .. } => {
                let plen = clamp(data.len() - ip_at - 40);
                data[ip_at + 4..ip_at + 6].copy_from_slice(&plen);
                data[next_at] = frag_next;
            }
        }
    }
}

/// The link layers the decoder reads, resolved once from a capture's link type number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    /// 1
    Ethernet,
    /// 113: Linux cooked capture.
    LinuxSll,
    /// 276: Linux cooked capture, version 2.
    LinuxSll2,
    /// 0: BSD loopback, the address family in host order.
    Null,
    /// 108: OpenBSD loopback, the address family in network order.
    Loop,
    /// 12, 14, 101: raw IP, the version nibble tells which.
    Raw,
    /// 9
    Ppp,
    /// 104
    CiscoHdlc,
    /// 228
    Ipv4,
    /// 229
    Ipv6,
}

impl Link {
    fn of(linktype: u32) -> Option<Link> {
        Some(match linktype {
            1 => Link::Ethernet,
            113 => Link::LinuxSll,
            276 => Link::LinuxSll2,
            0 => Link::Null,
            108 => Link::Loop,
            12 | 14 | 101 => Link::Raw,
            9 => Link::Ppp,
            104 => Link::CiscoHdlc,
            228 => Link::Ipv4,
            229 => Link::Ipv6,
            _ => return None,
        })
    }
}

/// Whether the decoder reads frames of this link type (LINKTYPE_* number).
pub fn decodes_link(linktype: u32) -> bool {
    Link::of(linktype).is_some()
}

/// Decodes frames, keeping fragment state between them.
#[derive(Debug, Default)]
pub struct Decoder {
    pub defrag: Defrag,
    /// Validate IPv4 header and TCP/UDP/ICMP checksums.
    pub checksums: bool,
    /// Frames whose link type is not decoded.
    pub unknown_link: u64,
    /// Packets with a bad checksum.
    pub bad_checksums: u64,
    /// The tunnel found in the last decoded packet: where its inner packet starts and
    /// ends in that packet's data, what it is, the outer layer, and a VLAN id the
    /// encapsulation carries (ERSPAN).
    inner: Option<(Range<usize>, InnerKind, Tunnel, u16)>,
    /// Packets taken out of tunnels.
    pub tunnelled: u64,
}

/// The event an ICMPv4 type and code raise, if any: a type Suricata does not know, or a
/// code its type does not define (the ranges measured on the reference, see
/// [`DecodeEvent::Icmpv4UnknownCode`]).
fn icmpv4_event(itype: u8, code: u8) -> Option<DecodeEvent> {
    let max_code = match itype {
        9 => return None,
        3 => 15,
        5 => 3,
        11 => 1,
        0 | 4 | 8 | 12..=18 => 0,
        _ => return Some(DecodeEvent::Icmpv4UnknownType),
    };
    (code > max_code).then_some(DecodeEvent::Icmpv4UnknownCode)
}

/// Whether Suricata's decoder knows EtherType `t` (measured on the reference; see
/// [`DecodeEvent::EthernetUnknownEthertype`]), whether or not netsieve decodes it.
fn known_ethertype(t: u16) -> bool {
    matches!(
        t,
        0x0800
            | 0x86dd
            | 0x0806
            | 0x8100
            | 0x88a8
            | 0x9100
            | 0x8863
            | 0x8864
            | 0x88e7
            | 0x8847
            | 0x8848
            | 0x8903
            | 0x8926
            | 0x894f
    )
}

/// An ICMP or ICMPv6 header: its type, code, and the identifier and sequence number
/// of its second word (as echo messages use it).
fn icmp(v6: bool, itype: u8, icode: u8, rest: [u8; 4]) -> L4 {
    L4::Icmp {
        v6,
        itype,
        icode,
        id: be16(&rest, 0),
        seq: be16(&rest, 2),
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

impl Decoder {
    pub fn new(checksums: bool) -> Decoder {
        Decoder {
            checksums,
            ..Decoder::default()
        }
    }

    /// Decodes `frame` into `out` (packet number `num`). Fields that could not be decoded
    /// stay empty and `out.error` says why.
    pub fn decode(&mut self, frame: &Frame, num: u64, out: &mut Packet) {
        out.num = num;
        out.ts = frame.ts;
        out.wire_len = frame.orig_len;
        out.data.clear();
        out.data.extend_from_slice(&frame.data);
        out.vlan = [0; VLAN_LAYERS];
        out.ip = None;
        out.l4 = L4::None;
        out.payload = 0..0;
        out.bad_checksum = false;
        out.error = None;
        out.invalid = false;
        out.events.clear();
        out.tunnel = None;
        out.l3_at = 0;
        out.linktype = frame.linktype;
        self.inner = None;
        if let Err(e) = self.decode_link(frame.linktype, out) {
            out.error = Some(e);
        }
    }

    /// If the packet just decoded (`outer`, by [`Decoder::decode`] or this function)
    /// carries a tunnelled packet (IP-in-IP, IPv6 in IP, GRE with IP, Ethernet or
    /// ERSPAN, VXLAN), decodes that packet into `out` and returns true. Call it until it
    /// returns false to open nested tunnels. The inner packet keeps the outer's number
    /// and time.
    pub fn decode_inner(&mut self, outer: &Packet, out: &mut Packet) -> bool {
        let Some((range, kind, tunnel, vlan)) = self.inner.take() else {
            return false;
        };
        let Some(bytes) = outer.data.get(range) else {
            return false;
        };
        self.tunnelled += 1;
        out.num = outer.num;
        out.ts = outer.ts;
        out.wire_len = outer.wire_len;
        out.data.clear();
        out.data.extend_from_slice(bytes);
        out.vlan = outer.vlan;
        if vlan != 0 {
            out.vlan = [vlan, outer.vlan[0], outer.vlan[1]];
        }
        out.ip = None;
        out.l4 = L4::None;
        out.payload = 0..0;
        out.bad_checksum = false;
        out.error = None;
        out.invalid = false;
        out.events.clear();
        out.tunnel = Some(tunnel);
        // As Suricata labels tunnel packets: raw (DLT_RAW), whatever the inner framing.
        out.linktype = 12;
        let r = match kind {
            InnerKind::Ipv4 => self.decode_ipv4(0, out),
            InnerKind::Ipv6 => self.decode_ipv6(0, out),
            InnerKind::Ethernet => self.decode_link(1, out),
        };
        if let Err(e) = r {
            out.error = Some(e);
        }
        true
    }

    /// Notes a tunnel in `p` whose inner packet is `range` of its data.
    fn tunnel(&mut self, p: &Packet, range: Range<usize>, kind: InnerKind, vlan: u16) {
        let ip = p.ip.expect("set by the caller");
        let depth = p.tunnel.map_or(0, |t| t.depth) + 1;
        if depth > MAX_TUNNEL_DEPTH || range.is_empty() {
            return;
        }
        let (sport, dport) = p.l4.ports();
        self.inner = Some((
            range,
            kind,
            Tunnel {
                src: ip.src,
                dst: ip.dst,
                proto: ip.proto,
                sport,
                dport,
                depth,
            },
            vlan,
        ));
    }

    /// GRE (RFC 2784/2890) and what it carries: IPv4, IPv6, Ethernet, ERSPAN I/II/III.
    fn gre(&mut self, l4: Range<usize>, p: &mut Packet) {
        if l4.len() < 4 {
            p.raise(DecodeEvent::GrePktTooSmall);
            return;
        }
        let d = &p.data[l4.clone()];
        let flags = be16(d, 0);
        if flags & 0x0007 != 0 {
            // Only version 0 (PPTP's enhanced GRE is version 1).
            return;
        }
        let ptype = be16(d, 2);
        let mut at = 4;
        for bit in [0x8000u16, 0x2000, 0x1000] {
            if flags & bit != 0 {
                at += 4;
            }
        }
        let seq = flags & 0x1000 != 0;
        let (kind, hdr, vlan) = match ptype {
            0x0800 => (InnerKind::Ipv4, 0, 0),
            0x86dd => (InnerKind::Ipv6, 0, 0),
            0x6558 => (InnerKind::Ethernet, 0, 0),
            // ERSPAN type II has a sequence number and an 8-byte header; type I has
            // neither.
            0x88be if seq => {
                let vlan = d.get(at..at + 2).map_or(0, |b| be16(b, 0) & 0x0fff);
                (InnerKind::Ethernet, 8, vlan)
            }
            0x88be => (InnerKind::Ethernet, 0, 0),
            // ERSPAN type III: 12 bytes, 8 more with the platform sub-header (O bit).
            0x22eb => {
                let o = d.get(at + 11).is_some_and(|b| b & 1 != 0);
                (InnerKind::Ethernet, if o { 20 } else { 12 }, 0)
            }
            _ => return,
        };
        let start = l4.start + at + hdr;
        if start < l4.end {
            self.tunnel(p, start..l4.end, kind, vlan);
        }
    }

    fn decode_link(&mut self, link: u32, p: &mut Packet) -> Result<(), &'static str> {
        let d = &p.data;
        let Some(kind) = Link::of(link) else {
            self.unknown_link += 1;
            return Err("unsupported link type");
        };
        let (ethertype, at) = match kind {
            Link::Ethernet => {
                if d.len() < 14 {
                    return Err("truncated ethernet header");
                }
                let mut et = be16(d, 12);
                let mut at = 14;
                let mut tags = 0;
                while matches!(et, 0x8100 | 0x88a8 | 0x9100) {
                    if d.len() < at + 4 {
                        return Err("truncated VLAN tag");
                    }
                    if tags < VLAN_LAYERS {
                        p.vlan[tags] = be16(d, at) & 0x0fff;
                    }
                    tags += 1;
                    if tags > VLAN_LAYERS {
                        return Err("too many VLAN tags");
                    }
                    et = be16(d, at + 2);
                    at += 4;
                }
                (et, at)
            }
            Link::LinuxSll => {
                if d.len() < 16 {
                    return Err("truncated Linux cooked header");
                }
                (be16(d, 14), 16)
            }
            Link::LinuxSll2 => {
                if d.len() < 20 {
                    return Err("truncated Linux cooked v2 header");
                }
                (be16(d, 0), 20)
            }
            Link::Null | Link::Loop => {
                if d.len() < 4 {
                    return Err("truncated loopback header");
                }
                let fam = if kind == Link::Null {
                    u32::from_le_bytes([d[0], d[1], d[2], d[3]])
                } else {
                    u32::from_be_bytes([d[0], d[1], d[2], d[3]])
                };
                // Some captures store the family in the other byte order.
                let fam = if fam > 0xffff { fam.swap_bytes() } else { fam };
                match fam {
                    2 => (0x0800, 4),
                    24 | 28 | 30 => (0x86dd, 4),
                    _ => return Err("unknown loopback address family"),
                }
            }
            Link::Raw => match d.first().map(|b| b >> 4) {
                Some(4) => (0x0800, 0),
                Some(6) => (0x86dd, 0),
                _ => return Err("raw IP frame without an IP version"),
            },
            // PPP: an optional address/control pair, then the protocol, in one byte
            // when compressed (RFC 1661 6.5: an odd first byte is a whole protocol).
            Link::Ppp => {
                let at = if d.starts_with(&[0xff, 0x03]) { 2 } else { 0 };
                let (proto, len) = match d.get(at) {
                    None => return Err("truncated PPP header"),
                    Some(&b) if b & 1 == 1 => (b as u16, 1),
                    Some(_) if d.len() < at + 2 => return Err("truncated PPP header"),
                    Some(_) => (be16(d, at), 2),
                };
                match proto {
                    0x0021 => (0x0800, at + len),
                    0x0057 => (0x86dd, at + len),
                    _ => return Ok(()),
                }
            }
            // Cisco HDLC: address, control, then an Ethertype.
            Link::CiscoHdlc => {
                if d.len() < 4 {
                    return Err("truncated Cisco HDLC header");
                }
                (be16(d, 2), 4)
            }
            Link::Ipv4 => (0x0800, 0),
            Link::Ipv6 => (0x86dd, 0),
        };
        let ethertyped = matches!(
            kind,
            Link::Ethernet | Link::LinuxSll | Link::LinuxSll2 | Link::CiscoHdlc
        );
        if ethertyped && !known_ethertype(ethertype) {
            p.raise(DecodeEvent::EthernetUnknownEthertype);
        }
        let (mut ethertype, mut at) = (ethertype, at);
        // NSH (RFC 8300): the packet follows its header in the same frame.
        let mut headers = 0;
        while ethertype == 0x894f {
            headers += 1;
            let d = &p.data;
            if headers > 4 {
                return Err("too many NSH headers");
            }
            if d.len() < at + 8 {
                return Err("truncated NSH header");
            }
            let len = (d[at + 1] & 0x3f) as usize * 4;
            if len < 8 || d.len() < at + len {
                return Err("invalid NSH header length");
            }
            let next = d[at + 3];
            at += len;
            ethertype = match next {
                1 => 0x0800,
                2 => 0x86dd,
                3 => {
                    if d.len() < at + 14 {
                        return Err("truncated ethernet header after NSH");
                    }
                    at += 14;
                    be16(d, at - 2)
                }
                4 => 0x894f,
                _ => return Ok(()),
            };
        }
        match ethertype {
            0x0800 => self.decode_ipv4(at, p),
            0x86dd => self.decode_ipv6(at, p),
            _ => Ok(()),
        }
    }

    fn decode_ipv4(&mut self, at: usize, p: &mut Packet) -> Result<(), &'static str> {
        p.l3_at = at;
        let d = &p.data[at..];
        if d.len() < 20 || d[0] >> 4 != 4 {
            return Err("truncated or invalid IPv4 header");
        }
        let hlen = ((d[0] & 0x0f) as usize) * 4;
        let total = be16(d, 2) as usize;
        if hlen < 20 || d.len() < hlen || total < hlen {
            return Err("invalid IPv4 header length");
        }
        if total > d.len() {
            p.raise(DecodeEvent::Ipv4TruncPkt);
            return Err("IPv4 total length past the bytes captured");
        }
        let end = total;
        // The options are copied out of the packet they raise events on (few packets
        // have any).
        let opts = match hlen {
            20 => 0,
            _ => {
                let options = d[20..hlen].to_vec();
                ipv4_options(&options, p)?
            }
        };
        let d = &p.data[at..];
        let src = IpAddr::V4(Ipv4Addr::new(d[12], d[13], d[14], d[15]));
        let dst = IpAddr::V4(Ipv4Addr::new(d[16], d[17], d[18], d[19]));
        let frag = be16(d, 6);
        let more = frag & 0x2000 != 0;
        let offset = ((frag & 0x1fff) as usize) * 8;
        let ip = Ip {
            src,
            dst,
            proto: d[9],
            ttl: d[8],
            tos: d[1],
            id: be16(d, 4) as u32,
            opts,
            fragment: false,
            reassembled: false,
        };
        if self.checksums && !checksum::valid(&d[..hlen], 0) {
            p.bad_checksum = true;
            self.bad_checksums += 1;
        }
        let l4 = at + hlen..at + end;
        if more || offset > 0 {
            return self.fragment(ip, offset, more, l4, Refit::V4 { ip_at: at }, p);
        }
        p.ip = Some(ip);
        self.decode_l4(l4, p)
    }

    fn decode_ipv6(&mut self, at: usize, p: &mut Packet) -> Result<(), &'static str> {
        p.l3_at = at;
        let d = &p.data[at..];
        if d.len() < 40 || d[0] >> 4 != 6 {
            return Err("truncated or invalid IPv6 header");
        }
        let plen = be16(d, 4) as usize;
        if 40 + plen > d.len() {
            p.raise(DecodeEvent::Ipv6TruncPkt);
            return Err("IPv6 payload length past the bytes captured");
        }
        let end = 40 + plen;
        let mut s = [0u8; 16];
        s.copy_from_slice(&d[8..24]);
        let mut t = [0u8; 16];
        t.copy_from_slice(&d[24..40]);
        let mut next = d[6];
        let mut i = 40;
        // The first fragment header: offset, more, id, and where it is.
        let mut frag: Option<(usize, bool, u32, usize, usize)> = None;
        // The byte that names the next header (for the fragment header: to unlink it
        // from a reassembled datagram).
        let mut next_at = 6;
        let mut events = Vec::new();
        // Walk the extension headers.
        let truncated = loop {
            // Past an extension header, the next header needs two bytes at least (as
            // Suricata checks), unless there is none (59) or the header passed was a
            // real fragment's, whose rest comes with reassembly.
            let real_fragment = frag.is_some_and(|(off, more, ..)| off > 0 || more);
            if i > 40 && next != 59 && end - i < 2 && !real_fragment {
                break true;
            }
            match next {
                0 | 43 | 60 | 135 | 139 | 140 => {
                    if end < i + 8 {
                        break true;
                    }
                    let len = (d[i + 1] as usize + 1) * 8;
                    if next == 60 && end >= i + len && unknown_option(&d[i + 2..i + len]) {
                        events.push(DecodeEvent::Ipv6DstoptsUnknownOpt);
                    }
                    next = d[i];
                    next_at = i;
                    i += len;
                }
                51 => {
                    if end < i + 8 {
                        break true;
                    }
                    next = d[i];
                    next_at = i;
                    i += (d[i + 1] as usize + 2) * 4;
                }
                44 => {
                    if end < i + 8 {
                        break true;
                    }
                    let fo = be16(d, i + 2);
                    let (offset, more) = ((fo & 0xfff8) as usize, fo & 1 != 0);
                    let id = u32::from_be_bytes([d[i + 4], d[i + 5], d[i + 6], d[i + 7]]);
                    if frag.is_some() {
                        events.push(DecodeEvent::Ipv6ExthdrDuplFh);
                    } else {
                        // One that fragments nothing is said at once, before the
                        // duplicates after it (as Suricata orders them, up to its 15
                        // events).
                        if offset == 0 && !more {
                            events.push(DecodeEvent::Ipv6ExthdrUselessFh);
                        }
                        frag = Some((offset, more, id, next_at, i));
                    }
                    next = d[i];
                    next_at = i;
                    i += 8;
                }
                _ => break false,
            }
            if i > end {
                break true;
            }
        };
        let mut ip = Ip {
            src: IpAddr::V6(Ipv6Addr::from(s)),
            dst: IpAddr::V6(Ipv6Addr::from(t)),
            proto: next,
            ttl: d[7],
            tos: (be16(d, 0) >> 4) as u8,
            id: 0,
            opts: 0,
            fragment: false,
            reassembled: false,
        };
        for e in events {
            p.raise(e);
        }
        if truncated {
            // The addresses are known: rules on decoder events still judge it.
            p.raise(DecodeEvent::Ipv6TruncExthdr);
            p.ip = Some(ip);
            return Err("truncated IPv6 extension header");
        }
        let l4 = at + i..at + end;
        if let Some((offset, more, id, next_at, frag_at)) = frag {
            ip.id = id;
            if more && !(end - i).is_multiple_of(8) {
                p.raise(DecodeEvent::Ipv6FragInvalidLength);
            }
            if more || offset > 0 {
                let refit = Refit::V6 {
                    ip_at: at,
                    next_at: at + next_at,
                    frag_at: at + frag_at,
                };
                return self.fragment(ip, offset, more, l4, refit, p);
            }
        }
        p.ip = Some(ip);
        self.decode_l4(l4, p)
    }

    fn fragment(
        &mut self,
        mut ip: Ip,
        offset: usize,
        more: bool,
        l4: Range<usize>,
        refit: Refit,
        p: &mut Packet,
    ) -> Result<(), &'static str> {
        let added = self.defrag.add(Fragment {
            src: ip.src,
            dst: ip.dst,
            proto: ip.proto,
            id: ip.id,
            offset,
            more,
            payload: &p.data[l4.clone()],
            ts: p.ts,
        });
        let v6 = ip.src.is_ipv6();
        if added.overlap {
            p.raise(if v6 {
                DecodeEvent::Ipv6FragOverlap
            } else {
                DecodeEvent::Ipv4FragOverlap
            });
        }
        if added.too_large {
            p.raise(if v6 {
                DecodeEvent::Ipv6FragPktTooLarge
            } else {
                DecodeEvent::Ipv4FragPktTooLarge
            });
        }
        match added.datagram {
            None => {
                ip.fragment = true;
                p.ip = Some(ip);
                p.payload = l4;
                Ok(())
            }
            Some(datagram) => {
                ip.reassembled = true;
                p.ip = Some(ip);
                // The packet becomes the last fragment's link and IP headers (without
                // the fragment header, lengths fixed) followed by the whole datagram,
                // as Suricata rebuilds it (EVE's `packet`).
                let (mut data, frag_next) = match refit {
                    Refit::V4 { .. } => (p.data[..l4.start].to_vec(), 0),
                    Refit::V6 { frag_at, .. } => (p.data[..frag_at].to_vec(), p.data[frag_at]),
                };
                let start = data.len();
                data.extend_from_slice(&datagram);
                refit.apply(&mut data, start, frag_next);
                p.data = data;
                let all = start..p.data.len();
                self.decode_l4(all, p)
            }
        }
    }

    fn decode_l4(&mut self, l4: Range<usize>, p: &mut Packet) -> Result<(), &'static str> {
        let ip = p.ip.expect("set by the caller");
        let seg = &p.data[l4.clone()];
        let base = l4.start;
        p.l4_at = base;
        let v6 = ip.src.is_ipv6();
        let check = |p: &mut Packet, ok: bool, n: &mut u64| {
            if !ok {
                p.bad_checksum = true;
                *n += 1;
            }
        };
        match ip.proto {
            6 => {
                let t = match TcpSlice::from_slice(seg) {
                    Ok(t) => t,
                    Err(_) => {
                        let doff = seg.get(12).map_or(5, |b| (b >> 4) as usize);
                        p.raise(if seg.len() >= 20 && doff < 5 {
                            DecodeEvent::TcpHlenTooSmall
                        } else {
                            DecodeEvent::TcpPktTooSmall
                        });
                        return Err("truncated or invalid TCP header");
                    }
                };
                let hl = t.header_len();
                let options = TcpOptions::read(&seg[20.min(hl)..hl]);
                p.l4 = L4::Tcp(Tcp {
                    sport: t.source_port(),
                    dport: t.destination_port(),
                    seq: t.sequence_number(),
                    ack: t.acknowledgment_number(),
                    flags: seg[13],
                    window: t.window_size(),
                    fast_open: options.fast_open,
                    timestamp: options.timestamp,
                    urgent: u16::from_be_bytes([seg[18], seg[19]]),
                });
                p.payload = base + hl..l4.end;
                if self.checksums {
                    let init = checksum::pseudo(ip.src, ip.dst, 6, seg.len());
                    let ok = checksum::valid(seg, init);
                    check(p, ok, &mut self.bad_checksums);
                }
            }
            17 => {
                // Fewer bytes than a header; else a length field that is not the
                // datagram's (below 8 included).
                let field = (seg.len() >= 8).then(|| be16(seg, 4) as usize);
                let Some(u) = UdpSlice::from_slice(seg).ok().filter(|_| field >= Some(8)) else {
                    p.raise(match field {
                        Some(_) => DecodeEvent::UdpLenInvalid,
                        None => DecodeEvent::UdpHlenTooSmall,
                    });
                    return Err("truncated or invalid UDP header");
                };
                let bad_len = u.length() as usize != seg.len();
                p.l4 = L4::Udp {
                    sport: u.source_port(),
                    dport: u.destination_port(),
                };
                let len = (u.length() as usize).clamp(8, seg.len());
                p.payload = base + 8..base + len;
                if self.checksums && (u.checksum() != 0 || v6) {
                    let init = checksum::pseudo(ip.src, ip.dst, 17, len);
                    let ok = checksum::valid(&seg[..len], init);
                    check(p, ok, &mut self.bad_checksums);
                }
                if bad_len {
                    p.raise(DecodeEvent::UdpLenInvalid);
                }
            }
            1 if !v6 => {
                let c = Icmpv4Slice::from_slice(seg).map_err(|_| "truncated ICMP header")?;
                let event = icmpv4_event(c.type_u8(), c.code_u8());
                p.l4 = icmp(false, c.type_u8(), c.code_u8(), c.bytes5to8());
                p.payload = base + c.header_len()..l4.end;
                if self.checksums {
                    let ok = checksum::valid(seg, 0);
                    check(p, ok, &mut self.bad_checksums);
                }
                if let Some(e) = event {
                    p.raise(e);
                }
            }
            58 => {
                let c = Icmpv6Slice::from_slice(seg).map_err(|_| "truncated ICMPv6 header")?;
                p.l4 = icmp(true, c.type_u8(), c.code_u8(), c.bytes5to8());
                p.payload = base + c.header_len()..l4.end;
                if self.checksums {
                    let init = checksum::pseudo(ip.src, ip.dst, 58, seg.len());
                    let ok = checksum::valid(seg, init);
                    check(p, ok, &mut self.bad_checksums);
                }
            }
            // SCTP: the ports of its common header (its CRC32c is not checked, as
            // Suricata does not check it); a shorter segment goes by its IP protocol.
            132 if seg.len() >= 12 => {
                p.l4 = L4::Sctp {
                    sport: be16(seg, 0),
                    dport: be16(seg, 2),
                };
                p.payload = base + 12..l4.end;
            }
            4 => self.tunnel(p, l4.clone(), InnerKind::Ipv4, 0),
            41 => self.tunnel(p, l4.clone(), InnerKind::Ipv6, 0),
            47 => self.gre(l4.clone(), p),
            _ => p.payload = l4,
        }
        // VXLAN: an 8-byte header with the I flag, then Ethernet.
        if let L4::Udp { dport, .. } = p.l4
            && dport == VXLAN_PORT
        {
            let pl = p.payload.clone();
            if pl.len() > 8 + 14 && p.data[pl.start] & 0x08 != 0 {
                self.tunnel(p, pl.start + 8..pl.end, InnerKind::Ethernet, 0);
            }
        }
        Ok(())
    }
}

/// Whether IPv6 destination options (`o`, after the header's first two bytes) hold an
/// option of a type no standard defines for them (Pad1, PadN, the tunnel encapsulation
/// limit, router alert, jumbo payload and home address are known). Malformed options end
/// the walk.
fn unknown_option(mut o: &[u8]) -> bool {
    while let Some(&kind) = o.first() {
        if kind == 0 {
            o = &o[1..];
            continue;
        }
        if !matches!(kind, 1 | 4 | 5 | 0xc2 | 0xc9) {
            return true;
        }
        let Some(&len) = o.get(1) else { return false };
        o = o.get(2 + len as usize..).unwrap_or(&[]);
    }
    false
}

/// What the stream engine reads of a TCP header's options.
#[derive(Default)]
struct TcpOptions {
    /// A Fast Open option: kind 34, or kind 254 whose first two data bytes are the
    /// magic 0xF989 (the experimental form, RFC 6994).
    fast_open: bool,
    /// The Timestamps option (kind 8, length 10): TSval and TSecr.
    timestamp: Option<(u32, u32)>,
}

impl TcpOptions {
    /// The options of `o`; malformed options end the walk.
    fn read(mut o: &[u8]) -> TcpOptions {
        let mut out = TcpOptions::default();
        while let Some(&kind) = o.first() {
            match kind {
                0 => break,
                1 => o = &o[1..],
                _ => {
                    let Some(&len) = o.get(1) else { break };
                    let len = len as usize;
                    if len < 2 || len > o.len() {
                        break;
                    }
                    match kind {
                        34 => out.fast_open = true,
                        254 if len >= 4 && o[2..4] == [0xf9, 0x89] => out.fast_open = true,
                        8 if len == 10 => {
                            let word =
                                |i: usize| u32::from_be_bytes([o[i], o[i + 1], o[i + 2], o[i + 3]]);
                            out.timestamp = Some((word(2), word(6)));
                        }
                        _ => {}
                    }
                    o = &o[len..];
                }
            }
        }
        out
    }
}
