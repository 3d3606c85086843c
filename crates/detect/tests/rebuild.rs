//! A rule set derived from the one in force (a reload that keeps what was compiled,
//! rules added and removed) must inspect exactly as the same rules built afresh: random
//! rules over random ports and payloads, random packets, the alerts compared.

use std::sync::Arc;

use netsieve_detect::{BuildOptions, DetectOptions, RuleSet};
use netsieve_rules::{Classifications, Loaded, Vars};
use proptest::prelude::*;

mod common;

use common::{CLIENT, Msg, SERVER, conversation};

/// The (sid, packet number) of every alert `set` raises over `frames`.
fn alerts(set: &Arc<RuleSet>, frames: &[Vec<u8>]) -> Vec<(u32, u64)> {
    let out = common::run(set, frames, DetectOptions::default());
    let mut v: Vec<(u32, u64)> = out
        .iter()
        .map(|a| (set.sig(a.sig).rule.sid, a.packet))
        .collect();
    v.sort_unstable();
    v
}

fn parse(texts: &[String]) -> Vec<netsieve_rules::Rule> {
    let mut l = Loaded::default();
    l.add_text("t.rules", &texts.join("\n"), &Vars::default());
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    l.rules
}

/// `texts` read as a reload over `prev` reads them: the rules `prev` holds not parsed.
fn parse_over(prev: &RuleSet, texts: &[String]) -> Vec<netsieve_rules::Rule> {
    let mut l = Loaded::knowing(prev.known_texts(&Classifications::bundled()));
    l.add_text("t.rules", &texts.join("\n"), &Vars::default());
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    l.rules
}

fn build(texts: &[String]) -> RuleSet {
    RuleSet::build(
        parse(texts),
        &Classifications::bundled(),
        BuildOptions::default(),
    )
}

const PORTS: &[&str] = &["any", "80", "443", "[1000:2000]", "!80"];
const WORDS: &[&str] = &["ab", "abc", "bca", "xyz", "zz", "a", "cab", "xyzab"];

/// Rule `sid`: an action, a protocol, a port, one or two contents, maybe a flowbit or a
/// `dsize`.
fn rule(
    sid: u32,
    (action, udp, port, c1, c2, bits): (u8, bool, usize, usize, Option<usize>, u8),
) -> String {
    let action = ["alert", "alert", "alert", "pass", "drop"][action as usize % 5];
    let proto = if udp { "udp" } else { "tcp" };
    let port = PORTS[port % PORTS.len()];
    let mut opts = format!("content:\"{}\"; ", WORDS[c1 % WORDS.len()]);
    if let Some(c) = c2 {
        opts += &format!("content:\"{}\"; ", WORDS[c % WORDS.len()]);
    }
    match bits % 6 {
        1 => opts += "flowbits:set,b1; ",
        2 => opts += "flowbits:isset,b1; ",
        // One payload length: proposed by it, not by the content.
        4 => opts += "dsize:4; ",
        5 => opts += "dsize:8; ",
        _ => {}
    }
    format!("{action} {proto} any any -> any {port} (msg:\"r{sid}\"; {opts}sid:{sid};)")
}

type RuleShape = (u8, bool, usize, usize, Option<usize>, u8);

fn shape() -> impl Strategy<Value = RuleShape> {
    (
        0u8..5,
        any::<bool>(),
        0usize..5,
        0usize..8,
        proptest::option::of(0usize..8),
        0u8..6,
    )
}

fn packets() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let port = prop_oneof![Just(80u16), Just(443), Just(1500), Just(3000), Just(40000)];
    proptest::collection::vec(
        (
            any::<bool>(),
            port.clone(),
            port,
            proptest::collection::vec(0usize..8, 0..4),
        ),
        1..24,
    )
    .prop_map(|ps| {
        let msgs: Vec<(bool, u16, u16, Vec<u8>)> = ps
            .into_iter()
            .map(|(udp, cp, sp, words)| {
                let payload: Vec<u8> = words
                    .iter()
                    .flat_map(|&w| WORDS[w].bytes().chain([b' ']))
                    .collect();
                (udp, cp, sp, payload)
            })
            .collect();
        conversation(
            &msgs
                .iter()
                .map(|(udp, cp, sp, p)| Msg::between(*udp, (CLIENT, *cp), (SERVER, *sp), p))
                .collect::<Vec<_>>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A full reload over the set in force (some rules changed, some not), a rule
    /// added and a rule removed: each inspects as the same rules built afresh.
    #[test]
    fn derived_sets_inspect_as_fresh_ones(
        before in proptest::collection::vec(shape(), 1..20),
        changed in proptest::collection::vec(proptest::option::of(shape()), 1..20),
        edits in proptest::collection::vec((any::<bool>(), shape(), 1u32..24), 1..8),
        frames in packets(),
    ) {
        let old: Vec<String> = before.iter().enumerate().map(|(i, s)| rule(i as u32 + 1, *s)).collect();
        let prev = build(&old);
        // A reload: rule i changed where `changed` says so, the others as they were.
        let new: Vec<String> = old
            .iter()
            .enumerate()
            .map(|(i, t)| match changed.get(i).copied().flatten() {
                Some(s) => rule(i as u32 + 1, s),
                None => t.clone(),
            })
            .collect();
        let rebuilt = Arc::new(prev.rebuild(parse_over(&prev, &new), &Classifications::bundled(), BuildOptions::default()));
        prop_assert_eq!(alerts(&rebuilt, &frames), alerts(&Arc::new(build(&new)), &frames));
        // Rules added and removed one at a time, each set against the same rules
        // built afresh (the added ones after the files' rules, as a reload reads them).
        let mut set = rebuilt;
        let mut now: Vec<(u32, String)> = new.iter().enumerate().map(|(i, t)| (i as u32 + 1, t.clone())).collect();
        for (k, (add, shape, sid)) in edits.into_iter().enumerate() {
            let next = if add {
                let sid = 100 + k as u32;
                let text = rule(sid, shape);
                now.push((sid, text.clone()));
                set.edit(&[], parse(std::slice::from_ref(&text)), BuildOptions::default())
            } else {
                now.retain(|(s, _)| *s != sid);
                set.edit(&[sid], Vec::new(), BuildOptions::default())
            };
            set = Arc::new(next);
            let texts: Vec<String> = now.iter().map(|(_, t)| t.clone()).collect();
            prop_assert_eq!(alerts(&set, &frames), alerts(&Arc::new(build(&texts)), &frames));
            prop_assert_eq!(set.stats().inspected, texts.len());
        }
    }
}

/// What a reload keeps: the rules whose text did not change, and the prefilters whose
/// patterns did not.
#[test]
fn a_reload_keeps_the_unchanged_rules_and_prefilters() {
    let texts: Vec<String> = (1..=40)
        .map(|i| rule(i, (0, i % 2 == 0, i as usize, i as usize, None, 0)))
        .collect();
    let prev = build(&texts);
    let same = prev.rebuild(
        parse(&texts),
        &Classifications::bundled(),
        BuildOptions::default(),
    );
    let kept = same.kept_from(&prev);
    assert_eq!(kept.rules, 40);
    assert!(kept.prefilters_in_set > 0);
    assert_eq!(kept.prefilters, kept.prefilters_in_set);
    // One rule's text changed: it alone is compiled again.
    let mut changed = texts.clone();
    changed[4] = changed[4].replace("msg:\"r5\"", "msg:\"r5 changed\"");
    let next = prev.rebuild(
        parse(&changed),
        &Classifications::bundled(),
        BuildOptions::default(),
    );
    assert_eq!(next.kept_from(&prev).rules, 39);
    // An alert rule added: no prefilter is built again (its pattern goes to a small
    // extra one); a pass rule, which goes before the alerts, makes the groups it is in
    // build theirs again.
    let added = "alert tcp any any -> any 80 (content:\"fresh\"; sid:41;)".to_string();
    let grown = prev.edit(&[], parse(&[added]), BuildOptions::default());
    let kept = grown.kept_from(&prev);
    assert_eq!(kept.rules, 40);
    assert_eq!(kept.prefilters, kept.prefilters_in_set, "{kept:?}");
    let pass = "pass tcp any any -> any 80 (content:\"fresh\"; sid:42;)".to_string();
    let grown = prev.edit(&[], parse(&[pass]), BuildOptions::default());
    let kept = grown.kept_from(&prev);
    assert_eq!(kept.rules, 40);
    assert!(
        kept.prefilters > 0 && kept.prefilters < kept.prefilters_in_set,
        "{kept:?}"
    );
}

/// A flowbit setter added after an edit appended a rule out of order (a drop rule, which
/// goes before the alerts) still runs before the alert rule that tests its bit, as a full
/// build orders them. Found by `derived_sets_inspect_as_fresh_ones` on CI.
#[test]
fn an_added_setter_runs_before_the_tests_already_in_force() {
    let texts = vec![
        rule(1, (0, false, 0, 0, None, 0)),
        rule(3, (0, true, 0, 2, None, 2)),
    ];
    let frames = conversation(&[Msg::between(true, (CLIENT, 80), (SERVER, 80), b"bca ")]);
    let set = Arc::new(build(&texts));
    let drop = rule(101, (4, false, 0, 0, None, 0));
    let set = Arc::new(set.edit(
        &[],
        parse(std::slice::from_ref(&drop)),
        BuildOptions::default(),
    ));
    let setter = rule(102, (0, true, 0, 2, None, 1));
    let set = Arc::new(set.edit(
        &[],
        parse(std::slice::from_ref(&setter)),
        BuildOptions::default(),
    ));
    let all = [texts[0].clone(), texts[1].clone(), drop, setter];
    assert_eq!(alerts(&set, &frames), vec![(3, 1), (102, 1)]);
    assert_eq!(
        alerts(&set, &frames),
        alerts(&Arc::new(build(&all)), &frames)
    );
}

/// A stand-in for a known text that the set rebuilt from does not hold is refused, not
/// compiled as the empty rule it stands for (which would match every packet).
#[test]
fn a_stand_in_the_old_set_does_not_hold_is_refused() {
    let a = vec![rule(1, (0, false, 0, 0, None, 0))];
    let b = vec![rule(2, (0, false, 0, 1, None, 0))];
    let (set_a, set_b) = (build(&a), build(&b));
    // Read as if over set A, rebuilt over set B.
    let stand_ins = parse_over(&set_a, &a);
    assert!(stand_ins[0].known);
    let wrong = set_b.rebuild(
        stand_ins,
        &Classifications::bundled(),
        BuildOptions::default(),
    );
    assert_eq!(wrong.sigs().len(), 0);
    assert_eq!(wrong.stats().compile_errors.len(), 1);
}

/// A detector reloaded between two packets judges the first with the old set and the
/// second with the new one: the handle on the set that each packet takes and gives
/// back (so that no packet writes the set's reference count) must not outlive a
/// reload, nor the old set's prefilters be used for the new set's rules.
#[test]
fn a_reloaded_detector_judges_the_next_packet_with_the_new_set() {
    use netsieve_detect::{Detector, FlowData};
    use netsieve_packet::capture::Frame;
    use netsieve_packet::decode::{Decoder, Packet};
    use netsieve_packet::flow::{FlowConfig, FlowTable};

    let rule = |sid: u32, word: &str| {
        format!("alert udp any any -> any any (content:\"{word}\"; sid:{sid};)")
    };
    let old = Arc::new(build(&[rule(1, "ab")]));
    let new = Arc::new(build(&[rule(2, "ab"), rule(3, "xyz")]));
    let msg = |payload: &[u8]| Msg::between(true, (CLIENT, 1234), (SERVER, 53), payload);
    let frames = conversation(&[msg(b"ab"), msg(b"ab xyz"), msg(b"ab xyz")]);
    let mut det = Detector::new(Arc::clone(&old), DetectOptions::default());
    let mut flows: FlowTable<FlowData> = FlowTable::new(FlowConfig::default());
    let mut decoder = Decoder::new(false);
    // The sids of each packet's alerts, read in the set that was in force for it.
    let mut sids = Vec::new();
    for (i, data) in frames.iter().enumerate() {
        if i == 1 {
            det.reload(Arc::clone(&new), &mut flows);
        }
        let set = if i == 0 { &old } else { &new };
        let frame = Frame {
            ts: std::time::Duration::from_millis(i as u64),
            linktype: 1,
            orig_len: data.len() as u32,
            data: data.clone(),
        };
        let mut p = Packet::default();
        decoder.decode(&frame, i as u64 + 1, &mut p);
        let mut out = Vec::new();
        let (f, obs) = flows.packet(&p, true).expect("a UDP flow");
        det.inspect(&p, Some((f, &obs)), &mut out);
        let mut got: Vec<u32> = out.iter().map(|a| set.sig(a.sig).rule.sid).collect();
        got.sort_unstable();
        sids.push(got);
    }
    assert_eq!(sids, vec![vec![1], vec![2, 3], vec![2, 3]]);
}
