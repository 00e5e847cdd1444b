//! The domain's `TaskRepository` on [`Database`].

use async_trait::async_trait;
use muster_domain::model::{
    AgentId, Capability, Comment, CommentId, Escalation, EscalationId, OrgId, Task, TaskDependency,
    TaskId, TaskTemplate, TemplateId,
};
use muster_domain::ports::{Overdue, RepositoryError, TaskFilter, TaskRepository};
use muster_domain::rules::candidates::RosterEntry;
use time::OffsetDateTime;

use crate::Database;
use crate::agents::capabilities;
use crate::agents::roster::roster_of;
use crate::error::from_diesel;

use super::{claims, comments, dependencies, escalations, queries as tasks, templates};

#[async_trait]
impl TaskRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.tasks.get", skip_all, fields(otel.kind = "client"))]
    async fn get(&self, org: OrgId, id: TaskId) -> Result<Option<Task>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = tasks::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(Task::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.open_titles", skip_all, fields(otel.kind = "client"))]
    async fn open_titles(
        &self,
        org: OrgId,
        limit: u32,
    ) -> Result<Vec<(TaskId, String)>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = tasks::open_titles(&mut pooled.conn(), org, limit)
            .await
            .map_err(from_diesel)?;
        Ok(rows
            .into_iter()
            .map(|(id, title)| (TaskId::from_uuid(id.0), title))
            .collect())
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.list", skip_all, fields(otel.kind = "client"))]
    async fn list(
        &self,
        org: OrgId,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = tasks::list(&mut pooled.conn(), org, filter, before, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Task::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.count", skip_all, fields(otel.kind = "client"))]
    async fn count(&self, org: OrgId, filter: &TaskFilter) -> Result<u64, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let count = tasks::count(&mut pooled.conn(), org, filter)
            .await
            .map_err(from_diesel)?;
        Ok(u64::try_from(count).unwrap_or_default())
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.dependencies", skip_all, fields(otel.kind = "client"))]
    async fn dependencies(
        &self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<TaskDependency>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = dependencies::of_task(&mut pooled.conn(), org, task)
            .await
            .map_err(from_diesel)?;
        Ok(rows.into_iter().map(TaskDependency::from).collect())
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.comments", skip_all, fields(otel.kind = "client"))]
    async fn comments(
        &self,
        org: OrgId,
        task: TaskId,
        after: Option<CommentId>,
        limit: u32,
    ) -> Result<Vec<Comment>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = comments::of_task(&mut pooled.conn(), org, task, after, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Comment::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.escalations", skip_all, fields(otel.kind = "client"))]
    async fn escalations(
        &self,
        org: OrgId,
        task: TaskId,
        before: Option<EscalationId>,
        limit: u32,
    ) -> Result<Vec<Escalation>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = escalations::of_task(&mut pooled.conn(), org, task, before, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Escalation::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.templates", skip_all, fields(otel.kind = "client"))]
    async fn templates(
        &self,
        org: OrgId,
        before: Option<TemplateId>,
        limit: u32,
    ) -> Result<Vec<TaskTemplate>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = templates::list(&mut pooled.conn(), org, before, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(TaskTemplate::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.template", skip_all, fields(otel.kind = "client"))]
    async fn template(
        &self,
        org: OrgId,
        id: TemplateId,
    ) -> Result<Option<TaskTemplate>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = templates::find(&mut pooled.conn(), org, id)
            .await
            .map_err(from_diesel)?;
        row.map(TaskTemplate::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.roster", skip_all, fields(otel.kind = "client"))]
    async fn roster(&self, org: OrgId) -> Result<Vec<RosterEntry>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        roster_of(&mut pooled.conn(), org, true).await
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.overdue", skip_all, fields(otel.kind = "client"))]
    async fn overdue(
        &self,
        query: Overdue,
        limit: u32,
    ) -> Result<Vec<(OrgId, TaskId)>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = tasks::overdue(&mut pooled.conn(), query, limit)
            .await
            .map_err(from_diesel)?;
        Ok(rows
            .into_iter()
            .map(|(org, id)| (OrgId::from_uuid(org.0), TaskId::from_uuid(id.0)))
            .collect())
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.claimer_capabilities", skip_all, fields(otel.kind = "client"))]
    async fn claimer_capabilities(
        &self,
        org: OrgId,
        agent: AgentId,
    ) -> Result<Vec<Capability>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = capabilities::of_agent(&mut pooled.conn(), org, agent)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Capability::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tasks.expired_leases", skip_all, fields(otel.kind = "client"))]
    async fn expired_leases(
        &self,
        org: Option<OrgId>,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<(OrgId, TaskId)>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = claims::expired(&mut pooled.conn(), org, now, limit)
            .await
            .map_err(from_diesel)?;
        Ok(rows
            .into_iter()
            .map(|(org, id)| (OrgId::from_uuid(org.0), TaskId::from_uuid(id.0)))
            .collect())
    }
}
