//! A set's rules are split by where a packet's client is (inside or outside the
//! address list they name most): each rule must still see every packet its addresses
//! admit. The set of many rules against each rule built alone (the truth of its own
//! header check), over random address lists, directions and conversations.

use std::sync::Arc;

use netsieve_detect::{BuildOptions, DetectOptions, RuleSet};
use netsieve_rules::{Classifications, Loaded, Vars};
use proptest::prelude::*;

mod common;

use common::{Msg, conversation};

const LISTS: &[&str] = &[
    "any",
    "$HOME_NET",
    "$EXTERNAL_NET",
    "10.0.0.0/8",
    "!10.0.0.0/8",
    "[10.0.0.1,192.168.0.0/16]",
    "192.168.1.1",
    "[!10.0.0.2,10.0.0.0/8]",
];
const HOSTS: &[[u8; 4]] = &[
    [10, 0, 0, 1],
    [10, 0, 0, 2],
    [192, 168, 1, 1],
    [8, 8, 8, 8],
    [172, 16, 0, 5],
];
const WORDS: &[&str] = &["ab", "xyz", "cab"];

type RuleShape = (bool, usize, usize, bool, usize, u8);

/// An alert rule: protocol, source and destination lists, maybe both ways, a content,
/// maybe a flow direction.
fn rule(sid: u32, (udp, src, dst, both, word, dir): RuleShape) -> String {
    let proto = if udp { "udp" } else { "tcp" };
    let arrow = if both { "<>" } else { "->" };
    let flow = ["", "flow:to_server; ", "flow:to_client; "][dir as usize % 3];
    format!(
        "alert {proto} {} any {arrow} {} any (content:\"{}\"; {flow}sid:{sid};)",
        LISTS[src % LISTS.len()],
        LISTS[dst % LISTS.len()],
        WORDS[word % WORDS.len()]
    )
}

fn build(texts: &[String]) -> Arc<RuleSet> {
    let mut l = Loaded::default();
    l.add_text("t.rules", &texts.join("\n"), &Vars::default());
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    Arc::new(RuleSet::build(
        l.rules,
        &Classifications::bundled(),
        BuildOptions::default(),
    ))
}

fn alerts(set: &Arc<RuleSet>, frames: &[Vec<u8>]) -> Vec<(u32, u64)> {
    let mut v: Vec<(u32, u64)> = common::run(set, frames, DetectOptions::default())
        .iter()
        .map(|a| (set.sig(a.sig).rule.sid, a.packet))
        .collect();
    v.sort_unstable();
    v
}

fn shape() -> impl Strategy<Value = RuleShape> {
    (
        any::<bool>(),
        0usize..LISTS.len(),
        0usize..LISTS.len(),
        any::<bool>(),
        0usize..WORDS.len(),
        0u8..3,
    )
}

fn messages() -> impl Strategy<Value = Vec<Msg>> {
    let host = 0usize..HOSTS.len();
    proptest::collection::vec(
        (
            any::<bool>(),
            host.clone(),
            host,
            proptest::collection::vec(0usize..WORDS.len(), 1..3),
        ),
        1..12,
    )
    .prop_map(|ms| {
        ms.into_iter()
            .map(|(udp, c, s, words)| {
                let payload: Vec<u8> = words
                    .iter()
                    .flat_map(|&w| WORDS[w].bytes().chain([b' ']))
                    .collect();
                Msg::between(udp, (HOSTS[c], 40000), (HOSTS[s], 80), &payload)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_rule_in_a_zoned_set_alerts_as_it_does_alone(
        shapes in proptest::collection::vec(shape(), 1..16),
        msgs in messages(),
    ) {
        let texts: Vec<String> = shapes.iter().enumerate().map(|(i, s)| rule(i as u32 + 1, *s)).collect();
        let frames = conversation(&msgs);
        let mut alone: Vec<(u32, u64)> = texts
            .iter()
            .flat_map(|t| alerts(&build(std::slice::from_ref(t)), &frames))
            .collect();
        alone.sort_unstable();
        prop_assert_eq!(alerts(&build(&texts), &frames), alone);
    }
}
