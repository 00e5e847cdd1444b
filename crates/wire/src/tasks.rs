//! `/tasks` shapes.

use muster_domain::model::{
    AgentId, Author, Description, Metadata, Reason, Tags, Task, TaskId, TaskOutcome, TaskPriority,
    TaskResult, TaskStatus, Title,
};
use muster_domain::ports::TaskFilter;
use muster_domain::service::{NewTask, TaskMove, TaskPatch, TaskService};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::nullable::Patch;
use super::time::{DayEdge, parse};
use muster_domain::ValidationError;

/// Body of `POST /tasks`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateTaskRequest {
    #[schema(min_length = 1, max_length = 255)]
    pub title: String,
    #[schema(max_length = 100_000)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<TaskPriority>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_required: Option<bool>,
    #[schema(format = DateTime, example = "2026-12-01T17:00:00.000Z")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due_at: Option<String>,
    #[schema(max_items = 50, inline)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl CreateTaskRequest {
    /// Validates every field into the domain's types.
    pub fn into_new_task(self) -> Result<NewTask, ValidationError> {
        Ok(NewTask {
            title: Title::new(&self.title)?,
            description: self.description.map(Description::new).transpose()?,
            priority: self.priority.unwrap_or_default(),
            assignee_id: self.assignee_id.map(AgentId::from_uuid),
            parent_task_id: self.parent_task_id.map(TaskId::from_uuid),
            approval_required: self.approval_required.unwrap_or(false),
            due_at: self
                .due_at
                .map(|v| parse("dueAt", &v, DayEdge::Start))
                .transpose()?,
            tags: Tags::new(self.tags.unwrap_or_default())?,
            metadata: self
                .metadata
                .map_or_else(|| Ok(Metadata::default()), Metadata::new)?,
        })
    }
}

/// Body of `PATCH /tasks/:id` (decision D-39): every field optional; `null` clears
/// `description` and `dueAt`.
#[derive(Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchTaskRequest {
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 255)]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub title: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 100_000)]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub description: Patch<String>,
    #[serde(default)]
    #[schema(value_type = TaskPriority)]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub priority: Patch<TaskPriority>,
    #[serde(default)]
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub due_at: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Vec<String>, max_items = 50)]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub tags: Patch<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Object)]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub metadata: Patch<Value>,
}

impl PatchTaskRequest {
    /// Validates every given field into the domain's patch.
    pub fn into_patch(self) -> Result<TaskPatch, ValidationError> {
        Ok(TaskPatch {
            title: self
                .title
                .required("title")?
                .map(|t| Title::new(&t))
                .transpose()?,
            description: self.description.clearable(Description::new)?,
            priority: self.priority.required("priority")?,
            due_at: self
                .due_at
                .clearable(|v| parse("dueAt", &v, DayEdge::Start))?,
            tags: self.tags.required("tags")?.map(Tags::new).transpose()?,
            metadata: self
                .metadata
                .required("metadata")?
                .map(Metadata::new)
                .transpose()?,
        })
    }
}

/// Body of `POST /tasks/:id/transition`.
#[derive(Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TransitionRequest {
    /// Target status.
    pub status: TaskStatus,
    #[schema(max_length = 2000)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What came of the task (replaces its result; 1 to 20,000 characters).
    #[schema(min_length = 1, max_length = 20000)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// How a cancelled task ended: `failed` or `rejected` (only with `status: cancelled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<TaskOutcome>,
}

impl TransitionRequest {
    /// The checked reason.
    pub fn reason(&self) -> Result<Option<Reason>, ValidationError> {
        self.reason.clone().map(Reason::new).transpose()
    }

    /// The checked move.
    pub fn into_move(self) -> Result<TaskMove, ValidationError> {
        Ok(TaskMove {
            to: self.status,
            reason: self.reason()?,
            result: self.result.map(TaskResult::new).transpose()?,
            outcome: self.outcome,
        })
    }
}

/// Query of `GET /tasks` (decision D-7 paging).
#[derive(Debug, Default, Deserialize, Serialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListTasksQuery {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creator_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<Uuid>,
    /// Only tasks of this priority.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<TaskPriority>,
    /// Only tasks carrying this tag (ASCII letters compared without regard to case; at
    /// most 100 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Only tasks whose title or description contains this text (ASCII letters compared
    /// without regard to case; at most 100 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q: Option<String>,
    #[param(minimum = 1, maximum = 500)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `meta.nextCursor` of the previous page.
    #[param(value_type = Option<uuid::Uuid>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl ListTasksQuery {
    /// The checked filter.
    pub fn filter(&self) -> Result<TaskFilter, ValidationError> {
        let term = |field, typed: &Option<String>| {
            TaskFilter::term(field, typed.as_deref().unwrap_or_default())
        };
        Ok(TaskFilter {
            status: self.status,
            assignee_id: self.assignee_id.map(AgentId::from_uuid),
            creator_id: self.creator_id,
            parent_task_id: self.parent_task_id.map(TaskId::from_uuid),
            priority: self.priority,
            tag: term("tag", &self.tag)?,
            text: term("q", &self.q)?,
            ..TaskFilter::default()
        })
    }

    /// The page size (the use case checks its range).
    pub fn limit(&self) -> u32 {
        self.limit.unwrap_or(TaskService::DEFAULT_PAGE_SIZE)
    }

    /// The cursor from the previous page, checked.
    pub fn cursor(&self) -> Result<Option<TaskId>, ValidationError> {
        super::paging::parse_cursor(self.cursor.as_deref())
    }
}

/// A task on the wire.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskResponse {
    pub id: Uuid,
    pub org_id: Uuid,
    pub title: String,
    pub description: Option<String>,
    pub status: TaskStatus,
    pub priority: TaskPriority,
    pub assignee_id: Option<Uuid>,
    pub creator_id: Option<Uuid>,
    pub parent_task_id: Option<Uuid>,
    pub approval_required: bool,
    #[serde(with = "super::time::option")]
    pub due_at: Option<OffsetDateTime>,
    pub tags: Vec<String>,
    pub metadata: Value,
    pub approved_by: Option<Uuid>,
    #[serde(with = "super::time::option")]
    pub approved_at: Option<OffsetDateTime>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "super::time::rfc3339")]
    pub updated_at: OffsetDateTime,
    /// Until when the agent that claimed it holds it; only on a claimed task.
    #[serde(skip_serializing_if = "Option::is_none", with = "super::time::option")]
    #[serde(default)]
    pub lease_expires_at: Option<OffsetDateTime>,
    /// What came of it, as given with a move; only when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// How a cancelled task ended (`failed`, `rejected`); only when it says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<TaskOutcome>,
}

impl From<Task> for TaskResponse {
    fn from(task: Task) -> Self {
        Self {
            id: task.id.as_uuid(),
            org_id: task.org_id.as_uuid(),
            title: task.title.as_str().to_owned(),
            description: task.description.map(|d| d.as_str().to_owned()),
            status: task.status,
            priority: task.priority,
            assignee_id: task.assignee_id.map(AgentId::as_uuid),
            creator_id: task.creator.map(Author::as_uuid),
            parent_task_id: task.parent_task_id.map(TaskId::as_uuid),
            approval_required: task.approval_required,
            due_at: task.due_at,
            tags: task.tags.as_slice().to_vec(),
            metadata: task.metadata.to_value(),
            approved_by: task.approved_by,
            approved_at: task.approved_at,
            created_at: task.created_at,
            updated_at: task.updated_at,
            lease_expires_at: task.lease_expires_at,
            result: task.result.map(|r| r.as_str().to_owned()),
            outcome: task.outcome,
        }
    }
}
