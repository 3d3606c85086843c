//! The vocabulary every netsieve layer shares.
//!
//! - [`ip_proto`]: IP protocol numbers and their names, one table for rules, filters,
//!   firewall rules and logs.
//! - [`Direction`] and [`PerDir`]: the two directions of a conversation, and a pair of
//!   values indexed by them.
//! - [`DecodeEvent`] and [`AppEvent`]: what is wrong with a packet's headers or its
//!   flow's application layer, by Suricata's names.

pub mod event;
pub mod ip_proto;

pub use event::{AppEvent, DecodeEvent};

mod direction;

pub use direction::{Direction, PerDir};
