//! Multi-pattern exact string matching with DFC.
//!
//! This crate finds every occurrence of many literal patterns (tens of thousands, one byte
//! to tens of kilobytes each, any bytes, each case-sensitive or not) in a byte string or a
//! stream, and reports each as `(pattern id, start, end)`. It implements DFC, "Direct
//! Filter Classification" (Choi et al., *DFC: Accelerating String Pattern Matching for
//! Network Applications*, NSDI 2016), from the paper.
//!
//! # Example
//!
//! ```
//! let mut builder = dfc::Builder::new();
//! builder
//!     .add(0, "attack", false)
//!     .add(1, "User-Agent: evil", true)
//!     .add(2, b"\x00\x01", false);
//! let matcher = builder.build().unwrap();
//!
//! let text = b"user-agent: EVIL attack \x00\x01";
//! let mut found: Vec<(u32, usize, usize)> =
//!     matcher.find_iter(text).map(|m| (m.pattern, m.start, m.end)).collect();
//! found.sort();
//! assert_eq!(found, vec![(0, 17, 23), (1, 0, 16), (2, 24, 26)]);
//! ```
//!
//! # How it works
//!
//! Automaton-based matchers (Aho-Corasick) look up a state transition for every input
//! byte; with tens of thousands of patterns the automaton is megabytes large and most of
//! those lookups miss the cache. DFC instead rejects most of the text with tiny bitmaps
//! that stay in the fastest cache, and spends real work only where a pattern might be.
//!
//! 1. **Initial filter.** A *direct filter* is a bitmap indexed by text bytes. For every
//!    position `i`, the two bytes at `i` index an 8 KB bitmap (65,536 bits). A bit is set
//!    when some pattern has those two bytes at its chosen *fragment offset*. One load and
//!    two shifts per position; no hashing; positions are independent of each other, so
//!    the CPU runs many at once. On real traffic most positions stop here.
//!
//! 2. **Progressive filtering.** Patterns are split by length into classes (by default
//!    1, 2-3, 4-7 and 8+ bytes). Each class has a *classifying filter* on the same two
//!    bytes (here all classes' bits share one 4-bit cell per window, which doubles as the
//!    2-byte initial filter: with AVX2, 64 windows' cells are gathered and split into one bit
//!    mask per class at once), and classes of 4 bytes or longer have an *additional
//!    filter* on another 2-byte fragment of their patterns, checked before paying for a
//!    hash lookup. Its offset is chosen at build time to set the fewest bits. (The paper
//!    checks more fragments of longer patterns; measured here, a second and third filter
//!    cost more than the lookups they saved.)
//!
//! 3. **Verification.** Each class has a compact hash table keyed on the class's shortest
//!    length (up to 8 bytes), with every byte's case bit set. A candidate's key is looked up, and patterns in
//!    the bucket with an equal key are compared with the text in full. Rule sets share
//!    prefixes (`User-Agent: ...`), so a crowded key group gets a *second stage*: the rest
//!    of its patterns are split by length again, filtered and hashed on the bytes that
//!    follow. One-byte patterns need no table: a 256-entry direct table lists them.
//!    A pattern longer than 64 bytes is compared only up to its 64th byte here; the rest
//!    is checked by a Knuth-Morris-Pratt scan that reads each later byte of the text once
//!    (`long.rs`), so no text can make the work grow with the product of its length and a
//!    pattern's (a run of `a` against `a` x 100,000 then `b`).
//!
//! Only the final comparison decides a match; filters and keys only narrow the candidates,
//! so a filter can let too much through (costing time) but never drop a match. The test
//! suite checks this against [`naive::Naive`], a deliberately simple matcher.
//!
//! # Semantics
//!
//! - Every occurrence is reported, overlapping ones included, as a [`Match`] with
//!   the pattern's id and the half-open byte range `start..end`.
//! - Case-insensitive patterns fold ASCII letters only: `@` and `` ` ``, `[` and `{` stay
//!   distinct, as in Snort and Suricata `nocase`.
//! - The same bytes added twice with the same case flag are stored once; each id is
//!   reported. Empty patterns are rejected.
//! - Reporting order is unspecified (roughly by position); sort if you need one.
//! - The search never reads outside the haystack; the [`Stream`] never loses or repeats a
//!   match across chunk boundaries.
//!
//! # Choosing the direct filter
//!
//! The paper measured that the 8 KB two-byte filter is fastest up to tens of thousands of
//! patterns, and a 2 MB three-byte filter wins for very large sets of long patterns (its
//! table 7, ClamAV signatures). [`DirectFilter::Auto`] follows that; see
//! [`Builder::direct_filter`].
//!
//! # Patent
//!
//! The authors of DFC hold US patent 10,462,157 on the method. Check it before deploying
//! this crate commercially.

// `unsafe` is allowed only in `simd`, for the measured AVX2 filter loop.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod builder;
mod filter;
mod fold;
mod group;
mod long;
mod matcher;
pub mod naive;
pub mod patfile;
mod search;
mod set;
mod simd;
mod stream;
mod table;

pub use builder::{BuildError, Builder, DEFAULT_LENGTH_CLASSES, DirectFilter};
pub use matcher::{ClassInfo, FindIter, Info, Matcher, Profile};
pub use stream::{Stream, StreamState};

/// An occurrence of a pattern: its id and the byte range `start..end` it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Match {
    /// The id the pattern was added with.
    pub pattern: u32,
    /// Offset of the first byte (from the start of the haystack or stream).
    pub start: usize,
    /// Offset one past the last byte.
    pub end: usize,
}

/// The examples of this crate's README and of the project README, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeExamples;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matcher_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Matcher>();
        check::<Stream<'static>>();
    }
}
