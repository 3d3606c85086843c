//! The `dcerpc` object: one DCE/RPC call, as Suricata's `dcerpc` logger writes it (the
//! PDU types of its two sides, a request's operation and the sizes of its stub data, the
//! interfaces of a bind or of the request's context). `dcerpc` records and alerts on
//! DCE/RPC flows carry it.

use netsieve_applayer::dcerpc::{Interface, Part, Tx, ptype_name};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// EVE's `dcerpc` object.
pub(super) struct Object<'a>(pub &'a Tx);

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut m = s.serialize_map(None)?;
        if let Some(p) = t.request.ptype {
            m.serialize_entry("request", ptype_name(p))?;
        }
        if t.is_request() {
            m.serialize_entry("req", &Request(t))?;
        }
        if !t.interfaces.is_empty() {
            let list: Vec<_> = t.interfaces.iter().map(|i| Iface(i, false)).collect();
            m.serialize_entry("interfaces", &list)?;
        }
        match t.response.ptype {
            Some(p) => {
                m.serialize_entry("response", ptype_name(p))?;
                if t.is_request() {
                    m.serialize_entry("res", &Fragments(&t.response))?;
                }
            }
            None => m.serialize_entry("response", "UNREPLIED")?,
        }
        m.serialize_entry("call_id", &t.call_id)?;
        m.serialize_entry("rpc_version", &format!("5.{}", t.minor))?;
        m.end()
    }
}

/// `req`: the operation, then the request's fragments and stub size.
struct Request<'a>(&'a Tx);

impl Serialize for Request<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("opnum", &self.0.opnum.unwrap_or(0))?;
        m.serialize_entry("frag_cnt", &self.0.request.frags)?;
        m.serialize_entry("stub_data_size", &self.0.request.stub_size)?;
        m.end()
    }
}

/// `res` (and SMB's `req`): a side's fragments and stub size.
pub(super) struct Fragments<'a>(pub &'a Part);

impl Serialize for Fragments<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("frag_cnt", &self.0.frags)?;
        m.serialize_entry("stub_data_size", &self.0.stub_size)?;
        m.end()
    }
}

/// An interface, with its bind's answer once read (and, as SMB's records write it, the
/// answer's reason: `with_reason`).
pub(super) struct Iface<'a>(pub &'a Interface, pub bool);

impl Serialize for Iface<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Iface(i, with_reason) = *self;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("uuid", &i.uuid_text())?;
        m.serialize_entry("version", &format!("{}.{}", i.version, i.minor))?;
        if let Some(r) = i.ack_result {
            m.serialize_entry("ack_result", &r)?;
            if with_reason {
                m.serialize_entry("ack_reason", &0)?;
            }
        }
        m.end()
    }
}
