//! The `ssh` object: each side's identification line, client first. `ssh` records
//! and alerts on SSH flows carry it.

use netsieve_detect::log::SshMeta;
use serde::Serialize;

/// EVE's `ssh` object.
#[derive(Serialize)]
pub(super) struct Object<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    client: Option<Side<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<Side<'a>>,
}

#[derive(Serialize)]
struct Side<'a> {
    proto_version: &'a str,
    software_version: &'a str,
}

impl<'a> Object<'a> {
    pub fn of(m: &'a SshMeta) -> Object<'a> {
        let side = |s: &'a Option<(String, String)>| {
            s.as_ref().map(|(p, v)| Side {
                proto_version: p,
                software_version: v,
            })
        };
        Object {
            client: side(&m.client),
            server: side(&m.server),
        }
    }
}
