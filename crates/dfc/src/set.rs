//! The deduplicated pattern set that a matcher verifies against.

use crate::group::Groups;
use crate::long::LONG;

/// One distinct pattern: its bytes (lowercased when case-insensitive) and the ids that
/// were given to it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pat {
    /// Offset of the bytes in [`PatternSet::bytes`].
    pub off: u32,
    pub len: u32,
    /// Range of the ids in [`PatternSet::ids`].
    pub ids: u32,
    pub nids: u32,
    pub nocase: bool,
    /// For a long pattern (see [`crate::long`]), the offset of its failure function in
    /// [`PatternSet::failures`].
    pub failure: u32,
}

/// Distinct patterns, stored contiguously.
#[derive(Clone, Debug, Default)]
pub(crate) struct PatternSet {
    pub pats: Vec<Pat>,
    pub bytes: Vec<u8>,
    pub ids: Vec<u32>,
    /// The KMP failure functions of the long patterns, one after another.
    pub failures: Vec<u32>,
}

impl PatternSet {
    /// Deduplicates `(id, bytes, nocase)` triples: two patterns are the same when their
    /// case flags agree and their bytes are equal (after folding, when case-insensitive).
    /// Every id is kept. Expected time is linear in the total pattern bytes.
    pub(crate) fn new(input: &[(u32, &[u8], bool)]) -> PatternSet {
        // Every pattern's bytes as compared (lowercased when case-insensitive), one after
        // another: a build's patterns cost a few allocations, not a few each.
        let mut folded = Vec::with_capacity(input.iter().map(|(_, b, _)| b.len()).sum());
        let mut spans = Vec::with_capacity(input.len());
        for (_, bytes, nocase) in input {
            let start = folded.len();
            folded.extend_from_slice(bytes);
            if *nocase {
                folded[start..].make_ascii_lowercase();
            }
            spans.push(start..folded.len());
        }
        // The distinct patterns in first-seen order, each with its ids in input order.
        let groups = Groups::by_key(
            input
                .iter()
                .zip(&spans)
                .map(|((_, _, nocase), span)| (&folded[span.clone()], *nocase)),
        );
        let mut set = PatternSet::default();
        set.bytes
            .reserve(groups.iter().map(|g| spans[g[0] as usize].len()).sum());
        set.ids.reserve(input.len());
        for group in groups.iter() {
            let first = group[0] as usize;
            let bytes = &folded[spans[first].clone()];
            let failure = set.failures.len() as u32;
            if bytes.len() > LONG {
                set.failures.extend(crate::long::failure(bytes));
            }
            set.pats.push(Pat {
                off: set.bytes.len() as u32,
                len: bytes.len() as u32,
                ids: set.ids.len() as u32,
                nids: group.len() as u32,
                nocase: input[first].2,
                failure,
            });
            set.bytes.extend_from_slice(bytes);
            set.ids.extend(group.iter().map(|&i| input[i as usize].0));
        }
        set
    }

    #[inline(always)]
    pub(crate) fn bytes_of(&self, p: usize) -> &[u8] {
        let pat = &self.pats[p];
        &self.bytes[pat.off as usize..(pat.off + pat.len) as usize]
    }

    #[inline(always)]
    pub(crate) fn ids_of(&self, p: usize) -> &[u32] {
        let pat = &self.pats[p];
        &self.ids[pat.ids as usize..(pat.ids + pat.nids) as usize]
    }

    /// The failure function of long pattern `p`.
    #[inline(always)]
    pub(crate) fn failure_of(&self, p: usize) -> &[u32] {
        let pat = &self.pats[p];
        &self.failures[pat.failure as usize..(pat.failure + pat.len) as usize]
    }

    /// How many bytes of pattern `p` a candidate compares before a run takes over
    /// (all of them, for a pattern no longer than [`LONG`]).
    #[inline(always)]
    pub(crate) fn head_len(&self, p: usize) -> usize {
        (self.pats[p].len as usize).min(LONG)
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.pats.capacity() * size_of::<Pat>()
            + self.bytes.capacity()
            + self.ids.capacity() * 4
            + self.failures.capacity() * 4
    }

    pub(crate) fn shrink(&mut self) {
        self.pats.shrink_to_fit();
        self.bytes.shrink_to_fit();
        self.ids.shrink_to_fit();
        self.failures.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_stored_once_with_every_id() {
        let input = vec![
            (7, &b"Abc"[..], true),
            (8, &b"aBC"[..], true),
            (9, &b"Abc"[..], false),
            (10, &b"Abc"[..], false),
        ];
        let set = PatternSet::new(&input);
        assert_eq!(set.pats.len(), 2);
        assert_eq!(set.bytes_of(0), b"abc");
        assert_eq!(set.ids_of(0), &[7, 8]);
        assert_eq!(set.bytes_of(1), b"Abc");
        assert_eq!(set.ids_of(1), &[9, 10]);
    }

    #[test]
    fn patterns_keep_first_seen_order_and_ids_keep_input_order() {
        let input = vec![
            (1, &b"b"[..], false),
            (2, &b"a"[..], true),
            (3, &b"A"[..], true),
            (4, &b"b"[..], false),
            (5, &b"B"[..], false),
            (6, &b"b"[..], false),
        ];
        let set = PatternSet::new(&input);
        let got: Vec<(&[u8], &[u32])> = (0..set.pats.len())
            .map(|p| (set.bytes_of(p), set.ids_of(p)))
            .collect();
        assert_eq!(
            got,
            [
                (&b"b"[..], &[1, 4, 6][..]),
                (&b"a"[..], &[2, 3][..]),
                (&b"B"[..], &[5][..])
            ]
        );
    }
}
