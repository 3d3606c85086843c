//! A rule that judges one payload length (`dsize:N`) is proposed for the packets of
//! that length, not by its fast pattern (`ruleset::PacketKey::Dsize`). Over random UDP
//! and TCP packets, a rule `dsize:N; content:W` must alert on exactly the packets whose
//! payload has N bytes and holds W, next to rules without `dsize` on the same words.

use std::collections::BTreeMap;
use std::sync::Arc;

use netsieve_detect::{BuildOptions, DetectOptions, RuleSet};
use netsieve_rules::{Classifications, Loaded, Vars};
use proptest::prelude::*;

mod common;

use common::{CLIENT, Msg, SERVER, conversation};

const WORDS: &[&str] = &["ab", "abc", "bca", "|00 00|", "zz", "a", "|00|"];

/// The bytes of word `w` (its hex written out).
fn bytes(w: usize) -> Vec<u8> {
    match WORDS[w] {
        "|00 00|" => vec![0, 0],
        "|00|" => vec![0],
        s => s.as_bytes().to_vec(),
    }
}

/// A rule: over UDP or TCP, maybe with `dsize`, one content. (A TCP rule without
/// `dsize` is `tcp-pkt`: a plain one would judge the stream, not each packet.)
type RuleShape = (bool, Option<usize>, usize);

fn rule(sid: usize, (udp, dsize, w): RuleShape) -> String {
    let proto = match (udp, dsize) {
        (true, _) => "udp",
        (false, Some(_)) => "tcp",
        (false, None) => "tcp-pkt",
    };
    let dsize = dsize.map_or(String::new(), |n| format!("dsize:{n}; "));
    format!(
        "alert {proto} any any -> any any ({dsize}content:\"{}\"; sid:{sid};)",
        WORDS[w]
    )
}

fn holds((udp, dsize, w): RuleShape, msg: &Msg) -> bool {
    let pat = bytes(w);
    msg.udp == udp
        && dsize.is_none_or(|n| msg.payload.len() == n)
        && msg.payload.windows(pat.len()).any(|x| x == pat)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_dsize_rule_alerts_on_exactly_the_packets_of_its_length(
        rules in proptest::collection::vec(
            (any::<bool>(), proptest::option::of(1usize..9), 0..WORDS.len()),
            1..12,
        ),
        msgs in proptest::collection::vec(
            (any::<bool>(), proptest::collection::vec(0..WORDS.len(), 0..4)),
            1..16,
        ),
    ) {
        let texts: Vec<String> = rules.iter().enumerate().map(|(i, r)| rule(i + 1, *r)).collect();
        let mut l = Loaded::default();
        l.add_text("t.rules", &texts.join("\n"), &Vars::default());
        prop_assert!(l.errors.is_empty(), "{:?}", l.errors);
        let set = Arc::new(RuleSet::build(l.rules, &Classifications::bundled(), BuildOptions::default()));
        let msgs: Vec<Msg> = msgs
            .iter()
            .map(|(udp, ws)| {
                let payload: Vec<u8> = ws.iter().flat_map(|&w| bytes(w)).collect();
                Msg::between(*udp, (CLIENT, 40000), (SERVER, 80), &payload)
            })
            .collect();
        let mut got: BTreeMap<u32, usize> = BTreeMap::new();
        for a in common::run(&set, &conversation(&msgs), DetectOptions::default()) {
            *got.entry(set.sig(a.sig).rule.sid).or_default() += 1;
        }
        let mut want: BTreeMap<u32, usize> = BTreeMap::new();
        for (i, r) in rules.iter().enumerate() {
            let n = msgs.iter().filter(|m| holds(*r, m)).count();
            if n > 0 {
                want.insert(i as u32 + 1, n);
            }
        }
        prop_assert_eq!(got, want, "{:?}", texts);
    }
}

/// A `dsize` rule added to a set in force (`RuleSet::edit`, in place) is proposed by
/// its length as in a set built with it, and one removed is no longer.
#[test]
fn an_edited_dsize_rule_is_proposed_by_its_length() {
    let parse = |texts: &[&str]| {
        let mut l = Loaded::default();
        l.add_text("t.rules", &texts.join("\n"), &Vars::default());
        assert!(l.errors.is_empty(), "{:?}", l.errors);
        l.rules
    };
    let first = "alert udp any any -> any any (content:\"zz\"; sid:1;)";
    let added = "alert udp any any -> any any (dsize:4; content:\"abc\"; sid:2;)";
    let msgs: Vec<Msg> = [&b"abc "[..], b"abcd", b"abc  ", b"zz"]
        .iter()
        .map(|p| Msg::between(true, (CLIENT, 40000), (SERVER, 53), p))
        .collect();
    let frames = conversation(&msgs);
    let sids = |set: &Arc<RuleSet>| -> Vec<u32> {
        let mut v: Vec<u32> = common::run(set, &frames, DetectOptions::default())
            .iter()
            .map(|a| set.sig(a.sig).rule.sid)
            .collect();
        v.sort_unstable();
        v
    };
    let classes = Classifications::bundled();
    let opts = BuildOptions::default();
    let set = RuleSet::build(parse(&[first]), &classes, opts);
    let grown = Arc::new(set.edit(&[], parse(&[added]), opts));
    // "abc " and "abcd" have 4 bytes and hold "abc"; "abc  " has 5.
    assert_eq!(sids(&grown), vec![1, 2, 2]);
    assert_eq!(
        sids(&Arc::new(RuleSet::build(
            parse(&[first, added]),
            &classes,
            opts
        ))),
        vec![1, 2, 2]
    );
    let shrunk = Arc::new(grown.edit(&[2], Vec::new(), opts));
    assert_eq!(sids(&shrunk), vec![1]);
}
