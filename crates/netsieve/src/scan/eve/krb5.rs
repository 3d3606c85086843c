//! The `krb5` object: one Kerberos message as Suricata's `krb5` logger writes it (its
//! type, an error's code and the request it answers, the client's and the server's
//! names, the realm, and an answer's encryption and its ticket's). `krb5` records and
//! alerts on Kerberos flows carry it.

use netsieve_applayer::krb5::{Tx, error_name, etype_name, msg_type_name, weak};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// EVE's `krb5` object.
pub(super) struct Object<'a>(pub &'a Tx);

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("msg_type", &msg_type_name(t.msg_type))?;
        if let Some(e) = t.error_code {
            if let Some(r) = t.failed_request {
                m.serialize_entry("failed_request", &msg_type_name(r))?;
            }
            m.serialize_entry("error_code", &error_name(e))?;
        }
        let name = |n: &Option<Vec<String>>| match n {
            Some(parts) => parts.join("/"),
            None => "<empty>".into(),
        };
        m.serialize_entry("cname", &name(&t.cname))?;
        m.serialize_entry("realm", t.realm.as_deref().unwrap_or("<empty>"))?;
        m.serialize_entry("sname", &name(&t.sname))?;
        match t.etype {
            Some(e) => {
                m.serialize_entry("encryption", &etype_name(e))?;
                m.serialize_entry("weak_encryption", &weak(e))?;
            }
            None => {
                m.serialize_entry("encryption", "<none>")?;
                m.serialize_entry("weak_encryption", &false)?;
            }
        }
        if let Some(e) = t.ticket_etype {
            m.serialize_entry("ticket_encryption", &etype_name(e))?;
            m.serialize_entry("ticket_weak_encryption", &weak(e))?;
        }
        m.end()
    }
}
