//! The reference: a plain linear first-match over the ordered rules, as netfilter walks a
//! chain. Every fast path is tested against it.

use crate::rule::*;

/// A classification result: the position of the first matching rule (None: the policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub rule: Option<usize>,
    pub action: Action,
}

/// A rule list with the state of its stateful matches.
#[derive(Clone, Debug)]
pub struct Linear {
    rules: Vec<Rule>,
    state: Vec<Vec<MatchState>>,
    policy: Action,
}

impl Linear {
    pub fn new(set: &RuleSet) -> Linear {
        Linear {
            state: set.rules.iter().map(Rule::new_state).collect(),
            rules: set.rules.clone(),
            policy: set.policy,
        }
    }
    pub fn len(&self) -> usize {
        self.rules.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
    pub fn insert(&mut self, pos: usize, rule: Rule) {
        self.state.insert(pos, rule.new_state());
        self.rules.insert(pos, rule);
    }
    pub fn delete(&mut self, pos: usize) {
        self.rules.remove(pos);
        self.state.remove(pos);
    }
    pub fn classify(&mut self, p: &Packet<'_>) -> Verdict {
        for (i, (r, st)) in self.rules.iter().zip(self.state.iter_mut()).enumerate() {
            if r.matches(p, st) {
                return Verdict {
                    rule: Some(i),
                    action: r.action,
                };
            }
        }
        Verdict {
            rule: None,
            action: self.policy,
        }
    }
    /// Header fields only, for sets of simple rules: no state is touched.
    pub fn classify_key(&self, k: &Key) -> Option<usize> {
        self.rules.iter().position(|r| r.header_matches(k))
    }
}
