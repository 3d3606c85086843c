//! Items grouped by key in one pass and laid out flat, without a vector per group: how a
//! build deduplicates patterns ([`crate::set`]) and buckets a table's keys
//! ([`crate::table`]).

use std::collections::HashMap;
use std::hash::Hash;

/// Items grouped by key: groups in the order of their first item (so that builds are
/// deterministic), items in input order within a group.
pub(crate) struct Groups {
    /// Where each group starts in `items`, and the end of the last.
    starts: Vec<u32>,
    items: Vec<u32>,
}

impl Groups {
    /// Groups the indexes of `keys` (0, 1, ...) by equal key.
    pub(crate) fn by_key<K: Hash + Eq>(keys: impl IntoIterator<Item = K>) -> Groups {
        let keys = keys.into_iter();
        let mut index: HashMap<K, u32> = HashMap::with_capacity(keys.size_hint().0);
        let mut sizes: Vec<u32> = Vec::new();
        let group_of: Vec<u32> = keys
            .map(|k| {
                let new = sizes.len() as u32;
                let g = *index.entry(k).or_insert(new);
                if g == new {
                    sizes.push(0);
                }
                sizes[g as usize] += 1;
                g
            })
            .collect();
        let mut starts = Vec::with_capacity(sizes.len() + 1);
        starts.push(0);
        for n in sizes {
            starts.push(starts[starts.len() - 1] + n);
        }
        let mut fill = starts[..starts.len() - 1].to_vec();
        let mut items = vec![0; group_of.len()];
        for (i, g) in group_of.into_iter().enumerate() {
            items[fill[g as usize] as usize] = i as u32;
            fill[g as usize] += 1;
        }
        Groups { starts, items }
    }

    /// The same groups with each item `i` replaced by `f(i)`.
    pub(crate) fn map(mut self, f: impl Fn(u32) -> u32) -> Groups {
        self.items.iter_mut().for_each(|i| *i = f(*i));
        self
    }

    pub(crate) fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Each group's items, group by group.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u32]> {
        self.starts
            .windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_come_in_first_seen_order_with_items_in_input_order() {
        let g = Groups::by_key("bcabcca".chars());
        assert_eq!(g.len(), 3);
        let got: Vec<&[u32]> = g.iter().collect();
        assert_eq!(got, [&[0, 3][..], &[1, 4, 5], &[2, 6]]);
        let got: Vec<Vec<u32>> = g.map(|i| 10 * i).iter().map(<[u32]>::to_vec).collect();
        assert_eq!(got, [vec![0, 30], vec![10, 40, 50], vec![20, 60]]);
        assert_eq!(Groups::by_key(std::iter::empty::<u8>()).len(), 0);
    }
}
