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

/// Declares a fieldless enum with one name per variant, read by `by_name` and written
/// by `name` (and `Display`), so that a keyword's words live in one table.
macro_rules! named {
    ($(#[$m:meta])* $vis:vis enum $t:ident { $($(#[$vm:meta])* $v:ident = $name:literal,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $t { $($(#[$vm])* $v),* }

        impl $t {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$t] = &[$($t::$v),*];

            pub fn by_name(name: &str) -> Option<$t> {
                match name { $($name => Some($t::$v),)* _ => None }
            }

            pub fn name(self) -> &'static str {
                match self { $($t::$v => $name),* }
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

pub mod buffer;
pub mod load;
pub mod parse;
mod print;
pub mod rule;
pub mod threshold;
pub mod vars;

pub use buffer::{AppBuffer, AppNeed, Spelling, Transform};
pub use load::{Classifications, Classtype, Loaded, RuleError, text_hash};
pub use parse::{ParseError, parse_rule};
pub use rule::*;
pub use threshold::{GlobalEntry, GlobalKind, SuppressTrack, ThresholdConfig};
pub use vars::{AddrExpr, PortExpr, Vars};
