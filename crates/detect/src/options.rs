//! How a [`Detector`](crate::Detector) acts: its options, the ports that name a flow's
//! protocol, and the exception policy of flows it cannot handle normally.

use netsieve_applayer::AppProto;
use netsieve_packet::PerDir;

use crate::log::LogTypes;

/// What Suricata calls an exception policy: what happens to a flow or packet the
/// engine cannot handle normally (here: a TCP flow picked up midstream).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExceptionPolicy {
    /// Inspect as well as possible (a midstream flow without reassembly).
    #[default]
    Ignore,
    /// Leave the packet uninspected.
    PassPacket,
    /// Leave the flow uninspected.
    PassFlow,
    /// Leave the flow uninspected, as bypassed (Suricata's `bypass`: the flow's state
    /// says `bypassed`).
    Bypass,
    /// Drop the packet (IPS).
    DropPacket,
    /// Drop the flow (IPS).
    DropFlow,
    /// Drop the flow and reset it (IPS; netsieve drops it).
    Reject,
}

impl ExceptionPolicy {
    /// Every policy.
    pub const ALL: [ExceptionPolicy; 7] = [
        ExceptionPolicy::Ignore,
        ExceptionPolicy::PassPacket,
        ExceptionPolicy::PassFlow,
        ExceptionPolicy::Bypass,
        ExceptionPolicy::DropPacket,
        ExceptionPolicy::DropFlow,
        ExceptionPolicy::Reject,
    ];

    /// Suricata's name for it in EVE (`drop_flow`).
    pub fn name(self) -> &'static str {
        match self {
            ExceptionPolicy::Ignore => "ignore",
            ExceptionPolicy::PassPacket => "pass_packet",
            ExceptionPolicy::PassFlow => "pass_flow",
            ExceptionPolicy::Bypass => "bypass",
            ExceptionPolicy::DropPacket => "drop_packet",
            ExceptionPolicy::DropFlow => "drop_flow",
            ExceptionPolicy::Reject => "reject",
        }
    }

    /// Resolves a policy as suricata.yaml gives it: `auto` is drop-flow in IPS mode
    /// and ignore otherwise; drop and reject policies mean ignore outside IPS mode.
    pub fn parse(v: &str, ips: bool) -> Option<ExceptionPolicy> {
        use ExceptionPolicy::*;
        let p = match v.trim() {
            "auto" => {
                if ips {
                    DropFlow
                } else {
                    Ignore
                }
            }
            "ignore" => Ignore,
            "pass-packet" => PassPacket,
            "pass-flow" => PassFlow,
            "bypass" => Bypass,
            "drop-packet" => DropPacket,
            "drop-flow" => DropFlow,
            "reject" | "reject-both" => Reject,
            _ => return None,
        };
        Some(match p {
            DropPacket | DropFlow | Reject if !ips => Ignore,
            p => p,
        })
    }
}

/// How a [`Detector`](crate::Detector) acts.
#[derive(Clone, Copy, Debug)]
pub struct DetectOptions {
    /// IPS mode: drop and reject block packets and flows.
    pub ips: bool,
    /// Inline stream handling (IPS mode or `stream.inline`): stream bytes are
    /// inspected and parsed on arrival rather than once acknowledged.
    pub inline: bool,
    /// Copy the payload and packet bytes into each alert (for EVE's payload and packet).
    pub keep_bytes: bool,
    /// For TCP flows whose first packet is not a SYN.
    pub midstream: ExceptionPolicy,
    /// For a packet whose bytes the flow's parser failed on (SIP's, so far).
    pub app_error: ExceptionPolicy,
    /// IDS mode: acknowledged stream bytes that must wait before an inspection, per
    /// direction (to server, to client).
    pub chunk: PerDir<u64>,
    /// Bytes of a stream copied into an alert at most (EVE's `payload-buffer-size`).
    pub payload_limit: usize,
    /// What an HTTP parser keeps per flow.
    pub http: netsieve_applayer::http::Limits,
    /// Alerts a packet keeps at most, the first in rule order (`packet-alert-max`).
    pub alert_max: usize,
    /// The records of transactions and files to make ([`Detector::take_logs`](crate::Detector::take_logs)).
    pub log: LogTypes,
    /// Midstream pickup is off (`stream.midstream: false`): a flow picked up midstream
    /// is an exception, counted in the stats record. Either way its flow record names
    /// the policy it met (with pickup on, `ignore` unless the master switch says
    /// bypass or pass-flow), as Suricata 7.0.12 and later write it.
    pub midstream_exception: bool,
    /// The ports that name a protocol the bytes do not.
    pub ports: AppPorts,
}

/// The ports a flow speaks a protocol on when its bytes name none (Suricata's
/// `app-layer.protocols.<name>.detection-ports`): DNS on 53, MQTT on 1883 and DCE/RPC
/// on 135 over TCP (a DCE/RPC request with no bind before it), DNS on 53 over UDP. At
/// most [`AppPorts::MAX`] ports in all (a fixed table: the options are copied to every
/// worker).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppPorts {
    /// (port, protocol, over TCP), the first `len` used.
    entries: [(u16, AppProto, bool); AppPorts::MAX],
    len: usize,
    /// The protocols detected and not parsed, a bit each by their place in
    /// [`AppProto::ALL`].
    unparsed: u32,
}

impl Default for AppPorts {
    fn default() -> Self {
        let mut p = AppPorts {
            entries: [(0, AppProto::Dns, false); AppPorts::MAX],
            len: 0,
            unparsed: 0,
        };
        p.set(AppProto::Dns, true, &[53]);
        p.set(AppProto::Mqtt, true, &[1883]);
        p.set(AppProto::Dcerpc, true, &[135]);
        p.set(AppProto::Krb5, true, &[88]);
        p.set(AppProto::Dns, false, &[53]);
        p.set(AppProto::Krb5, false, &[88]);
        p.set(AppProto::Snmp, false, &[161, 162]);
        p.set(AppProto::Ntp, false, &[123]);
        p.set(AppProto::Ldap, true, &[389, 3268]);
        p.set(AppProto::Ldap, false, &[389, 3268]);
        p.set(AppProto::Tftp, false, &[69]);
        p
    }
}

impl AppPorts {
    pub const MAX: usize = 32;

    /// Sets `proto`'s ports over TCP (`tcp`) or UDP (those past [`AppPorts::MAX`] are
    /// left out); `false` for a protocol netsieve finds only by its bytes there.
    pub fn set(&mut self, proto: AppProto, tcp: bool, ports: &[u16]) -> bool {
        if !Self::SETTABLE.contains(&(proto, tcp)) {
            return false;
        }
        let mut kept = 0;
        for i in 0..self.len {
            let e = self.entries[i];
            if !(e.1 == proto && e.2 == tcp) {
                self.entries[kept] = e;
                kept += 1;
            }
        }
        self.len = kept;
        for &port in ports.iter().take(Self::MAX - self.len) {
            self.entries[self.len] = (port, proto, tcp);
            self.len += 1;
        }
        true
    }

    /// The protocols whose ports can be set: (protocol, over TCP).
    pub const SETTABLE: [(AppProto, bool); 11] = [
        (AppProto::Dns, true),
        (AppProto::Mqtt, true),
        (AppProto::Dcerpc, true),
        (AppProto::Krb5, true),
        (AppProto::Dns, false),
        (AppProto::Krb5, false),
        (AppProto::Snmp, false),
        (AppProto::Ntp, false),
        (AppProto::Ldap, true),
        (AppProto::Ldap, false),
        (AppProto::Tftp, false),
    ];

    /// Whether `proto` is parsed, or only detected (`detection-only`).
    pub fn parses(&self, proto: AppProto) -> bool {
        self.unparsed & Self::bit(proto) == 0
    }

    /// Parses `proto` (`enabled: yes`), or only detects it (`detection-only`).
    pub fn set_parsed(&mut self, proto: AppProto, parsed: bool) {
        if parsed {
            self.unparsed &= !Self::bit(proto);
        } else {
            self.unparsed |= Self::bit(proto);
        }
    }

    fn bit(proto: AppProto) -> u32 {
        1 << AppProto::ALL.iter().position(|&p| p == proto).unwrap_or(0)
    }

    /// `proto`'s ports over TCP (`tcp`) or UDP.
    pub fn ports(&self, proto: AppProto, tcp: bool) -> Vec<u16> {
        (self.entries[..self.len].iter())
            .filter(|&&(_, p, t)| p == proto && t == tcp)
            .map(|&(port, _, _)| port)
            .collect()
    }

    /// The protocol of a flow between ports `a` and `b`, by the first port listed.
    pub(crate) fn of(&self, tcp: bool, a: u16, b: u16) -> Option<AppProto> {
        self.entries[..self.len]
            .iter()
            .find(|&&(port, _, t)| t == tcp && (port == a || port == b))
            .map(|&(_, p, _)| p)
    }
}

impl Default for DetectOptions {
    fn default() -> Self {
        DetectOptions {
            ips: false,
            inline: false,
            keep_bytes: false,
            midstream: ExceptionPolicy::Ignore,
            app_error: ExceptionPolicy::Ignore,
            chunk: PerDir::splat(2560),
            payload_limit: 4096,
            http: netsieve_applayer::http::Limits::default(),
            alert_max: 15,
            log: LogTypes::default(),
            midstream_exception: true,
            ports: AppPorts::default(),
        }
    }
}
