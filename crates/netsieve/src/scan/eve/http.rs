//! The `http` object: what an HTTP transaction says, in the order Suricata 8 writes it
//! with `extended: yes` (its stock configuration). Alerts on a transaction, `http`
//! records and `fileinfo` records of HTTP files all carry it.

use netsieve_applayer::http2;
use netsieve_detect::log::{Http2Meta, HttpMeta};
use netsieve_wire::Direction;
use netsieve_wire::http2::{ERROR_CODES, SETTINGS, eve_name};
use serde::Serialize;

/// [`HttpMeta`] as EVE writes it.
#[derive(Serialize)]
pub(super) struct Object<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    hostname: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_user_agent: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_content_type: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content_range: Option<Range<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_refer: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    redirect: Option<&'a str>,
    length: u64,
}

impl<'a> Object<'a> {
    pub fn of(m: &'a HttpMeta) -> Object<'a> {
        Object {
            hostname: m.hostname.as_deref(),
            http_port: m.port,
            url: m.url.as_deref(),
            http_user_agent: m.user_agent.as_deref(),
            http_content_type: m.content_type.as_deref(),
            content_range: m.content_range.as_ref().map(|r| Range {
                raw: &r.raw,
                start: r.start,
                end: r.end,
                size: r.size,
            }),
            http_refer: m.referer.as_deref(),
            http_method: m.method.as_deref(),
            protocol: m.protocol.as_deref(),
            status: m.status,
            redirect: m.redirect.as_deref(),
            length: m.length,
        }
    }
}

/// A `ContentRange` as EVE writes it.
#[derive(Serialize)]
struct Range<'a> {
    raw: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    start: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

/// [`Http2Meta`] as EVE writes it: the `http` object with `version` 2, the header
/// lists as decoded, and the `http2` object.
#[derive(Serialize)]
pub(super) struct Object2<'a> {
    version: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    request_headers: Vec<Field>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    response_headers: Vec<Field>,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_user_agent: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    length: Option<u64>,
    http2: Http2,
}

impl<'a> Object2<'a> {
    pub fn of(m: &'a Http2Meta) -> Object2<'a> {
        let fields = |d: Direction| m.sides[d].headers.iter().map(Field::of).collect();
        let side = |d: Direction| {
            let s = &m.sides[d];
            let any = !s.settings.is_empty() || s.error_code.is_some() || s.priority.is_some();
            any.then(|| Side {
                settings: s
                    .settings
                    .iter()
                    .map(|&(id, v)| Setting {
                        settings_id: eve_name(&SETTINGS, 1, u32::from(id)),
                        settings_value: v,
                    })
                    .collect(),
                error_code: s.error_code.map(|e| eve_name(&ERROR_CODES, 0, e)),
                priority: s.priority,
            })
        };
        Object2 {
            version: "2",
            request_headers: fields(Direction::ToServer),
            response_headers: fields(Direction::ToClient),
            http_method: m.method.as_deref(),
            url: m.url.as_deref(),
            http_user_agent: m.user_agent.as_deref(),
            status: m.status,
            length: m.length,
            http2: Http2 {
                stream_id: m.stream_id,
                request: side(Direction::ToServer),
                response: side(Direction::ToClient),
            },
        }
    }
}

/// A header block entry: a field, or a dynamic table size update.
#[derive(Serialize)]
#[serde(untagged)]
enum Field {
    Header { name: String, value: String },
    SizeUpdate { table_size_update: u64 },
}

impl Field {
    fn of(f: &http2::Field) -> Field {
        match f {
            http2::Field::Header(h) => Field::Header {
                name: String::from_utf8_lossy(&h.name).into_owned(),
                value: String::from_utf8_lossy(&h.value).into_owned(),
            },
            http2::Field::SizeUpdate(n) => Field::SizeUpdate {
                table_size_update: *n,
            },
        }
    }
}

#[derive(Serialize)]
struct Http2 {
    stream_id: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    request: Option<Side>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<Side>,
}

#[derive(Serialize)]
struct Side {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    settings: Vec<Setting>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority: Option<u8>,
}

#[derive(Serialize)]
struct Setting {
    settings_id: String,
    settings_value: u32,
}
