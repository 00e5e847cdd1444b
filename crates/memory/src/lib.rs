//! Muster's in-memory adapter: the ports of [`muster_domain`] in memory, for embedders'
//! tests and prototypes. [`MemoryStore`] implements every storage port and the unit of
//! work, [`SystemClock`], [`ManualClock`] and [`TimeOrderedIds`] the runtime ports, and
//! [`fakes`] stands in for the cryptographic and network ones.
//!
//! The store honours the same contract as the database engines of `muster-persistence`
//! (the persistence contract suite runs against all three): units of work commit all or
//! nothing and run one at a time, like SQLite's single writer, while reads see the last
//! committed state. Nothing is persisted: dropping the last clone of a store drops its
//! data. `examples/embedded.rs` runs a whole scenario on it.
//!
//! Not stable: the [`fakes`] (for tests only, never for real credentials).
//!
//! ```
//! use std::sync::Arc;
//!
//! use futures_executor::block_on;
//! use muster_domain::model::{Actor, ActorKind, OrgId, TaskPriority, Title};
//! use muster_domain::model::{UserId, UserRole};
//! use muster_domain::service::{NewTask, ServiceError, TaskService};
//! use muster_memory::{MemoryStore, SystemClock, TimeOrderedIds};
//! use uuid::Uuid;
//!
//! let store = MemoryStore::new();
//! let tasks = TaskService::new(
//!     Arc::new(store.clone()),
//!     Arc::new(store),
//!     Arc::new(SystemClock),
//!     Arc::new(TimeOrderedIds),
//! );
//! let operator = Actor {
//!     org_id: OrgId::from_uuid(Uuid::now_v7()),
//!     kind: ActorKind::User { id: UserId::from_uuid(Uuid::now_v7()), role: UserRole::Operator, key: None },
//! };
//! // Every field not named keeps its default; with no reward named, the task gets the
//! // default reward, escrowed from the treasury when it can pay it.
//! let new = NewTask {
//!     priority: TaskPriority::High,
//!     ..NewTask::new(Title::new("Write the report")?)
//! };
//! let created = block_on(tasks.create(&operator, new))?;
//! assert_eq!(created.reward, 0, "the new organization's treasury is empty");
//! assert_eq!(block_on(tasks.get(&operator, created.id))?.title.as_str(), "Write the report");
//!
//! // Another organization does not see it.
//! let stranger = Actor { org_id: OrgId::from_uuid(Uuid::now_v7()), ..operator.clone() };
//! assert!(matches!(block_on(tasks.get(&stranger, created.id)), Err(ServiceError::NotFound(_))));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod events;
pub mod fakes;
mod queues;
mod reads;
mod runtime;
mod state;
mod table;
mod tx;

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use futures_util::lock::Mutex as AsyncMutex;
use muster_domain::ports::{UnitOfWork, Work, WorkOutput};
use muster_domain::service::ServiceError;

pub use self::runtime::{ManualClock, SystemClock, TimeOrderedIds};

use self::state::State;
use self::tx::MemoryTransaction;

/// Every storage port in memory: clone it freely, clones share the data.
///
/// ```
/// use std::sync::Arc;
///
/// use muster_domain::service::TaskService;
/// use muster_memory::{MemoryStore, SystemClock, TimeOrderedIds};
///
/// let store = MemoryStore::new();
/// let tasks = TaskService::new(
///     Arc::new(store.clone()),
///     Arc::new(store),
///     Arc::new(SystemClock),
///     Arc::new(TimeOrderedIds),
/// );
/// # let _ = tasks;
/// ```
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
