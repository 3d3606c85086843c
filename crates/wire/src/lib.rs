//! The vocabulary every netsieve layer shares.
//!
//! - [`ip_proto`]: IP protocol numbers and their names, one table for rules, filters,
//!   firewall rules and logs.
//! - [`Direction`] and [`PerDir`]: the two directions of a conversation, and a pair of
//!   values indexed by them.
//! - [`DecodeEvent`] and [`AppEvent`]: what is wrong with a packet's headers or its
//!   flow's application layer, by Suricata's names.
//! - [`FrameType`]: the records parsers find in streams, that rules' `frame:` inspects.
//! - [`hex`]: bytes as lower-case hex.

/// Declares a fieldless enum with one name per variant, read by `by_name` and written
/// by `name` (and `Display`), so that a vocabulary's words live in one table (rule
/// keywords, buffers, actions, events).
#[macro_export]
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

pub mod event;
pub mod frame;
pub mod hex;
pub mod http2;
pub mod ip_proto;
pub mod ldap;
pub mod websocket;

pub use event::{AppEvent, DecodeEvent, StreamEvent};
pub use frame::FrameType;

mod direction;

pub use direction::{Direction, PerDir};
