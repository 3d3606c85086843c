//! Detection: compiled rule sets, the fast-pattern prefilter, option evaluation.
//!
//! - [`ruleset`]: [`RuleSet`], built once from parsed rules and shared immutably.
//! - [`eval`]: a rule's option chain over one buffer (contents with their positions,
//!   pcre, byte_test/jump/extract, isdataat, bsize), with backtracking.
//! - [`pcre`]: the two regex engines.
//! - [`portgroup`]: rules split by the server's port, each group with its own prefilters.
//! - [`addrindex`]: IP-only rules, indexed by their address lists.
//! - [`firewall`]: Suricata 8's firewall mode: its tables and transaction states.
//! - [`engine`]: [`Detector`], the per-packet driver, and the per-flow state it keeps.

pub mod addrindex;
pub mod app;
mod asn1;
pub mod dataset;
pub mod digest;
pub mod engine;
pub mod eval;
pub mod expect;
pub mod firewall;
mod header;
pub mod hostbits;
pub mod iprep;
pub mod log;
pub mod lua;
mod once;
mod options;
pub mod pcre;
pub mod portgroup;
mod rarity;
pub mod ruleset;
mod tag;
mod threshold;
pub mod vars;

pub use engine::{
    Alert, Counts, Detector, DropReason, FlowCounts, FlowData, FrameHit, FwDrop, Profile, Verdict,
};
pub use options::{AppPorts, DetectOptions, ExceptionPolicy};
pub use ruleset::{BuildOptions, Kept, LoadStats, Mpm, RuleSet, Sig};
pub use threshold::Thresholds;
