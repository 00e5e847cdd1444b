use async_trait::async_trait;
use muster_domain::model::{
    AgentId, Capability, Comment, CommentId, Escalation, EscalationId, OrgId, Task, TaskDependency,
    TaskId, TaskTemplate, TemplateId,
};
use muster_domain::ports::{Overdue, RepositoryError, TaskFilter, TaskRepository};
use muster_domain::rules::candidates::RosterEntry;
use time::OffsetDateTime;

use crate::Database;
use crate::error::from_diesel;
use crate::queries::{comments, dependencies, escalations, tasks, templates};

#[async_trait]
impl TaskRepository for Database {
    async fn get(&self, org: OrgId, id: TaskId) -> Result<Option<Task>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = tasks::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(Task::try_from).transpose()
    }

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

    async fn escalations(
        &self,
        org: OrgId,
        task: TaskId,
        after: Option<EscalationId>,
        limit: u32,
    ) -> Result<Vec<Escalation>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = escalations::of_task(&mut pooled.conn(), org, task, after, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Escalation::try_from).collect()
    }

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

    async fn roster(&self, org: OrgId) -> Result<Vec<RosterEntry>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        super::agents::roster_of(&mut pooled.conn(), org, true).await
    }

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

    async fn claimer_capabilities(
        &self,
        org: OrgId,
        agent: AgentId,
    ) -> Result<Vec<Capability>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = crate::queries::capabilities::of_agent(&mut pooled.conn(), org, agent)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Capability::try_from).collect()
    }

    async fn expired_leases(
        &self,
        org: Option<OrgId>,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<(OrgId, TaskId)>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = crate::queries::claims::expired(&mut pooled.conn(), org, now, limit)
            .await
            .map_err(from_diesel)?;
        Ok(rows
            .into_iter()
            .map(|(org, id)| (OrgId::from_uuid(org.0), TaskId::from_uuid(id.0)))
            .collect())
    }
}
