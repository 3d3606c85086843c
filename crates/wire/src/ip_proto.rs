//! IP protocol numbers (IANA's "Assigned Internet Protocol Numbers") and their names.
//!
//! One table serves every reader of a protocol name: rules (`ip_proto:gre`), tcpdump
//! filters (`ip proto \esp`), iptables rules (`-p sctp`), and EVE records, which name
//! the protocol as Suricata does (`"proto":"TCP"`).

pub const ICMP: u8 = 1;
pub const IGMP: u8 = 2;
pub const IPIP: u8 = 4;
pub const TCP: u8 = 6;
pub const UDP: u8 = 17;
pub const IPV6: u8 = 41;
pub const GRE: u8 = 47;
pub const ESP: u8 = 50;
pub const AH: u8 = 51;
pub const ICMPV6: u8 = 58;
pub const SCTP: u8 = 132;

/// One protocol: its number, the names it is known by (lowercase; the first is the
/// usual one), and the name EVE records give it, where Suricata gives it one.
struct Entry {
    number: u8,
    names: &'static [&'static str],
    eve: Option<&'static str>,
}

const TABLE: &[Entry] = &[
    Entry {
        number: ICMP,
        names: &["icmp"],
        eve: Some("ICMP"),
    },
    Entry {
        number: IGMP,
        names: &["igmp"],
        eve: Some("IGMP"),
    },
    // As tcpdump and iptables read "ipip": IP in IP, protocol 4.
    Entry {
        number: IPIP,
        names: &["ipip", "ipencap"],
        eve: Some("IP-in-IP"),
    },
    Entry {
        number: TCP,
        names: &["tcp"],
        eve: Some("TCP"),
    },
    Entry {
        number: 8,
        names: &["egp"],
        eve: None,
    },
    Entry {
        number: 9,
        names: &["igrp"],
        eve: None,
    },
    Entry {
        number: UDP,
        names: &["udp"],
        eve: Some("UDP"),
    },
    Entry {
        number: IPV6,
        names: &["ipv6"],
        eve: Some("IPv6"),
    },
    Entry {
        number: 46,
        names: &["rsvp"],
        eve: None,
    },
    Entry {
        number: GRE,
        names: &["gre"],
        eve: Some("GRE"),
    },
    Entry {
        number: ESP,
        names: &["esp"],
        eve: Some("ESP"),
    },
    Entry {
        number: AH,
        names: &["ah"],
        eve: None,
    },
    Entry {
        number: ICMPV6,
        names: &["ipv6-icmp", "icmpv6", "icmp6"],
        eve: Some("IPv6-ICMP"),
    },
    Entry {
        number: 89,
        names: &["ospf"],
        eve: None,
    },
    Entry {
        number: 103,
        names: &["pim"],
        eve: None,
    },
    Entry {
        number: 112,
        names: &["vrrp", "carp"],
        eve: None,
    },
    Entry {
        number: SCTP,
        names: &["sctp"],
        eve: Some("SCTP"),
    },
    Entry {
        number: 136,
        names: &["udplite"],
        eve: None,
    },
];

/// The number of a protocol name, in any case (`tcp`, `GRE`, `ipv6-icmp`).
pub fn by_name(name: &str) -> Option<u8> {
    TABLE
        .iter()
        .find(|e| e.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
        .map(|e| e.number)
}

/// The usual name of a protocol number (`gre`), if the table has one.
pub fn name(number: u8) -> Option<&'static str> {
    entry(number).map(|e| e.names[0])
}

/// The protocol as EVE records give it: Suricata's name, or the number.
pub fn eve_name(number: u8) -> String {
    match eve_str(number) {
        Some(n) => n.to_string(),
        None => number.to_string(),
    }
}

/// The protocol's name in EVE when it has one (else EVE writes the number).
pub fn eve_str(number: u8) -> Option<&'static str> {
    entry(number).and_then(|e| e.eve)
}

/// Whether the protocol's header has ports, which EVE records give (TCP, UDP, SCTP).
pub fn has_ports(number: u8) -> bool {
    matches!(number, 6 | 17 | 132)
}

fn entry(number: u8) -> Option<&'static Entry> {
    TABLE.iter().find(|e| e.number == number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_both_ways() {
        for e in TABLE {
            for n in e.names {
                assert_eq!(by_name(n), Some(e.number), "{n}");
                assert_eq!(by_name(&n.to_ascii_uppercase()), Some(e.number), "{n}");
            }
            assert_eq!(name(e.number), Some(e.names[0]));
        }
        assert_eq!(by_name("frob"), None);
        assert_eq!(eve_name(TCP), "TCP");
        assert_eq!(eve_name(ICMPV6), "IPv6-ICMP");
        // As Suricata 8 names them in alert and flow records.
        assert_eq!(eve_name(ESP), "ESP");
        assert_eq!(eve_name(103), "103");
    }

    #[test]
    fn one_entry_per_number_and_name() {
        let mut numbers: Vec<u8> = TABLE.iter().map(|e| e.number).collect();
        numbers.sort();
        numbers.dedup();
        assert_eq!(numbers.len(), TABLE.len());
        let mut names: Vec<&str> = TABLE.iter().flat_map(|e| e.names.iter().copied()).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
    }
}
