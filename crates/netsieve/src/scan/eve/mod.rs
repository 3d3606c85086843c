//! EVE JSON, as Suricata writes it: one typed record per line, its keys in Suricata's
//! order. One module per record kind (`alert.rs`, `flow.rs` with the `netflow` records,
//! `drop.rs`, `stats.rs`, `anomaly.rs`, `tx.rs` for the application layer's records),
//! and one per protocol's object (`http.rs`, `dns.rs`, `tls.rs`, ..., `ldap.rs`,
//! `tftp.rs`, and `fileinfo.rs` for files), sharing the value formats here; which kinds
//! are written is suricata.yaml's `outputs.eve-log.types`.

mod alert;
mod anomaly;
mod dcerpc;
mod dns;
mod drop;
mod fileinfo;
mod flow;
mod ftp;
mod ftpdata;
mod http;
mod krb5;
mod ldap;
mod metadata;
mod mqtt;
mod ntp;
mod packet;
mod sip;
mod smb;
mod smtp;
mod snmp;
mod ssh;
mod stats;
mod tftp;
mod tls;
mod tx;
mod websocket;

pub(super) use anomaly::Decode as DecodeRecord;
pub(super) use drop::Record as DropRecord;
pub(super) use flow::Record as FlowRecord;
pub(super) use packet::Tagged as TaggedRecord;
pub(super) use stats::{
    AppCounts, Counted, DecodeEvents, Decoder as DecoderCounts, Flow as FlowCounts,
    Ips as IpsCounts, Record as StatsRecord, Rules as RuleCounts, Tcp as TcpCounts,
};

use std::io::{self, Write};
use std::net::IpAddr;
use std::time::Duration;

use netsieve_detect::log::{Logged, TxLog};
use netsieve_detect::{Alert, RuleSet};
use netsieve_rules::References;
use serde::Serialize;

use super::settings::{AlertMeta, EveOptions};
use super::sink::{Output, Sink};
use crate::clock::Civil;

/// The flowbits `traffic/id/NAME` and `traffic/label/NAME` a flow holds (EVE's
/// `traffic` object, in alert and flow records).
#[derive(Serialize)]
pub(super) struct Traffic<'a> {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    id: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    label: Vec<&'a str>,
}

impl<'a> Traffic<'a> {
    /// The object of flowbits `bits` (ids into `set`), when some name one.
    pub fn of(set: &'a RuleSet, bits: &[u32]) -> Option<Traffic<'a>> {
        let mut t = Traffic {
            id: Vec::new(),
            label: Vec::new(),
        };
        for &b in bits {
            let name = set.flowbit_name(b);
            if let Some(v) = name.strip_prefix("traffic/id/") {
                t.id.push(v);
            } else if let Some(v) = name.strip_prefix("traffic/label/") {
                t.label.push(v);
            }
        }
        (!t.id.is_empty() || !t.label.is_empty()).then_some(t)
    }
}

/// A record other than an alert.
#[expect(
    clippy::large_enum_variant,
    reason = "a flow's record goes by value: boxing it would cost an allocation per flow"
)]
pub(super) enum Record {
    Flow(FlowRecord),
    Drop(DropRecord),
    /// A transaction's or a file's.
    Tx(TxLog),
    /// A decoder event's `anomaly` record.
    Decode(DecodeRecord),
    /// A packet a `tag` holds.
    Tagged(TaggedRecord),
    Stats(Box<StatsRecord>),
}

impl Record {
    /// Where it goes among the alerts: as [`Alert::order`] orders alerts; after the
    /// alerts of its packet.
    pub fn order(&self) -> (u64, bool, u64, u64) {
        match self {
            Record::Flow(r) => r.order(),
            Record::Drop(r) => r.order(),
            Record::Tx(t) => t.order(),
            Record::Decode(r) => r.order(),
            Record::Tagged(r) => r.order(),
            Record::Stats(_) => (u64::MAX, true, u64::MAX, u64::MAX),
        }
    }
}

/// eve.json: every alert as an `alert` record, and the other records asked for.
pub(super) struct EveLog {
    out: Output,
    opts: EveOptions,
    /// The capture files read, each with the number of its first packet, in order.
    files: Vec<(u64, String)>,
    /// Alerts list their rule's references as URLs of these systems.
    references: Option<References>,
}

impl EveLog {
    pub fn new(out: Output, opts: EveOptions, references: Option<References>) -> EveLog {
        EveLog {
            out,
            opts,
            files: Vec::new(),
            references,
        }
    }
}

/// Writes record `rec` with its `metadata` object as one line.
fn line<R: Serialize>(
    out: &mut Output,
    rec: R,
    metadata: Option<metadata::Object<'_>>,
) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &metadata::With { rec, metadata })?;
    out.write_all(b"\n")
}

/// The file packet `num` came from, among `files` (each with its first packet, in
/// order).
fn file_of(files: &[(u64, String)], num: u64) -> Option<&str> {
    let at = files.partition_point(|f| f.0 <= num);
    at.checked_sub(1).map(|i| files[i].1.as_str())
}

impl Sink for EveLog {
    fn file(&mut self, first_packet: u64, name: &str) {
        if self.opts.pcap_file {
            self.files.push((first_packet, name.to_string()));
        }
    }

    fn alert(&mut self, set: &RuleSet, al: &Alert) -> io::Result<()> {
        let file = match al.pseudo {
            None => file_of(&self.files, al.packet),
            Some(_) => None,
        };
        let rec = alert::Record::new(set, al, (self.opts, self.references.as_ref()), file);
        serde_json::to_writer(&mut self.out, &rec)?;
        self.out.write_all(b"\n")
    }

    fn record(&mut self, set: &RuleSet, rec: &Record) -> io::Result<()> {
        let o = self.opts;
        match rec {
            // A flow's record and its netflow records, each a line.
            Record::Flow(r) => {
                if o.flow {
                    let metadata = metadata::Object::of(r.metadata(), set);
                    line(&mut self.out, r.with_traffic(set), metadata)?;
                }
                if o.netflow {
                    for n in r.netflows() {
                        let metadata = metadata::Object::of(n.metadata(), set);
                        line(&mut self.out, n.with_traffic(set), metadata)?;
                    }
                }
                return Ok(());
            }
            Record::Drop(r) if o.drop => {
                serde_json::to_writer(&mut self.out, &r.with_rule(set, o.drop_alerts))?
            }
            Record::Stats(r) if o.stats && o.stats_null_values => {
                serde_json::to_writer(&mut self.out, r)?
            }
            Record::Stats(r) if o.stats => {
                serde_json::to_writer(&mut self.out, &r.without_zeros())?
            }
            Record::Tagged(r) if o.tagged_packets => {
                serde_json::to_writer(&mut self.out, &r.line())?
            }
            Record::Decode(r) => {
                let file = file_of(&self.files, r.pcap_cnt());
                serde_json::to_writer(&mut self.out, &r.line(o.ethernet, file))?
            }
            // File records made for `file-store` alone are not written here.
            Record::Tx(t) if o.log.files || !matches!(t.record, Logged::File(..)) => {
                write_tx(&mut self.out, set, t, &o)?
            }
            _ => return Ok(()),
        }
        self.out.write_all(b"\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Writes the record of a transaction, a file or an anomaly, without its line's end
/// (the `fileinfo` records `file-store` writes beside its files are eve.json's too).
pub(super) fn write_tx(
    out: &mut impl Write,
    set: &RuleSet,
    t: &TxLog,
    o: &EveOptions,
) -> io::Result<()> {
    let (ja3, email) = (set.uses_ja3(), o.email_fields);
    let metadata = metadata::Object::of(t.metadata.as_deref(), set);
    match &t.record {
        Logged::Tx(tx) => serde_json::to_writer(
            out,
            &metadata::With {
                rec: tx::Record::of(t, tx, None, ja3, email),
                metadata,
            },
        )?,
        Logged::File(f, tx) => serde_json::to_writer(
            out,
            &metadata::With {
                rec: tx::Record::of(t, tx, Some(f), ja3, email),
                metadata,
            },
        )?,
        Logged::Anomaly(a) => serde_json::to_writer(
            out,
            &metadata::With {
                rec: anomaly::Record::of(t, a),
                metadata,
            },
        )?,
    }
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SS.uuuuuu+0100`: local time with its offset, as Suricata writes it.
pub(super) fn timestamp(ts: Duration) -> String {
    Timestamp(ts).to_string()
}

/// A time written as [`timestamp`] writes it, without a string of its own: records that
/// are many (one per flow) serialize it straight into the output.
#[derive(Clone, Copy)]
pub(super) struct Timestamp(pub Duration);

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Civil::local(self.0).write_iso(f)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// An address written as [`ip_str`] writes it, without a string of its own.
#[derive(Clone, Copy)]
pub(super) struct Ip(pub IpAddr);

/// A record's addresses and ports (none for a protocol without ports), written in
/// its place among the record's keys.
#[derive(Clone, Copy, Serialize)]
pub(super) struct Endpoints {
    pub src_ip: Ip,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_port: Option<u16>,
    pub dest_ip: Ip,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dest_port: Option<u16>,
}

impl Endpoints {
    /// A packet's addresses, and its ports when its transport has them; `None` without
    /// an IP layer.
    pub fn of(p: &netsieve_packet::Packet) -> Option<Endpoints> {
        use netsieve_packet::decode::L4;
        let ip = p.ip?;
        let (sport, dport) = p.l4.ports();
        let ports = matches!(p.l4, L4::Tcp(_) | L4::Udp { .. } | L4::Sctp { .. });
        Some(Endpoints {
            src_ip: Ip(ip.src),
            src_port: ports.then_some(sport),
            dest_ip: Ip(ip.dst),
            dest_port: ports.then_some(dport),
        })
    }

    /// The same endpoints, from the other side.
    pub fn reversed(self) -> Endpoints {
        Endpoints {
            src_ip: self.dest_ip,
            src_port: self.dest_port,
            dest_ip: self.src_ip,
            dest_port: self.src_port,
        }
    }
}

impl std::fmt::Display for Ip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V4(a) => a.fmt(f),
            IpAddr::V6(a) => {
                for (i, g) in a.segments().iter().enumerate() {
                    let sep = if i == 0 { "" } else { ":" };
                    write!(f, "{sep}{g:04x}")?;
                }
                Ok(())
            }
        }
    }
}

impl Serialize for Ip {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Addresses as Suricata writes them: IPv6 in full, eight groups of four digits.
pub(super) fn ip_str(ip: IpAddr) -> String {
    Ip(ip).to_string()
}

/// Where a packet came from, as EVE's `pkt_src` says: the wire, or a tunnel.
pub(super) fn pkt_src(p: &netsieve_packet::Packet) -> &'static str {
    match &p.tunnel {
        Some(t) if t.src.is_ipv4() => "ipv4 tunnel",
        Some(_) => "ipv6 tunnel",
        None => "wire/pcap",
    }
}

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
