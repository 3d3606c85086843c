//! The `snmp` object: one SNMP message as Suricata's `snmp` logger writes it (its
//! version, its PDU's type, the variables it names, and its community or USM user).
//! `snmp` records and alerts on SNMP flows carry it.

use netsieve_applayer::snmp::{Tx, pdu_type_name};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// EVE's `snmp` object.
pub(super) struct Object<'a>(pub &'a Tx);

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("version", &t.version)?;
        m.serialize_entry("pdu_type", &pdu_type_name(t.pdu_type))?;
        if !t.vars.is_empty() {
            m.serialize_entry("vars", &t.vars)?;
        }
        if let Some(c) = &t.community {
            m.serialize_entry("community", c)?;
        }
        if let Some(u) = &t.usm {
            m.serialize_entry("usm", u)?;
        }
        m.end()
    }
}
