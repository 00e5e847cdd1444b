//! The domain's [`UnitOfWork`] port: a use case runs as one transaction on whichever
//! engine is configured, through a [`Transaction`] whose methods are the query pieces of
//! [`crate::queries`] on one connection.

use std::future::Future;
use std::pin::Pin;

use async_trait::async_trait;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use muster_domain::model::{
    Agent, AgentCredentials, AgentId, Event, OrgId, Organization, Task, TaskId, User,
};
use muster_domain::ports::{Lock, RepositoryError, Transaction, UnitOfWork, Work, WorkOutput};
use muster_domain::service::ServiceError;
use time::OffsetDateTime;

use crate::Database;
use crate::conn::{Conn, PooledConn};
use crate::db::SqliteConn;
use crate::error::from_diesel;
use crate::queries::{agents, events, organizations, tasks, users};
use crate::rows::{AgentChanges, AgentRow, EventRow, OrganizationRow, TaskRow, UserRow};

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
    /// connection. On SQLite, units of work wait in order for the one writer connection,
    /// then start with `BEGIN IMMEDIATE`, taking the file's write lock up front so that
    /// a read-then-write never fails on lock upgrade.
    async fn run(&self, work: Work) -> Result<WorkOutput, ServiceError> {
        let db = self.clone();
        let task = tokio::spawn(async move {
            let mut pooled = db.pooled_for_write().await?;
            let outcome = match &mut pooled {
                PooledConn::Pg(conn) => on_postgres(conn, work).await,
                PooledConn::Sqlite(conn) => on_sqlite(conn, work).await,
            };
            outcome.map_err(|abort| match abort {
                Abort::Store(err) => ServiceError::from(from_diesel(err)),
                Abort::Work(err) => err,
            })
        });
        task.await
            .map_err(|err| ServiceError::internal(format!("unit of work task failed: {err}")))?
    }
}

/// A boxed, `Send` future: naming the type here lets the compiler check `Send` once
/// the connection's lifetime is known (it cannot through the transaction's
/// higher-ranked closure).
type Running<'c> = Pin<Box<dyn Future<Output = Result<WorkOutput, Abort>> + Send + 'c>>;

fn on_postgres(conn: &mut AsyncPgConnection, work: Work) -> Running<'_> {
    Box::pin(conn.transaction(async |c| {
        let mut tx = DbTransaction(Conn::Pg(c));
        work(&mut tx).await.map_err(Abort::Work)
    }))
}

fn on_sqlite(conn: &mut SqliteConn, work: Work) -> Running<'_> {
    Box::pin(conn.immediate_transaction(async |c| {
        let mut tx = DbTransaction(Conn::Sqlite(c));
        work(&mut tx).await.map_err(Abort::Work)
    }))
}

/// One open transaction: each method is one query piece on its connection.
struct DbTransaction<'c>(Conn<'c>);

#[async_trait]
impl Transaction for DbTransaction<'_> {
    async fn any_organization(&mut self) -> Result<bool, RepositoryError> {
        organizations::any(&mut self.0).await.map_err(from_diesel)
    }

    async fn insert_organization(&mut self, org: &Organization) -> Result<(), RepositoryError> {
        organizations::insert(&mut self.0, &OrganizationRow::from(org))
            .await
            .map_err(from_diesel)
    }

    async fn insert_user(&mut self, user: &User) -> Result<(), RepositoryError> {
        users::insert(&mut self.0, &UserRow::from(user))
            .await
            .map_err(from_diesel)
    }

    async fn agent(
        &mut self,
        org: OrgId,
        id: AgentId,
        lock: Lock,
    ) -> Result<Option<Agent>, RepositoryError> {
        let row = agents::find(&mut self.0, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(|r| AgentCredentials::try_from(r).map(|c| c.agent))
            .transpose()
    }

    async fn insert_agent(&mut self, agent: &AgentCredentials) -> Result<(), RepositoryError> {
        agents::insert(&mut self.0, &AgentRow::from(agent))
            .await
            .map_err(from_diesel)
    }

    async fn update_agent(
        &mut self,
        agent: &Agent,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        agents::update(
            &mut self.0,
            agent.org_id,
            agent.id,
            &AgentChanges::new(agent, at),
        )
        .await
        .map_err(from_diesel)
    }

    async fn task(
        &mut self,
        org: OrgId,
        id: TaskId,
        lock: Lock,
    ) -> Result<Option<Task>, RepositoryError> {
        let row = tasks::find(&mut self.0, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Task::try_from).transpose()
    }

    async fn insert_task(&mut self, task: &Task) -> Result<(), RepositoryError> {
        tasks::insert(&mut self.0, &TaskRow::from(task))
            .await
            .map_err(from_diesel)
    }

    async fn update_task(
        &mut self,
        task: &Task,
        expected_version: i64,
    ) -> Result<bool, RepositoryError> {
        tasks::update(&mut self.0, &TaskRow::from(task), expected_version)
            .await
            .map_err(from_diesel)
    }

    async fn append_events(&mut self, batch: &[Event]) -> Result<(), RepositoryError> {
        let rows: Vec<EventRow> = batch.iter().map(EventRow::from).collect();
        events::append(&mut self.0, &rows)
            .await
            .map_err(from_diesel)
    }
}
