//! A copy-on-write table: cloning the store's state for a transaction copies only an
//! `Arc` per table, and a table is copied when the transaction first writes to it.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::Arc;

/// Rows of one kind, ordered by key.
#[derive(Debug)]
pub(super) struct Table<K, V>(Arc<BTreeMap<K, V>>);

impl<K, V> Clone for Table<K, V> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<K, V> Default for Table<K, V> {
    fn default() -> Self {
        Self(Arc::new(BTreeMap::new()))
    }
}

impl<K: Ord + Clone, V: Clone> Table<K, V> {
    /// The rows, for writing: copied first if another state still shares them.
    pub(super) fn rows_mut(&mut self) -> &mut BTreeMap<K, V> {
        Arc::make_mut(&mut self.0)
    }

    /// Stores `value` under `key`, replacing what was there.
    pub(super) fn put(&mut self, key: K, value: V) {
        self.rows_mut().insert(key, value);
    }

    /// The row under `key`, for changing it in place; `None` when there is none.
    pub(super) fn row_mut(&mut self, key: &K) -> Option<&mut V> {
        if self.0.contains_key(key) {
            self.rows_mut().get_mut(key)
        } else {
            None
        }
    }

    /// Removes and answers the row under `key`, copying only when there is one.
    pub(super) fn take(&mut self, key: &K) -> Option<V> {
        if self.0.contains_key(key) {
            self.rows_mut().remove(key)
        } else {
            None
        }
    }

    /// Keeps only the rows `keep` accepts; how many were removed.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&K, &V) -> bool) -> u64 {
        if self.0.iter().all(|(k, v)| keep(k, v)) {
            return 0;
        }
        let rows = self.rows_mut();
        let before = rows.len();
        rows.retain(|k, v| keep(k, v));
        u64::try_from(before - rows.len()).unwrap_or(u64::MAX)
    }
}

impl<K, V> Deref for Table<K, V> {
    type Target = BTreeMap<K, V>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}
