//! The decoder on hand-built tunnels, and on random and mutated frames (no panic, no
//! endless tunnel chain).

use std::net::IpAddr;
use std::time::Duration;

use netsieve_packet::{Decoder, Frame, L4, Packet};
use proptest::prelude::*;

fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, payload: &[u8]) -> Vec<u8> {
    let total = 20 + payload.len();
    let mut h = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0,
        0,
        64,
        proto,
        0,
        0,
    ];
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h.extend_from_slice(payload);
    h
}

fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let len = 8 + payload.len();
    let mut u = Vec::new();
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&(len as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    u
}

fn ether(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut e = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
    e.extend_from_slice(&ethertype.to_be_bytes());
    e.extend_from_slice(payload);
    e
}

/// Decodes a frame and every tunnel in it.
fn decode_all(linktype: u32, data: &[u8]) -> Vec<Packet> {
    let mut d = Decoder::new(false);
    let frame = Frame {
        ts: Duration::from_secs(1),
        linktype,
        orig_len: data.len() as u32,
        data: data.to_vec(),
    };
    let mut p = Packet::default();
    d.decode(&frame, 1, &mut p);
    let mut out = vec![p.clone()];
    let mut inner = Packet::default();
    while d.decode_inner(&p, &mut inner) {
        std::mem::swap(&mut p, &mut inner);
        out.push(p.clone());
        assert!(out.len() <= 8, "tunnel chain does not end");
    }
    out
}

fn addr(a: [u8; 4]) -> IpAddr {
    IpAddr::from(a)
}

#[test]
fn ip_in_ip_gre_and_vxlan_give_the_inner_packet() {
    let inner = ipv4(
        [192, 168, 0, 1],
        [192, 168, 0, 2],
        17,
        &udp(1000, 53, b"hello"),
    );
    // IP-in-IP.
    let f = ether(0x0800, &ipv4([10, 0, 0, 1], [10, 0, 0, 2], 4, &inner));
    let ps = decode_all(1, &f);
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0].ip.unwrap().proto, 4);
    assert!(
        ps[0].payload().is_empty(),
        "the tunnel is not the outer payload"
    );
    let t = ps[1].tunnel.unwrap();
    assert_eq!(
        (t.src, t.dst, t.proto, t.depth),
        (addr([10, 0, 0, 1]), addr([10, 0, 0, 2]), 4, 1)
    );
    assert_eq!(ps[1].ip.unwrap().src, addr([192, 168, 0, 1]));
    assert_eq!(
        (ps[0].linktype, ps[1].linktype),
        (1, 12),
        "inner packets are raw"
    );
    assert_eq!(
        ps[1].l4,
        L4::Udp {
            sport: 1000,
            dport: 53
        }
    );
    assert_eq!(ps[1].payload(), b"hello");

    // GRE with a key, carrying IPv4.
    let mut gre = vec![0x20, 0, 0x08, 0x00, 0, 0, 0, 7];
    gre.extend_from_slice(&inner);
    let ps = decode_all(
        1,
        &ether(0x0800, &ipv4([10, 0, 0, 1], [10, 0, 0, 2], 47, &gre)),
    );
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[1].tunnel.unwrap().proto, 47);
    assert_eq!(ps[1].payload(), b"hello");

    // VXLAN around Ethernet around IPv4, inside IP-in-IP: two levels.
    let mut vx = vec![0x08, 0, 0, 0, 0, 0, 1, 0];
    vx.extend_from_slice(&ether(0x0800, &inner));
    let outer_udp = ipv4([172, 16, 0, 1], [172, 16, 0, 2], 17, &udp(5000, 4789, &vx));
    let f = ether(0x0800, &ipv4([10, 0, 0, 1], [10, 0, 0, 2], 4, &outer_udp));
    let ps = decode_all(1, &f);
    assert_eq!(ps.len(), 3);
    let t = ps[2].tunnel.unwrap();
    assert_eq!((t.proto, t.dport, t.depth), (17, 4789, 2));
    assert_eq!(ps[2].payload(), b"hello");
}

#[test]
fn tunnels_nest_only_so_deep() {
    let mut p = ipv4([1, 1, 1, 1], [2, 2, 2, 2], 17, &udp(1, 2, b"x"));
    for _ in 0..20 {
        p = ipv4([10, 0, 0, 1], [10, 0, 0, 2], 4, &p);
    }
    let ps = decode_all(101, &p);
    assert!(ps.len() <= 5, "{}", ps.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random bytes under every link type: decoding ends, without a panic.
    #[test]
    fn random_frames_never_panic(
        link in prop::sample::select(vec![0u32, 1, 9, 12, 101, 108, 113, 228, 229, 276, 999]),
        data in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        decode_all(link, &data);
    }

    /// Valid tunnelled frames with bytes flipped and the end cut off.
    #[test]
    fn mutated_tunnels_never_panic(
        kind in 0usize..3,
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        cut in any::<usize>(),
    ) {
        let inner = ipv4([192, 168, 0, 1], [192, 168, 0, 2], 6,
            &[0, 80, 0, 81, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 1, 0, 0, 0, 0, 0, b'h', b'i']);
        let outer = match kind {
            0 => ipv4([10, 0, 0, 1], [10, 0, 0, 2], 4, &inner),
            1 => {
                let mut g = vec![0x10, 0, 0x88, 0xbe, 0, 0, 0, 1, 0x10, 23, 0, 0, 0, 0, 0, 0];
                g.extend_from_slice(&ether(0x0800, &inner));
                ipv4([10, 0, 0, 1], [10, 0, 0, 2], 47, &g)
            }
            _ => {
                let mut vx = vec![0x08, 0, 0, 0, 0, 0, 1, 0];
                vx.extend_from_slice(&ether(0x0800, &inner));
                ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17, &udp(9, 4789, &vx))
            }
        };
        let mut f = ether(0x0800, &outer);
        for (at, b) in flips {
            let n = f.len();
            f[at % n] ^= b;
        }
        f.truncate(cut % (f.len() + 1));
        decode_all(1, &f);
    }
}

/// Decodes several frames with one decoder (fragments) and returns the last packet.
fn decode_seq(linktype: u32, frames: &[Vec<u8>]) -> Packet {
    let mut d = Decoder::new(true);
    let mut p = Packet::default();
    for (i, f) in frames.iter().enumerate() {
        let frame = Frame {
            ts: Duration::from_secs(1),
            linktype,
            orig_len: f.len() as u32,
            data: f.clone(),
        };
        d.decode(&frame, i as u64 + 1, &mut p);
    }
    p
}

#[test]
fn a_reassembled_ipv4_datagram_becomes_one_whole_packet() {
    let seg = udp(1000, 53, &[b'x'; 40]);
    // Two fragments: 24 bytes at offset 0 (MF), the rest at offset 24.
    let frag = |off: usize, more: bool, body: &[u8]| {
        let mut ip = ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17, body);
        let fo = (off / 8) as u16 | if more { 0x2000 } else { 0 };
        ip[6..8].copy_from_slice(&fo.to_be_bytes());
        let sum = !netsieve_packet::checksum::sum(&ip[..20], 0) as u16;
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        ether(0x0800, &ip)
    };
    let p = decode_seq(1, &[frag(0, true, &seg[..24]), frag(24, false, &seg[24..])]);
    let ip = p.ip.expect("ip");
    assert!(ip.reassembled);
    assert_eq!(p.payload(), &[b'x'; 40]);
    // Link header, then an IPv4 header that describes the whole datagram.
    assert_eq!(p.data.len(), 14 + 20 + seg.len());
    assert_eq!(&p.data[14 + 20..], seg.as_slice());
    let h = &p.data[14..34];
    assert_eq!(u16::from_be_bytes([h[2], h[3]]) as usize, 20 + seg.len());
    assert_eq!(
        u16::from_be_bytes([h[6], h[7]]) & 0x3fff,
        0,
        "no MF, no offset"
    );
    assert!(netsieve_packet::checksum::valid(h, 0), "header checksum");
}

#[test]
fn a_reassembled_ipv6_datagram_loses_its_fragment_header() {
    let seg = udp(1000, 53, &[b'y'; 40]);
    let frag = |off: usize, more: bool, body: &[u8]| {
        let mut ip = vec![0x60, 0, 0, 0];
        ip.extend_from_slice(&((8 + body.len()) as u16).to_be_bytes());
        ip.extend_from_slice(&[44, 64]);
        ip.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        ip.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        let fo = off as u16 | more as u16;
        ip.extend_from_slice(&[17, 0]);
        ip.extend_from_slice(&fo.to_be_bytes());
        ip.extend_from_slice(&7u32.to_be_bytes());
        ip.extend_from_slice(body);
        ip
    };
    // PPP with a compressed (one-byte) protocol field: 0x57 is IPv6.
    let ppp = |ip: Vec<u8>| [vec![0x57], ip].concat();
    let p = decode_seq(
        9,
        &[
            ppp(frag(0, true, &seg[..16])),
            ppp(frag(16, false, &seg[16..])),
        ],
    );
    assert!(p.ip.expect("ip").reassembled);
    assert_eq!(p.payload(), &[b'y'; 40]);
    assert_eq!(p.data[0], 0x57);
    let h = &p.data[1..41];
    assert_eq!(h[6], 17, "next header is the fragment's");
    assert_eq!(u16::from_be_bytes([h[4], h[5]]) as usize, seg.len());
    assert_eq!(&p.data[41..], seg.as_slice());
}

#[test]
fn nsh_carries_the_packet_in_the_same_frame() {
    // decode-nsh-type2: an NSH header (MD type 2, two words) before an IPv4 packet,
    // then the same with an Ethernet header inside, and a truncated one.
    let inner = ipv4(
        [10, 0, 0, 1],
        [10, 0, 0, 2],
        17,
        &udp(52377, 52464, b"data"),
    );
    let nsh = |next: u8, body: &[u8]| {
        let mut v = vec![0x00, 0x02, 0x02, next, 0, 0, 1, 2];
        v.extend_from_slice(body);
        ether(0x894f, &v)
    };
    for frame in [nsh(1, &inner), nsh(3, &ether(0x0800, &inner))] {
        let p = &decode_all(1, &frame)[0];
        assert_eq!(p.error, None);
        assert_eq!(p.ip.unwrap().src, addr([10, 0, 0, 1]));
        assert_eq!(p.payload(), b"data");
    }
    let p = &decode_all(1, &ether(0x894f, &[0, 2, 2]))[0];
    assert!(p.ip.is_none() && p.error.is_some());
}

#[test]
fn a_rewritten_tcp_payload_gets_a_valid_checksum() {
    let mut t = vec![
        0x30, 0x39, 0x1f, 0x90, 0, 0, 0, 2, 0, 0, 3, 0xe9, 0x50, 0x18,
    ];
    t.extend_from_slice(&[0x10, 0, 0, 0, 0, 0]);
    t.extend_from_slice(b"EVIL");
    let mut frame = ether(0x0800, &ipv4([1, 1, 1, 1], [2, 2, 2, 2], 6, &t));
    // The IPv4 header checksum, so that only TCP's is in question.
    let sum = netsieve_packet::checksum::sum(&frame[14..34], 0) as u16;
    frame[24..26].copy_from_slice(&(!sum).to_be_bytes());
    let mut p = decode_all(1, &frame).remove(0);
    p.rewrite_tcp_payload(b"GOOD");
    assert_eq!(p.payload(), b"GOOD");
    let mut d = Decoder::new(true);
    let mut q = Packet::default();
    let f = Frame {
        ts: Duration::from_secs(1),
        linktype: 1,
        orig_len: p.data.len() as u32,
        data: p.data.clone(),
    };
    d.decode(&f, 1, &mut q);
    assert!(!q.bad_checksum, "the checksum was recomputed");
    // A payload of another length is left alone.
    p.rewrite_tcp_payload(b"TOO LONG");
    assert_eq!(p.payload(), b"GOOD");
}

/// Cisco HDLC (link type 104): address, control and an Ethertype before the packet
/// (decode-chdlc-01).
#[test]
fn cisco_hdlc_frames_carry_ip() {
    let pkt = ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17, &udp(1000, 53, b"q"));
    let frame = [&[0x0f, 0x00, 0x08, 0x00][..], &pkt].concat();
    let p = &decode_all(104, &frame)[0];
    assert_eq!(p.ip.map(|i| i.dst), Some(addr([10, 0, 0, 2])));
    assert_eq!(p.payload(), b"q");
    // A truncated header, or an Ethertype that is not IP, carries nothing.
    for bad in [
        &frame[..3],
        &[&[0x0f, 0x00, 0x08, 0x06][..], &pkt].concat()[..],
    ] {
        assert!(decode_all(104, bad)[0].ip.is_none());
    }
}

/// An IPv6 packet: fixed header, then `ext` (extension headers, the first named by
/// `next`), then the transport bytes.
fn ipv6(next: u8, ext: &[u8]) -> Vec<u8> {
    let mut h = vec![0x60, 0, 0, 0];
    h.extend_from_slice(&(ext.len() as u16).to_be_bytes());
    h.extend_from_slice(&[next, 64]);
    h.extend_from_slice(&[0xfd; 16]);
    h.extend_from_slice(&[0xfe; 16]);
    h.extend_from_slice(ext);
    h
}

/// A fragment header: next header, offset (bytes), more, id.
fn frag_header(next: u8, offset: u16, more: bool, id: u32) -> Vec<u8> {
    let mut f = vec![next, 0];
    f.extend_from_slice(&(offset | u16::from(more)).to_be_bytes());
    f.extend_from_slice(&id.to_be_bytes());
    f
}

/// The events of each packet of a sequence of frames, decoded by one decoder (so that
/// fragments meet).
fn events(frames: &[Vec<u8>]) -> Vec<Vec<&'static str>> {
    let mut d = Decoder::new(false);
    frames
        .iter()
        .enumerate()
        .map(|(i, data)| {
            let frame = Frame {
                ts: Duration::from_secs(1),
                linktype: 1,
                orig_len: data.len() as u32,
                data: data.clone(),
            };
            let mut p = Packet::default();
            d.decode(&frame, i as u64 + 1, &mut p);
            p.events.iter().map(|e| e.name()).collect()
        })
        .collect()
}

#[test]
fn decoder_events_are_raised_where_suricata_raises_them() {
    let v6 = |ext: &[u8], next: u8| ether(0x86dd, &ipv6(next, ext));
    // A fragment header that fragments nothing, and one twice.
    let useless = [frag_header(59, 0, false, 1), vec![0; 8]].concat();
    assert_eq!(events(&[v6(&useless, 44)]), [["ipv6.exthdr_useless_fh"]]);
    // With nothing after it: fine when no header follows; a header that follows needs
    // two bytes at least, or the packet is cut short (measured on the reference).
    let bare = frag_header(59, 0, false, 5);
    assert_eq!(events(&[v6(&bare, 44)]), [["ipv6.exthdr_useless_fh"]]);
    for after in [&[][..], &[0]] {
        let short = [frag_header(6, 0, false, 6), after.to_vec()].concat();
        assert_eq!(
            events(&[v6(&short, 44)]),
            [["ipv6.exthdr_useless_fh", "ipv6.trunc_exthdr"]]
        );
    }
    // A real fragment's rest comes with reassembly: nothing to say yet.
    let first = frag_header(6, 0, true, 7);
    assert!(events(&[v6(&first, 44)])[0].is_empty());
    let twice = [
        frag_header(44, 0, true, 2),
        frag_header(59, 0, true, 2),
        vec![0; 8],
    ]
    .concat();
    assert_eq!(events(&[v6(&twice, 44)]), [["ipv6.exthdr_dupl_fh"]]);
    // A fragment (not the last) of 12 bytes; then one that overlaps it.
    let a = [frag_header(59, 0, true, 3), vec![1; 12]].concat();
    let b = [frag_header(59, 8, false, 3), vec![2; 8]].concat();
    assert_eq!(
        events(&[v6(&a, 44), v6(&b, 44)]),
        [vec!["ipv6.frag_invalid_length"], vec!["ipv6.frag_overlap"]]
    );
    // A fragment that would end past 65,535 bytes.
    let big = [frag_header(59, 65_528, false, 4), vec![0; 16]].concat();
    assert_eq!(events(&[v6(&big, 44)]), [["ipv6.frag_pkt_too_large"]]);
    // An extension header longer than the packet; a destination option of type 0x1e.
    assert_eq!(events(&[v6(&[59, 4, 0, 0], 60)]), [["ipv6.trunc_exthdr"]]);
    let dst = [59, 0, 0x1e, 2, 0, 0, 1, 0];
    assert_eq!(events(&[v6(&dst, 60)]), [["ipv6.dstopts_unknown_opt"]]);
    let padded = [59, 0, 1, 4, 0, 0, 0, 0];
    assert_eq!(events(&[v6(&padded, 60)]), [Vec::<&str>::new()]);
    // Transport headers too small for themselves, and a UDP length that is not the
    // datagram's.
    let v4 = |proto: u8, payload: &[u8]| ether(0x0800, &ipv4([1; 4], [2; 4], proto, payload));
    assert_eq!(events(&[v4(6, &[0; 12])]), [["tcp.pkt_too_small"]]);
    assert_eq!(events(&[v4(17, &[0; 4])]), [["udp.hlen_too_small"]]);
    let mut u = udp(1, 2, b"abcd");
    u[5] = 4;
    assert_eq!(events(&[v4(17, &u)]), [["udp.len_invalid"]]);
    u[5] = 10;
    assert_eq!(events(&[v4(17, &u)]), [["udp.len_invalid"]]);
    assert_eq!(events(&[v4(47, &[0; 2])]), [["gre.pkt_too_small"]]);
    // A well-formed datagram raises none.
    assert_eq!(events(&[v4(17, &udp(1, 2, b"fine"))]), [Vec::<&str>::new()]);
}

/// IPv4 options: the events Suricata 8 raises on each of these packets, in its order,
/// whether the packet is invalid (`decoder.invalid`), and whether it is decoded on
/// (measured on the reference with the same packets).
#[test]
fn ipv4_options_raise_suricatas_events() {
    use netsieve_packet::DecodeEvent as E;
    let cases: &[(&str, &[E], bool, bool)] = &[
        ("94040000", &[E::Ipv4OptPadRequired], false, true),
        ("0101010101010101", &[], false, true),
        (
            "82020000",
            &[E::Ipv4OptPadRequired, E::Ipv4OptInvalidLen],
            true,
            true,
        ),
        (
            "99040000",
            &[E::Ipv4OptPadRequired, E::Ipv4OptInvalid],
            false,
            true,
        ),
        (
            "99090000",
            &[E::Ipv4OptPadRequired, E::Ipv4OptInvalidLen],
            true,
            false,
        ),
        (
            "99010000",
            &[E::Ipv4OptPadRequired, E::Ipv4OptInvalidLen],
            true,
            false,
        ),
        ("8203008203000000", &[E::Ipv4OptDuplicate], false, true),
        (
            "01010199",
            &[E::Ipv4OptPadRequired, E::Ipv4OptEolRequired],
            false,
            true,
        ),
        ("4408030000000000", &[E::Ipv4OptMalformed], true, true),
        ("4408050000000000", &[], false, true),
        ("9406000000000000", &[E::Ipv4OptInvalidLen], true, true),
        ("1908000000000000", &[], false, true),
        ("00ffffff", &[E::Ipv4OptPadRequired], false, true),
        // bug-7414's packet: a security option too short, then one running past.
        (
            "8202f1350000deadbeefaa00",
            &[
                E::Ipv4OptPadRequired,
                E::Ipv4OptInvalidLen,
                E::Ipv4OptInvalidLen,
            ],
            true,
            false,
        ),
    ];
    for &(opts, events, invalid, decoded) in cases {
        let opts: Vec<u8> = (0..opts.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&opts[i..i + 2], 16).unwrap())
            .collect();
        let mut ip = ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17, &udp(1, 2, b"x"));
        ip[0] = 0x45 + (opts.len() / 4) as u8;
        let total = (ip.len() + opts.len()) as u16;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        ip.splice(20..20, opts.iter().copied());
        let p = &decode_all(1, &ether(0x0800, &ip))[0];
        let what = format!("{opts:02x?}: {:?} {:?}", p.events, p.error);
        assert_eq!(p.events, events, "{what}");
        assert_eq!(p.invalid || p.error.is_some(), invalid, "{what}");
        assert_eq!(matches!(p.l4, L4::Udp { .. }), decoded, "{what}");
    }
}
