//! The `fileinfo` object: a file a transaction carried (an HTTP message body), as
//! Suricata 8 writes it without `force-magic`: its name, whether it had gaps, how it
//! ended, the digests `force-hash` asks for, the `filestore` rules that marked it,
//! whether it was stored (and its number among the stored), its size and transaction.

use netsieve_detect::log::FileMeta;
use serde::Serialize;

/// [`FileMeta`] as EVE writes it.
#[derive(Serialize)]
pub(super) struct Object<'a> {
    /// An HTTP/2 stream's file has none.
    #[serde(skip_serializing_if = "str::is_empty")]
    filename: &'a str,
    /// The `filestore` rules that marked it.
    #[serde(skip_serializing_if = "<[u32]>::is_empty")]
    sid: &'a [u32],
    gaps: bool,
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    md5: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sha1: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sha256: Option<&'a str>,
    stored: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    file_id: Option<u64>,
    size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    start: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end: Option<u64>,
    tx_id: u64,
}

impl<'a> Object<'a> {
    pub fn of(f: &'a FileMeta) -> Object<'a> {
        Object {
            filename: &f.name,
            sid: &f.sids,
            gaps: false,
            state: "CLOSED",
            md5: f.hashes.md5.as_deref(),
            sha1: f.hashes.sha1.as_deref(),
            sha256: f.hashes.sha256.as_deref(),
            stored: f.stored.is_some(),
            file_id: f.file_id,
            size: f.size,
            start: f.range.map(|r| r.0),
            end: f.range.map(|r| r.1),
            tx_id: f.tx_id,
        }
    }
}
