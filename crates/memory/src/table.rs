//! A copy-on-write table: cloning the store's state for a transaction copies only an
//! `Arc` per table, and a table is copied when the transaction first writes to it.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::Arc;

use muster_domain::model::OrgId;

/// Rows of one kind, ordered by key.
#[derive(Debug)]
pub(crate) struct Table<K, V>(Arc<BTreeMap<K, V>>);

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
    pub(crate) fn rows_mut(&mut self) -> &mut BTreeMap<K, V> {
        Arc::make_mut(&mut self.0)
    }

    /// Stores `value` under `key`, replacing what was there.
    pub(crate) fn put(&mut self, key: K, value: V) {
        self.rows_mut().insert(key, value);
    }

    /// The row under `key`, for changing it in place; `None` when there is none.
    pub(crate) fn row_mut(&mut self, key: &K) -> Option<&mut V> {
        if self.0.contains_key(key) {
            self.rows_mut().get_mut(key)
        } else {
            None
        }
    }

    /// Removes and answers the row under `key`, copying only when there is one.
    pub(crate) fn take(&mut self, key: &K) -> Option<V> {
        if self.0.contains_key(key) {
            self.rows_mut().remove(key)
        } else {
            None
        }
    }

    /// Keeps only the rows `keep` accepts; how many were removed.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&K, &V) -> bool) -> u64 {
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

/// A row that belongs to one organization: reads and writes through the ports are
/// scoped to it, and a row of another organization is a missing row.
pub(crate) trait Owned {
    fn org(&self) -> OrgId;
}

macro_rules! owned_by_org_id {
    ($($row:ty),+ $(,)?) => {
        $(impl Owned for $row {
            fn org(&self) -> OrgId {
                self.org_id
            }
        })+
    };
}

owned_by_org_id!(
    muster_domain::model::User,
    muster_domain::model::ApiKey,
    muster_domain::model::Capability,
    muster_domain::model::Task,
    muster_domain::model::TaskDependency,
    muster_domain::model::Comment,
    muster_domain::model::Escalation,
    muster_domain::model::TaskTemplate,
    muster_domain::model::InboundKey,
    muster_domain::model::CodeHostConnection,
    muster_domain::model::Run,
    muster_domain::model::LogLine,
    muster_domain::model::UsageReport,
    muster_domain::model::ClaimReservation,
    muster_domain::model::Project,
    muster_domain::model::Routine,
);

impl<K: Ord + Clone, V: Clone + Owned> Table<K, V> {
    /// The row under `key` if it belongs to `org`.
    pub(crate) fn in_org(&self, key: &K, org: OrgId) -> Option<&V> {
        self.get(key).filter(|row| row.org() == org)
    }

    /// The row under `key`, for changing it in place, if it belongs to `org`.
    pub(crate) fn row_in_org(&mut self, key: &K, org: OrgId) -> Option<&mut V> {
        if self.in_org(key, org).is_some() {
            self.rows_mut().get_mut(key)
        } else {
            None
        }
    }

    /// Removes and answers the row under `key` if it belongs to `org`.
    pub(crate) fn take_in_org(&mut self, key: &K, org: OrgId) -> Option<V> {
        if self.in_org(key, org).is_some() {
            self.rows_mut().remove(key)
        } else {
            None
        }
    }
}
