//! The content evaluator against a brute-force reference: one or two contents with
//! offset/depth/distance/within/nocase/negation, over random short buffers. The
//! reference tries every placement of every content (no backtracking shortcuts).

use netsieve_detect::eval::{Ctx, compile_list, matches};
use netsieve_detect::pcre::Regexes;
use netsieve_rules::{Content, Match, Val};
use proptest::prelude::*;

fn occurs(c: &Content, hay: &[u8], at: usize) -> bool {
    let n = c.pattern.len();
    at + n <= hay.len()
        && if c.nocase {
            hay[at..at + n].eq_ignore_ascii_case(&c.pattern)
        } else {
            hay[at..at + n] == c.pattern[..]
        }
}

fn num(v: &Option<Val>) -> Option<i64> {
    v.as_ref().map(|v| match v {
        Val::Num(n) => *n,
        Val::Var(_) => unreachable!(),
    })
}

/// Placements (start) allowed for `c` given the previous match end `prev`.
fn allowed(c: &Content, hay: &[u8], prev: usize, at: usize) -> bool {
    let n = c.pattern.len() as i64;
    let at_i = at as i64;
    if c.distance.is_some() || c.within.is_some() {
        let d = num(&c.distance).unwrap_or(0);
        if at_i < (prev as i64 + d).max(0) {
            return false;
        }
        if let Some(w) = num(&c.within)
            && at_i + n > prev as i64 + d + w
        {
            return false;
        }
    } else {
        let o = num(&c.offset).unwrap_or(0).max(0);
        if at_i < o {
            return false;
        }
        if let Some(dp) = num(&c.depth)
            && at_i + n > o + dp
        {
            return false;
        }
    }
    occurs(c, hay, at)
}

fn reference(cs: &[Content], hay: &[u8], prev: usize) -> bool {
    let Some((c, rest)) = cs.split_first() else {
        return true;
    };
    let any = (0..=hay.len()).any(|at| allowed(c, hay, prev, at));
    if c.negated {
        return !any && reference(rest, hay, prev);
    }
    (0..=hay.len())
        .filter(|&at| allowed(c, hay, prev, at))
        .any(|at| reference(rest, hay, at + c.pattern.len()))
}

fn content() -> impl Strategy<Value = Content> {
    (
        prop::collection::vec(prop::sample::select(b"abAB".to_vec()), 1..4),
        any::<bool>(),
        prop::option::of(0i64..6),
        prop::option::of(1i64..10),
        prop::option::of(-3i64..5),
        prop::option::of(1i64..10),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(pattern, nocase, off, depth, dist, within, rel, neg)| Content {
                pattern,
                nocase,
                negated: neg && !rel,
                offset: if rel { None } else { off.map(Val::Num) },
                depth: if rel { None } else { depth.map(Val::Num) },
                distance: if rel { dist.map(Val::Num) } else { None },
                within: if rel { within.map(Val::Num) } else { None },
                ..Content::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    #[test]
    fn contents_agree_with_reference(
        cs in prop::collection::vec(content(), 1..4),
        hay in prop::collection::vec(prop::sample::select(b"abAB".to_vec()), 0..24),
    ) {
        // A negated content is evaluated where it stands: keep it off the relative
        // ones (its window is not defined by a match end in the reference).
        let list: Vec<Match> = cs.iter().cloned().map(Match::Content).collect();
        let compiled = compile_list(&list, &mut Vec::new(), &Regexes::default()).unwrap();
        let got = matches(&compiled, &hay, &mut Ctx::default());
        prop_assert_eq!(got, reference(&cs, &hay, 0), "{:?} on {:?}", cs, String::from_utf8_lossy(&hay));
    }
}
