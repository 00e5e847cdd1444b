//! The projects' reads: projects newest first, and what their progress counts (issue 66).

use async_trait::async_trait;
use muster_domain::model::{
    OrgId, Project, ProjectId, ProjectStatus, ProjectTally, Task, TaskBrief, TaskStatus,
};
use muster_domain::ports::{ProjectRepository, RepositoryError, TaskSpan};
use time::OffsetDateTime;

use super::{first, newest_first};
use crate::MemoryStore;

/// What a progress report shows of `task`.
fn brief(task: &Task) -> TaskBrief {
    TaskBrief {
        id: task.id,
        title: task.title.as_str().to_owned(),
        status: task.status,
        due_at: task.due_at,
        status_changed_at: task.status_changed_at,
    }
}

#[async_trait]
impl ProjectRepository for MemoryStore {
    async fn project(&self, org: OrgId, id: ProjectId) -> Result<Option<Project>, RepositoryError> {
        Ok(self.snapshot().projects.in_org(&id.as_uuid(), org).cloned())
    }

    async fn projects(
        &self,
        org: OrgId,
        status: Option<ProjectStatus>,
        before: Option<ProjectId>,
        limit: u32,
    ) -> Result<Vec<Project>, RepositoryError> {
        let state = self.snapshot();
        let projects = newest_first(&state.projects, before.map(ProjectId::as_uuid))
            .filter(|p| p.org_id == org && status.is_none_or(|s| p.status == s))
            .cloned();
        Ok(first(projects, limit))
    }

    async fn tally(
        &self,
        org: OrgId,
        id: ProjectId,
        now: OffsetDateTime,
    ) -> Result<ProjectTally, RepositoryError> {
        let state = self.snapshot();
        let tasks: Vec<&Task> = state
            .tasks
            .values()
            .filter(|t| t.org_id == org && t.project_id == Some(id))
            .collect();
        let mut tally = ProjectTally::default();
        for task in &tasks {
            tally.add(task.status, 1);
        }
        let mut overdue: Vec<&Task> = tasks
            .iter()
            .copied()
            .filter(|t| !t.status.is_terminal() && t.due_at.is_some_and(|due| due < now))
            .collect();
        overdue.sort_by_key(|t| (t.due_at, t.id));
        tally.overdue = u64::try_from(overdue.len()).unwrap_or(u64::MAX);
        tally.overdue_tasks = overdue
            .into_iter()
            .take(ProjectTally::LISTED)
            .map(brief)
            .collect();
        let mut blocked: Vec<&Task> = tasks
            .iter()
            .copied()
            .filter(|t| t.status == TaskStatus::Blocked)
            .collect();
        blocked.sort_by_key(|t| (t.status_changed_at, t.id));
        tally.blocked_tasks = blocked
            .into_iter()
            .take(ProjectTally::LISTED)
            .map(brief)
            .collect();
        for report in state.usage_reports.values().filter(|r| {
            r.org_id == org
                && state
                    .tasks
                    .get(&r.task_id.as_uuid())
                    .is_some_and(|t| t.project_id == Some(id))
        }) {
            tally.spent_credits += report.credits;
            tally.cost_microusd += report.cost_microusd.unwrap_or(0);
        }
        Ok(tally)
    }

    async fn task_spans(
        &self,
        org: OrgId,
        id: ProjectId,
        until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<TaskSpan>, RepositoryError> {
        let state = self.snapshot();
        let spans = state
            .tasks
            .values()
            .filter(|t| t.org_id == org && t.project_id == Some(id) && t.created_at < until)
            .map(|t| TaskSpan {
                created_at: t.created_at,
                done_at: (t.status == TaskStatus::Done).then_some(t.status_changed_at),
            });
        Ok(first(spans, limit))
    }
}
