//! fast.log: one line per alert, as Suricata writes it.

use std::io::{self, Write};
use std::net::IpAddr;

use netsieve_detect::{Alert, RuleSet};

use super::eve::{ip_str, proto_name};
use super::sink::{Output, Sink};
use crate::clock::Civil;

pub(super) struct FastLog {
    out: Output,
}

impl FastLog {
    pub fn new(out: Output) -> FastLog {
        FastLog { out }
    }
}

impl Sink for FastLog {
    fn alert(&mut self, set: &RuleSet, al: &Alert) -> io::Result<()> {
        let s = &set.sig(al.sig);
        let r = &s.rule;
        let c = Civil::local(al.ts);
        let has_ports = matches!(al.proto, 6 | 17);
        let ports = |ip: IpAddr, port: u16| {
            if has_ports {
                format!("{}:{port}", ip_str(ip))
            } else {
                ip_str(ip)
            }
        };
        let class = if s.category.is_empty() {
            String::new()
        } else {
            format!("[Classification: {}] ", s.category)
        };
        let drop = if al.blocked { "[Drop] " } else { "" };
        let mut ts = String::new();
        let _ = c.write_legacy(&mut ts);
        if al.without_ip {
            // No addresses: the frame's first 32 bytes, and the packet's number.
            let frame = al.bytes.as_deref().map_or(&[][..], |b| &b.1[..]);
            let raw: String = frame.iter().take(32).map(|b| format!("{b:02X} ")).collect();
            return writeln!(
                self.out,
                "{ts}  {drop}[**] [{}:{}:{}] {} [**] {class}[Priority: {}] [**] [Raw pkt: {raw}] [pcap file packet: {}]",
                r.gid, r.sid, r.rev, r.msg, s.severity, al.packet,
            );
        }
        writeln!(
            self.out,
            "{ts}  {drop}[**] [{}:{}:{}] {} [**] {class}[Priority: {}] {{{}}} {} -> {}",
            r.gid,
            r.sid,
            r.rev,
            r.msg,
            s.severity,
            proto_name(al.proto),
            ports(al.src, al.sport),
            ports(al.dst, al.dport),
        )
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
