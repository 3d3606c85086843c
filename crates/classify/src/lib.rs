//! Ordered 5-tuple rule sets and the HyPaFilter hybrid classifier.
//!
//! A firewall rule set is an ordered list: the first rule that matches a packet decides
//! it. netfilter walks the list, so its cost grows with every rule. HyPaFilter (Fiessler
//! et al., ANCS 2017) splits the work: *simple* rules, which test only header fields, go
//! to a fast classifier that returns the position of the first simple rule that matches
//! (`matchID`); a packet goes to the slower, richer path only when a complex rule (payload
//! string, connection state, rate limit...) placed before that rule could still decide it
//! (`matchID >= validID`). Updates land in the slow path at once while a new fast path is
//! built in the background.
//!
//! - [`rule`]: the model (header tests, complex matches, actions, packets).
//! - [`iptables`] and [`classbench`]: parsers, with line and column in every error.
//! - [`linear`]: the reference, a linear first-match.
//! - [`fast`]: the fast path, one of [`rfc`] (recursive flow classification, for small
//!   IPv4 sets), [`bv`] (bit vectors over elementary intervals, for medium IPv4 sets) and
//!   [`tss`] (tuple space search with merged tuples).
//! - [`hybrid`]: validID, shunting, the full / cut / interval strategies, updates and the
//!   background rebuild.

// `unsafe` is allowed only for the prefetch hint of `tss` (measured; see its docs).
#![deny(unsafe_code)]

pub mod bv;
pub mod classbench;
pub mod fast;
pub mod hybrid;
pub mod iptables;
pub mod linear;
pub mod nft;
pub mod rfc;
pub mod rule;
pub mod tss;

pub use hybrid::{Hybrid, Strategy, Trace};
pub use linear::{Linear, Verdict};
pub use rule::{Action, Key, Packet, Rule, RuleSet};
