//! Records of the application layer: `http`, `dns` and `tls` (one per transaction) and
//! `fileinfo` (one per file), made by the detector when a transaction or file is
//! complete or its flow ends, with the header every record shares. [`App`] is the
//! transaction's object, which alerts on the transaction carry too.

use netsieve_detect::log::{AppMeta, FileMeta, TxLog, TxMeta};
use netsieve_wire::Direction;
use serde::Serialize;
use serde::ser::SerializeMap;

use super::{
    Ip, Timestamp, dcerpc, dns, fileinfo, ftp, ftpdata, http, krb5, ldap, mqtt, ntp, proto_name,
    sip, smb, smtp, snmp, ssh, tftp, tls, websocket,
};

/// A transaction's object under its protocol's name (`"http": {...}`), to be flattened
/// into the record that carries it; `ja3` writes TLS's JA3 fingerprints.
pub(super) struct App<'a> {
    pub tx: &'a TxMeta,
    pub ja3: bool,
    /// The extra message headers an `email` object writes (`EveOptions::email_fields`).
    pub email_fields: u32,
    /// The direction of the alert that carries it: a DNS-over-HTTP/2 stream's alert
    /// writes that side's `dns` object beside its `http` one.
    pub dir: Option<Direction>,
}

impl Serialize for App<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        let name = self.tx.app.proto().record_name();
        match &self.tx.app {
            AppMeta::Http(h) => m.serialize_entry(name, &http::Object::of(h))?,
            AppMeta::Http2(h) => {
                m.serialize_entry(name, &http::Object2::of(h))?;
                if let Some(d) = self.dir.and_then(|d| h.dns[d].as_deref()) {
                    let tx_id = self.tx.tx_id;
                    m.serialize_entry("dns", &dns::Object { tx_id, m: d })?;
                }
            }
            AppMeta::Dns(d) => m.serialize_entry(
                name,
                &dns::Object {
                    tx_id: self.tx.tx_id,
                    m: d,
                },
            )?,
            AppMeta::Tls(t) => m.serialize_entry(name, &tls::Object::of(t, self.ja3))?,
            AppMeta::Ssh(t) => m.serialize_entry(name, &ssh::Object::of(t))?,
            AppMeta::Ftp(t) => m.serialize_entry(name, &ftp::Object::of(t))?,
            AppMeta::FtpData(t) => m.serialize_entry(name, &ftpdata::Object::of(t))?,
            AppMeta::Sip(t) => m.serialize_entry(name, &sip::Object::of(t))?,
            AppMeta::Mqtt(t) => m.serialize_entry(name, &mqtt::Object(t))?,
            AppMeta::Krb5(t) => m.serialize_entry(name, &krb5::Object(t))?,
            AppMeta::Snmp(t) => m.serialize_entry(name, &snmp::Object(t))?,
            AppMeta::Ntp(t) => m.serialize_entry(name, &ntp::Object(t))?,
            AppMeta::Ldap(t) => m.serialize_entry(name, &ldap::Object(t))?,
            AppMeta::Tftp(t) => m.serialize_entry(name, &tftp::Object(t))?,
            AppMeta::WebSocket(t) => m.serialize_entry(name, &websocket::Object(t))?,
            AppMeta::Dcerpc(t) => m.serialize_entry(name, &dcerpc::Object(t))?,
            AppMeta::Smb(t) => m.serialize_entry(name, &smb::Object(t))?,
            AppMeta::Smtp(t) => {
                m.serialize_entry(name, &smtp::Object::of(t))?;
                if let Some(e) = &t.email {
                    m.serialize_entry("email", &smtp::Email::of(e, self.email_fields))?;
                }
            }
        }
        m.end()
    }
}

/// What every record of a [`TxLog`] opens with: when, which flow, which packet, the
/// addresses, and where the packet came from.
#[derive(Serialize)]
pub(super) struct Head {
    timestamp: Timestamp,
    flow_id: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pcap_cnt: Option<u64>,
    event_type: &'static str,
    src_ip: Ip,
    src_port: u16,
    dest_ip: Ip,
    dest_port: u16,
    proto: String,
    ip_v: u8,
    pkt_src: &'static str,
}

impl Head {
    pub fn of(t: &TxLog, event_type: &'static str) -> Head {
        Head {
            timestamp: Timestamp(t.ts),
            flow_id: t.flow_id,
            // A tunnelled packet's number is not written (as Suricata does).
            pcap_cnt: (t.pseudo.is_none() && t.tunnel.is_none()).then_some(t.packet),
            event_type,
            src_ip: Ip(t.src.0),
            src_port: t.src.1,
            dest_ip: Ip(t.dst.0),
            dest_port: t.dst.1,
            proto: proto_name(t.proto),
            ip_v: if t.src.0.is_ipv4() { 4 } else { 6 },
            pkt_src: match t.tunnel {
                Some(tu) if tu.src.is_ipv4() => "ipv4 tunnel",
                Some(_) => "ipv6 tunnel",
                None if t.pseudo.is_some() => "stream (flow timeout)",
                None => "wire/pcap",
            },
        }
    }
}

/// A transaction's or a file's record.
#[derive(Serialize)]
pub(in crate::scan) struct Record<'a> {
    #[serde(flatten)]
    head: Head,
    /// HTTP and SMTP records name their transaction here; DNS ones in their object.
    #[serde(skip_serializing_if = "Option::is_none")]
    tx_id: Option<u64>,
    #[serde(flatten)]
    app: App<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    app_proto: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fileinfo: Option<fileinfo::Object<'a>>,
}

impl<'a> Record<'a> {
    /// The record of transaction `tx`, or of `file` it carried, logged as `t` says.
    pub fn of(
        t: &'a TxLog,
        tx: &'a TxMeta,
        file: Option<&'a FileMeta>,
        ja3: bool,
        email_fields: u32,
    ) -> Record<'a> {
        let file = file.map(fileinfo::Object::of);
        let proto = tx.app.proto();
        let event_type = if file.is_some() {
            "fileinfo"
        } else {
            proto.record_name()
        };
        Record {
            head: Head::of(t, event_type),
            tx_id: (file.is_none() && matches!(tx.app, AppMeta::Http(_) | AppMeta::Smtp(_)))
                .then_some(tx.tx_id),
            app: App {
                tx,
                ja3,
                email_fields,
                dir: None,
            },
            app_proto: file.is_some().then_some(proto.name()),
            fileinfo: file,
        }
    }
}
