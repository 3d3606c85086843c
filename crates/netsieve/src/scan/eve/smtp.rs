//! The `smtp` and `email` objects: an SMTP mail's envelope (HELO name, sender,
//! recipients) and its message (From, To, Cc, attachments). Alerts on SMTP, `smtp`
//! records and the `fileinfo` records of attachments carry both, side by side.

use netsieve_detect::log::{EmailMeta, SmtpMeta};
use serde::Serialize;

/// EVE's `smtp` object.
#[derive(Serialize)]
pub(super) struct Object<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    helo: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mail_from: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    rcpt_to: &'a [String],
}

impl<'a> Object<'a> {
    pub fn of(m: &'a SmtpMeta) -> Object<'a> {
        Object {
            helo: m.helo.as_deref(),
            mail_from: m.mail_from.as_deref(),
            rcpt_to: &m.rcpt_to,
        }
    }
}

/// EVE's `email` object.
#[derive(Serialize)]
pub(super) struct Email<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    to: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    cc: &'a [String],
    /// Suricata's parser state; netsieve writes only the end of a message.
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    attachment: &'a [String],
}

impl<'a> Email<'a> {
    pub fn of(m: &'a EmailMeta) -> Email<'a> {
        Email {
            from: m.from.as_deref(),
            to: &m.to,
            cc: &m.cc,
            status: m.done.then_some("PARSE_DONE"),
            attachment: &m.attachment,
        }
    }
}
