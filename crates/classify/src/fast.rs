//! The fast path: the first matching simple rule (`matchID`) for a packet's header.
//!
//! Three algorithms, all exact, chosen when the fast path is built:
//!
//! - [`Rfc`] (recursive flow classification): a fixed chain of 16 table reads and an AND
//!   of two bitmaps, the fastest lookup, for IPv4 sets of up to 4,096 entries whose
//!   tables stay under [`RFC_MAX_BYTES`].
//! - [`BitVector`] (bit vectors over elementary intervals): the fastest for medium IPv4
//!   sets, but its memory grows with the square of the rule count.
//! - [`TupleSpace`] (tuple space search with merged tuples): memory and build time linear
//!   in the rule count, any address family.
//!
//! [`FastPath::build`] takes RFC when it fits, else the bit vectors when the set is IPv4,
//! has at most [`BV_MAX_ENTRIES`] entries and its vectors fit [`BV_MAX_BYTES`]; otherwise
//! tuple space search. The crossovers come from `netsieve bench firewall`
//! (docs/BENCHMARKS.md).

use crate::bv::BitVector;
use crate::rfc::Rfc;
use crate::rule::{Header, Key};
use crate::tss::TupleSpace;

pub use crate::tss::NONE;

/// The most memory the RFC tables may take.
pub const RFC_MAX_BYTES: usize = 8 << 20;
/// Above this many entries the tuple space is used.
pub const BV_MAX_ENTRIES: usize = 16_384;
/// The most memory the bit vectors may take.
pub const BV_MAX_BYTES: usize = 32 << 20;

/// The fast-path algorithms, for [`FastPath::build_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    Rfc,
    BitVector,
    TupleSpace,
}

impl Algorithm {
    pub const ALL: [Algorithm; 3] = [Algorithm::TupleSpace, Algorithm::BitVector, Algorithm::Rfc];
}

#[derive(Clone, Debug)]
pub enum FastPath {
    Rfc(Box<Rfc>),
    BitVector(Box<BitVector>),
    TupleSpace(TupleSpace),
}

impl Default for FastPath {
    fn default() -> FastPath {
        FastPath::TupleSpace(TupleSpace::default())
    }
}

/// Size figures of a built fast path.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    pub algorithm: &'static str,
    pub entries: usize,
    /// Hash tables (tuple space) or 0.
    pub tables: usize,
    pub heap_bytes: usize,
}

impl FastPath {
    /// Builds from (priority, header) entries in any order; equal priorities are allowed
    /// (alternatives of one rule).
    pub fn build(entries: impl IntoIterator<Item = (u32, Header)>) -> FastPath {
        let mut es: Vec<(u32, Header)> = entries.into_iter().collect();
        es.sort_by_key(|e| e.0);
        if let Some(r) = Rfc::build(&es, RFC_MAX_BYTES) {
            return FastPath::Rfc(Box::new(r));
        }
        if es.len() <= BV_MAX_ENTRIES
            && let Some(bv) = BitVector::build(&es, BV_MAX_BYTES)
        {
            return FastPath::BitVector(Box::new(bv));
        }
        FastPath::TupleSpace(TupleSpace::build(es))
    }

    /// Forces one algorithm (for benchmarks and tests); `None` when it does not apply
    /// to these entries or would take more than 1 GiB.
    pub fn build_with(
        entries: impl IntoIterator<Item = (u32, Header)>,
        algorithm: Algorithm,
    ) -> Option<FastPath> {
        let mut es: Vec<(u32, Header)> = entries.into_iter().collect();
        es.sort_by_key(|e| e.0);
        match algorithm {
            Algorithm::Rfc => Rfc::build(&es, 1 << 30).map(|r| FastPath::Rfc(Box::new(r))),
            Algorithm::BitVector => {
                BitVector::build(&es, 1 << 30).map(|b| FastPath::BitVector(Box::new(b)))
            }
            Algorithm::TupleSpace => Some(FastPath::TupleSpace(TupleSpace::build(es))),
        }
    }

    /// The best (lowest) priority whose entry matches `k`, or [`NONE`].
    #[inline]
    pub fn lookup(&self, k: &Key) -> u32 {
        match self {
            FastPath::Rfc(r) => r.lookup(k),
            FastPath::BitVector(b) => b.lookup(k),
            FastPath::TupleSpace(t) => t.lookup(k),
        }
    }

    /// [`FastPath::lookup`] for each of `keys` into `out` (as many as both hold).
    pub fn lookup_batch(&self, keys: &[Key], out: &mut [u32]) {
        match self {
            FastPath::Rfc(r) => r.lookup_batch(keys, out),
            FastPath::BitVector(b) => b.lookup_batch(keys, out),
            FastPath::TupleSpace(t) => t.lookup_batch(keys, out),
        }
    }

    pub fn stats(&self) -> Stats {
        match self {
            FastPath::Rfc(r) => Stats {
                algorithm: "RFC",
                entries: r.entries(),
                tables: 0,
                heap_bytes: r.heap_bytes(),
            },
            FastPath::BitVector(b) => Stats {
                algorithm: "bit vectors",
                entries: b.entries(),
                tables: 0,
                heap_bytes: b.heap_bytes(),
            },
            FastPath::TupleSpace(t) => {
                let s = t.stats();
                Stats {
                    algorithm: "tuple space",
                    entries: s.entries,
                    tables: s.tables,
                    heap_bytes: s.heap_bytes,
                }
            }
        }
    }
}
