//! `DenseMap`: a map keyed by dense counter ids, stored as a vector of slots; and `settle`,
//! which sorts and deduplicates a list of changed ids when an input finishes.
//!
//! Ids come from counters starting at 1, so a vector indexed by `id - 1` gives O(1)
//! lookups and id-ordered iteration, where a `BTreeMap` would walk ~14 levels for
//! 10,000 workers on every access.

use crate::ids::{AttemptId, MessageId, RunId, WorkerId};

/// A counter id usable as a dense index.
pub(crate) trait DenseKey: Copy {
    /// The slot of this id (`id - 1`), or `None` for the never-issued id 0.
    fn slot(self) -> Option<usize>;
}

macro_rules! dense_key {
    ($($t:ty),*) => {$(
        impl DenseKey for $t {
            fn slot(self) -> Option<usize> {
                usize::try_from(self.0).ok()?.checked_sub(1)
            }
        }
    )*};
}
dense_key!(RunId, WorkerId, AttemptId, MessageId);

/// A map from dense ids to values.
#[derive(Clone, Debug)]
pub(crate) struct DenseMap<K, V> {
    slots: Vec<Option<V>>,
    len: usize,
    key: std::marker::PhantomData<K>,
}

impl<K, V> Default for DenseMap<K, V> {
    fn default() -> Self {
        DenseMap { slots: Vec::new(), len: 0, key: std::marker::PhantomData }
    }
}

impl<K: DenseKey, V: PartialEq> PartialEq for DenseMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter_slots().eq(other.iter_slots())
    }
}

impl<K: DenseKey, V: Eq> Eq for DenseMap<K, V> {}

impl<K: DenseKey, V> DenseMap<K, V> {
    fn iter_slots(&self) -> impl Iterator<Item = (usize, &V)> {
        self.slots.iter().enumerate().filter_map(|(i, v)| v.as_ref().map(|v| (i, v)))
    }

    /// The value of an id.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.slots.get(key.slot()?)?.as_ref()
    }

    /// The value of an id, mutably.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.slots.get_mut(key.slot()?)?.as_mut()
    }

    /// Whether the id is present.
    pub fn contains_key(&self, key: &K) -> bool {
        self.get(key).is_some()
    }

    /// Inserts a value. The caller bounds ids by the engine's counters, so the vector
    /// never grows past the number of ids ever issued.
    pub fn insert(&mut self, key: K, value: V) {
        let slot = key.slot().expect("id 0 is never issued");
        if slot >= self.slots.len() {
            self.slots.resize_with(slot + 1, || None);
        }
        if self.slots[slot].replace(value).is_none() {
            self.len += 1;
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Values in id order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.slots.iter().filter_map(Option::as_ref)
    }
}

impl<K: DenseKey, V> std::ops::Index<&K> for DenseMap<K, V> {
    type Output = V;
    fn index(&self, key: &K) -> &V {
        self.get(key).expect("id is present")
    }
}

/// Sorts and deduplicates an id list in place.
pub(crate) fn settle<T: Ord>(ids: &mut Vec<T>) {
    ids.sort_unstable();
    ids.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_iterate_in_id_order() {
        let mut m: DenseMap<WorkerId, &str> = DenseMap::default();
        m.insert(WorkerId(3), "c");
        m.insert(WorkerId(1), "a");
        assert_eq!(m.len(), 2);
        assert_eq!(m.get(&WorkerId(2)), None);
        assert_eq!(m.get(&WorkerId(0)), None);
        assert_eq!(m[&WorkerId(3)], "c");
        assert_eq!(m.values().copied().collect::<Vec<_>>(), vec!["a", "c"]);
        m.insert(WorkerId(1), "A");
        assert_eq!(m.len(), 2);
        let mut other: DenseMap<WorkerId, &str> = DenseMap::default();
        other.insert(WorkerId(1), "A");
        other.insert(WorkerId(3), "c");
        assert_eq!(m, other);
    }
}
