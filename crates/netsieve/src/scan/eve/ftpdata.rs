//! The `ftp_data` object: the transfer of an FTP data channel, named by the command of
//! its control flow that opened it (Suricata writes the file name first, and neither
//! when unknown). `ftp_data` records (with `ftp` in `outputs.eve-log.types`, as
//! Suricata's `ftp` logger writes them), alerts and `fileinfo` records of data
//! channels carry it.

use netsieve_detect::log::FtpDataMeta;
use serde::Serialize;

/// EVE's `ftp_data` object, in Suricata's key order.
#[derive(Serialize)]
pub(super) struct Object<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    filename: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
}

impl<'a> Object<'a> {
    pub fn of(m: &'a FtpDataMeta) -> Object<'a> {
        Object {
            filename: m.filename.as_deref(),
            command: m.command.as_deref(),
        }
    }
}
