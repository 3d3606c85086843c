//! `tag`: once a rule with `tag` alerts, the packets that follow on its flow (`session`)
//! or to and from one of its packet's hosts (`host`) are tagged, for EVE `packet`
//! records, until the tag's count of packets, bytes or seconds is spent.
//!
//! Counted as Suricata counts, measured on its eve-tag tests: the packet that set a tag
//! counts against it (one packet, its bytes) but is not tagged itself, so
//! `tag:session,5,packets` tags the next four packets; a rule that matches again while
//! its tag holds starts the tag over.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use netsieve_rules::{Tag, TagMetric};

/// The most tags one flow or host holds at once (Suricata's limit).
const MAX_TAGS: usize = 50;

/// One tag a rule set: what it counts, and what it counted so far.
#[derive(Clone, Debug)]
struct Entry {
    /// The rule's sid and the tag's place among the rule's tags.
    key: (u32, usize),
    metric: TagMetric,
    count: u64,
    /// The second the tag was set.
    first: u64,
    packets: u64,
    bytes: u64,
}

impl Entry {
    /// Tag `t` (the `nth` of rule `sid`'s) set by a packet of `len` bytes at `ts`.
    fn new((sid, nth): (u32, usize), t: &Tag, ts: Duration, len: u64) -> Entry {
        Entry {
            key: (sid, nth),
            metric: t.metric,
            count: u64::from(t.count),
            first: ts.as_secs(),
            packets: 1,
            bytes: len,
        }
    }

    /// A later packet of `len` bytes at `ts`, counted: whether the tag still holds
    /// (it is spent, and dropped, when not).
    fn holds(&mut self, ts: Duration, len: u64) -> bool {
        self.packets += 1;
        self.bytes += len;
        match self.metric {
            TagMetric::Packets => self.packets <= self.count,
            TagMetric::Bytes => self.bytes <= self.count,
            TagMetric::Seconds => ts.as_secs().saturating_sub(self.first) <= self.count,
        }
    }
}

/// The tags a flow or a host holds.
#[derive(Clone, Debug, Default)]
pub struct Tags(Vec<Entry>);

impl Tags {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A packet of `len` bytes at `ts`: true when a tag holds it. Every tag counts it;
    /// the spent ones go.
    pub fn packet(&mut self, ts: Duration, len: u64) -> bool {
        let mut tagged = false;
        self.0.retain_mut(|e| {
            let holds = e.holds(ts, len);
            tagged |= holds;
            holds
        });
        tagged
    }

    /// Tag `t`, the `nth` of rule `sid`'s, set by a packet of `len` bytes at `ts`; one
    /// the rule set before starts over.
    pub fn set(&mut self, (sid, nth): (u32, usize), t: &Tag, ts: Duration, len: u64) {
        let e = Entry::new((sid, nth), t, ts, len);
        if let Some(x) = self.0.iter_mut().find(|x| x.key == e.key) {
            *x = e;
        } else if self.0.len() < MAX_TAGS {
            self.0.push(e);
        }
    }
}

/// The hosts' tags, by address (one table every worker shares).
#[derive(Debug, Default)]
pub struct HostTags {
    hosts: HashMap<IpAddr, Tags>,
}

impl HostTags {
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// A packet between `src` and `dst`: true when a tag of either holds it (each
    /// host's tags count it).
    pub fn packet(&mut self, src: IpAddr, dst: IpAddr, ts: Duration, len: u64) -> bool {
        let mut tagged = false;
        for host in [src, dst] {
            if let Some(tags) = self.hosts.get_mut(&host) {
                tagged |= tags.packet(ts, len);
                if tags.is_empty() {
                    self.hosts.remove(&host);
                }
            }
        }
        tagged
    }

    /// Tag `t` on `host`, as [`Tags::set`].
    pub fn set(&mut self, host: IpAddr, key: (u32, usize), t: &Tag, ts: Duration, len: u64) {
        self.hosts.entry(host).or_default().set(key, t, ts, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsieve_rules::{TagHost, TagScope};

    fn tag(count: u32, metric: TagMetric) -> Tag {
        Tag {
            scope: TagScope::Host(TagHost::Dst),
            count,
            metric,
        }
    }

    const S: fn(u64) -> Duration = Duration::from_secs;

    /// The packets a fresh tag holds, of `n` packets of `len` bytes, one a second.
    fn held(t: &Tag, n: u64, len: u64) -> Vec<bool> {
        let mut tags = Tags::default();
        tags.set((1, 0), t, S(100), len);
        (1..=n).map(|i| tags.packet(S(100 + i), len)).collect()
    }

    #[test]
    fn the_packet_that_sets_a_tag_counts_against_it() {
        // 5 packets: the one that set it, and four more.
        let got = held(&tag(5, TagMetric::Packets), 6, 60);
        assert_eq!(got, [true, true, true, true, false, false]);
        // 200 bytes: the first 60, then two more of 60.
        let got = held(&tag(200, TagMetric::Bytes), 4, 60);
        assert_eq!(got, [true, true, false, false]);
        // 3 seconds from the second it was set.
        let got = held(&tag(3, TagMetric::Seconds), 5, 60);
        assert_eq!(got, [true, true, true, false, false]);
    }

    #[test]
    fn a_spent_tag_goes_and_a_rule_matching_again_starts_over() {
        let t = tag(2, TagMetric::Packets);
        let mut tags = Tags::default();
        tags.set((1, 0), &t, S(0), 1);
        assert!(tags.packet(S(0), 1));
        assert!(!tags.packet(S(0), 1));
        assert!(tags.is_empty());
        tags.set((1, 0), &t, S(0), 1);
        tags.set((1, 0), &t, S(0), 1);
        assert_eq!(tags.0.len(), 1, "the same rule's tag is set once");
        assert!(tags.packet(S(0), 1));
        for i in 0..(MAX_TAGS + 10) {
            tags.set((i as u32, 0), &t, S(0), 1);
        }
        assert_eq!(tags.0.len(), MAX_TAGS);
    }

    #[test]
    fn a_host_tag_holds_packets_from_and_to_its_host() {
        let (a, b, c): (IpAddr, IpAddr, IpAddr) = (
            "10.0.0.1".parse().unwrap(),
            "10.0.0.2".parse().unwrap(),
            "10.0.0.3".parse().unwrap(),
        );
        let mut hosts = HostTags::default();
        hosts.set(a, (1, 0), &tag(3, TagMetric::Packets), S(0), 1);
        assert!(!hosts.packet(b, c, S(0), 1), "another pair of hosts");
        assert!(hosts.packet(b, a, S(0), 1), "to the host");
        assert!(hosts.packet(a, c, S(0), 1), "from the host");
        assert!(!hosts.packet(a, b, S(0), 1), "spent");
        assert!(hosts.is_empty());
    }
}
