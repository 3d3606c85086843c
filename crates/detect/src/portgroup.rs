//! Port groups: which rules' fast patterns a TCP or UDP packet's prefilter looks for,
//! by the server's port (the packet's destination port to the server, its source port
//! to the client; the rule set keeps one grouping per direction, built from the rules'
//! destination ports for the one and their source ports for the other).
//!
//! Most rules name their ports (`-> $HOME_NET 445`, `-> any $HTTP_PORTS`). Scanning a
//! packet to port 443 for the fast patterns of SMB or HTTP rules costs matcher time and
//! candidate evaluations for nothing, because the header check rejects them anyway.
//! Suricata therefore splits each protocol's rules into port groups, each with its own
//! multi-pattern matcher; netsieve does the same:
//!
//! 1. Each rule's destination-port set (the union with its source-port set for `<>`
//!    rules, which can see either port as the destination) is computed as intervals.
//!    Rules whose set is every port are *any-port* rules and belong to every group.
//! 2. The boundaries of all sets cut 0..=65535 into elementary ranges; the ranges whose
//!    set of port-specific rules is the same share one group.
//! 3. At most [`MAX_GROUPS`] groups are kept, as in Suricata's group limits: the empty
//!    set (ports no rule names: ephemeral ports, most server-to-client traffic), then the
//!    sets with the most rules. Ranges of the sets left over share one more group holding
//!    the union of their rules, which is a superset, so still correct.
//!
//! A group is a list of rule indices in evaluation order; a 64 Ki-entry table maps a
//! port to its group. The invariant every user relies on: for any port `p`, the group
//! of `p` contains every rule whose port set contains `p` (more rules are allowed; the
//! header check rejects them). `tests::grouping_covers_every_rule_port` checks it.

use std::collections::HashMap;

use netsieve_rules::PortExpr;

/// Upper bound on groups per protocol (each has its own prefilter).
pub const MAX_GROUPS: usize = 32;

/// Sorted, disjoint, inclusive port intervals.
pub type PortSet = Vec<(u16, u16)>;

/// The ports a rule can see as the packet's destination port.
pub fn dest_ports(dport: &PortExpr, sport: &PortExpr, bidirectional: bool) -> PortSet {
    let mut set = intervals(dport);
    if bidirectional {
        set.extend(intervals(sport));
        set = normalize(set);
    }
    set
}

/// A rule's port expression as its intervals, for the header check: `$HTTP_PORTS` is
/// some sixty ports, which [`PortExpr::matches`] walks one by one, and most candidates
/// the header check rejects fail on a port.
#[derive(Debug)]
pub struct Ports(Box<[(u16, u16)]>);

impl Ports {
    pub fn of(e: &PortExpr) -> Ports {
        Ports(intervals(e).into_boxed_slice())
    }

    /// The lowest and highest port of the set (`(1, 0)`, which holds no port, for the
    /// empty set).
    pub fn bounds(&self) -> (u16, u16) {
        match (self.0.first(), self.0.last()) {
            (Some(&(lo, _)), Some(&(_, hi))) => (lo, hi),
            _ => (1, 0),
        }
    }

    /// Whether port `p` is in the set (binary search over the intervals).
    #[inline]
    pub fn contains(&self, p: u16) -> bool {
        let i = self.0.partition_point(|&(_, hi)| hi < p);
        self.0.get(i).is_some_and(|&(lo, _)| lo <= p)
    }
}

/// The ports `e` matches, as intervals: membership only changes at the bounds of the
/// ranges inside `e`, so one test per elementary range suffices.
pub fn intervals(e: &PortExpr) -> PortSet {
    let mut cuts = vec![0u32, 65536];
    collect_cuts(e, &mut cuts);
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    for w in cuts.windows(2) {
        if e.matches(w[0] as u16) {
            out.push((w[0] as u16, (w[1] - 1) as u16));
        }
    }
    normalize(out)
}

fn collect_cuts(e: &PortExpr, cuts: &mut Vec<u32>) {
    match e {
        PortExpr::Any => {}
        PortExpr::Range(lo, hi) => {
            cuts.push(*lo as u32);
            cuts.push(*hi as u32 + 1);
        }
        PortExpr::Not(inner) => collect_cuts(inner, cuts),
        PortExpr::List(items) => items.iter().for_each(|i| collect_cuts(i, cuts)),
    }
}

fn normalize(mut set: PortSet) -> PortSet {
    set.sort_unstable();
    let mut out: PortSet = Vec::with_capacity(set.len());
    for (lo, hi) in set {
        match out.last_mut() {
            Some(last) if lo as u32 <= last.1 as u32 + 1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

fn is_all(set: &PortSet) -> bool {
    set.as_slice() == [(0, 65535)]
}

/// Rules split into port groups.
pub struct PortGroups {
    /// Per group: rule ids (as given to [`PortGroups::build`]) in ascending order.
    pub groups: Vec<Vec<u32>>,
    /// Port to group; empty when there is a single group.
    map: Vec<u8>,
}

impl PortGroups {
    /// Groups `rules` (id and port set, in ascending id order).
    pub fn build(rules: &[(u32, PortSet)]) -> PortGroups {
        let mut any_port = Vec::new();
        let mut cuts = vec![0u32, 65536];
        for (id, set) in rules {
            if is_all(set) {
                any_port.push(*id);
            } else {
                for &(lo, hi) in set {
                    cuts.push(lo as u32);
                    cuts.push(hi as u32 + 1);
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        // Elementary ranges and their port-specific rules, by sweeping rule intervals.
        let n = cuts.len() - 1;
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (id, set) in rules {
            if is_all(set) {
                continue;
            }
            for &(lo, hi) in set {
                let a = cuts.partition_point(|&c| c < lo as u32);
                let b = cuts.partition_point(|&c| c <= hi as u32);
                for m in &mut members[a..b] {
                    m.push(*id);
                }
            }
        }
        // Distinct sets, then the ones kept: the empty set first, then by size.
        let mut distinct: HashMap<&[u32], usize> = HashMap::new();
        let mut sets: Vec<&[u32]> = Vec::new();
        let range_set: Vec<usize> = members
            .iter()
            .map(|m| {
                *distinct.entry(m.as_slice()).or_insert_with(|| {
                    sets.push(m.as_slice());
                    sets.len() - 1
                })
            })
            .collect();
        let mut rank: Vec<usize> = (0..sets.len()).collect();
        rank.sort_by_key(|&s| (!sets[s].is_empty(), std::cmp::Reverse(sets[s].len()), s));
        let keep = if sets.len() <= MAX_GROUPS {
            sets.len()
        } else {
            MAX_GROUPS - 1
        };
        let mut group_of_set = vec![keep; sets.len()];
        for (g, &s) in rank[..keep].iter().enumerate() {
            group_of_set[s] = g;
        }
        let mut specific: Vec<Vec<u32>> = rank[..keep].iter().map(|&s| sets[s].to_vec()).collect();
        if keep < sets.len() {
            let mut rest: Vec<u32> = rank[keep..]
                .iter()
                .flat_map(|&s| sets[s].iter().copied())
                .collect();
            rest.sort_unstable();
            rest.dedup();
            specific.push(rest);
        }
        let groups: Vec<Vec<u32>> = specific
            .into_iter()
            .map(|mut g| {
                g.extend_from_slice(&any_port);
                g.sort_unstable();
                g.dedup();
                g
            })
            .collect();
        let map = if groups.len() <= 1 {
            Vec::new()
        } else {
            let mut map = vec![0u8; 65536];
            for (r, w) in cuts.windows(2).enumerate() {
                let g = group_of_set[range_set[r]] as u8;
                map[w[0] as usize..w[1] as usize].fill(g);
            }
            map
        };
        PortGroups { groups, map }
    }

    /// The groups of the ports in `ports`.
    pub fn groups_of(&self, ports: &PortSet) -> Vec<usize> {
        if self.map.is_empty() {
            return vec![0];
        }
        let mut seen = [false; 256];
        for &(lo, hi) in ports {
            for &g in &self.map[lo as usize..=hi as usize] {
                seen[g as usize] = true;
            }
        }
        (0..256).filter(|&g| seen[g]).collect()
    }

    /// The group of packets to `port`.
    #[inline]
    pub fn group_of(&self, port: u16) -> usize {
        self.map.get(port as usize).map_or(0, |&g| g as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_port_expr() -> impl Strategy<Value = PortExpr> {
        let leaf = prop_oneof![
            1 => Just(PortExpr::Any),
            6 => (0u16..2000, 0u16..64).prop_map(|(lo, w)| PortExpr::Range(lo, lo.saturating_add(w))),
            1 => (60000u16..=65535).prop_map(|p| PortExpr::Range(p, 65535)),
        ];
        leaf.prop_recursive(3, 12, 4, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| PortExpr::Not(Box::new(e))),
                prop::collection::vec(inner, 1..4).prop_map(PortExpr::List),
            ]
        })
    }

    proptest! {
        #[test]
        fn intervals_equal_expression_matching(e in arb_port_expr()) {
            let set = intervals(&e);
            for p in (0..2100u32).chain(59990..65536) {
                let p = p as u16;
                let inside = set.iter().any(|&(lo, hi)| lo <= p && p <= hi);
                prop_assert_eq!(inside, e.matches(p), "port {}", p);
            }
        }

        /// And every port the set holds lies within its bounds, the candidate loop's
        /// first test.
        #[test]
        fn compiled_ports_equal_expression_matching(e in arb_port_expr()) {
            let ports = Ports::of(&e);
            let (lo, hi) = ports.bounds();
            for p in (0..2100u32).chain(59990..65536) {
                let p = p as u16;
                prop_assert_eq!(ports.contains(p), e.matches(p), "port {}", p);
                prop_assert!(!ports.contains(p) || (lo <= p && p <= hi), "port {}", p);
            }
        }

        #[test]
        fn grouping_covers_every_rule_port(
            exprs in prop::collection::vec((arb_port_expr(), arb_port_expr(), any::<bool>()), 1..80)
        ) {
            let rules: Vec<(u32, PortSet)> = exprs
                .iter()
                .enumerate()
                .map(|(i, (d, s, bi))| (i as u32, dest_ports(d, s, *bi)))
                .collect();
            let pg = PortGroups::build(&rules);
            prop_assert!(pg.groups.len() <= MAX_GROUPS);
            for g in &pg.groups {
                prop_assert!(g.windows(2).all(|w| w[0] < w[1]), "sorted, no duplicates");
            }
            for p in (0..2100u32).chain(59990..65536) {
                let p = p as u16;
                let group = &pg.groups[pg.group_of(p)];
                for (i, (d, s, bi)) in exprs.iter().enumerate() {
                    if d.matches(p) || (*bi && s.matches(p)) {
                        prop_assert!(group.binary_search(&(i as u32)).is_ok(), "rule {} port {}", i, p);
                    }
                }
            }
        }
    }

    #[test]
    fn ports_nobody_names_get_the_any_port_rules_only() {
        let http = vec![(80, 80), (8080, 8080)];
        let rules = vec![
            (0, vec![(0, 65535)]),
            (1, http.clone()),
            (2, vec![(445, 445)]),
            (3, http),
        ];
        let pg = PortGroups::build(&rules);
        assert_eq!(pg.groups[pg.group_of(443)], [0]);
        assert_eq!(pg.groups[pg.group_of(80)], [0, 1, 3]);
        assert_eq!(pg.groups[pg.group_of(8080)], [0, 1, 3]);
        assert_eq!(pg.groups[pg.group_of(445)], [0, 2]);
        assert_eq!(pg.groups.len(), 3);
    }

    #[test]
    fn too_many_sets_share_a_superset_group() {
        let rules: Vec<(u32, PortSet)> = (0..100u32)
            .map(|i| (i, vec![(i as u16 * 10, i as u16 * 10)]))
            .collect();
        let pg = PortGroups::build(&rules);
        assert_eq!(pg.groups.len(), MAX_GROUPS);
        for i in 0..100u16 {
            assert!(pg.groups[pg.group_of(i * 10)].contains(&(i as u32)));
        }
        assert!(pg.groups[pg.group_of(5)].is_empty());
    }
}
