//! The `sip` object: one SIP message, a request's method and URI or a response's code
//! and reason, with the session description its body carries (`sdp`). `sip` records
//! and alerts on SIP flows carry it.

use netsieve_applayer::sdp::{Media, Sdp, Time};
use netsieve_applayer::sip::Start;
use netsieve_detect::log::SipMeta;
use serde::Serialize;

/// EVE's `sip` object, in Suricata's key order.
#[derive(Serialize)]
pub(super) struct Object<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
    version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sdp: Option<SdpObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_line: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_line: Option<&'a str>,
}

impl<'a> Object<'a> {
    pub fn of(m: &'a SipMeta) -> Object<'a> {
        let mut o = Object {
            method: None,
            uri: None,
            version: &m.version,
            code: None,
            reason: None,
            sdp: m.sdp.as_ref().map(SdpObject::of),
            request_line: None,
            response_line: None,
        };
        match &m.start {
            Start::Request { method, uri } => {
                o.method = Some(text(method));
                o.uri = Some(text(uri));
                o.request_line = Some(&m.line);
            }
            Start::Response { code, reason } => {
                o.code = Some(text(code));
                o.reason = Some(text(reason));
                o.response_line = Some(&m.line);
            }
        }
        o
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn opt(v: &Option<Vec<u8>>) -> Option<String> {
    v.as_deref().map(text)
}

fn list(v: &[Vec<u8>]) -> Vec<String> {
    v.iter().map(|x| text(x)).collect()
}

/// The `sdp` object: a session description's fields by name, lists for those that
/// repeat (empty ones left out).
#[derive(Serialize)]
struct SdpObject {
    #[serde(skip_serializing_if = "Option::is_none")]
    origin: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_info: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phone_number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    connection_data: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    bandwidths: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    time_descriptions: Vec<TimeObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timezone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    encryption_key: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    attributes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    media_descriptions: Vec<MediaObject>,
}

#[derive(Serialize)]
struct TimeObject {
    time: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeat_time: Option<String>,
}

#[derive(Serialize)]
struct MediaObject {
    media: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    media_info: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    connection_data: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    bandwidths: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    encryption_key: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    attributes: Vec<String>,
}

impl SdpObject {
    fn of(s: &Sdp) -> SdpObject {
        SdpObject {
            origin: opt(&s.origin),
            session_name: opt(&s.session_name),
            session_info: opt(&s.session_info),
            uri: opt(&s.uri),
            email: opt(&s.email),
            phone_number: opt(&s.phone_number),
            connection_data: opt(&s.connection_data),
            bandwidths: list(&s.bandwidths),
            time_descriptions: s.time_descriptions.iter().map(TimeObject::of).collect(),
            timezone: opt(&s.timezone),
            encryption_key: opt(&s.encryption_key),
            attributes: list(&s.attributes),
            media_descriptions: s.media.iter().map(MediaObject::of).collect(),
        }
    }
}

impl TimeObject {
    fn of(t: &Time) -> TimeObject {
        TimeObject {
            time: text(&t.time),
            repeat_time: opt(&t.repeat_time),
        }
    }
}

impl MediaObject {
    fn of(m: &Media) -> MediaObject {
        MediaObject {
            media: text(&m.media),
            media_info: opt(&m.media_info),
            connection_data: opt(&m.connection_data),
            bandwidths: list(&m.bandwidths),
            encryption_key: opt(&m.encryption_key),
            attributes: list(&m.attributes),
        }
    }
}
