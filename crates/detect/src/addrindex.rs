//! An address index for rules without a fast pattern.
//!
//! A rule with no content cannot be reached through the payload prefilter, so without
//! help it is a candidate for every packet of its group. Real rule sets carry thousands
//! of such rules whose only selective condition is an address list: Emerging Threats'
//! IP-reputation rules (`alert ip [1.2.3.4,5.6.7.0/24,...] any -> $HOME_NET any`) are
//! about 1,500 rules with hundreds of addresses each. Checking them one by one costs more
//! than everything else the engine does per packet.
//!
//! This index turns the rules' address lists into *elementary intervals*: the address
//! space cut at every list boundary, each piece holding the sorted ids of the rules that
//! cover it. A lookup is one binary search. Like the payload prefilter it only proposes
//! candidates; the rule's full header check still decides.
//!
//! Only *narrow* lists are indexed (positive items covering few addresses), so a piece
//! rarely holds more than a handful of rules and the index stays linear in the size of
//! the lists. A rule whose lists are all wide (`any`, `$HOME_NET`) stays on its group's
//! `always` list.

use std::net::IpAddr;

use netsieve_rules::AddrExpr;

/// At most this many IPv4 addresses in a list for it to be indexed (a /12).
const MAX_V4: u128 = 1 << 20;
/// At most this many IPv6 addresses (a /28).
const MAX_V6: u128 = 1 << 100;

/// The addresses an expression matches, as sorted, disjoint, non-adjacent inclusive
/// intervals per family. Built once per rule; a membership test is a binary search,
/// where [`AddrExpr::matches`] walks the expression (hundreds of items for reputation
/// lists, nested negations for `$EXTERNAL_NET`).
#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub struct AddrSet {
    pub v4: Vec<(u128, u128)>,
    pub v6: Vec<(u128, u128)>,
}

const V4_MAX: u128 = u32::MAX as u128;

impl AddrSet {
    pub fn all() -> AddrSet {
        AddrSet {
            v4: vec![(0, V4_MAX)],
            v6: vec![(0, u128::MAX)],
        }
    }

    /// The set `e` matches, with Suricata's list semantics: positive items united, minus
    /// the negated ones; a list of only negated items is everything but them.
    pub fn of(e: &AddrExpr) -> AddrSet {
        match e {
            AddrExpr::Any => AddrSet::all(),
            AddrExpr::Net(n, len) => {
                let bits = if n.is_ipv4() { 32u32 } else { 128 };
                let host = bits - (*len as u32).min(bits);
                let mask = if host >= 128 {
                    u128::MAX
                } else {
                    (1u128 << host) - 1
                };
                let lo = key(*n) & !mask;
                let mut s = AddrSet::default();
                if n.is_ipv4() {
                    s.v4.push((lo, (lo | mask).min(V4_MAX)));
                } else {
                    s.v6.push((lo, lo | mask));
                }
                s
            }
            AddrExpr::Range(lo, hi) => {
                let mut s = AddrSet::default();
                if lo.is_ipv4() == hi.is_ipv4() && key(*lo) <= key(*hi) {
                    let v = if lo.is_ipv4() { &mut s.v4 } else { &mut s.v6 };
                    v.push((key(*lo), key(*hi)));
                }
                s
            }
            AddrExpr::Not(inner) => AddrSet::of(inner).complement(),
            AddrExpr::List(items) => {
                let mut pos = AddrSet::default();
                let mut neg = AddrSet::default();
                let mut any_positive = false;
                for i in items {
                    match i {
                        AddrExpr::Not(inner) => neg.extend(AddrSet::of(inner)),
                        _ => {
                            any_positive = true;
                            pos.extend(AddrSet::of(i));
                        }
                    }
                }
                if !any_positive {
                    pos = AddrSet::all();
                }
                pos.normalise();
                neg.normalise();
                pos.minus(&neg)
            }
        }
    }

    fn extend(&mut self, o: AddrSet) {
        self.v4.extend(o.v4);
        self.v6.extend(o.v6);
    }

    fn normalise(&mut self) {
        merge(&mut self.v4);
        merge(&mut self.v6);
    }

    fn complement(&self) -> AddrSet {
        AddrSet {
            v4: complement(&self.v4, V4_MAX),
            v6: complement(&self.v6, u128::MAX),
        }
    }

    fn minus(&self, o: &AddrSet) -> AddrSet {
        let c = o.complement();
        AddrSet {
            v4: intersect(&self.v4, &c.v4),
            v6: intersect(&self.v6, &c.v6),
        }
    }

    pub fn contains(&self, a: IpAddr) -> bool {
        let (v, k) = match a {
            IpAddr::V4(_) => (&self.v4, key(a)),
            IpAddr::V6(_) => (&self.v6, key(a)),
        };
        let i = v.partition_point(|&(lo, _)| lo <= k);
        i > 0 && v[i - 1].1 >= k
    }

    /// Whether the set holds no address.
    pub fn is_empty(&self) -> bool {
        self.v4.is_empty() && self.v6.is_empty()
    }

    /// Whether the set and `o` share an address.
    pub fn meets(&self, o: &AddrSet) -> bool {
        !intersect(&self.v4, &o.v4).is_empty() || !intersect(&self.v6, &o.v6).is_empty()
    }

    /// Whether the set and the complement of `o` share an address.
    pub fn leaves(&self, o: &AddrSet) -> bool {
        !self.minus(o).is_empty()
    }

    /// Whether the set is small enough to index (few addresses: a reputation list,
    /// not `$HOME_NET`).
    pub fn narrow(&self) -> bool {
        (!self.v4.is_empty() || !self.v6.is_empty())
            && count(&self.v4) <= MAX_V4
            && count(&self.v6) <= MAX_V6
    }

    /// Number of addresses covered, v4 and v6 weighed alike (for choosing a side).
    pub fn size(&self) -> u128 {
        count(&self.v4).saturating_add(count(&self.v6))
    }
}

fn count(v: &[(u128, u128)]) -> u128 {
    v.iter().fold(0u128, |a, &(lo, hi)| {
        a.saturating_add(hi - lo).saturating_add(1)
    })
}

/// Sorts and merges overlapping or adjacent intervals.
fn merge(v: &mut Vec<(u128, u128)>) {
    v.sort_unstable();
    let mut out: Vec<(u128, u128)> = Vec::with_capacity(v.len());
    for &(lo, hi) in v.iter() {
        match out.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    *v = out;
}

/// The complement of normalised intervals within `0..=max`.
fn complement(v: &[(u128, u128)], max: u128) -> Vec<(u128, u128)> {
    let mut out = Vec::with_capacity(v.len() + 1);
    let mut next = Some(0u128);
    for &(lo, hi) in v {
        if let Some(n) = next
            && lo > n
        {
            out.push((n, lo - 1));
        }
        next = hi.checked_add(1);
    }
    if let Some(n) = next
        && n <= max
    {
        out.push((n, max));
    }
    out
}

/// The intersection of two normalised interval lists.
fn intersect(a: &[(u128, u128)], b: &[(u128, u128)]) -> Vec<(u128, u128)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if lo <= hi {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

fn key(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => u32::from(a) as u128,
        IpAddr::V6(a) => u128::from(a),
    }
}

/// Elementary intervals of one address family: piece `i` covers
/// `starts[i] .. starts[i + 1]` and holds `rules[offs[i] .. offs[i + 1]]`.
#[derive(Default, Debug)]
struct Pieces {
    starts: Vec<u128>,
    offs: Vec<u32>,
    rules: Vec<u32>,
}

impl Pieces {
    fn build(mut items: Vec<(u128, u128, u32)>) -> Pieces {
        if items.is_empty() {
            return Pieces::default();
        }
        // Events: a rule enters at `lo` and leaves after `hi`.
        let mut events: Vec<(u128, bool, u32)> = Vec::with_capacity(items.len() * 2);
        items.sort_unstable();
        for &(lo, hi, r) in &items {
            events.push((lo, true, r));
            if let Some(end) = hi.checked_add(1) {
                events.push((end, false, r));
            }
        }
        events.sort_unstable_by_key(|e| e.0);
        let mut active: std::collections::BTreeMap<u32, u32> = Default::default();
        let mut p = Pieces::default();
        let mut i = 0;
        while i < events.len() {
            let at = events[i].0;
            while i < events.len() && events[i].0 == at {
                let (_, enter, r) = events[i];
                if enter {
                    *active.entry(r).or_default() += 1;
                } else if let Some(c) = active.get_mut(&r) {
                    *c -= 1;
                    if *c == 0 {
                        active.remove(&r);
                    }
                }
                i += 1;
            }
            p.starts.push(at);
            p.offs.push(p.rules.len() as u32);
            p.rules.extend(active.keys().copied());
        }
        p.offs.push(p.rules.len() as u32);
        p
    }

    fn lookup(&self, k: u128) -> &[u32] {
        let i = self.starts.partition_point(|&s| s <= k);
        if i == 0 {
            return &[];
        }
        &self.rules[self.offs[i - 1] as usize..self.offs[i] as usize]
    }

    fn heap_bytes(&self) -> usize {
        self.starts.capacity() * 16 + self.offs.capacity() * 4 + self.rules.capacity() * 4
    }
}

/// Rules indexed by one packet address (source or destination), both families.
#[derive(Default, Debug)]
pub struct AddrIndex {
    v4: Pieces,
    v6: Pieces,
}

impl AddrIndex {
    /// Builds the index from `(rule, intervals)` pairs.
    pub fn build<'a>(rules: impl IntoIterator<Item = (u32, &'a AddrSet)>) -> AddrIndex {
        let mut v4 = Vec::new();
        let mut v6 = Vec::new();
        for (r, iv) in rules {
            v4.extend(iv.v4.iter().map(|&(lo, hi)| (lo, hi, r)));
            v6.extend(iv.v6.iter().map(|&(lo, hi)| (lo, hi, r)));
        }
        AddrIndex {
            v4: Pieces::build(v4),
            v6: Pieces::build(v6),
        }
    }

    /// The rules whose indexed list contains `a` (sorted, no duplicates).
    pub fn lookup(&self, a: IpAddr) -> &[u32] {
        match a {
            IpAddr::V4(_) => self.v4.lookup(key(a)),
            IpAddr::V6(_) => self.v6.lookup(key(a)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.v4.starts.is_empty() && self.v6.starts.is_empty()
    }

    pub fn heap_bytes(&self) -> usize {
        self.v4.heap_bytes() + self.v6.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsieve_rules::Vars;
    use proptest::prelude::*;

    fn expr(s: &str) -> AddrExpr {
        Vars::default().address(s).unwrap()
    }

    #[test]
    fn wide_lists_are_not_indexed() {
        assert!(!AddrSet::of(&expr("any")).narrow());
        assert!(!AddrSet::of(&expr("!1.2.3.4")).narrow());
        assert!(!AddrSet::of(&expr("$HOME_NET")).narrow());
        assert!(!AddrSet::of(&expr("$EXTERNAL_NET")).narrow());
        assert!(AddrSet::of(&expr("[1.2.3.4,5.6.7.0/24]")).narrow());
        assert!(AddrSet::of(&expr("[5.6.7.0/24,!5.6.7.8]")).narrow());
    }

    fn addr(v: u32) -> IpAddr {
        IpAddr::V4(v.into())
    }

    /// Random expressions over a small corner of the address space (so items overlap),
    /// with nested lists, negation and both families.
    fn arb_expr() -> impl Strategy<Value = AddrExpr> {
        let leaf = prop_oneof![
            Just(AddrExpr::Any),
            (0u32..64, 26u8..=32).prop_map(|(a, l)| AddrExpr::Net(addr(a), l)),
            (0u32..64, 0u32..16).prop_map(|(a, w)| AddrExpr::Range(addr(a), addr(a + w))),
            (0u128..64, 120u8..=128).prop_map(|(a, l)| AddrExpr::Net(IpAddr::V6(a.into()), l)),
        ];
        leaf.prop_recursive(3, 24, 5, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| AddrExpr::Not(Box::new(e))),
                proptest::collection::vec(inner, 1..5).prop_map(AddrExpr::List),
            ]
        })
    }

    proptest! {
        /// The compiled set agrees with the expression walk everywhere.
        #[test]
        fn set_membership_equals_expression_matching(e in arb_expr()) {
            let set = AddrSet::of(&e);
            for a in 0u32..80 {
                prop_assert_eq!(set.contains(addr(a)), e.matches(addr(a)), "{} in {:?}", a, e);
                let v6 = IpAddr::V6((a as u128).into());
                prop_assert_eq!(set.contains(v6), e.matches(v6), "{} in {:?}", v6, e);
            }
            for a in [u32::MAX, u32::MAX - 1, 1 << 31] {
                prop_assert_eq!(set.contains(addr(a)), e.matches(addr(a)));
            }
        }

        /// The index proposes exactly the rules whose list matches the address.
        #[test]
        fn lookup_equals_linear_matching(
            lists in proptest::collection::vec(
                proptest::collection::vec((any::<u32>(), 16u8..=32), 1..6), 1..20),
            probes in proptest::collection::vec(any::<u32>(), 1..50),
        ) {
            let exprs: Vec<AddrExpr> = lists.iter().map(|l| AddrExpr::List(
                l.iter().map(|&(a, len)| AddrExpr::Net(addr(a), len)).collect())).collect();
            let sets: Vec<AddrSet> = exprs.iter().map(AddrSet::of).collect();
            let idx = AddrIndex::build(sets.iter().enumerate().map(|(i, s)| (i as u32, s)));
            // Probe random addresses and the edges of every list item.
            let mut all: Vec<u32> = probes.clone();
            for l in &lists {
                for &(a, len) in l {
                    let m = if len == 32 { 0 } else { u32::MAX >> len };
                    let lo = a & !m;
                    all.extend([lo, lo | m, lo.wrapping_sub(1), (lo | m).wrapping_add(1)]);
                }
            }
            for a in all {
                let want: Vec<u32> = exprs.iter().enumerate()
                    .filter(|(_, e)| e.matches(addr(a))).map(|(i, _)| i as u32).collect();
                prop_assert_eq!(idx.lookup(addr(a)), &want[..], "address {}", addr(a));
            }
        }
    }
}
