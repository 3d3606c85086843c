//! EVE JSON, as Suricata writes it: one typed record per line, its keys in Suricata's
//! order. One module per record kind (`alert.rs` today; flow, http, dns, tls, fileinfo,
//! anomaly and stats records go beside it), sharing the common header and the value
//! formats here.

mod alert;

use std::io::{self, Write};
use std::net::IpAddr;
use std::time::Duration;

use netsieve_detect::{Alert, RuleSet};
use serde::Serialize;

use super::settings::EveOptions;
use super::sink::{Output, Sink};

/// eve.json: every alert as an `alert` record.
pub(super) struct EveLog {
    out: Output,
    opts: EveOptions,
}

impl EveLog {
    pub fn new(out: Output, opts: EveOptions) -> EveLog {
        EveLog { out, opts }
    }
}

impl Sink for EveLog {
    fn alert(&mut self, set: &RuleSet, al: &Alert) -> io::Result<()> {
        let rec = alert::Record::new(set, al, self.opts);
        serde_json::to_writer(&mut self.out, &rec)?;
        self.out.write_all(b"\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// `YYYY-MM-DDTHH:MM:SS.uuuuuu+0000` (UTC).
pub(super) fn timestamp(ts: Duration) -> String {
    let (date, time) = civil(ts);
    format!("{date}T{time}.{:06}+0000", ts.subsec_micros())
}

/// The UTC date (`YYYY-MM-DD`) and time of day (`HH:MM:SS`) of a time since the epoch.
pub(super) fn civil(ts: Duration) -> (String, String) {
    let secs = ts.as_secs() as i64;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!("{:02}:{:02}:{:02}", sod / 3600, sod / 60 % 60, sod % 60),
    )
}

/// Addresses as Suricata writes them: IPv6 in full, eight groups of four digits.
pub(super) fn ip_str(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => a
            .segments()
            .iter()
            .map(|g| format!("{g:04x}"))
            .collect::<Vec<_>>()
            .join(":"),
    }
}

/// An IP protocol's name in EVE and fast.log.
/// The protocol as EVE and fast.log name it.
pub(super) fn proto_name(p: u8) -> String {
    netsieve_wire::ip_proto::eve_name(p)
}

/// libpcap's name for a link type, as Suricata's `packet_info` gives it.
fn linktype_name(l: u32) -> &'static str {
    match l {
        0 => "NULL",
        1 => "EN10MB",
        9 => "PPP",
        12 | 14 | 101 => "RAW",
        104 => "C_HDLC",
        108 => "LOOP",
        113 => "LINUX_SLL",
        228 => "IPv4",
        229 => "IPv6",
        276 => "LINUX_SLL2",
        _ => "UNKNOWN",
    }
}

/// Key-value pairs written as a JSON object in their own order.
pub(super) struct Ordered<'a, V>(pub &'a [(&'a str, V)]);

impl<V: Serialize> Serialize for Ordered<'_, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}
