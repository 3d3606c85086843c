//! Values a build makes once per key, on whichever of its threads asks first, and shares
//! with the others: the address sets and pcres many rules write alike.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

/// Keyed with foldhash, seeded per process. Lives as long as the build.
pub(crate) struct OnceEach<K, V>(Mutex<HashMap<K, V, foldhash::fast::RandomState>>);

impl<K, V> Default for OnceEach<K, V> {
    fn default() -> Self {
        OnceEach(Mutex::new(HashMap::default()))
    }
}

impl<K: Hash + Eq, V: Clone> OnceEach<K, V> {
    /// The value for `key`, made by `make` if no thread made it before. It is made
    /// unlocked: two threads may make the same one, and the first kept is shared from
    /// then on.
    pub(crate) fn get<Q>(&self, key: &Q, make: impl FnOnce() -> V) -> V
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(v) = self.0.lock().expect("not poisoned").get(key) {
            return v.clone();
        }
        let v = make();
        let mut map = self.0.lock().expect("not poisoned");
        map.entry(key.to_owned()).or_insert(v).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_made_once_per_key_and_the_first_is_kept() {
        let once: OnceEach<String, usize> = OnceEach::default();
        let mut made = 0;
        for key in ["a", "b", "a", "a", "b"] {
            once.get(key, || {
                made += 1;
                made
            });
        }
        assert_eq!(made, 2);
        assert_eq!((once.get("a", || 99), once.get("b", || 99)), (1, 2));
    }
}
