//! The `http` object: what an HTTP transaction says, in the order Suricata 8 writes it
//! with `extended: yes` (its stock configuration). Alerts on a transaction, `http`
//! records and `fileinfo` records of HTTP files all carry it.

use netsieve_detect::log::HttpMeta;
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
