//! The DFC prefilter searches a TCP payload that is the stream's next bytes once, for the
//! packet's rules and, ahead of inspection, for the stream's; the AC prefilter keeps the
//! two passes (the packet, then the stream when inspected). Both must alert alike, in
//! IDS and inline mode, over random rules (stream, packet and positioned contents) and
//! random segment orders: in order, out of order, overlapping retransmissions with other
//! bytes, gaps, and acknowledgements at random points.

use std::sync::Arc;

use netsieve_detect::{BuildOptions, DetectOptions, Mpm, RuleSet};
use netsieve_rules::{Classifications, Loaded, Vars};
use proptest::prelude::*;

mod common;

const WORDS: &[&str] = &["ab", "abc", "bca", "xyz", "zz", "cab", "xyzab", "GET"];

type RuleShape = (u8, usize, Option<usize>, u8);

/// A rule over TCP: plain, tcp-pkt or tcp-stream; one or two contents; maybe a packet
/// keyword (dsize) or an anchored content (depth), which make it judge packets too.
fn rule(sid: u32, (kind, c1, c2, extra): RuleShape) -> String {
    let proto = ["tcp", "tcp", "tcp-pkt", "tcp-stream"][kind as usize % 4];
    let mut opts = format!("content:\"{}\"; ", WORDS[c1 % WORDS.len()]);
    match extra % 4 {
        1 => opts += "depth:12; ",
        2 => opts += "dsize:>2; ",
        _ => {}
    }
    if let Some(c) = c2 {
        opts += &format!("content:\"{}\"; ", WORDS[c % WORDS.len()]);
    }
    format!("alert {proto} any any -> any any (msg:\"r{sid}\"; {opts}sid:{sid};)")
}

fn build(texts: &[String], mpm: Mpm) -> Arc<RuleSet> {
    let mut l = Loaded::default();
    l.add_text("t.rules", &texts.join("\n"), &Vars::default());
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    let opts = BuildOptions {
        mpm,
        ..BuildOptions::default()
    };
    Arc::new(RuleSet::build(l.rules, &Classifications::bundled(), opts))
}

/// A TCP segment between 10.0.0.1:40000 and 10.0.0.2:80.
fn segment(to_server: bool, flags: u8, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
    common::tcp_segment(80, to_server, flags, seq, ack, payload)
}

/// One client segment: where it starts in the client's stream, what it carries, and
/// whether the server acknowledges everything sent so far after it.
type Seg = (usize, Vec<u8>, bool);

/// Segments of one stream text cut at random places (so that patterns straddle them),
/// sent in a random order, some sent again with other bytes.
fn segments() -> impl Strategy<Value = Vec<Seg>> {
    let text =
        proptest::collection::vec((0usize..WORDS.len(), any::<bool>()), 1..8).prop_map(|ws| {
            ws.iter()
                .flat_map(|&(w, dot)| {
                    let tail: &[u8] = if dot { b"." } else { b"" };
                    WORDS[w].bytes().chain(tail.iter().copied())
                })
                .collect::<Vec<u8>>()
        });
    (
        text,
        proptest::collection::vec((0usize..64, 1usize..9, any::<bool>(), 0u8..6), 1..14),
    )
        .prop_map(|(text, cuts)| {
            cuts.into_iter()
                .map(|(at, len, ack, how)| {
                    let at = at % text.len();
                    let end = (at + len).min(text.len());
                    let mut bytes = text[at..end].to_vec();
                    if how == 0 {
                        // Sent again with other bytes.
                        bytes.iter_mut().for_each(|b| *b = b'x');
                    }
                    (at, bytes, ack)
                })
                .collect()
        })
}

/// The same text in order, in random cuts, each acknowledged or not.
fn in_order() -> impl Strategy<Value = Vec<Seg>> {
    (
        proptest::collection::vec(0usize..WORDS.len(), 1..10),
        proptest::collection::vec((1usize..7, any::<bool>()), 1..20),
    )
        .prop_map(|(ws, cuts)| {
            let text: Vec<u8> = ws.iter().flat_map(|&w| WORDS[w].bytes()).collect();
            let mut out = Vec::new();
            let mut at = 0;
            for (len, ack) in cuts {
                if at >= text.len() {
                    break;
                }
                let end = (at + len).min(text.len());
                out.push((at, text[at..end].to_vec(), ack));
                at = end;
            }
            out
        })
}

fn frames(segs: &[Seg]) -> Vec<Vec<u8>> {
    let (c, s) = (1001u32, 5001u32);
    let mut out = vec![
        segment(true, 0x02, 1000, 0, b""),
        segment(false, 0x12, 5000, c, b""),
        segment(true, 0x10, c, s, b""),
    ];
    let mut high = 0usize;
    for (at, bytes, ack) in segs {
        out.push(segment(true, 0x18, c + *at as u32, s, bytes));
        high = high.max(at + bytes.len());
        if *ack {
            out.push(segment(false, 0x10, s, c + high as u32, b""));
        }
    }
    out
}

fn alerts(set: &Arc<RuleSet>, frames: &[Vec<u8>], inline: bool) -> Vec<(u32, u64)> {
    let opts = DetectOptions {
        inline,
        ..DetectOptions::default()
    };
    let mut v: Vec<(u32, u64)> = common::run(set, frames, opts)
        .iter()
        .map(|a| (set.sig(a.sig).rule.sid, a.packet))
        .collect();
    v.sort_unstable();
    v
}

fn shape() -> impl Strategy<Value = RuleShape> {
    (
        0u8..4,
        0usize..WORDS.len(),
        proptest::option::of(0usize..WORDS.len()),
        0u8..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn one_pass_alerts_as_two_passes(
        shapes in proptest::collection::vec(shape(), 1..12),
        segs in prop_oneof![segments(), in_order()],
        inline in any::<bool>(),
    ) {
        let texts: Vec<String> = shapes.iter().enumerate().map(|(i, s)| rule(i as u32 + 1, *s)).collect();
        let frames = frames(&segs);
        let dfc = alerts(&build(&texts, Mpm::Dfc), &frames, inline);
        let ac = alerts(&build(&texts, Mpm::Ac), &frames, inline);
        prop_assert_eq!(dfc, ac);
    }
}

/// In order, each segment acknowledged: the common case, where every payload is fed
/// ahead; alerts on the packet and on the stream as the reference gives them.
#[test]
fn in_order_segments_alert_on_packet_and_stream() {
    let texts = vec![
        rule(1, (0, 0, None, 0)),
        rule(2, (2, 7, None, 0)),
        rule(3, (0, 7, None, 1)),
        rule(4, (3, 4, None, 0)),
    ];
    let segs: Vec<Seg> = vec![
        (0, b"GET.ab.".to_vec(), true),
        (7, b"zz".to_vec(), false),
        (9, b"z.".to_vec(), true),
    ];
    let frames = frames(&segs);
    let dfc = alerts(&build(&texts, Mpm::Dfc), &frames, false);
    assert_eq!(dfc, alerts(&build(&texts, Mpm::Ac), &frames, false));
    let sids: Vec<u32> = dfc.iter().map(|a| a.0).collect();
    for sid in [1, 2, 3, 4] {
        assert!(sids.contains(&sid), "{sid} missing from {dfc:?}");
    }
}
