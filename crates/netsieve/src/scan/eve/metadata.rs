//! EVE's `metadata` object, on every record of a flow that has variables: its flowbits
//! (but the `traffic/...` ones, which the `traffic` object writes), flowints, flow
//! variables and entropy values, and on alerts the packet's variables, as Suricata 8
//! writes them (measured: eve-metadata, detect-pcre-06, entropy-01).

use netsieve_detect::RuleSet;
use netsieve_detect::vars::{Metadata, Named};
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

/// [`Metadata`] as EVE writes it, names taken from the rule set.
pub(super) struct Object<'a> {
    m: &'a Metadata,
    set: &'a RuleSet,
}

impl<'a> Object<'a> {
    /// The object, when it has something to write.
    pub fn of(m: Option<&'a Metadata>, set: &'a RuleSet) -> Option<Object<'a>> {
        let o = Object { m: m?, set };
        let empty = o.flowbits().next().is_none()
            && o.m.flowints.is_empty()
            && o.m.flow.is_empty()
            && o.m.pktvars.is_empty();
        (!empty).then_some(o)
    }

    fn flowbits(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        let set = self.set;
        self.m
            .flowbits
            .iter()
            .map(move |&b| set.flowbit_name(b))
            .filter(|n| !n.starts_with("traffic/"))
    }
}

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.m;
        let mut o = s.serialize_map(None)?;
        let bits: Vec<&str> = self.flowbits().collect();
        if !bits.is_empty() {
            o.serialize_entry("flowbits", &bits)?;
        }
        if !m.flowints.is_empty() {
            let ints = Ints(&m.flowints, self.set);
            o.serialize_entry("flowints", &ints)?;
        }
        if !m.flow.vars.is_empty() {
            o.serialize_entry("flowvars", &Vars(&m.flow.vars))?;
        }
        if !m.pktvars.is_empty() {
            o.serialize_entry("pktvars", &Vars(&m.pktvars))?;
        }
        if !m.flow.entropy.is_empty() {
            let mut e = serde_json::Map::new();
            for (k, v) in m.flow.entropy.iter() {
                e.insert(k.to_string(), serde_json::json!(v));
            }
            o.serialize_entry("entropy", &e)?;
        }
        o.end()
    }
}

/// `flowints`: `{name: value}`.
struct Ints<'a>(&'a [(u32, u64)], &'a RuleSet);

impl Serialize for Ints<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_map(Some(self.0.len()))?;
        for &(id, v) in self.0 {
            o.serialize_entry(self.1.flowbit_name(id), &v)?;
        }
        o.end()
    }
}

/// `flowvars` and `pktvars`: `[{name: value}, ...]`, in the order they were set.
struct Vars<'a>(&'a Named<Vec<u8>>);

impl Serialize for Vars<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for (name, value) in self.0.iter() {
            let mut one = serde_json::Map::new();
            let text = String::from_utf8_lossy(value).into_owned();
            one.insert(name.to_string(), serde_json::Value::String(text));
            seq.serialize_element(&one)?;
        }
        seq.end()
    }
}

/// A record with the `metadata` object after its own fields.
#[derive(Serialize)]
pub(super) struct With<'a, R: Serialize> {
    #[serde(flatten)]
    pub rec: R,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object<'a>>,
}
