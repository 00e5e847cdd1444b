//! The tasks' writes: tasks, dependencies, comments, escalations, templates and claims.

use std::collections::{BTreeSet, VecDeque};

use async_trait::async_trait;
use muster_domain::model::{
    Comment, CommentId, DependencyId, Escalation, OrgId, ProjectId, Task, TaskDependency, TaskId,
    TaskStatus, TaskTemplate,
};
use muster_domain::ports::{Lock, RepositoryError, TasksTx, UniqueKey};
use muster_domain::rules::claimable::{CLAIMABLE, claim_key};
use time::OffsetDateTime;

use super::{MemoryTransaction, check, duplicate, insert_new, primary_key};
use crate::state::State;

/// Whether `task` of `state` can be claimed, by the rule ([`CLAIMABLE`]): its blocking
/// dependencies are looked up here.
fn claimable(state: &State, task: &Task) -> bool {
    let blockers = state
        .dependencies
        .values()
        .filter(|d| d.task_id == task.id && d.blocking)
        .map(|d| {
            state
                .tasks
                .get(&d.depends_on_id.as_uuid())
                .map(|b| b.status)
        });
    CLAIMABLE.admits(task.status, task.assignee_id, blockers)
}

#[async_trait]
impl TasksTx for MemoryTransaction {
    async fn task(
        &mut self,
        org: OrgId,
        id: TaskId,
        _lock: Lock,
    ) -> Result<Option<Task>, RepositoryError> {
        Ok(self.state.tasks.in_org(&id.as_uuid(), org).cloned())
    }

    async fn insert_task(&mut self, task: &Task) -> Result<(), RepositoryError> {
        insert_new(
            &mut self.state.tasks,
            task.id.as_uuid(),
            task.clone(),
            "tasks",
        )
    }

    async fn update_task(
        &mut self,
        task: &Task,
        expected_version: i64,
    ) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .tasks
            .row_mut(&task.id.as_uuid())
            .filter(|t| t.org_id == task.org_id && t.version == expected_version);
        Ok(stored.map(|t| *t = task.clone()).is_some())
    }

    async fn touch_task(
        &mut self,
        org: OrgId,
        id: TaskId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        if let Some(task) = self.state.tasks.row_in_org(&id.as_uuid(), org) {
            task.last_activity_at = at;
        }
        Ok(())
    }

    async fn lock_dependency_graph(&mut self, _org: OrgId) -> Result<(), RepositoryError> {
        // Units of work run one at a time: the graph cannot change under this one.
        Ok(())
    }

    async fn depends_transitively(
        &mut self,
        org: OrgId,
        from: TaskId,
        to: TaskId,
    ) -> Result<bool, RepositoryError> {
        let mut seen = BTreeSet::new();
        let mut queue = VecDeque::from([from]);
        while let Some(task) = queue.pop_front() {
            for d in self.state.dependencies.values() {
                if d.org_id == org && d.task_id == task && seen.insert(d.depends_on_id) {
                    if d.depends_on_id == to {
                        return Ok(true);
                    }
                    queue.push_back(d.depends_on_id);
                }
            }
        }
        Ok(false)
    }

    async fn insert_dependency(
        &mut self,
        dependency: &TaskDependency,
    ) -> Result<(), RepositoryError> {
        check(
            dependency.task_id != dependency.depends_on_id,
            "task_id <> depends_on_id",
        )?;
        if self
            .state
            .dependencies
            .contains_key(&dependency.id.as_uuid())
        {
            return Err(primary_key("task_dependencies"));
        }
        let taken = self.state.dependencies.values().any(|d| {
            d.task_id == dependency.task_id && d.depends_on_id == dependency.depends_on_id
        });
        if taken {
            return duplicate(UniqueKey::Dependency);
        }
        self.state
            .dependencies
            .put(dependency.id.as_uuid(), dependency.clone());
        Ok(())
    }

    async fn delete_dependency(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: DependencyId,
    ) -> Result<Option<TaskDependency>, RepositoryError> {
        let ours = self
            .state
            .dependencies
            .get(&id.as_uuid())
            .is_some_and(|d| d.org_id == org && d.task_id == task);
        Ok(if ours {
            self.state.dependencies.take(&id.as_uuid())
        } else {
            None
        })
    }

    async fn open_blocking_dependencies(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<TaskId>, RepositoryError> {
        let state = &self.state;
        Ok(state
            .dependencies
            .values()
            .filter(|d| d.org_id == org && d.task_id == task && d.blocking)
            .filter(|d| {
                state
                    .tasks
                    .get(&d.depends_on_id.as_uuid())
                    .is_some_and(|t| t.status != TaskStatus::Done)
            })
            .map(|d| d.depends_on_id)
            .collect())
    }

    async fn comment(
        &mut self,
        org: OrgId,
        task: TaskId,
        id: CommentId,
    ) -> Result<Option<Comment>, RepositoryError> {
        Ok(self
            .state
            .comments
            .get(&id.as_uuid())
            .filter(|c| c.org_id == org && c.task_id == task)
            .cloned())
    }

    async fn insert_comment(&mut self, comment: &Comment) -> Result<(), RepositoryError> {
        insert_new(
            &mut self.state.comments,
            comment.id.as_uuid(),
            comment.clone(),
            "task_comments",
        )
    }

    async fn insert_escalation(
        &mut self,
        escalation: &Escalation,
    ) -> Result<bool, RepositoryError> {
        if self
            .state
            .escalations
            .contains_key(&escalation.id.as_uuid())
        {
            return Err(primary_key("escalations"));
        }
        let repeated = escalation.automatic
            && self.state.escalations.values().any(|e| {
                e.automatic && e.task_id == escalation.task_id && e.reason == escalation.reason
            });
        if repeated {
            return Ok(false);
        }
        self.state
            .escalations
            .put(escalation.id.as_uuid(), escalation.clone());
        Ok(true)
    }

    async fn insert_template(&mut self, template: &TaskTemplate) -> Result<(), RepositoryError> {
        if self.state.templates.contains_key(&template.id.as_uuid()) {
            return Err(primary_key("task_templates"));
        }
        let key = template.name.key();
        let taken = self
            .state
            .templates
            .values()
            .any(|t| t.org_id == template.org_id && t.name.key() == key);
        if taken {
            return duplicate(UniqueKey::TemplateName);
        }
        self.state
            .templates
            .put(template.id.as_uuid(), template.clone());
        Ok(())
    }

    async fn claim_candidates(
        &mut self,
        org: OrgId,
        project: Option<ProjectId>,
        offset: u32,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError> {
        let state = &self.state;
        let mut tasks: Vec<&Task> = state
            .tasks
            .values()
            .filter(|t| {
                t.org_id == org
                    && project.is_none_or(|p| t.project_id == Some(p))
                    && claimable(state, t)
            })
            .collect();
        tasks.sort_by_key(|t| claim_key(t.priority, t.created_at, t.id));
        Ok(tasks
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .cloned()
            .collect())
    }

    async fn try_lock_first_claimable(
        &mut self,
        org: OrgId,
        ids: &[TaskId],
    ) -> Result<Option<TaskId>, RepositoryError> {
        // One transaction at a time: nothing is held by another.
        Ok(ids.iter().copied().find(|id| {
            self.state
                .tasks
                .get(&id.as_uuid())
                .is_some_and(|t| t.org_id == org && CLAIMABLE.open(t.status, t.assignee_id))
        }))
    }
}
