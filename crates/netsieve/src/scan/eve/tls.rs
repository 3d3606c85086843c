//! The `tls` object: a TLS handshake, in the order Suricata 8 writes it with
//! `extended: yes` (its stock configuration): the server certificate, the server name,
//! the version, JA4 and the protocols each side named. Alerts on TLS and `tls` records
//! carry it.

use netsieve_detect::log::TlsMeta;
use serde::Serialize;

/// [`TlsMeta`] as EVE writes it.
#[derive(Serialize)]
pub(super) struct Object<'a> {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    session_resumed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    issuerdn: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    subjectaltname: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    serial: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fingerprint: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sni: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    notbefore: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    notafter: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ja3: Option<Ja3<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ja3s: Option<Ja3<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ja4: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    client_alpns: &'a [String],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    server_alpns: &'a [String],
    /// The protocol whose StartTLS began it.
    #[serde(skip_serializing_if = "Option::is_none")]
    from_proto: Option<&'static str>,
}

/// A JA3 or JA3S fingerprint: its MD5 and the string hashed.
#[derive(Serialize)]
struct Ja3<'a> {
    hash: &'a str,
    string: &'a str,
}

impl<'a> Object<'a> {
    /// With `ja3` (a rule inspects JA3: Suricata's `ja3-fingerprints: auto` turns them
    /// on), the JA3 and JA3S fingerprints too.
    pub fn of(m: &'a TlsMeta, ja3: bool) -> Object<'a> {
        let fp = |f: &'a Option<(String, String)>| {
            f.as_ref()
                .filter(|_| ja3)
                .map(|(hash, string)| Ja3 { hash, string })
        };
        Object {
            session_resumed: m.resumed,
            subject: m.subject.as_deref(),
            issuerdn: m.issuer.as_deref(),
            subjectaltname: &m.san,
            serial: m.serial.as_deref(),
            fingerprint: m.fingerprint.as_deref(),
            sni: m.sni.as_deref(),
            version: m.version.as_deref(),
            notbefore: m.not_before.as_deref(),
            notafter: m.not_after.as_deref(),
            ja3: fp(&m.ja3),
            ja3s: fp(&m.ja3s),
            ja4: m.ja4.as_deref(),
            client_alpns: &m.client_alpns,
            server_alpns: &m.server_alpns,
            from_proto: m.from_proto.map(|p| p.name()),
        }
    }
}
