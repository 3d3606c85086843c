//! The `ftp` object: one command of FTP's control channel and its reply (the
//! server's greeting is a transaction without a command).

use netsieve_detect::log::FtpMeta;
use serde::Serialize;

/// EVE's `ftp` object, in Suricata's key order.
#[derive(Serialize)]
pub(super) struct Object<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command_data: Option<&'a str>,
    /// Written with the command's data (a command line is kept to its first 4 KiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    command_truncated: Option<bool>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    completion_code: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    reply: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    dynamic_port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<&'static str>,
    reply_received: &'static str,
    reply_truncated: bool,
}

impl<'a> Object<'a> {
    pub fn of(m: &'a FtpMeta) -> Object<'a> {
        Object {
            command: m.command.as_deref(),
            command_data: m.command_data.as_deref(),
            command_truncated: m.command_data.as_ref().map(|_| m.command_truncated),
            completion_code: &m.completion_code,
            reply: &m.reply,
            dynamic_port: m.dynamic_port,
            mode: m.mode,
            reply_received: if m.reply_received { "yes" } else { "no" },
            reply_truncated: m.reply_truncated,
        }
    }
}
