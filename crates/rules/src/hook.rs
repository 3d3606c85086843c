//! Explicit rule hooks and action scopes: Suricata 8's firewall syntax
//! (`accept:hook http1:request_line ...`, `drop:packet tcp:pre_flow ...`).
//!
//! A rule's protocol may name the hook it is evaluated at: a packet-layer hook
//! (`tcp:all`, `icmp:flow_start`, `tcp:pre_flow`, `tcp:pre_stream`) or a state of an
//! application protocol (`tls:client_hello_done`). The states of each protocol are listed
//! here, per direction, in the order the protocol's transactions pass them; every
//! protocol has at least `request_started`/`request_complete` and
//! `response_started`/`response_complete`, which name its first and last state.
//! `<state` (`tls:<client_hello_done`) also accepts the states before it.

use netsieve_wire::{Direction, named};

named! {
    /// How far an action reaches (`accept:flow`, `drop:packet`).
    pub enum Scope {
        Packet = "packet",
        Flow = "flow",
        /// The rest of the current hook's rules (`accept` only): the next table goes on.
        Hook = "hook",
        /// The rest of the current transaction's hooks (`accept` only).
        Tx = "tx",
    }
}

named! {
    /// Where a packet-layer rule is evaluated.
    pub enum PacketHook {
        /// Before the flow is created or updated.
        PreFlow = "pre_flow",
        /// Before the TCP stream is updated.
        PreStream = "pre_stream",
        /// On the first packet of each direction of a flow.
        FlowStart = "flow_start",
        /// On every packet.
        All = "all",
    }
}

/// A state of an application protocol: the `state`-th of the protocol's list for `dir`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AppHook {
    pub dir: Direction,
    pub state: u8,
    /// `<state`: the states before it are accepted too.
    pub upto: bool,
}

/// The hook a rule names after its protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hook {
    Packet(PacketHook),
    App(AppHook),
}

const HTTP: [&[&str]; 2] = [
    &[
        "request_started",
        "request_line",
        "request_headers",
        "request_body",
        "request_trailer",
        "request_complete",
    ],
    &[
        "response_started",
        "response_line",
        "response_headers",
        "response_body",
        "response_trailer",
        "response_complete",
    ],
];
const TLS: [&[&str]; 2] = [
    &[
        "client_in_progress",
        "client_hello_done",
        "client_cert_done",
        "client_handshake_done",
        "client_finished",
    ],
    &[
        "server_in_progress",
        "server_hello",
        "server_cert_done",
        "server_hello_done",
        "server_handshake_done",
        "server_finished",
    ],
];
const SSH: [&[&str]; 2] = [
    &[
        "request_in_progress",
        "request_banner_wait_eol",
        "request_banner_done",
        "request_finished",
    ],
    &[
        "response_in_progress",
        "response_banner_wait_eol",
        "response_banner_done",
        "response_finished",
    ],
];
const GENERIC: [&[&str]; 2] = [
    &["request_started", "request_complete"],
    &["response_started", "response_complete"],
];

/// The states of application protocol `proto` (a rule header's name) for direction
/// `d`, first to last.
pub fn app_states(proto: &str, d: Direction) -> &'static [&'static str] {
    let table = match proto {
        "http" | "http1" => &HTTP,
        "tls" | "ssl" => &TLS,
        "ssh" => &SSH,
        _ => &GENERIC,
    };
    table[d.index()]
}

impl Hook {
    /// The hook `name` names for protocol `proto` (`all`, `client_hello_done`,
    /// `<request_headers`); `app` tells an application protocol from a transport one.
    pub fn parse(proto: &str, app: bool, name: &str) -> Option<Hook> {
        if !app {
            return PacketHook::by_name(name).map(Hook::Packet);
        }
        let (upto, name) = match name.strip_prefix('<') {
            Some(n) => (true, n),
            None => (false, name),
        };
        for d in Direction::BOTH {
            let states = app_states(proto, d);
            let alias = |first: &str, last: &str| match name {
                n if n == first => Some(0),
                n if n == last => Some(states.len() - 1),
                _ => None,
            };
            let generic = match d {
                Direction::ToServer => alias("request_started", "request_complete"),
                Direction::ToClient => alias("response_started", "response_complete"),
            };
            if let Some(i) = states.iter().position(|s| *s == name).or(generic) {
                return Some(Hook::App(AppHook {
                    dir: d,
                    state: i as u8,
                    upto,
                }));
            }
        }
        None
    }

    /// The hook as written after the protocol's name (its state's own name).
    pub fn name(self, proto: &str) -> String {
        match self {
            Hook::Packet(h) => h.name().to_string(),
            Hook::App(a) => {
                let s = app_states(proto, a.dir)[usize::from(a.state)];
                if a.upto {
                    format!("<{s}")
                } else {
                    s.to_string()
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_resolve_to_states_and_back() {
        let h = Hook::parse("tls", true, "<client_hello_done").unwrap();
        assert_eq!(
            h,
            Hook::App(AppHook {
                dir: Direction::ToServer,
                state: 1,
                upto: true
            })
        );
        assert_eq!(h.name("tls"), "<client_hello_done");
        // The generic names are the first and last states.
        let s = Hook::parse("ssh", true, "request_started").unwrap();
        assert_eq!(s.name("ssh"), "request_in_progress");
        let c = Hook::parse("dns", true, "response_complete").unwrap();
        assert_eq!(
            c,
            Hook::App(AppHook {
                dir: Direction::ToClient,
                state: 1,
                upto: false
            })
        );
        assert_eq!(
            Hook::parse("tcp", false, "flow_start"),
            Some(Hook::Packet(PacketHook::FlowStart))
        );
        assert_eq!(Hook::parse("tcp", false, "request_line"), None);
        assert_eq!(Hook::parse("http1", true, "client_hello_done"), None);
    }

    #[test]
    fn firewall_rules_parse_and_print_back() {
        use crate::{Action, Vars, parse_rule};
        let v = Vars::default();
        let r = parse_rule(
            r#"accept:flow,pass:flow,alert tls:<client_hello_done any any -> any any (tls.sni; content:"a"; sid:1;)"#,
            &v,
        )
        .unwrap();
        assert_eq!(r.action, Action::Accept);
        assert_eq!(r.scope, Some(Scope::Flow));
        assert_eq!(r.also_pass, Some(Scope::Flow));
        assert!(r.pass_alert);
        assert_eq!(parse_rule(&r.to_string(), &v).unwrap(), r);
        let r = parse_rule("drop:packet tcp:pre_flow any any -> any 443 (sid:2;)", &v).unwrap();
        assert_eq!(r.hook, Some(Hook::Packet(PacketHook::PreFlow)));
        assert_eq!(parse_rule(&r.to_string(), &v).unwrap(), r);
        // Errors name the column of the field.
        let e = parse_rule("accept:hook tcp:nowhere any any -> any any (sid:3;)", &v).unwrap_err();
        assert_eq!(
            (e.column(), e.to_string().contains("unknown hook")),
            (13, true)
        );
        let e = parse_rule("accept:sometimes tcp any any -> any any (sid:4;)", &v).unwrap_err();
        assert!(e.to_string().contains("unknown action"), "{e}");
    }
}
