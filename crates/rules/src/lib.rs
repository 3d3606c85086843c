//! The Snort/Suricata rule language.
//!
//! ```
//! use netsieve_rules::{parse_rule, AppBuffer, AppNeed, Buffer, Match, Vars};
//! let r = parse_rule(
//!     r#"alert tcp $EXTERNAL_NET any -> $HOME_NET 80 (msg:"x"; flow:established,to_server; content:"GET"; depth:3; http.uri; content:"/a|3b|"; sid:1;)"#,
//!     &Vars::default(),
//! ).unwrap();
//! assert_eq!(r.sid, 1);
//! assert_eq!(r.lists[0].buffer, Buffer::Payload);
//! assert_eq!(r.lists[1].buffer, Buffer::App(AppBuffer::HttpUri));
//! let Match::Content(c) = &r.lists[1].matches[0] else { panic!() };
//! assert_eq!(c.pattern, b"/a;");
//! assert_eq!(r.app_layer, [AppNeed::Buffer(AppBuffer::HttpUri)]);
//! // Printed, it reads back as the same rule.
//! assert_eq!(parse_rule(&r.to_string(), &Vars::default()).unwrap(), r);
//! ```
//!
//! - [`vars`]: address and port expressions and their variables.
//! - [`rule`]: the IR, plain data; [`buffer`]: the buffers and transforms rules name.
//!   A `Rule` prints (`Display`) as rule text that parses back to it.
//! - [`parse`]: text to IR, with the column of the failing option.
//! - [`load`]: files, continuation lines, per-rule errors and their summary,
//!   classification.config.
//! - [`threshold`]: threshold.config (global thresholds, suppressions, rate filters).

pub mod buffer;
mod hook;
pub mod load;
pub mod parse;
mod print;
pub mod rule;
pub mod threshold;
pub mod vars;

pub use buffer::{AppBuffer, AppNeed, Base64Mode, HeaderBuffer, Plain, Spelling, Transform};
pub use load::{Classifications, Classtype, Loaded, References, RuleError, text_hash};
pub use netsieve_wire::FrameType;
pub use parse::{ParseError, parse_rule};
pub use rule::*;
pub use threshold::{GlobalEntry, GlobalKind, SuppressTrack, ThresholdConfig};
pub use vars::{AddrExpr, PortExpr, Vars};
