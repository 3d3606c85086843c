//! The `ntp` object: one NTP message as Suricata's `ntp` logger writes it (its
//! version, mode, stratum and reference id, the id's bytes in hex joined with colons).
//! `ntp` records (off in Suricata's stock configuration) and alerts on NTP flows
//! carry it.

use netsieve_applayer::ntp::Tx;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// EVE's `ntp` object.
pub(super) struct Object<'a>(pub &'a Tx);

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let id = netsieve_wire::hex::lower_sep(&t.reference_id, ':');
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("version", &t.version)?;
        m.serialize_entry("mode", &t.mode)?;
        m.serialize_entry("stratum", &t.stratum)?;
        m.serialize_entry("reference_id", &id)?;
        m.end()
    }
}
