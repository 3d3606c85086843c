//! The flow table on hand-built TCP conversations: handshakes (split ones too), what
//! enters the stream, overlap policy by receiver, and the order in which ended flows
//! are handed back.

use std::time::Duration;

use netsieve_packet::flow::{FlowConfig, FlowTable, TcpState, flow_hash};
use netsieve_packet::reassembly::OverlapPolicy;
use netsieve_packet::{Decoder, Direction, Frame, L4, Packet};

const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const ACK: u8 = 0x10;

/// A raw IPv4 TCP packet from `a` to `b` (last octets of 10.0.0.x, ports 1000 + x).
fn tcp(num: u64, a: u8, b: u8, flags: u8, seq: u32, ack: u32, payload: &[u8]) -> Packet {
    tcp_with_options(num, a, b, flags, seq, ack, &[], payload)
}

/// As [`tcp`], with TCP options (padded to a multiple of 4 bytes with end-of-list).
#[allow(clippy::too_many_arguments)]
fn tcp_with_options(
    num: u64,
    a: u8,
    b: u8,
    flags: u8,
    seq: u32,
    ack: u32,
    options: &[u8],
    payload: &[u8],
) -> Packet {
    let mut opts = options.to_vec();
    opts.resize(options.len().div_ceil(4) * 4, 0);
    let mut t = Vec::new();
    t.extend_from_slice(&(1000 + a as u16).to_be_bytes());
    t.extend_from_slice(&(1000 + b as u16).to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    let words = (5 + opts.len() / 4) as u8;
    t.extend_from_slice(&[words << 4, flags, 0xff, 0xff, 0, 0, 0, 0]);
    t.extend_from_slice(&opts);
    t.extend_from_slice(payload);
    ipv4(num, 6, a, b, &t)
}

/// A raw IPv4 packet of protocol `proto` from 10.0.0.`a` to 10.0.0.`b` carrying `l4`,
/// decoded.
fn ipv4(num: u64, proto: u8, a: u8, b: u8, l4: &[u8]) -> Packet {
    let total = (20 + l4.len()) as u16;
    let mut ip = vec![
        0x45, 0, 0, 0, 0, 1, 0, 0, 64, proto, 0, 0, 10, 0, 0, a, 10, 0, 0, b,
    ];
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(l4);
    let frame = Frame {
        ts: Duration::from_secs(num),
        linktype: 101,
        orig_len: ip.len() as u32,
        data: ip,
    };
    let mut p = Packet::default();
    Decoder::new(false).decode(&frame, num, &mut p);
    p
}

fn stream_text(t: &FlowTable<()>, d: Direction) -> Vec<u8> {
    let mut out = Vec::new();
    t.for_each(|f| out = f.stream(d).render(u64::MAX, usize::MAX));
    out
}

#[test]
fn a_split_handshake_is_established() {
    // tcp-split-handshake-02: SYN, ACK and SYN back from the server, SYN/ACK from the
    // client, ACK from the server.
    let mut t: FlowTable<()> = FlowTable::new(FlowConfig::default());
    let pkts = [
        tcp(1, 1, 2, SYN, 1000, 0, b""),
        tcp(2, 2, 1, ACK, 2000, 1001, b""),
        tcp(3, 2, 1, SYN, 3000, 0, b""),
        tcp(4, 1, 2, SYN | ACK, 1000, 3001, b""),
        tcp(5, 2, 1, ACK, 3001, 1001, b""),
    ];
    for p in &pkts {
        t.packet(p, true);
    }
    let (f, obs) = t
        .packet(&tcp(6, 1, 2, ACK, 1001, 3001, b"EVIL"), true)
        .unwrap();
    assert_eq!(f.state(), TcpState::Established);
    assert!(obs.added);
    assert_eq!(stream_text(&t, Direction::ToServer), b"EVIL");
}

#[test]
fn syn_data_and_data_before_the_handshake_stay_out_of_the_stream() {
    let mut t: FlowTable<()> = FlowTable::new(FlowConfig::default());
    let (_, obs) = t.packet(&tcp(1, 1, 2, SYN, 0, 0, b"Hi all"), true).unwrap();
    assert!(!obs.added);
    // A SYN back without an ACK does not complete anything.
    t.packet(&tcp(2, 2, 1, SYN, 0, 0, b"Hi all"), true);
    let (f, obs) = t.packet(&tcp(3, 1, 2, ACK, 1, 1, b"Hi all"), true).unwrap();
    assert_ne!(f.state(), TcpState::Established);
    assert!(!obs.added);
    assert_eq!(stream_text(&t, Direction::ToServer), b"");
}

/// TCP Fast Open: the data of a client's SYN with a Fast Open option (RFC 7413's kind 34,
/// or kind 254 with the experimental magic 0xF989) follows the SYN in the stream; other
/// options leave it out.
#[test]
fn fast_open_syn_data_enters_the_stream() {
    let cookie = [34, 10, 1, 2, 3, 4, 5, 6, 7, 8];
    let experimental = [254, 4, 0xf9, 0x89];
    let mss = [2, 4, 5, 0xb4];
    for (options, enters) in [
        (&cookie[..], true),
        (&[1, 1, 34, 2][..], true),
        (&experimental[..], true),
        (&[254, 4, 0xf9, 0x88][..], false),
        (&mss[..], false),
        (&[34][..], false),
    ] {
        let mut t: FlowTable<()> = FlowTable::new(FlowConfig::default());
        let syn = tcp_with_options(1, 1, 2, SYN, 100, 0, options, b"GET /");
        assert_eq!(syn.payload(), b"GET /", "{options:?}");
        let (_, obs) = t.packet(&syn, true).unwrap();
        assert_eq!(obs.added, enters, "{options:?}");
        // The SYN/ACK acknowledges the SYN and its data (or only the SYN).
        let acked = if enters { 106 } else { 101 };
        let (f, _) = t
            .packet(&tcp(2, 2, 1, SYN | ACK, 500, acked, b""), true)
            .unwrap();
        assert_eq!(
            f.stream(Direction::ToServer).acked_offset(),
            if enters { 5 } else { 0 }
        );
        t.packet(&tcp(3, 1, 2, ACK, acked, 501, b""), true);
        t.packet(&tcp(4, 1, 2, ACK, acked, 501, b"x"), true);
        let want: &[u8] = if enters { b"GET /x" } else { b"x" };
        assert_eq!(stream_text(&t, Direction::ToServer), want, "{options:?}");
    }
    // Only the client's first SYN: data on the server's SYN/ACK stays out.
    let mut t: FlowTable<()> = FlowTable::new(FlowConfig::default());
    t.packet(&tcp(1, 1, 2, SYN, 100, 0, b""), true);
    let synack = tcp_with_options(2, 2, 1, SYN | ACK, 500, 101, &cookie, b"hello");
    let (_, obs) = t.packet(&synack, true).unwrap();
    assert!(!obs.added);
    assert_eq!(stream_text(&t, Direction::ToClient), b"");
}

#[test]
fn each_stream_takes_its_receivers_overlap_policy() {
    let cfg = FlowConfig {
        policies: vec![
            ("10.0.0.0".parse().unwrap(), 8, OverlapPolicy::Last),
            ("10.0.0.1".parse().unwrap(), 32, OverlapPolicy::First),
        ],
        ..FlowConfig::default()
    };
    assert_eq!(
        cfg.policy_for("10.0.0.2".parse().unwrap()),
        OverlapPolicy::Last
    );
    assert_eq!(
        cfg.policy_for("10.0.0.1".parse().unwrap()),
        OverlapPolicy::First,
        "the longest prefix wins"
    );
    assert_eq!(
        cfg.policy_for("11.0.0.1".parse().unwrap()),
        OverlapPolicy::First
    );
    let mut t: FlowTable<()> = FlowTable::new(cfg);
    t.packet(&tcp(1, 1, 2, SYN, 0, 0, b""), true);
    t.packet(&tcp(2, 2, 1, SYN | ACK, 0, 1, b""), true);
    t.packet(&tcp(3, 1, 2, ACK, 1, 1, b""), true);
    t.packet(&tcp(4, 1, 2, ACK, 1, 1, b"GOOD"), true);
    t.packet(&tcp(5, 1, 2, ACK, 1, 1, b"EVIL"), true);
    t.packet(&tcp(6, 2, 1, ACK, 1, 1, b"good"), true);
    t.packet(&tcp(7, 2, 1, ACK, 1, 1, b"evil"), true);
    // 10.0.0.2 receives the client's stream (last wins); 10.0.0.1 the server's.
    assert_eq!(stream_text(&t, Direction::ToServer), b"EVIL");
    assert_eq!(stream_text(&t, Direction::ToClient), b"good");
}

#[test]
fn ended_flows_come_back_in_the_order_they_began() {
    let cfg = FlowConfig {
        timeout_new: Duration::from_secs(10),
        ..FlowConfig::default()
    };
    let mut t: FlowTable<u32> = FlowTable::new(cfg);
    for (num, a) in [(1, 5), (2, 3), (3, 4)] {
        t.packet(&tcp(num, a, 9, SYN, 0, 0, b""), true)
            .unwrap()
            .0
            .user = a as u32;
    }
    t.packet(&tcp(30, 6, 9, RST, 0, 0, b""), true);
    t.sweep(Duration::from_secs(30));
    let ended: Vec<u32> = t.take_retired().iter().map(|f| f.user).collect();
    assert_eq!(ended, [5, 3, 4]);
    assert!(t.take_retired().is_empty());
    assert_eq!(t.len(), 1);
    assert_eq!(t.drain().len(), 1);
    assert!(t.is_empty());
}

/// A full table evicts half-open flows before established ones, and counts evictions;
/// the TCP session cap (`stream.memcap`) is held too.
#[test]
fn a_syn_flood_evicts_half_open_flows_first() {
    for (max_flows, max_tcp) in [(64, 1 << 20), (1 << 20, 64)] {
        let mut t: FlowTable<()> = FlowTable::new(FlowConfig {
            max_flows,
            max_tcp_sessions: max_tcp,
            timeout_new: Duration::from_secs(1 << 30),
            timeout_established: Duration::from_secs(1 << 30),
            ..FlowConfig::default()
        });
        // An established flow, 10.0.0.1 <-> 10.0.0.2, seen before the flood.
        t.packet(&tcp(1, 1, 2, SYN, 100, 0, b""), true);
        t.packet(&tcp(2, 2, 1, SYN | ACK, 500, 101, b""), true);
        t.packet(&tcp(3, 1, 2, ACK, 101, 501, b""), true);
        // SYNs from 200 other hosts (each a flow that never completes).
        for k in 0..200u8 {
            let syn = tcp(4 + u64::from(k), 10 + k % 240, 2, SYN, 7, 0, b"");
            t.packet(&syn, true);
            assert!(t.len() <= 64, "{} flows", t.len());
        }
        assert!(t.stats().evicted > 0);
        assert_eq!(t.stats().evicted_established, 0);
        let (f, _) = t
            .packet(&tcp(300, 1, 2, ACK, 101, 501, b"GET /"), true)
            .unwrap();
        assert!(f.established(), "the established flow is still there");
        assert_eq!(f.pkts()[Direction::ToServer], 3);
    }
}

/// Flow ids have a fixed definition (FNV-1a of the key and the first packet's time; the
/// value below was computed apart from the code) and stay below 2^53, so JSON readers
/// that hold numbers as doubles read them exactly.
#[test]
fn flow_ids_are_stable_and_below_2_53() {
    let mut t: FlowTable<()> = FlowTable::new(FlowConfig::default());
    let (f, _) = t.packet(&tcp(1, 1, 2, SYN, 100, 0, b""), true).unwrap();
    assert_eq!(f.id(), 7_351_617_782_620_008);
    for k in 0..200u8 {
        let (f, _) = t
            .packet(&tcp(2 + u64::from(k), 3 + k % 250, 2, SYN, 7, 0, b""), true)
            .unwrap();
        assert!(f.id() < 1 << 53, "{}", f.id());
    }
}

#[test]
fn a_new_syn_after_a_reset_starts_the_session_over() {
    // As in tls-subjectaltname's capture: a SYN, a stray ACK, the client's RST. While
    // its SYN waits, the client's RST is not taken (measured on Suricata 8: the flow
    // stays `syn_sent`), and the same SYN again is a retransmission.
    let mut t: FlowTable<()> = FlowTable::new(FlowConfig::default());
    t.packet(&tcp(1, 1, 2, SYN, 1000, 0, b""), true);
    t.packet(&tcp(2, 2, 1, ACK, 7, 5000, b""), true);
    let (f, _) = t.packet(&tcp(3, 1, 2, RST, 5000, 0, b""), true).unwrap();
    assert_eq!(f.state(), TcpState::SynSent);
    let (_, obs) = t.packet(&tcp(4, 1, 2, SYN, 1000, 0, b""), true).unwrap();
    assert!(!obs.reused);
    // An established session the client resets, then opens again on the same ports.
    t.packet(&tcp(5, 2, 1, SYN | ACK, 9000, 1001, b""), true);
    t.packet(&tcp(6, 1, 2, ACK, 1001, 9001, b""), true);
    let (f, _) = t.packet(&tcp(7, 1, 2, RST, 1001, 0, b""), true).unwrap();
    assert_eq!(f.state(), TcpState::Closed);
    let (f, obs) = t.packet(&tcp(8, 1, 2, SYN, 3000, 0, b""), true).unwrap();
    assert!(obs.reused && !obs.new_flow);
    assert_eq!(f.state(), TcpState::SynSent);
    t.packet(&tcp(9, 2, 1, SYN | ACK, 9500, 3001, b""), true);
    t.packet(&tcp(10, 1, 2, ACK, 3001, 9501, b""), true);
    let (f, obs) = t
        .packet(&tcp(11, 1, 2, ACK, 3001, 9501, b"hello"), true)
        .unwrap();
    assert_eq!(f.state(), TcpState::Established);
    assert!(obs.added && !obs.reused);
    assert_eq!(stream_text(&t, Direction::ToServer), b"hello");
    assert_eq!(t.len(), 1);
    // A SYN from the server's side, or on a session that is not closed, is no reuse.
    let (_, obs) = t.packet(&tcp(12, 1, 2, SYN, 3000, 0, b""), true).unwrap();
    assert!(!obs.reused);
}

/// An ICMPv4 error from router 10.0.0.`r` to 10.0.0.`to`, quoting `quoted` (an IP
/// packet, as the tests' `tcp` builds them).
fn icmp_error(num: u64, r: u8, to: u8, quoted: &[u8]) -> Packet {
    let mut icmp = vec![3, 4, 0, 0, 0, 0, 2, 0x40];
    icmp.extend_from_slice(&quoted[..quoted.len().min(28)]);
    ipv4(num, 1, r, to, &icmp)
}

/// What an ICMP error quotes of a TCP packet from 10.0.0.`a` to 10.0.0.`b` (ports
/// 1000 + x): its IP header and first 8 bytes.
fn quoted_tcp(a: u8, b: u8) -> Vec<u8> {
    let mut q = vec![
        0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0, a, 10, 0, 0, b,
    ];
    q.extend_from_slice(&(1000 + a as u16).to_be_bytes());
    q.extend_from_slice(&(1000 + b as u16).to_be_bytes());
    q.extend_from_slice(&1001u32.to_be_bytes());
    q
}

#[test]
fn an_icmp_error_counts_in_the_flow_it_quotes() {
    let mut t: FlowTable<()> = FlowTable::new(FlowConfig::default());
    t.packet(&tcp(1, 1, 2, SYN, 1000, 0, b""), true);
    // The router 10.0.0.9 tells the client its packet to the server did not fit.
    let quoted = quoted_tcp(1, 2);
    let err = icmp_error(3, 9, 1, &quoted);
    assert_eq!(
        flow_hash(&err, true),
        flow_hash(&tcp(4, 2, 1, ACK, 1, 1001, b""), true)
    );
    assert!(t.packet(&err, true).is_none());
    assert_eq!(t.len(), 1);
    let (f, _) = t.packet(&tcp(5, 1, 2, ACK, 1001, 1, b""), true).unwrap();
    assert_eq!(f.pkts()[Direction::ToClient], 1);
    // An error about a flow the table does not hold makes no flow either.
    let other = icmp_error(6, 9, 7, &quoted_tcp(7, 8));
    assert!(t.packet(&other, true).is_none());
    assert_eq!(t.len(), 1);
}

#[test]
fn vlan_ids_key_flows_unless_tracking_is_off() {
    // vlan.use-for-tracking (bug-4376): a conversation whose two directions carry
    // different VLAN tags is two flows, or one with tracking off.
    let tagged = |p: Packet, vlan: u16| Packet {
        vlan: [vlan, 0, 0],
        ..p
    };
    let syn = tagged(tcp(1, 1, 2, SYN, 1000, 0, b""), 100);
    let synack = tagged(tcp(2, 2, 1, SYN | ACK, 5000, 1001, b""), 200);
    for (tracking, flows) in [(true, 2), (false, 1)] {
        let config = FlowConfig {
            vlan_tracking: tracking,
            ..FlowConfig::default()
        };
        let mut t: FlowTable<()> = FlowTable::new(config);
        t.packet(&syn, true);
        t.packet(&synack, true);
        assert_eq!(t.stats().created, flows, "tracking {tracking}");
        assert_eq!(
            flow_hash(&syn, tracking) == flow_hash(&synack, tracking),
            !tracking
        );
    }
}

#[test]
fn async_oneside_establishes_on_the_clients_ack_and_acks_its_data() {
    // stream.async-oneside (bug-2491-01): the client's SYN and ACK, no SYN/ACK seen.
    for async_oneside in [false, true] {
        let config = FlowConfig {
            async_oneside,
            ..FlowConfig::default()
        };
        let mut t: FlowTable<()> = FlowTable::new(config);
        t.packet(&tcp(1, 1, 2, SYN, 1000, 0, b""), true);
        t.packet(&tcp(2, 1, 2, ACK, 1001, 5001, b""), true);
        let (f, _) = t
            .packet(&tcp(3, 1, 2, ACK, 1001, 5001, b"GET / HTTP/1.1\r\n"), true)
            .unwrap();
        assert_eq!(f.established(), async_oneside);
        assert_eq!(f.one_sided(), async_oneside);
        if async_oneside {
            let s = f.stream(Direction::ToServer);
            assert_eq!((s.offset(), s.acked_offset()), (16, 16));
        }
        // The server speaks: the session was not one-sided after all.
        let (f, _) = t.packet(&tcp(4, 2, 1, ACK, 5001, 1017, b""), true).unwrap();
        assert!(!f.one_sided());
    }
}

/// Every flow between two hosts gets one hash, whatever its ports and direction; hosts
/// whose addresses differ by even numbers spread over the remainders a pool of workers
/// takes (a hash whose low bits follow the addresses' low bits would give them one).
#[test]
fn flow_hashes_follow_host_pairs_and_spread_them() {
    let with_port = |mut p: Packet, port: u16| {
        let L4::Tcp(t) = &mut p.l4 else {
            unreachable!()
        };
        t.sport = port;
        p
    };
    let pair = flow_hash(&tcp(1, 1, 2, SYN, 1000, 0, b""), true);
    for port in [20, 21, 1024, 50_000] {
        assert_eq!(
            flow_hash(&with_port(tcp(1, 1, 2, SYN, 1, 0, b""), port), true),
            pair
        );
        assert_eq!(
            flow_hash(&with_port(tcp(1, 2, 1, SYN, 1, 0, b""), port), true),
            pair
        );
    }
    let hashes: Vec<u64> = (1..=64u8)
        .map(|i| flow_hash(&tcp(1, 2 * i, 1, SYN, 1000, 0, b""), true).unwrap())
        .collect();
    for m in [2u64, 3, 4, 7] {
        let mut seen = vec![0; m as usize];
        for h in &hashes {
            seen[(h % m) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 0), "% {m}: {seen:?}");
    }
    let odd = hashes.iter().filter(|h| *h % 2 == 1).count();
    assert!((16..=48).contains(&odd), "{odd} of 64 odd");
}
