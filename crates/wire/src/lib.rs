//! The vocabulary every netsieve layer shares.
//!
//! - [`ip_proto`]: IP protocol numbers and their names, one table for rules, filters,
//!   firewall rules and logs.
//! - [`Direction`] and [`PerDir`]: the two directions of a conversation, and a pair of
//!   values indexed by them.

pub mod ip_proto;

mod direction;

pub use direction::{Direction, PerDir};
