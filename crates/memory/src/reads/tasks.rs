//! The tasks' reads: tasks and what hangs off them (dependencies, comments, escalations,
//! templates), the claim and routing queries.

use std::collections::BTreeSet;

use async_trait::async_trait;
use muster_domain::model::{
    AgentId, AgentStatus, Capability, Comment, CommentId, Escalation, EscalationId, OrgId, Task,
    TaskDependency, TaskId, TaskStatus, TaskTemplate, TemplateId,
};
use muster_domain::ports::{Overdue, RepositoryError, TaskFilter, TaskRepository};
use muster_domain::rules::candidates::RosterEntry;
use muster_domain::rules::claimable::lease_expired;
use time::OffsetDateTime;

use super::{capabilities_of, first, newest_first, oldest_first, open, roster};
use crate::MemoryStore;

#[async_trait]
impl TaskRepository for MemoryStore {
    async fn get(&self, org: OrgId, id: TaskId) -> Result<Option<Task>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.tasks.in_org(&id.as_uuid(), org).cloned())
    }

    async fn open_titles(
        &self,
        org: OrgId,
        limit: u32,
    ) -> Result<Vec<(TaskId, String)>, RepositoryError> {
        let state = self.snapshot();
        let titles = newest_first(&state.tasks, None)
            .filter(|t| t.org_id == org && open(t))
            .map(|t| (t.id, t.title.as_str().to_owned()));
        Ok(first(titles, limit))
    }

    async fn list(
        &self,
        org: OrgId,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError> {
        let state = self.snapshot();
        let tasks = newest_first(&state.tasks, before.map(TaskId::as_uuid))
            .filter(|t| t.org_id == org && filter.matches(t))
            .cloned();
        Ok(first(tasks, limit))
    }

    async fn count(&self, org: OrgId, filter: &TaskFilter) -> Result<u64, RepositoryError> {
        let state = self.snapshot();
        let matching = state
            .tasks
            .values()
            .filter(|t| t.org_id == org && filter.matches(t));
        Ok(matching.count() as u64)
    }

    async fn dependencies(
        &self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<TaskDependency>, RepositoryError> {
        let state = self.snapshot();
        Ok(state
            .dependencies
            .values()
            .filter(|d| d.org_id == org && d.task_id == task)
            .cloned()
            .collect())
    }

    async fn comments(
        &self,
        org: OrgId,
        task: TaskId,
        after: Option<CommentId>,
        limit: u32,
    ) -> Result<Vec<Comment>, RepositoryError> {
        let state = self.snapshot();
        let comments = oldest_first(&state.comments, after.map(CommentId::as_uuid))
            .filter(|c| c.org_id == org && c.task_id == task)
            .cloned();
        Ok(first(comments, limit))
    }

    async fn escalations(
        &self,
        org: OrgId,
        task: TaskId,
        before: Option<EscalationId>,
        limit: u32,
    ) -> Result<Vec<Escalation>, RepositoryError> {
        let state = self.snapshot();
        let escalations = newest_first(&state.escalations, before.map(EscalationId::as_uuid))
            .filter(|e| e.org_id == org && e.task_id == task)
            .cloned();
        Ok(first(escalations, limit))
    }

    async fn templates(
        &self,
        org: OrgId,
        before: Option<TemplateId>,
        limit: u32,
    ) -> Result<Vec<TaskTemplate>, RepositoryError> {
        let state = self.snapshot();
        let templates = newest_first(&state.templates, before.map(TemplateId::as_uuid))
            .filter(|t| t.org_id == org)
            .cloned();
        Ok(first(templates, limit))
    }

    async fn template(
        &self,
        org: OrgId,
        id: TemplateId,
    ) -> Result<Option<TaskTemplate>, RepositoryError> {
        let state = self.snapshot();
        Ok(state.templates.in_org(&id.as_uuid(), org).cloned())
    }

    async fn roster(&self, org: OrgId) -> Result<Vec<RosterEntry>, RepositoryError> {
        Ok(roster(&self.snapshot(), org, true))
    }

    async fn overdue(
        &self,
        query: Overdue,
        limit: u32,
    ) -> Result<Vec<(OrgId, TaskId)>, RepositoryError> {
        let state = self.snapshot();
        let reason = query.reason();
        let escalated: BTreeSet<TaskId> = state
            .escalations
            .values()
            .filter(|e| e.automatic && e.reason == reason)
            .map(|e| e.task_id)
            .collect();
        let inactive = |agent: Option<AgentId>| {
            agent
                .and_then(|a| state.agents.get(&a.as_uuid()))
                .is_some_and(|r| {
                    matches!(
                        r.credentials.agent.status,
                        AgentStatus::Suspended | AgentStatus::Revoked
                    )
                })
        };
        let found = state
            .tasks
            .values()
            .filter(|t| !escalated.contains(&t.id))
            .filter(|t| match query {
                Overdue::BlockedSince { priority, since } => {
                    t.status == TaskStatus::Blocked
                        && t.priority == priority
                        && t.status_changed_at < since
                }
                Overdue::IdleSince { since } => {
                    t.status == TaskStatus::InProgress && t.last_activity_at < since
                }
                Overdue::PastDue { now } => open(t) && t.due_at.is_some_and(|due| due < now),
                Overdue::AssigneeInactive => open(t) && inactive(t.assignee_id),
            })
            .map(|t| (t.org_id, t.id));
        Ok(first(found, limit))
    }

    async fn claimer_capabilities(
        &self,
        org: OrgId,
        agent: AgentId,
    ) -> Result<Vec<Capability>, RepositoryError> {
        Ok(capabilities_of(&self.snapshot(), org, agent))
    }

    async fn expired_leases(
        &self,
        org: Option<OrgId>,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<(OrgId, TaskId)>, RepositoryError> {
        let state = self.snapshot();
        let mut expired: Vec<(OffsetDateTime, &Task)> = state
            .tasks
            .values()
            .filter(|t| org.is_none_or(|o| t.org_id == o))
            .filter(|t| lease_expired(t.status, t.lease_expires_at, now))
            .filter_map(|t| t.lease_expires_at.map(|at| (at, t)))
            .collect();
        expired.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.id.cmp(&b.1.id)));
        Ok(first(
            expired.into_iter().map(|(_, t)| (t.org_id, t.id)),
            limit,
        ))
    }
}
