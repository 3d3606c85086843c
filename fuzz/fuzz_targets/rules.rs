//! Rule text and threshold.config text from an attacker: parsing, printing (a printed
//! rule must read back as the same rule), compiling (contents,
//! pcre with both engines, byte keywords, port groups, prefilters) and evaluating the
//! compiled options over the input itself must never panic or hang. Lines `var NAME
//! VALUE` and `portvar NAME VALUE` (Snort's syntax) define the variables the rules use,
//! so variables that expand each other are reached too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netsieve_detect::eval::{Ctx, matches};
use netsieve_detect::{BuildOptions, RuleSet};
use netsieve_rules::{Classifications, Match, Rule, ThresholdConfig, Vars, parse_rule};

/// The rule without the columns its pcres were found at.
fn placeless(mut r: Rule) -> Rule {
    for l in &mut r.lists {
        for m in &mut l.matches {
            if let Match::Pcre(p) = m {
                p.column = 0;
            }
        }
    }
    r
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut vars = Vars::default();
    for line in text.lines() {
        let mut w = line.splitn(3, ' ');
        match (w.next(), w.next(), w.next()) {
            (Some("var"), Some(name), Some(value)) => {
                vars.set_address(name, value);
            }
            (Some("portvar"), Some(name), Some(value)) => {
                vars.set_port(name, value);
            }
            _ => {}
        }
    }
    let _ = ThresholdConfig::parse(&text, &vars);
    let rules: Vec<_> = text
        .lines()
        .take(64)
        .filter_map(|l| parse_rule(l, &vars).ok())
        .collect();
    // A printed rule reads back as the same rule.
    for r in &rules {
        let printed = r.to_string();
        let back =
            parse_rule(&printed, &Vars::default()).unwrap_or_else(|e| panic!("{printed}: {e}"));
        assert_eq!(placeless(back), placeless(r.clone()), "{printed}");
    }
    if rules.is_empty() {
        return;
    }
    let set = RuleSet::build(rules, &Classifications::bundled(), BuildOptions::default());
    for s in set.sigs() {
        for l in &s.lists {
            let _ = matches(l, data, &mut Ctx::default());
        }
    }
});
