//! The `smtp` and `email` objects: an SMTP mail's envelope (HELO name, sender,
//! recipients) and its message (From, To, Cc, attachments). Alerts on SMTP, `smtp`
//! records and the `fileinfo` records of attachments carry both, side by side.

use netsieve_detect::log::{EMAIL_FIELDS, EmailMeta, SmtpMeta};
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

/// EVE's `email` object: the message's From, To and Cc, its state and attachments,
/// and the extra headers asked for, after them.
pub(super) struct Email<'a> {
    m: &'a EmailMeta,
    fields: u32,
}

impl<'a> Email<'a> {
    pub fn of(m: &'a EmailMeta, fields: u32) -> Email<'a> {
        Email { m, fields }
    }
}

impl Serialize for Email<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let m = self.m;
        let mut o = s.serialize_map(None)?;
        if let Some(f) = &m.from {
            o.serialize_entry("from", f)?;
        }
        if !m.to.is_empty() {
            o.serialize_entry("to", &m.to)?;
        }
        if !m.cc.is_empty() {
            o.serialize_entry("cc", &m.cc)?;
        }
        // Suricata's parser state; netsieve writes only the end of a message.
        if m.done {
            o.serialize_entry("status", "PARSE_DONE")?;
        }
        if !m.url.is_empty() {
            o.serialize_entry("url", &m.url)?;
        }
        if !m.attachment.is_empty() {
            o.serialize_entry("attachment", &m.attachment)?;
        }
        for (name, values) in &m.fields {
            let Some(i) = EMAIL_FIELDS.iter().position(|f| f == name) else {
                continue;
            };
            if self.fields >> i & 1 == 0 {
                continue;
            }
            let key = name.replace('-', "_");
            match *name {
                "received" | "references" => o.serialize_entry(&key, values)?,
                _ => o.serialize_entry(&key, &values[0])?,
            }
        }
        o.end()
    }
}
