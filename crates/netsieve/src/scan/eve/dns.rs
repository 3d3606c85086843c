//! The `dns` object: one DNS message in Suricata 8's version 3 form, with its flags,
//! questions, and a response's answers (also grouped by type), authorities and
//! additional records. Alerts on DNS and `dns` records carry it.

use std::collections::BTreeMap;

use netsieve_detect::log::{DnsData, DnsMeta, DnsRecord};
use serde::Serialize;
use serde::ser::SerializeMap;

/// [`DnsMeta`] of transaction `tx_id`, as EVE writes it.
pub(super) struct Object<'a> {
    pub tx_id: u64,
    pub m: &'a DnsMeta,
}

/// The header's flag bits EVE names, each written when set.
const FLAGS: &[(&str, u16)] = &[
    ("qr", 0x8000),
    ("aa", 0x0400),
    ("tc", 0x0200),
    ("rd", 0x0100),
    ("ra", 0x0080),
    ("z", 0x0040),
];

impl Serialize for Object<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.m;
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("version", &3)?;
        let kind = if m.response { "response" } else { "request" };
        o.serialize_entry("type", kind)?;
        o.serialize_entry("tx_id", &self.tx_id)?;
        o.serialize_entry("id", &m.id)?;
        o.serialize_entry("flags", &format!("{:x}", m.flags))?;
        for (name, bit) in FLAGS {
            if m.flags & bit != 0 {
                o.serialize_entry(name, &true)?;
            }
        }
        o.serialize_entry("opcode", &m.opcode)?;
        o.serialize_entry("rcode", &m.rcode)?;
        let queries: Vec<_> = m
            .queries
            .iter()
            .map(|(name, ty, cut)| Query {
                rrname: name,
                rrname_truncated: *cut,
                rrtype: ty,
            })
            .collect();
        o.serialize_entry("queries", &queries)?;
        if !m.answers.is_empty() {
            o.serialize_entry("answers", &Records(&m.answers))?;
            let mut grouped: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for a in &m.answers {
                if let DnsData::Text(t) = &a.data {
                    grouped.entry(&a.rtype).or_default().push(t);
                }
            }
            o.serialize_entry("grouped", &grouped)?;
        }
        if !m.authorities.is_empty() {
            o.serialize_entry("authorities", &Records(&m.authorities))?;
        }
        if !m.additionals.is_empty() {
            o.serialize_entry("additionals", &Records(&m.additionals))?;
        }
        o.end()
    }
}

#[derive(Serialize)]
struct Query<'a> {
    rrname: &'a str,
    /// Written only for a name cut at 1025 bytes, as Suricata writes it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    rrname_truncated: bool,
    rrtype: &'a str,
}

struct Records<'a>(&'a [DnsRecord]);

impl Serialize for Records<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(Record))
    }
}

/// One resource record: its name, type and ttl, then its data as its type writes it.
struct Record<'a>(&'a DnsRecord);

impl Serialize for Record<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("rrname", &r.name)?;
        o.serialize_entry("rrtype", &r.rtype)?;
        o.serialize_entry("ttl", &r.ttl)?;
        match &r.data {
            DnsData::Text(t) => o.serialize_entry("rdata", t)?,
            DnsData::Soa(soa) => o.serialize_entry(
                "soa",
                &Soa {
                    mname: &String::from_utf8_lossy(&soa.mname),
                    rname: &String::from_utf8_lossy(&soa.rname),
                    serial: soa.serial,
                    refresh: soa.refresh,
                    retry: soa.retry,
                    expire: soa.expire,
                    minimum: soa.minimum,
                },
            )?,
            DnsData::Opt(opts) => {
                let opts: Vec<_> = opts
                    .iter()
                    .map(|(code, data)| Opt { code: *code, data })
                    .collect();
                o.serialize_entry("opt", &opts)?
            }
            DnsData::None => {}
        }
        o.end()
    }
}

#[derive(Serialize)]
struct Soa<'a> {
    mname: &'a str,
    rname: &'a str,
    serial: u32,
    refresh: u32,
    retry: u32,
    expire: u32,
    minimum: u32,
}

#[derive(Serialize)]
struct Opt<'a> {
    code: u16,
    data: &'a str,
}
