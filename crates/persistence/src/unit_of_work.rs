//! The domain's [`UnitOfWork`] port: a use case runs as one transaction on whichever engine
//! is configured, through a [`DbTransaction`] whose methods (each aggregate's `tx.rs`) are
//! query pieces on one connection.

use std::future::Future;
use std::pin::Pin;

use async_trait::async_trait;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use muster_domain::ports::{UnitOfWork, Work, WorkOutput};
use muster_domain::service::ServiceError;
use tracing::field::Empty;
use tracing::{Instrument, Span};

use crate::Database;
use crate::conn::{Conn, PooledConn};
use crate::error::from_diesel;
use crate::transaction::DbTransaction;

/// Why a transaction ended without a commit: the store failed, or the work refused.
enum Abort {
    Store(diesel::result::Error),
    Work(ServiceError),
}

impl From<diesel::result::Error> for Abort {
    fn from(err: diesel::result::Error) -> Self {
        Self::Store(err)
    }
}

#[async_trait]
impl UnitOfWork for Database {
    /// Runs `work` in one transaction on its own task, so that a caller that goes away
    /// (a client disconnecting) never leaves a transaction half-driven on a pooled
    /// connection. On SQLite, units of work queue for the one writer connection and run
    /// in groups (see the `group_commit` module): each in its own savepoint of a
    /// transaction begun with `BEGIN IMMEDIATE` (the file's write lock taken up front,
    /// so that a read-then-write never fails on lock upgrade), committed together.
    #[tracing::instrument(
        level = "debug",
        name = "db.transaction",
        skip_all,
        fields(otel.kind = "client", db.system.name = self.engine().system_name(), muster.committed = Empty)
    )]
    async fn run(&self, work: Work) -> Result<WorkOutput, ServiceError> {
        let outcome = self.run_once(work).await;
        Span::current().record("muster.committed", outcome.is_ok());
        outcome
    }
}

impl Database {
    /// One transaction of `work`: in a group on SQLite, on its own task on PostgreSQL.
    async fn run_once(&self, work: Work) -> Result<WorkOutput, ServiceError> {
        if let Some(group) = self.group_commit() {
            return group.run(work).await;
        }
        let db = self.clone();
        // The task carries this span, so the statements' spans nest under it in traces.
        let task = tokio::spawn(
            async move {
                let mut pooled = db.pooled_for_write().await?;
                let outcome = match &mut *pooled {
                    PooledConn::Pg(conn) => on_postgres(conn, work).await,
                    PooledConn::Sqlite(_) => Err(Abort::Work(ServiceError::internal(
                        "SQLite units of work run in groups",
                    ))),
                };
                outcome.map_err(|abort| match abort {
                    Abort::Store(err) => ServiceError::from(from_diesel(err)),
                    Abort::Work(err) => err,
                })
            }
            .in_current_span(),
        );
        task.await
            .map_err(|err| ServiceError::internal(format!("unit of work task failed: {err}")))?
    }
}

/// A boxed, `Send` future: naming the type here lets the compiler check `Send` once
/// the connection's lifetime is known (it cannot through the transaction's
/// higher-ranked closure).
type Running<'c> = Pin<Box<dyn Future<Output = Result<WorkOutput, Abort>> + Send + 'c>>;

fn on_postgres(conn: &mut AsyncPgConnection, work: Work) -> Running<'_> {
    Box::pin(conn.transaction(async move |c| {
        let mut tx = DbTransaction::new(Conn::Pg(c));
        work(&mut tx).await.map_err(Abort::Work)
    }))
}
