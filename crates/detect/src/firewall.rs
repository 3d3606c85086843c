//! Suricata 8's firewall mode: rules read from a firewall rule file, each at an
//! explicit hook, evaluated in file order before threat detection (TD).
//!
//! A packet passes the firewall's tables in order:
//! 1. `packet:pre_flow`, `packet:pre_stream` (TCP): default `accept:hook`;
//! 2. `packet:filter` (`proto:all`, and `proto:flow_start` on the first packet of each
//!    direction): default `drop:packet`;
//! 3. when the packet moved a transaction of its flow's application protocol, each state
//!    the transaction passed in the packet's direction (`app:filter`): every state needs
//!    an accept, default `drop:flow`.
//!
//! In each table the first rule that matches decides: `accept:hook` goes on to the
//! next table (or state), `accept:tx` accepts the rest of the transaction's states,
//! `accept:packet` the rest of the packet's tables, `accept:flow` every later packet of
//! the flow; `drop:packet` and `drop:flow` end the packet's inspection (no TD rule sees
//! it). A packet the firewall accepts goes on to TD. A firewall rule alerts only with
//! `alert` (keyword or secondary action).
//!
//! This module holds the tables and the states of each transaction; the evaluation is
//! [`crate::Detector`]'s (`engine.rs`, `run_firewall`).

use std::collections::HashMap;
use std::sync::Arc;

use netsieve_applayer::AppProto;
use netsieve_packet::Direction;
use netsieve_rules::{Action, Hook, PacketHook, Scope};

use crate::app::{Stage, TxRef};
use crate::ruleset::Sig;

/// The firewall's rules by table, as indices into the rule set, in file order.
#[derive(Clone, Debug, Default)]
pub struct Tables {
    /// Firewall mode: a firewall rule was loaded.
    pub(crate) on: bool,
    pub(crate) pre_flow: Vec<u32>,
    pub(crate) pre_stream: Vec<u32>,
    /// `all` and `flow_start` rules.
    pub(crate) filter: Vec<u32>,
    /// Per application protocol and direction, per state: its rules.
    pub(crate) app: HashMap<(AppProto, Direction), Vec<Vec<AppRule>>>,
}

/// A rule of an application state, and whether it is there only as a later state's
/// `<state` (its header accepts the state).
pub(crate) type AppRule = (u32, bool);

impl Tables {
    /// The tables of `sigs`, a rule set in evaluation order, where `sigs[k]` was the
    /// `order[k]`-th rule read.
    pub(crate) fn build(sigs: &[Arc<Sig>], order: &[usize]) -> Arc<Tables> {
        let mut fw: Vec<usize> = (0..sigs.len()).filter(|&k| sigs[k].rule.firewall).collect();
        fw.sort_by_key(|&k| order[k]);
        let mut t = Tables {
            on: !fw.is_empty(),
            ..Tables::default()
        };
        for k in fw {
            let s = &sigs[k];
            let i = k as u32;
            match (s.rule.hook, s.app) {
                (Some(Hook::Packet(PacketHook::PreFlow)), _) => t.pre_flow.push(i),
                (Some(Hook::Packet(PacketHook::PreStream)), _) => t.pre_stream.push(i),
                (Some(Hook::App(h)), Some(p)) => {
                    let states = t.app.entry((p, h.dir)).or_insert_with(|| {
                        let n = netsieve_rules::app_states(p.name(), h.dir).len();
                        vec![Vec::new(); n]
                    });
                    let at = usize::from(h.state).min(states.len() - 1);
                    if h.upto {
                        for st in &mut states[..at] {
                            st.push((i, true));
                        }
                    }
                    states[at].push((i, false));
                }
                _ => t.filter.push(i),
            }
        }
        Arc::new(t)
    }
}

/// What a table decided for a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// On to the next table (or state).
    Next,
    /// The rest of this transaction's states.
    AcceptTx,
    /// The rest of this packet's tables.
    AcceptPacket,
    /// Every later packet of the flow.
    AcceptFlow,
    DropPacket,
    DropFlow,
}

impl Verdict {
    /// The verdict of a firewall rule's action.
    pub(crate) fn of(action: Action, scope: Option<Scope>) -> Verdict {
        match (action, scope) {
            (Action::Accept, Some(Scope::Packet)) => Verdict::AcceptPacket,
            (Action::Accept, Some(Scope::Flow)) => Verdict::AcceptFlow,
            (Action::Accept, Some(Scope::Tx)) => Verdict::AcceptTx,
            (Action::Accept, _) => Verdict::Next,
            (Action::Drop | Action::Reject, Some(Scope::Flow)) => Verdict::DropFlow,
            (Action::Drop | Action::Reject, _) => Verdict::DropPacket,
            // `alert` and `pass` are no firewall verdicts: the rule only alerts.
            (Action::Alert | Action::Pass, _) => Verdict::Next,
        }
    }

    pub(crate) fn drops(self) -> bool {
        matches!(self, Verdict::DropPacket | Verdict::DropFlow)
    }
}

/// Where a firewall alert was raised, as EVE's `firewall.hook` names it, and the rule's
/// actions as written (`accept:hook,alert`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FwInfo {
    pub hook: Option<String>,
    pub policy: String,
}

impl FwInfo {
    pub(crate) fn new(hook: Option<String>, s: &Sig) -> FwInfo {
        let mut policy = s.rule.actions();
        if s.rule.pass_alert {
            policy.push_str(",alert");
        }
        FwInfo { hook, policy }
    }
}

/// The name of a packet-layer table for EVE.
pub(crate) fn packet_hook_name(h: PacketHook) -> &'static str {
    match h {
        PacketHook::PreFlow => "packet:pre_flow",
        PacketHook::PreStream => "packet:pre_stream",
        PacketHook::FlowStart | PacketHook::All => "packet:filter",
    }
}

/// The name EVE gives state `state` of `proto` in direction `d` (`tls:client_hello_done`,
/// `http:request_line`); `None` for protocols whose states have no names of their own.
pub(crate) fn app_hook_name(proto: AppProto, d: Direction, state: u8) -> Option<String> {
    let name = match proto {
        AppProto::Http => "http",
        AppProto::Tls | AppProto::Ssh => proto.name(),
        _ => return None,
    };
    let states = netsieve_rules::app_states(proto.name(), d);
    Some(format!("{name}:{}", states.get(usize::from(state))?))
}

/// Transaction `tx` holds no part of a message of direction `d` waiting for the rest:
/// a packet that leaves it so is an update of its states even where they did not move
/// (measured on Suricata 8: a TLS record split over packets is evaluated once whole).
pub(crate) fn settled(tx: &TxRef<'_>, d: Direction) -> bool {
    match tx {
        TxRef::Tls(t) => !t.pending(d),
        _ => true,
    }
}

/// How far transaction `tx` has come in direction `d`, as an index into its protocol's
/// states ([`netsieve_rules::app_states`]); `None` before that side began.
pub(crate) fn progress(tx: &TxRef<'_>, d: Direction) -> Option<u8> {
    match tx {
        TxRef::Http(t) => {
            let msg = match d {
                Direction::ToServer => {
                    let r = t.request.as_ref()?;
                    if r.line_only {
                        return Some(1);
                    }
                    &r.msg
                }
                Direction::ToClient => &t.response.as_ref()?.msg,
            };
            Some(match (msg.complete, msg.body_len) {
                (true, _) => 5,
                (false, 0) => 2,
                (false, _) => 3,
            })
        }
        TxRef::Tls(t) => t.progress(d),
        TxRef::Ssh(t) => t.banner[d].as_ref().map(|_| 2),
        _ => match tx.stage(d) {
            Stage::None => None,
            Stage::Done => Some(1),
            _ => Some(0),
        },
    }
}
