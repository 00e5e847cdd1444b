//! [`TasksTx`] on a unit of work's transaction: tasks, their dependencies, comments,
//! escalations and templates, and the claim queries.

use async_trait::async_trait;
use muster_domain::model::{
    Comment, CommentId, DependencyId, Escalation, OrgId, ProjectId, Task, TaskDependency, TaskId,
    TaskTemplate,
};
use muster_domain::ports::{Lock, RepositoryError, TasksTx};
use time::OffsetDateTime;

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::comments::CommentRow;
use super::dependencies::DependencyRow;
use super::escalations::EscalationRow;
use super::rows::TaskRow;
use super::templates::TemplateRow;
use super::{claims, comments, dependencies, escalations, queries as tasks, templates};

#[async_trait]
impl TasksTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.task", skip_all, fields(otel.kind = "client"))]
    async fn task(
        &mut self,
        org: OrgId,
        id: TaskId,
        lock: Lock,
    ) -> Result<Option<Task>, RepositoryError> {
        let row = tasks::find(&mut self.conn, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Task::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_task", skip_all, fields(otel.kind = "client"))]
    async fn insert_task(&mut self, task: &Task) -> Result<(), RepositoryError> {
        tasks::insert(&mut self.conn, &TaskRow::from(task))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_task", skip_all, fields(otel.kind = "client"))]
    async fn update_task(
        &mut self,
        task: &Task,
        expected_version: i64,
    ) -> Result<bool, RepositoryError> {
        tasks::update(&mut self.conn, &TaskRow::from(task), expected_version)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.touch_task", skip_all, fields(otel.kind = "client"))]
    async fn touch_task(
        &mut self,
        org: OrgId,
        id: TaskId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        tasks::touch(&mut self.conn, org, id, at)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.lock_dependency_graph", skip_all, fields(otel.kind = "client"))]
    async fn lock_dependency_graph(&mut self, org: OrgId) -> Result<(), RepositoryError> {
        dependencies::lock_graph(&mut self.conn, org)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.depends_transitively", skip_all, fields(otel.kind = "client"))]
    async fn depends_transitively(
        &mut self,
        org: OrgId,
        from: TaskId,
        to: TaskId,
    ) -> Result<bool, RepositoryError> {
        dependencies::reaches(&mut self.conn, org, from, to)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_dependency", skip_all, fields(otel.kind = "client"))]
    async fn insert_dependency(
        &mut self,
        dependency: &TaskDependency,
    ) -> Result<(), RepositoryError> {
        dependencies::insert(&mut self.conn, &DependencyRow::from(dependency))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_dependency", skip_all, fields(otel.kind = "client"))]
    async fn delete_dependency(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: DependencyId,
    ) -> Result<Option<TaskDependency>, RepositoryError> {
        let row = dependencies::delete(&mut self.conn, org, task, id)
            .await
            .map_err(from_diesel)?;
        Ok(row.map(TaskDependency::from))
    }

    #[tracing::instrument(level = "debug", name = "db.tx.open_blocking_dependencies", skip_all, fields(otel.kind = "client"))]
    async fn open_blocking_dependencies(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<TaskId>, RepositoryError> {
        let ids = dependencies::open_blocking(&mut self.conn, org, task)
            .await
            .map_err(from_diesel)?;
        Ok(ids.into_iter().map(|id| TaskId::from_uuid(id.0)).collect())
    }

    #[tracing::instrument(level = "debug", name = "db.tx.comment", skip_all, fields(otel.kind = "client"))]
    async fn comment(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: CommentId,
    ) -> Result<Option<Comment>, RepositoryError> {
        let row = comments::find(&mut self.conn, org, task, id)
            .await
            .map_err(from_diesel)?;
        row.map(Comment::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_comment", skip_all, fields(otel.kind = "client"))]
    async fn insert_comment(&mut self, comment: &Comment) -> Result<(), RepositoryError> {
        comments::insert(&mut self.conn, &CommentRow::from(comment))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_escalation", skip_all, fields(otel.kind = "client"))]
    async fn insert_escalation(
        &mut self,
        escalation: &Escalation,
    ) -> Result<bool, RepositoryError> {
        escalations::insert(&mut self.conn, &EscalationRow::from(escalation))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_template", skip_all, fields(otel.kind = "client"))]
    async fn insert_template(&mut self, template: &TaskTemplate) -> Result<(), RepositoryError> {
        templates::insert(&mut self.conn, &TemplateRow::from(template))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.claim_candidates", skip_all, fields(otel.kind = "client"))]
    async fn claim_candidates(
        &mut self,
        org: OrgId,
        project: Option<ProjectId>,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError> {
        let rows = claims::candidates(&mut self.conn, org, project, offset, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Task::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.try_lock_first_claimable", skip_all, fields(otel.kind = "client"))]
    async fn try_lock_first_claimable(
        &mut self,
        org: OrgId,
        ids: &[TaskId],
    ) -> Result<Option<TaskId>, RepositoryError> {
        claims::try_lock_first(&mut self.conn, org, ids)
            .await
            .map_err(from_diesel)
    }
}
