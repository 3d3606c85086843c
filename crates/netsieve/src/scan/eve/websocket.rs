//! The `websocket` object: one WebSocket frame as Suricata's `websocket` logger writes
//! it (FIN, the masking key when the frame has one, the opcode's name). `websocket`
//! records and alerts on WebSocket flows carry it.

use netsieve_applayer::websocket::{Tx, opcode_name};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// EVE's `websocket` object.
pub(super) struct Object<'a>(pub &'a Tx);

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("fin", &t.fin())?;
        if let Some(k) = t.mask {
            m.serialize_entry("mask", &k)?;
        }
        m.serialize_entry("opcode", &opcode_name(t.opcode))?;
        m.end()
    }
}
