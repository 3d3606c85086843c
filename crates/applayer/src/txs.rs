//! A parser's transactions: numbered from 0 as they begin, at most `CAP` kept (the
//! oldest go first), and dropped once the detector is done with them. DNS, SMTP, FTP, SIP,
//! MQTT and DCE/RPC keep theirs here; HTTP pairs requests and responses and keeps its own.

use std::collections::VecDeque;
use std::ops::Deref;

/// A transaction that knows its number.
pub trait Numbered {
    fn id(&self) -> u64;
}

/// The transactions of one flow, oldest first; read them as a `VecDeque`.
#[derive(Clone, Debug)]
pub struct Txs<T, const CAP: usize> {
    list: VecDeque<T>,
    next_id: u64,
}

impl<T, const CAP: usize> Default for Txs<T, CAP> {
    fn default() -> Self {
        Txs {
            list: VecDeque::new(),
            next_id: 0,
        }
    }
}

impl<T: Numbered, const CAP: usize> Txs<T, CAP> {
    /// None yet, numbered from `first` (the protocol a connection switched from
    /// numbered those before).
    pub fn starting_at(first: u64) -> Self {
        Txs {
            list: VecDeque::new(),
            next_id: first,
        }
    }

    /// Begins a transaction, which `make` builds given its number; past `CAP` kept, the
    /// oldest is dropped.
    pub fn begin(&mut self, make: impl FnOnce(u64) -> T) -> &mut T {
        if self.list.len() == CAP {
            self.list.pop_front();
        }
        self.list.push_back(make(self.next_id));
        self.next_id += 1;
        self.list.back_mut().expect("pushed above")
    }

    /// Transactions begun since the flow began.
    pub fn begun(&self) -> u64 {
        self.next_id
    }

    /// Drops the transactions before number `keep`.
    pub fn prune(&mut self, keep: u64) {
        self.list.retain(|t| t.id() >= keep);
    }

    pub fn back_mut(&mut self) -> Option<&mut T> {
        self.list.back_mut()
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut T> {
        self.list.iter_mut()
    }
}

impl<T, const CAP: usize> Deref for Txs<T, CAP> {
    type Target = VecDeque<T>;

    fn deref(&self) -> &VecDeque<T> {
        &self.list
    }
}

/// The latest events a parser raised (the last `CAP` kept) and how many it raised since
/// its flow began, so that the detector can ask for those raised after a count it saw.
/// DNS, HTTP and MQTT keep theirs here; read the kept ones as a slice.
#[derive(Clone)]
pub struct Events<E, const CAP: usize = 64> {
    kept: VecDeque<E>,
    raised: u64,
}

impl<E, const CAP: usize> Default for Events<E, CAP> {
    fn default() -> Self {
        Events {
            kept: VecDeque::new(),
            raised: 0,
        }
    }
}

impl<E: Copy, const CAP: usize> Events<E, CAP> {
    /// None kept, `raised` counted (the parser a connection switched from raised
    /// them), so that counts the detector holds stay valid.
    pub fn counted(raised: u64) -> Self {
        Events {
            kept: VecDeque::new(),
            raised,
        }
    }

    pub fn raise(&mut self, e: E) {
        if self.kept.len() == CAP {
            self.kept.pop_front();
        }
        self.kept.push_back(e);
        self.raised += 1;
    }

    /// Events raised since the flow began.
    pub fn raised(&self) -> u64 {
        self.raised
    }

    /// The events raised after the first `count`, as far as they are kept.
    pub fn since(&self, count: u64) -> impl Iterator<Item = E> + '_ {
        let new = (self.raised - count.min(self.raised)) as usize;
        self.kept
            .iter()
            .copied()
            .skip(self.kept.len() - new.min(self.kept.len()))
    }

    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.kept.iter()
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    pub fn contains(&self, e: &E) -> bool
    where
        E: PartialEq,
    {
        self.kept.contains(e)
    }
}

impl<E: std::fmt::Debug, const CAP: usize> std::fmt::Debug for Events<E, CAP> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.kept).finish()
    }
}

impl<E: PartialEq, const CAP: usize, const N: usize> PartialEq<[E; N]> for Events<E, CAP> {
    fn eq(&self, other: &[E; N]) -> bool {
        self.kept.iter().eq(other.iter())
    }
}

impl<E: PartialEq, const CAP: usize> PartialEq<&[E]> for Events<E, CAP> {
    fn eq(&self, other: &&[E]) -> bool {
        self.kept.iter().eq(other.iter())
    }
}

impl<E, const CAP: usize> std::ops::Index<usize> for Events<E, CAP> {
    type Output = E;

    fn index(&self, i: usize) -> &E {
        &self.kept[i]
    }
}

impl<'a, T, const CAP: usize> IntoIterator for &'a Txs<T, CAP> {
    type Item = &'a T;
    type IntoIter = std::collections::vec_deque::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.list.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Numbered for (u64, char) {
        fn id(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn numbered_capped_and_pruned() {
        let mut t: Txs<(u64, char), 2> = Txs::default();
        for c in ['a', 'b', 'c'] {
            t.begin(|id| (id, c));
        }
        assert_eq!(t.begun(), 3);
        assert_eq!(t.iter().copied().collect::<Vec<_>>(), [(1, 'b'), (2, 'c')]);
        t.prune(2);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0], (2, 'c'));
    }
}
