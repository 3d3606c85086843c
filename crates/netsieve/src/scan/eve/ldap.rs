//! The `ldap` object: one LDAP operation as Suricata's `ldap` logger writes it (its
//! request with the message ID, then its responses, each under its operation's
//! name). `ldap` records and alerts on LDAP flows carry it.

use netsieve_applayer::ldap::filter::PartialAttribute;
use netsieve_applayer::ldap::proto::{AuthenticationChoice, LdapResult, ProtocolOp};
use netsieve_applayer::ldap::{Message, Tx};
use netsieve_detect::log::escaped;
use netsieve_wire::ldap::{OPERATIONS, RESULT_CODES, name_of};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use std::borrow::Cow;

/// EVE's `ldap` object.
pub(super) struct Object<'a>(pub &'a Tx);

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut m = s.serialize_map(None)?;
        if let Some(r) = &t.request {
            m.serialize_entry("request", &Request(r))?;
        }
        if !t.responses.is_empty() {
            let responses: Vec<Response<'_>> = t.responses.iter().map(Response).collect();
            m.serialize_entry("responses", &responses)?;
        }
        m.end()
    }
}

struct Request<'a>(&'a Message);

impl Serialize for Request<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("message_id", &self.0.message_id.0)?;
        operation_entries(&mut m, &self.0.protocol_op)?;
        m.end()
    }
}

/// A response: as a request, without the message ID.
struct Response<'a>(&'a Message);

impl Serialize for Response<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        operation_entries(&mut m, &self.0.protocol_op)?;
        m.end()
    }
}

/// `operation`, then the operation's own object under its name.
fn operation_entries<M: SerializeMap>(m: &mut M, op: &ProtocolOp<'_>) -> Result<(), M::Error> {
    let name = name_of(OPERATIONS, op.tag().0);
    m.serialize_entry("operation", &name)?;
    let mut o = Fields::default();
    match op {
        ProtocolOp::BindRequest(r) => {
            o.num("version", r.version.into());
            o.text("name", &r.name.0);
            if let AuthenticationChoice::Sasl(c) = &r.authentication {
                let mut sasl = Fields::default();
                sasl.text("mechanism", &c.mechanism.0);
                if let Some(cred) = &c.credentials {
                    sasl.text("credentials", &hex(cred));
                }
                o.obj("sasl", sasl);
            }
        }
        ProtocolOp::SearchRequest(r) => {
            o.text("base_object", &r.base_object.0);
            o.num("scope", r.scope.0.into());
            o.num("deref_alias", r.deref_aliases.0.into());
            o.num("size_limit", r.size_limit.into());
            o.num("time_limit", r.time_limit.into());
            o.0.push(("types_only", V::Bool(r.types_only)));
            let attrs = r.attributes.iter().map(|a| a.0.to_string().into());
            o.0.push(("attributes", V::List(attrs.collect())));
        }
        ProtocolOp::AddRequest(r) => {
            o.text("entry", &r.entry.0);
            let attrs = r
                .attributes
                .iter()
                .map(|a| attribute("name", &a.attr_type.0, a.attr_vals.iter().map(|v| &v.0[..])));
            o.0.push(("attributes", V::List(attrs.collect())));
        }
        ProtocolOp::ModifyRequest(r) => {
            o.text("object", &r.object.0);
            let changes = r.changes.iter().map(|c| {
                let op = match c.operation.0 {
                    0 => Cow::Borrowed("add"),
                    1 => Cow::Borrowed("delete"),
                    2 => Cow::Borrowed("replace"),
                    n => Cow::Owned(n.to_string()),
                };
                let mut f = Fields::default();
                f.text("operation", &op);
                f.0.push(("modification", modification(&c.modification)));
                f.value()
            });
            o.0.push(("changes", V::List(changes.collect())));
        }
        ProtocolOp::DelRequest(dn) => o.text("dn", &dn.0),
        ProtocolOp::ModDnRequest(r) => {
            o.text("entry", &r.entry.0);
            o.text("new_rdn", &r.newrdn.0);
            o.0.push(("delete_old_rdn", V::Bool(r.deleteoldrdn)));
            if let Some(sup) = &r.newsuperior {
                o.text("new_superior", &sup.0);
            }
        }
        ProtocolOp::CompareRequest(r) => {
            o.text("entry", &r.entry.0);
            let mut ava = Fields::default();
            ava.text("description", &r.ava.attribute_desc.0);
            ava.text("value", &escaped(&r.ava.assertion_value));
            o.obj("attribute_value_assertion", ava);
        }
        ProtocolOp::ExtendedRequest(r) => {
            o.text("name", &r.request_name.0);
            if let Some(v) = &r.request_value {
                o.text("value", &escaped(v));
            }
        }
        ProtocolOp::SearchResultEntry(e) => {
            o.text("base_object", &e.object_name.0);
            let attrs = e
                .attributes
                .iter()
                .map(|a| attribute("type", &a.attr_type.0, a.attr_vals.iter().map(|v| &v.0[..])));
            o.0.push(("attributes", V::List(attrs.collect())));
        }
        ProtocolOp::BindResponse(r) => {
            result(&mut o, &r.result);
            if let Some(c) = &r.server_sasl_creds {
                o.text("server_sasl_creds", &hex(c));
            }
        }
        ProtocolOp::ExtendedResponse(r) => {
            result(&mut o, &r.result);
            if let Some(n) = &r.response_name {
                o.text("name", &n.0);
            }
        }
        ProtocolOp::ModifyResponse(r) => result(&mut o, &r.result),
        ProtocolOp::SearchResultDone(r)
        | ProtocolOp::AddResponse(r)
        | ProtocolOp::DelResponse(r)
        | ProtocolOp::ModDnResponse(r)
        | ProtocolOp::CompareResponse(r) => result(&mut o, r),
        // Written by their operation's name alone.
        ProtocolOp::UnbindRequest
        | ProtocolOp::AbandonRequest(_)
        | ProtocolOp::SearchResultReference(_)
        | ProtocolOp::IntermediateResponse(_) => return Ok(()),
    }
    m.serialize_entry(&name, &o.value())
}

/// An object's fields in order.
#[derive(Default)]
struct Fields(Vec<(&'static str, V)>);

impl Fields {
    fn text(&mut self, k: &'static str, v: &str) {
        self.0.push((k, v.into()));
    }

    fn num(&mut self, k: &'static str, v: u64) {
        self.0.push((k, v.into()));
    }

    fn obj(&mut self, k: &'static str, f: Fields) {
        self.0.push((k, f.value()));
    }

    fn value(self) -> V {
        V::Obj(self)
    }
}

/// A value of an operation's object, its fields kept in the order written.
enum V {
    Text(String),
    Num(u64),
    Bool(bool),
    List(Vec<V>),
    Obj(Fields),
}

impl From<String> for V {
    fn from(s: String) -> V {
        V::Text(s)
    }
}

impl From<&str> for V {
    fn from(s: &str) -> V {
        V::Text(s.to_string())
    }
}

impl From<u64> for V {
    fn from(n: u64) -> V {
        V::Num(n)
    }
}

impl Serialize for V {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            V::Text(t) => s.serialize_str(t),
            V::Num(n) => s.serialize_u64(*n),
            V::Bool(b) => s.serialize_bool(*b),
            V::List(l) => l.serialize(s),
            V::Obj(f) => {
                let mut m = s.serialize_map(Some(f.0.len()))?;
                for (k, v) in &f.0 {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

/// A result: its code's name, the matched name and the diagnostic message.
fn result(o: &mut Fields, r: &LdapResult<'_>) {
    o.text("result_code", &name_of(RESULT_CODES, r.result_code.0));
    o.text("matched_dn", &r.matched_dn.0);
    o.text("message", &r.diagnostic_message.0);
}

/// An attribute: its type under `key`, and its values.
fn attribute<'a>(key: &'static str, kind: &str, values: impl Iterator<Item = &'a [u8]>) -> V {
    let mut f = Fields::default();
    f.text(key, kind);
    let values = values.map(|v| escaped(v).into());
    f.0.push(("values", V::List(values.collect())));
    f.value()
}

/// A modify request's change: the attribute's type and values.
fn modification(a: &PartialAttribute<'_>) -> V {
    let mut f = Fields::default();
    f.text("attribute_type", &a.attr_type.0);
    let values = a.attr_vals.iter().map(|v| escaped(&v.0).into());
    f.0.push(("attribute_values", V::List(values.collect())));
    f.value()
}

fn hex(b: &[u8]) -> String {
    netsieve_wire::hex::lower(b)
}
