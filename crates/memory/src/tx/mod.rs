//! [`Transaction`](muster_domain::ports::Transaction) on a private copy of the store's state: the
//! copy becomes the store when the unit of work commits, and is dropped when it rolls back.
//! Units of work run one at a time, so every read holds what it read until the commit
//! whatever its [`Lock`](muster_domain::ports::Lock).
//!
//! One file per write-side trait of [`muster_domain::ports::tx`], like the ports themselves.

mod agents;
mod guard;
mod integrations;
mod keys;
mod ledger;
mod organizations;
mod projects;
mod routines;
mod runs;
mod sessions;
mod tasks;
mod webhooks;

pub(crate) use self::webhooks::push_configs_of;

use muster_domain::model::Event;
use muster_domain::ports::{RepositoryError, UniqueKey};
use uuid::Uuid;

use crate::state::State;
use crate::table::Table;

/// One unit of work's view of the store.
pub(crate) struct MemoryTransaction {
    state: State,
    written: Vec<Event>,
}

impl MemoryTransaction {
    pub(crate) fn new(state: State) -> Self {
        Self {
            state,
            written: Vec::new(),
        }
    }

    pub(crate) fn into_state(self) -> State {
        self.state
    }
}

fn duplicate(key: UniqueKey) -> Result<(), RepositoryError> {
    Err(RepositoryError::Duplicate(key))
}

/// A value the databases' CHECK constraints refuse.
fn check(holds: bool, constraint: &'static str) -> Result<(), RepositoryError> {
    if holds {
        Ok(())
    } else {
        Err(RepositoryError::internal(format!(
            "check constraint violated: {constraint}"
        )))
    }
}

/// Stores a row under a key that must be new (the table's primary key).
fn insert_new<K: Ord + Clone, V: Clone>(
    table: &mut Table<K, V>,
    key: K,
    row: V,
    name: &str,
) -> Result<(), RepositoryError> {
    if table.contains_key(&key) {
        return Err(primary_key(name));
    }
    table.put(key, row);
    Ok(())
}

/// Inserts each of `rows` under its `key`, as [`insert_new`] does one.
fn insert_each<V: Clone>(
    table: &mut Table<Uuid, V>,
    rows: &[V],
    key: impl Fn(&V) -> Uuid,
    name: &str,
) -> Result<(), RepositoryError> {
    rows.iter()
        .try_for_each(|row| insert_new(table, key(row), row.clone(), name))
}

fn primary_key(table: &str) -> RepositoryError {
    RepositoryError::Duplicate(UniqueKey::Other(format!("{table}_pkey")))
}
