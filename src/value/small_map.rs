//! An insertion-ordered map keyed by strings, for the few entries a round
//! usually holds: its calls' decisions, pending results and per-call
//! counts. The entries are a list, searched in order while there are at
//! most [`FEW`] — no key is hashed, where one-call rounds hashed four keys
//! each before — and found through an index of their positions past that,
//! so a wide round stays linear. The operations keep the order an
//! `IndexMap` keeps (`insert` of a present key replaces its value in
//! place, `swap_remove` moves the last entry into the gap, `pop` takes the
//! last), so what is persisted is what the map it replaces persisted. The
//! index holds positions only: one copy of its code serves every value
//! type (module size).

use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;

use crate::js_string::JsString;

/// The most entries searched in order.
const FEW: usize = 8;

/// See the [module docs](self).
#[derive(Clone, Debug)]
pub(crate) struct SmallMap<V> {
    entries: Vec<(JsString, V)>,
    /// Each key's position, once there are more than [`FEW`] entries.
    index: Option<Positions>,
}

impl<V> Default for SmallMap<V> {
    fn default() -> Self {
        SmallMap {
            entries: Vec::new(),
            index: None,
        }
    }
}

/// Key → position in the entries: a table of positions with their key's
/// hash (not a copy of the key: a wide map's keys are stored once; nor
/// hashed again when the table grows).
#[derive(Clone, Default)]
struct Positions {
    table: HashTable<(u64, usize)>,
    hasher: RandomState,
}

impl std::fmt::Debug for Positions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Positions").field("len", &self.table.len()).finish()
    }
}

/// The key at a position.
type KeyAt<'a> = &'a dyn Fn(usize) -> &'a JsString;

impl Positions {
    /// The index of the first `len` positions.
    #[inline(never)]
    fn of(len: usize, key_at: KeyAt<'_>) -> Positions {
        let mut index = Positions::default();
        for at in 0..len {
            index.add(key_at(at), at);
        }
        index
    }

    #[inline(never)]
    fn find(&self, key: &JsString, key_at: KeyAt<'_>) -> Option<usize> {
        let hash = self.hasher.hash_one(key);
        self.table.find(hash, |&(_, at)| key_at(at) == key).map(|&(_, at)| at)
    }

    #[inline(never)]
    fn add(&mut self, key: &JsString, at: usize) {
        let hash = self.hasher.hash_one(key);
        self.table.insert_unique(hash, (hash, at), |&(hash, _)| hash);
    }

    /// Forgets the position `at` of `key`.
    #[inline(never)]
    fn forget(&mut self, key: &JsString, at: usize) {
        let hash = self.hasher.hash_one(key);
        if let Ok(entry) = self.table.find_entry(hash, |&(_, other)| other == at) {
            entry.remove();
        }
    }

    /// Re-points `key` from position `from` to `to`.
    #[inline(never)]
    fn moved(&mut self, key: &JsString, from: usize, to: usize) {
        let hash = self.hasher.hash_one(key);
        if let Some(slot) = self.table.find_mut(hash, |&(_, other)| other == from) {
            slot.1 = to;
        }
    }
}

impl<V> SmallMap<V> {
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Room for entries without allocating.
    pub(crate) fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    fn position(&self, key: &JsString) -> Option<usize> {
        match &self.index {
            Some(index) => index.find(key, &|at| &self.entries[at].0),
            None => self.entries.iter().position(|(k, _)| k == key),
        }
    }

    pub(crate) fn get(&self, key: &JsString) -> Option<&V> {
        self.position(key).map(|at| &self.entries[at].1)
    }

    pub(crate) fn get_mut(&mut self, key: &JsString) -> Option<&mut V> {
        self.position(key).map(|at| &mut self.entries[at].1)
    }

    pub(crate) fn contains_key(&self, key: &JsString) -> bool {
        self.position(key).is_some()
    }

    /// Inserts `value` under `key`, at the end, or in place of the value
    /// of a present key (returned; `key` is then dropped).
    pub(crate) fn insert(&mut self, key: JsString, value: V) -> Option<V> {
        if let Some(at) = self.position(&key) {
            return Some(std::mem::replace(&mut self.entries[at].1, value));
        }
        self.insert_new(key, value);
        None
    }

    /// Adds an entry for `key`, which the map does not hold.
    pub(crate) fn insert_new(&mut self, key: JsString, value: V) {
        if self.index.is_none() && self.entries.len() >= FEW {
            self.index = Some(Positions::of(self.entries.len(), &|at| &self.entries[at].0));
        }
        self.entries.push((key, value));
        if let Some(index) = &mut self.index {
            let at = self.entries.len() - 1;
            index.add(&self.entries[at].0, at);
        }
    }

    /// Removes `key`'s entry, the last entry taking its place.
    pub(crate) fn swap_remove(&mut self, key: &JsString) -> Option<V> {
        let at = self.position(key)?;
        let last = self.entries.len() - 1;
        if let Some(index) = &mut self.index {
            index.forget(key, at);
            if at != last {
                index.moved(&self.entries[last].0, last, at);
            }
        }
        Some(self.entries.swap_remove(at).1)
    }

    /// Removes the last entry.
    pub(crate) fn pop(&mut self) -> Option<(JsString, V)> {
        let entry = self.entries.pop()?;
        if let Some(index) = &mut self.index {
            index.forget(&entry.0, self.entries.len());
        }
        Some(entry)
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.index = None;
    }

    /// The entries in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&JsString, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexmap::IndexMap;

    fn key(i: usize) -> JsString {
        JsString::from(format!("k{i}"))
    }

    /// The same operations on a small map and an `IndexMap` leave the same
    /// entries in the same order, listed or indexed.
    #[test]
    fn keeps_the_order_an_index_map_keeps() {
        for n in [3, FEW, FEW + 1, FEW + 5, 40] {
            let mut small = SmallMap::default();
            let mut map = IndexMap::new();
            for i in 0..n {
                assert_eq!(small.insert(key(i), i), map.insert(key(i), i));
            }
            assert_eq!(small.insert(key(1), 100), map.insert(key(1), 100));
            assert_eq!(small.swap_remove(&key(0)), map.swap_remove(&key(0)));
            assert_eq!(small.swap_remove(&key(99)), map.swap_remove(&key(99)));
            assert_eq!(small.pop(), map.pop());
            assert_eq!(small.swap_remove(&key(2)), map.swap_remove(&key(2)));
            if let Some(first) = map.keys().next().cloned() {
                *small.get_mut(&first).unwrap() += 1;
                *map.get_mut(&first).unwrap() += 1;
            }
            assert_eq!(small.insert(key(0), 7), map.insert(key(0), 7));
            let listed: Vec<_> = small.iter().map(|(k, v)| (k.clone(), *v)).collect();
            let expected: Vec<_> = map.iter().map(|(k, v)| (k.clone(), *v)).collect();
            assert_eq!(listed, expected, "{n} entries");
            for (k, v) in &map {
                assert_eq!(small.get(k), Some(v), "{n} entries");
            }
            assert_eq!(small.len(), map.len());
            assert!(!small.contains_key(&key(2)));
            assert_eq!(small.index.is_some(), n > FEW);
        }
    }
}
