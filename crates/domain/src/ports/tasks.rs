use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::RepositoryError;
use crate::model::{
    Comment, CommentId, Escalation, EscalationId, EscalationReason, OrgId, Tags, Task,
    TaskDependency, TaskId, TaskOutcome, TaskPriority, TaskStatus, TaskTemplate, TemplateId,
};
use crate::rules::candidates::RosterEntry;

/// Filters of `GET /tasks`; `None` means "any".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFilter {
    /// Only tasks in this status.
    pub status: Option<TaskStatus>,
    /// Only tasks assigned to this agent.
    pub assignee_id: Option<crate::model::AgentId>,
    /// Only tasks created by this agent or user.
    pub creator_id: Option<Uuid>,
    /// Only sub-tasks of this task.
    pub parent_task_id: Option<TaskId>,
    /// Only tasks of this project.
    pub project_id: Option<crate::model::ProjectId>,
    /// Only tasks in one of these statuses; empty means any. Applies with `status`.
    pub any_status: Vec<TaskStatus>,
    /// `Some(true)`: only tasks waiting for their approval (in review, approval
    /// required); `Some(false)`: only the others.
    pub awaiting_approval: Option<bool>,
    /// Only tasks whose status changed at or after this instant.
    pub status_changed_since: Option<OffsetDateTime>,
    /// Only the tasks of this conversation: the sub-tasks of this task, and the task
    /// itself when it has no parent (A2A's `contextId`).
    pub context_id: Option<TaskId>,
    /// Only tasks with this outcome, or with none.
    pub outcome: Option<OutcomeFilter>,
    /// Only tasks of this priority.
    pub priority: Option<TaskPriority>,
    /// Only tasks carrying this tag (ASCII letters compared without regard to case).
    pub tag: Option<String>,
    /// Only tasks whose title or description contains this text (ASCII letters
    /// compared without regard to case).
    pub text: Option<String>,
}

impl TaskFilter {
    /// The longest tag or text a filter takes: a tag's own limit.
    pub const MAX_TERM_CHARS: usize = Tags::MAX_CHARS;

    /// A tag or text to filter by, as typed: trimmed, and none when empty; refused when
    /// longer than [`Self::MAX_TERM_CHARS`] or holding a NUL character.
    pub fn term(field: &str, typed: &str) -> Result<Option<String>, crate::ValidationError> {
        let typed = typed.trim();
        if typed.is_empty() {
            return Ok(None);
        }
        crate::validation::max_chars(field, typed, Self::MAX_TERM_CHARS)?;
        crate::validation::no_nul(field, typed)?;
        Ok(Some(typed.to_owned()))
    }
}

/// Which outcome a [`TaskFilter`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeFilter {
    /// Tasks without an outcome (every task not cancelled, and the abandoned ones).
    Without,
    /// Tasks that ended so.
    Is(TaskOutcome),
}

impl OutcomeFilter {
    /// Whether a task with `outcome` passes.
    pub fn keeps(self, outcome: Option<TaskOutcome>) -> bool {
        match self {
            Self::Without => outcome.is_none(),
            Self::Is(wanted) => outcome == Some(wanted),
        }
    }
}

impl TaskFilter {
    /// Whether `task` passes every filter but the organization's, which the caller
    /// scopes.
    pub fn matches(&self, task: &Task) -> bool {
        let creator = self
            .creator_id
            .is_none_or(|c| task.creator.is_some_and(|author| author.as_uuid() == c));
        self.status.is_none_or(|s| task.status == s)
            && (self.any_status.is_empty() || self.any_status.contains(&task.status))
            && self.assignee_id.is_none_or(|a| task.assignee_id == Some(a))
            && creator
            && self
                .parent_task_id
                .is_none_or(|p| task.parent_task_id == Some(p))
            && self.project_id.is_none_or(|p| task.project_id == Some(p))
            && self
                .awaiting_approval
                .is_none_or(|awaiting| task.awaits_approval() == awaiting)
            && self
                .status_changed_since
                .is_none_or(|since| task.status_changed_at >= since)
            && self.outcome.is_none_or(|kept| kept.keeps(task.outcome))
            && self.context_id.is_none_or(|context| {
                task.parent_task_id == Some(context)
                    || (task.id == context && task.parent_task_id.is_none())
            })
            && self.priority.is_none_or(|p| task.priority == p)
            && self.tag.as_deref().is_none_or(|tag| {
                task.tags
                    .as_slice()
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(tag))
            })
            && self.text.as_deref().is_none_or(|text| {
                contains_ignoring_case(task.title.as_str(), text)
                    || task
                        .description
                        .as_ref()
                        .is_some_and(|d| contains_ignoring_case(d.as_str(), text))
            })
    }
}

/// Whether `haystack` contains `needle`, ASCII letters compared without regard to case.
fn contains_ignoring_case(haystack: &str, needle: &str) -> bool {
    haystack
        .to_ascii_lowercase()
        .contains(&needle.to_ascii_lowercase())
}

/// Which tasks the escalation sweep looks for (decision D-37). Each query leaves out
/// tasks already escalated automatically for its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overdue {
    /// Blocked tasks of `priority` whose status changed before `since`.
    BlockedSince {
        /// The priority.
        priority: TaskPriority,
        /// The cut-off.
        since: OffsetDateTime,
    },
    /// In-progress tasks with no activity since `since`.
    IdleSince {
        /// The cut-off.
        since: OffsetDateTime,
    },
    /// Open tasks whose due date is before `now`.
    PastDue {
        /// The sweep's clock.
        now: OffsetDateTime,
    },
    /// Open tasks whose assignee is suspended or revoked.
    AssigneeInactive,
}

impl Overdue {
    /// The escalation reason this query finds.
    pub const fn reason(self) -> EscalationReason {
        match self {
            Self::BlockedSince { .. } => EscalationReason::BlockedTimeout,
            Self::IdleSince { .. } => EscalationReason::StaleTask,
            Self::PastDue { .. } => EscalationReason::SlaBreach,
            Self::AssigneeInactive => EscalationReason::AssigneeInactive,
        }
    }
}

/// Stored tasks and what hangs off them, for reading. Every method but
/// [`overdue`](Self::overdue) is scoped to one organization; changes go through a
/// [`Transaction`](super::Transaction).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TaskRepository: Send + Sync {
    /// The task with `id` in `org`, if any.
    async fn get(&self, org: OrgId, id: TaskId) -> Result<Option<Task>, RepositoryError>;

    /// The ids and titles of `org`'s open tasks (not done or cancelled), newest first, at
    /// most `limit`: what a chat completion hint is matched against.
    async fn open_titles(
        &self,
        org: OrgId,
        limit: u32,
    ) -> Result<Vec<(TaskId, String)>, RepositoryError>;

    /// Tasks of `org` matching `filter`, newest first, at most `limit`, strictly older
    /// than the task `before` when given (keyset paging).
    async fn list(
        &self,
        org: OrgId,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError>;

    /// How many tasks of `org` match `filter`.
    async fn count(&self, org: OrgId, filter: &TaskFilter) -> Result<u64, RepositoryError>;

    /// The dependencies of `task`, oldest first.
    async fn dependencies(
        &self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<TaskDependency>, RepositoryError>;

    /// Comments of `task`, oldest first, at most `limit`, strictly newer than `after`.
    async fn comments(
        &self,
        org: OrgId,
        task: TaskId,
        after: Option<CommentId>,
        limit: u32,
    ) -> Result<Vec<Comment>, RepositoryError>;

    /// Escalations of `task`, newest first, at most `limit`, strictly older than `before`.
    async fn escalations(
        &self,
        org: OrgId,
        task: TaskId,
        before: Option<EscalationId>,
        limit: u32,
    ) -> Result<Vec<Escalation>, RepositoryError>;

    /// Templates of `org`, newest first, at most `limit`, strictly older than `before`.
    async fn templates(
        &self,
        org: OrgId,
        before: Option<TemplateId>,
        limit: u32,
    ) -> Result<Vec<TaskTemplate>, RepositoryError>;

    /// The template `id` of `org`.
    async fn template(
        &self,
        org: OrgId,
        id: TemplateId,
    ) -> Result<Option<TaskTemplate>, RepositoryError>;

    /// Every active agent of `org` with its capabilities and its number of open tasks:
    /// what routing ranks.
    async fn roster(&self, org: OrgId) -> Result<Vec<RosterEntry>, RepositoryError>;

    /// Up to `limit` tasks, across organizations, that `query` finds, oldest first.
    async fn overdue(
        &self,
        query: Overdue,
        limit: u32,
    ) -> Result<Vec<(OrgId, TaskId)>, RepositoryError>;

    /// The capabilities `agent` of `org` declares (what it may claim with).
    async fn claimer_capabilities(
        &self,
        org: OrgId,
        agent: crate::model::AgentId,
    ) -> Result<Vec<crate::model::Capability>, RepositoryError>;

    /// Tasks in progress whose claim's lease ran out before `now` (of `org`, or of every
    /// organization), soonest expired first, at most `limit`.
    async fn expired_leases(
        &self,
        org: Option<OrgId>,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<(OrgId, TaskId)>, RepositoryError>;
}

#[cfg(test)]
mod tests {
    use super::TaskFilter;

    #[test]
    fn a_term_is_trimmed_and_empty_is_none() {
        assert_eq!(
            TaskFilter::term("q", "  ship  "),
            Ok(Some("ship".to_owned()))
        );
        assert_eq!(TaskFilter::term("q", " \t "), Ok(None));
        assert_eq!(TaskFilter::term("q", ""), Ok(None));
    }

    #[test]
    fn a_term_is_at_most_100_characters_without_nul() {
        let longest = "é".repeat(TaskFilter::MAX_TERM_CHARS);
        assert_eq!(TaskFilter::term("tag", &longest), Ok(Some(longest.clone())));
        let refused = TaskFilter::term("tag", &format!("{longest}é")).unwrap_err();
        assert_eq!(refused.message(), "tag must be at most 100 characters");
        let refused = TaskFilter::term("q", "a\0b").unwrap_err();
        assert_eq!(refused.message(), "q must not contain the NUL character");
    }
}
