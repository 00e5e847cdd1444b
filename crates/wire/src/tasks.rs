//! `/tasks` shapes.

use muster_domain::model::{
    AgentId, Author, Description, Metadata, Reason, Tags, Task, TaskId, TaskPriority, TaskStatus,
    Title,
};
use muster_domain::ports::TaskFilter;
use muster_domain::service::{NewTask, TaskPatch, TaskService};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::nullable::Patch;
use super::time::{DayEdge, parse};
use muster_domain::ValidationError;

/// Body of `POST /tasks`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateTaskRequest {
    #[schema(min_length = 1, max_length = 255)]
    title: String,
    #[schema(max_length = 100_000)]
    description: Option<String>,
    priority: Option<TaskPriority>,
    assignee_id: Option<Uuid>,
    parent_task_id: Option<Uuid>,
    approval_required: Option<bool>,
    #[schema(format = DateTime, example = "2026-12-01T17:00:00.000Z")]
    due_at: Option<String>,
    #[schema(max_items = 50, inline)]
    tags: Option<Vec<String>>,
    #[schema(value_type = Option<Object>)]
    metadata: Option<Value>,
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
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchTaskRequest {
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 255)]
    title: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 100_000)]
    description: Patch<String>,
    #[serde(default)]
    #[schema(value_type = TaskPriority)]
    priority: Patch<TaskPriority>,
    #[serde(default)]
    #[schema(value_type = Option<String>, format = DateTime)]
    due_at: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Vec<String>, max_items = 50)]
    tags: Patch<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Object)]
    metadata: Patch<Value>,
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
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TransitionRequest {
    /// Target status.
    pub status: TaskStatus,
    #[schema(max_length = 2000)]
    reason: Option<String>,
}

impl TransitionRequest {
    /// The checked reason.
    pub fn reason(&self) -> Result<Option<Reason>, ValidationError> {
        self.reason.clone().map(Reason::new).transpose()
    }
}

/// Query of `GET /tasks` (decision D-7 paging).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListTasksQuery {
    status: Option<TaskStatus>,
    assignee_id: Option<Uuid>,
    creator_id: Option<Uuid>,
    parent_task_id: Option<Uuid>,
    #[param(minimum = 1, maximum = 500)]
    limit: Option<u32>,
    /// `meta.nextCursor` of the previous page.
    #[param(value_type = Option<uuid::Uuid>)]
    cursor: Option<String>,
}

impl ListTasksQuery {
    /// The filter.
    pub fn filter(&self) -> TaskFilter {
        TaskFilter {
            status: self.status,
            assignee_id: self.assignee_id.map(AgentId::from_uuid),
            creator_id: self.creator_id,
            parent_task_id: self.parent_task_id.map(TaskId::from_uuid),
        }
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
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskResponse {
    id: Uuid,
    org_id: Uuid,
    title: String,
    description: Option<String>,
    status: TaskStatus,
    priority: TaskPriority,
    assignee_id: Option<Uuid>,
    creator_id: Option<Uuid>,
    parent_task_id: Option<Uuid>,
    approval_required: bool,
    #[serde(serialize_with = "super::time::serialize_option")]
    due_at: Option<OffsetDateTime>,
    tags: Vec<String>,
    metadata: Value,
    approved_by: Option<Uuid>,
    #[serde(serialize_with = "super::time::serialize_option")]
    approved_at: Option<OffsetDateTime>,
    #[serde(serialize_with = "super::time::serialize")]
    created_at: OffsetDateTime,
    #[serde(serialize_with = "super::time::serialize")]
    updated_at: OffsetDateTime,
    /// Until when the agent that claimed it holds it; only on a claimed task.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::time::serialize_option"
    )]
    lease_expires_at: Option<OffsetDateTime>,
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
        }
    }
}
