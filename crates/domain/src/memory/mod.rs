//! In-memory implementations of the ports (feature `memory`), for embedders' tests and
//! prototypes: [`MemoryStore`] implements every storage port and the unit of work,
//! [`SystemClock`], [`ManualClock`] and [`TimeOrderedIds`] the runtime ports, and
//! [`fakes`] stands in for the cryptographic ones.
//!
//! The store honours the same contract as the database engines (the persistence
//! contract suite runs against it too): units of work commit all or nothing and run
//! one at a time, like SQLite's single writer, while reads see the last committed state.
//! Nothing is persisted: dropping the last clone of a store drops its data.
//!
//! ```
//! use std::sync::Arc;
//!
//! use muster_domain::memory::{MemoryStore, SystemClock, TimeOrderedIds};
//! use muster_domain::service::TaskService;
//!
//! let store = MemoryStore::new();
//! let tasks = TaskService::new(
//!     Arc::new(store.clone()),
//!     Arc::new(store),
//!     Arc::new(SystemClock),
//!     Arc::new(TimeOrderedIds),
//! );
//! # let _ = tasks;
//! ```

mod events;
pub mod fakes;
mod queues;
mod reads;
mod runtime;
mod state;
mod table;
mod transaction;

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use futures_util::lock::Mutex as AsyncMutex;

pub use runtime::{ManualClock, SystemClock, TimeOrderedIds};

use self::state::State;
use self::transaction::MemoryTransaction;
use crate::ports::{UnitOfWork, Work, WorkOutput};
use crate::service::ServiceError;

/// Every storage port in memory: clone it freely, clones share the data.
#[derive(Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The committed state; readers take a snapshot of it.
    committed: Mutex<Arc<State>>,
    /// Held by the one change running at a time.
    writer: AsyncMutex<()>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.snapshot();
        f.debug_struct("MemoryStore")
            .field("organizations", &state.organizations.len())
            .field("agents", &state.agents.len())
            .field("tasks", &state.tasks.len())
            .field("events", &state.events.len())
            .finish_non_exhaustive()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The last committed state.
    fn snapshot(&self) -> Arc<State> {
        Arc::clone(
            &self
                .inner
                .committed
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn commit(&self, state: State) {
        *self
            .inner
            .committed
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(state);
    }

    /// Runs one change outside a unit of work (a nonce, a lease, a purge): like a unit
    /// of work, it waits for the running one and commits at once.
    async fn change<T>(&self, apply: impl FnOnce(&mut State) -> T) -> T {
        let _writer = self.inner.writer.lock().await;
        let mut state = State::clone(&self.snapshot());
        let answer = apply(&mut state);
        self.commit(state);
        answer
    }
}

#[async_trait]
impl UnitOfWork for MemoryStore {
    async fn run(&self, work: Work) -> Result<WorkOutput, ServiceError> {
        let _writer = self.inner.writer.lock().await;
        let mut tx = MemoryTransaction::new(State::clone(&self.snapshot()));
        let result = work(&mut tx).await;
        if result.is_ok() {
            self.commit(tx.into_state());
        }
        result
    }
}
