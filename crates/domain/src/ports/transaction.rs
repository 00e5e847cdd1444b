//! One use case, one transaction: the [`UnitOfWork`] port runs a piece of work against a
//! [`Transaction`] and commits everything it wrote, or nothing.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use super::tx::{
    AgentsTx, GuardTx, IntegrationsTx, KeysTx, LedgerTx, OrganizationsTx, ProjectsTx, RoutinesTx,
    RunsTx, SessionsTx, TasksTx, WebhooksTx,
};
use crate::service::ServiceError;

/// A boxed future borrowing the transaction for `'t`.
pub type TxFuture<'t, T> = Pin<Box<dyn Future<Output = T> + Send + 't>>;

/// The value a piece of work hands back, type-erased so that [`UnitOfWork`] stays
/// object-safe; [`transact`] restores the type.
pub type WorkOutput = Box<dyn Any + Send>;

/// A piece of work to run in one transaction. It may be run more than once, each time
/// from the start in a transaction of its own, of which at most one commits: the
/// pre-hook gate runs it to learn what it would write, and again once the hooks have
/// answered. So it has no effect outside its transaction, and each run decides anew
/// from what it reads (with the clock and ids of the first run, see [`Clock::now`]).
///
/// [`Clock::now`]: super::Clock::now
pub type Work = Arc<
    dyn for<'t> Fn(&'t mut dyn Transaction) -> TxFuture<'t, Result<WorkOutput, ServiceError>>
        + Send
        + Sync,
>;

/// Makes `run` a [`Work`] (giving the closure its higher-ranked signature).
pub fn work<F>(run: F) -> Work
where
    F: for<'t> Fn(&'t mut dyn Transaction) -> TxFuture<'t, Result<WorkOutput, ServiceError>>
        + Send
        + Sync
        + 'static,
{
    Arc::new(run)
}

/// How a read inside a transaction holds the row it read until the commit, so that the
/// rule decided on it still holds when the change is written. (SQLite needs neither:
/// its write transactions run one at a time.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// Others may read the row, nobody may change it (PostgreSQL `FOR SHARE`).
    Share,
    /// The caller will change the row (never its key); concurrent lockers wait
    /// (PostgreSQL `FOR NO KEY UPDATE`, which lets foreign-key checks through).
    Update,
    /// A plain read that holds nothing, for facts that never change (an agent's parent)
    /// read before the rows that must be locked in order.
    Nothing,
}

/// Runs work as ONE database transaction on whichever engine is configured: reads that
/// lock what a rule depends on, writes to several aggregates, and the audit events, all
/// committed together when the work returns `Ok`, all rolled back when it returns `Err`
/// or the store fails. Adapters run the work to completion even when the caller goes
/// away, so a change is never left half-driven.
#[async_trait]
pub trait UnitOfWork: Send + Sync {
    /// Runs `work` in a new transaction. Use [`transact`] for a typed result.
    async fn run(&self, work: Work) -> Result<WorkOutput, ServiceError>;
}

/// Runs `work` through `uow` in one transaction and returns its value. The closure is
/// cloned for each run of the work (see [`Work`]), so what it captures must be `Clone`.
///
/// ```
/// use muster_domain::model::{OrgId, TaskId};
/// use muster_domain::ports::{Lock, UnitOfWork, transact};
/// use muster_domain::service::{Entity, NotFound, ServiceError};
///
/// /// Reads a task's title inside a transaction, holding the row until the commit.
/// async fn title_of(uow: &dyn UnitOfWork, org: OrgId, id: TaskId) -> Result<String, ServiceError> {
///     transact(uow, move |tx| {
///         Box::pin(async move {
///             let task = tx
///                 .task(org, id, Lock::Share)
///                 .await?
///                 .ok_or(NotFound::new(Entity::Task, id))?;
///             Ok(task.title.as_str().to_owned())
///         })
///     })
///     .await
/// }
/// ```
pub async fn transact<T, F>(uow: &dyn UnitOfWork, work: F) -> Result<T, ServiceError>
where
    T: Send + 'static,
    F: for<'t> FnOnce(&'t mut dyn Transaction) -> TxFuture<'t, Result<T, ServiceError>>
        + Clone
        + Send
        + 'static,
{
    // Behind a lock only to be shared between threads without asking `F: Sync`.
    let once = Mutex::new(work);
    let output = uow
        .run(self::work(move |tx| {
            let run = once.lock().unwrap_or_else(PoisonError::into_inner).clone();
            Box::pin(async move { run(tx).await.map(|value| Box::new(value) as WorkOutput) })
        }))
        .await?;
    output
        .downcast::<T>()
        .map(|value| *value)
        .map_err(|_| ServiceError::internal("a unit of work returned a value of another type"))
}

/// What a use case may read and write inside its transaction: every part, one per
/// aggregate (see [`OrganizationsTx`], [`TasksTx`], ...). Every method is scoped to
/// one organization except where it says otherwise; a row of another organization is
/// a missing row. Implemented for every type that implements all the parts.
pub trait Transaction:
    OrganizationsTx
    + SessionsTx
    + KeysTx
    + AgentsTx
    + GuardTx
    + TasksTx
    + LedgerTx
    + WebhooksTx
    + IntegrationsTx
    + RunsTx
    + ProjectsTx
    + RoutinesTx
    + Send
{
}

impl<T> Transaction for T where
    T: OrganizationsTx
        + SessionsTx
        + KeysTx
        + AgentsTx
        + GuardTx
        + TasksTx
        + LedgerTx
        + WebhooksTx
        + IntegrationsTx
        + RunsTx
        + ProjectsTx
        + RoutinesTx
        + Send
{
}

#[cfg(any(test, feature = "mocks"))]
pub use scripted::{MockUnitOfWork, Outcome};

#[cfg(any(test, feature = "mocks"))]
mod scripted {
    use std::sync::{Mutex, PoisonError};

    use async_trait::async_trait;

    use super::{UnitOfWork, Work, WorkOutput};
    use crate::ports::MockTransaction;
    use crate::service::ServiceError;

    /// How a run of [`MockUnitOfWork`] ended.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Outcome {
        /// The work returned `Ok`: an adapter would commit.
        Committed,
        /// The work returned `Err`: an adapter would roll back.
        RolledBack,
    }

    /// A [`UnitOfWork`] for unit tests: runs the work against one [`MockTransaction`]
    /// (whose expectations describe the reads and writes the use case must make) and
    /// records whether each run would have committed.
    #[derive(Debug)]
    pub struct MockUnitOfWork {
        tx: Mutex<Option<MockTransaction>>,
        outcomes: Mutex<Vec<Outcome>>,
    }

    impl MockUnitOfWork {
        /// Runs every unit of work against `tx`.
        pub fn new(tx: MockTransaction) -> Self {
            Self {
                tx: Mutex::new(Some(tx)),
                outcomes: Mutex::default(),
            }
        }

        /// How each run ended, in order.
        pub fn outcomes(&self) -> Vec<Outcome> {
            self.outcomes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        }
    }

    #[async_trait]
    impl UnitOfWork for MockUnitOfWork {
        async fn run(&self, work: Work) -> Result<WorkOutput, ServiceError> {
            let taken = self
                .tx
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let Some(mut tx) = taken else {
                return Err(ServiceError::internal(
                    "MockUnitOfWork runs one unit of work at a time",
                ));
            };
            let result = work(&mut tx).await;
            *self.tx.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
            let outcome = if result.is_ok() {
                Outcome::Committed
            } else {
                Outcome::RolledBack
            };
            self.outcomes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(outcome);
            result
        }
    }
}
