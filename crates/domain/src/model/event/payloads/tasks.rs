use serde::Serialize;

use crate::model::{AgentId, TaskId, TaskPriority, TaskStatus};

/// `task.created`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCreated {
    /// The title.
    pub title: String,
    /// The first status (`todo`).
    pub status: TaskStatus,
    /// The priority.
    pub priority: TaskPriority,
    /// The assignee, if assigned at creation.
    pub assignee_id: Option<AgentId>,
    /// The parent task, for a sub-task.
    pub parent_task_id: Option<TaskId>,
    /// The project it joined (issue 66); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<crate::model::ProjectId>,
    /// The reward put in escrow (decision D-101).
    pub reward: i64,
    /// The default reward its payer could not fund, when the task was made with reward
    /// 0 for that reason; otherwise absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reward_unfunded: Option<i64>,
}

/// `task.updated`: which fields changed (camelCase names), not their values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskUpdated {
    /// The changed fields, such as `["title", "priority"]`.
    pub fields: Vec<String>,
}

/// `task.transitioned`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskTransitioned {
    /// The status before.
    pub from: TaskStatus,
    /// The status after.
    pub to: TaskStatus,
    /// Why, as given by the caller.
    pub reason: Option<String>,
}

/// `task.done` and `task.cancelled`: the closing move, as in `task.transitioned`.
pub type TaskClosed = TaskTransitioned;

/// `task.assigned`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskAssigned {
    /// The new assignee.
    pub assignee_id: AgentId,
    /// The one before, if any.
    pub previous_assignee_id: Option<AgentId>,
}

/// `task.claimed`: an agent claimed the task (`POST /tasks/claim`), which assigned and
/// started it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskClaimed {
    /// The claiming agent.
    pub agent_id: AgentId,
    /// Until when it holds the task, unless it sends heartbeats (`2026-11-22T01:02:03.456Z`).
    pub lease_expires_at: String,
}

/// `task.lease_expired`: the agent that claimed the task stopped sending heartbeats; the
/// task went back to `todo`, unassigned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskLeaseExpired {
    /// The agent that held it.
    pub agent_id: Option<AgentId>,
    /// When its lease ran out.
    pub lease_expired_at: String,
}

/// `task.approved`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskApproved {
    /// Who approved (agent or user UUID).
    pub approved_by: uuid::Uuid,
}

/// `task.commented`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCommented {
    /// The new comment.
    pub comment_id: uuid::Uuid,
    /// The comment it answers, if any.
    pub parent_comment_id: Option<uuid::Uuid>,
}

/// `task.escalated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskEscalated {
    /// The stored escalation.
    pub escalation_id: uuid::Uuid,
    /// Why: a caller's reason, or a sweep code such as `SLA_BREACH`.
    pub reason: String,
    /// The assignee before.
    pub from_agent_id: Option<AgentId>,
    /// The new assignee; `None` when the sweep found nobody to hand the task to.
    pub to_agent_id: Option<AgentId>,
}

/// `task.dependency_added`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskDependencyAdded {
    /// The dependency record.
    pub dependency_id: uuid::Uuid,
    /// The task depended on.
    pub depends_on_task_id: TaskId,
    /// Whether it blocks progress until done.
    pub blocking: bool,
}

/// `task.dependency_removed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskDependencyRemoved {
    /// The dependency record.
    pub dependency_id: uuid::Uuid,
    /// The task that was depended on.
    pub depends_on_task_id: TaskId,
}

/// `template.created`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateCreated {
    /// The template's unique name.
    pub name: String,
    /// The task it was made from, if any.
    pub created_from_task_id: Option<TaskId>,
}
