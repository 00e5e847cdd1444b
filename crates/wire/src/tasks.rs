//! `/tasks` shapes.

use muster_domain::model::{
    AgentId, Author, Description, Metadata, ProjectId, Reason, RewardPayer, Tags, Task, TaskId,
    TaskOutcome, TaskPriority, TaskResult, TaskStatus, Title,
};
use muster_domain::ports::TaskFilter;
use muster_domain::rules::reward::reward_amount;
use muster_domain::service::{NewTask, TaskMove, TaskPatch, TaskService};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::nullable::Patch;
use super::time::{DayEdge, parse};
use muster_domain::ValidationError;

/// Body of `POST /tasks`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateTaskRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    pub title: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 100_000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<TaskPriority>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<Uuid>,
    /// The project the task joins (an active one); left out, a sub-task joins its
    /// parent's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_required: Option<bool>,
    #[cfg_attr(feature = "openapi", schema(format = DateTime, example = "2026-12-01T17:00:00.000Z"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due_at: Option<String>,
    #[cfg_attr(feature = "openapi", schema(max_items = 50, inline))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Credits escrowed from the payer (the creating agent, else the organization's
    /// treasury) for whoever finishes the task (decision D-101). Left out: the
    /// organization's default reward, or 0 when the payer cannot fund it; given: refused
    /// with 409 when the payer cannot fund it.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1_000_000_000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reward: Option<i64>,
}

impl CreateTaskRequest {
    /// Validates every field into the domain's types.
    pub fn into_new_task(self) -> Result<NewTask, ValidationError> {
        let title = Title::new(&self.title)?;
        Ok(NewTask {
            description: self.description.map(Description::new).transpose()?,
            priority: self.priority.unwrap_or_default(),
            assignee_id: self.assignee_id.map(AgentId::from_uuid),
            parent_task_id: self.parent_task_id.map(TaskId::from_uuid),
            project_id: self.project_id.map(ProjectId::from_uuid),
            approval_required: self.approval_required.unwrap_or(false),
            due_at: self
                .due_at
                .map(|v| parse("dueAt", &v, DayEdge::Start))
                .transpose()?,
            tags: Tags::new(self.tags.unwrap_or_default())?,
            metadata: self
                .metadata
                .map_or_else(|| Ok(Metadata::default()), Metadata::new)?,
            reward: self.reward.map(reward_amount).transpose()?,
            ..NewTask::new(title)
        })
    }
}

/// Body of `PATCH /tasks/:id` (decision D-39): every field optional; `null` clears
/// `description` and `dueAt`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchTaskRequest {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = String, min_length = 1, max_length = 255))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub title: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, max_length = 100_000))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub description: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = TaskPriority))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub priority: Patch<TaskPriority>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub due_at: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, max_items = 50))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub tags: Patch<Vec<String>>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub metadata: Patch<Value>,
    /// A new reward (decision D-101), changed only by its payer: raising it escrows the
    /// difference (409 when the payer cannot fund it), lowering it returns the difference.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 0, maximum = 1_000_000_000))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub reward: Patch<i64>,
    /// Moves the task to another active project; `null` takes it out of its project.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<uuid::Uuid>))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub project_id: Patch<Uuid>,
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
            reward: self
                .reward
                .required("reward")?
                .map(reward_amount)
                .transpose()?,
            project_id: self
                .project_id
                .clearable(|id| Ok::<_, ValidationError>(ProjectId::from_uuid(id)))?,
        })
    }
}

/// Body of `POST /tasks/:id/transition`.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TransitionRequest {
    /// Target status.
    pub status: TaskStatus,
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What came of the task (replaces its result; 1 to 20,000 characters).
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 20000))]
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
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
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
    /// Only tasks of this project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Uuid>,
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
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `meta.nextCursor` of the previous page.
    #[cfg_attr(feature = "openapi", param(value_type = Option<uuid::Uuid>))]
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
            project_id: self.project_id.map(ProjectId::from_uuid),
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
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// The project it belongs to; only when it belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Uuid>,
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
    /// Credits held in escrow for whoever finishes it: paid to the assignee when it is
    /// done, returned to the payer when it is cancelled (decision D-101).
    pub reward: i64,
    /// Whose credits the reward came from.
    pub reward_payer: RewardPayerResponse,
}

/// Who pays a task's reward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RewardPayerKind {
    /// The agent that created the task.
    Agent,
    /// The organization's treasury.
    Treasury,
}

/// `{kind, id}`: the paying agent's UUID, or the organization's for the treasury.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RewardPayerResponse {
    /// `agent` or `treasury`.
    pub kind: RewardPayerKind,
    /// The agent's UUID, or the organization's for the treasury.
    pub id: Uuid,
}

impl RewardPayerResponse {
    /// The wire form of `payer` for a task of organization `org`.
    pub fn of(payer: RewardPayer, org: muster_domain::model::OrgId) -> Self {
        Self {
            kind: match payer {
                RewardPayer::Agent(_) => RewardPayerKind::Agent,
                RewardPayer::Treasury => RewardPayerKind::Treasury,
            },
            id: payer.id(org),
        }
    }
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
            project_id: task.project_id.map(ProjectId::as_uuid),
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
            reward: task.reward,
            reward_payer: RewardPayerResponse::of(task.reward_payer, task.org_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CreateTaskRequest, PatchTaskRequest, RewardPayerKind, RewardPayerResponse};
    use muster_domain::model::{AgentId, OrgId, RewardPayer};
    use uuid::Uuid;

    fn create(json: &str) -> Result<Option<i64>, String> {
        let body: CreateTaskRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
        body.into_new_task()
            .map(|n| n.reward)
            .map_err(|e| e.message().to_owned())
    }

    fn patch(json: &str) -> Result<Option<i64>, String> {
        let body: PatchTaskRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
        body.into_patch()
            .map(|p| p.reward)
            .map_err(|e| e.message().to_owned())
    }

    #[test]
    fn a_reward_is_optional_on_create_and_checked_for_its_range() {
        assert_eq!(create(r#"{"title":"t"}"#), Ok(None));
        assert_eq!(create(r#"{"title":"t","reward":0}"#), Ok(Some(0)));
        assert_eq!(
            create(r#"{"title":"t","reward":1000000000}"#),
            Ok(Some(1_000_000_000))
        );
        let range = Err("reward must be between 0 and 1000000000".to_owned());
        assert_eq!(create(r#"{"title":"t","reward":-1}"#), range);
        assert_eq!(create(r#"{"title":"t","reward":1000000001}"#), range);
    }

    #[test]
    fn a_patched_reward_may_be_left_out_but_not_cleared() {
        assert_eq!(patch(r#"{"title":"t"}"#), Ok(None));
        assert_eq!(patch(r#"{"reward":25}"#), Ok(Some(25)));
        assert_eq!(
            patch(r#"{"reward":null}"#),
            Err("reward must not be null".to_owned())
        );
        assert_eq!(
            patch(r#"{"reward":-5}"#),
            Err("reward must be between 0 and 1000000000".to_owned())
        );
    }

    #[test]
    fn the_payer_is_the_agent_or_the_organization_for_the_treasury() {
        let org = OrgId::from_uuid(Uuid::from_u128(1));
        let agent = AgentId::from_uuid(Uuid::from_u128(2));
        let json = |payer| serde_json::to_value(RewardPayerResponse::of(payer, org)).ok();
        assert_eq!(
            json(RewardPayer::Treasury),
            Some(serde_json::json!({"kind": "treasury", "id": org.as_uuid()}))
        );
        assert_eq!(
            json(RewardPayer::Agent(agent)),
            Some(serde_json::json!({"kind": "agent", "id": agent.as_uuid()}))
        );
        assert_eq!(
            RewardPayerResponse::of(RewardPayer::Agent(agent), org).kind,
            RewardPayerKind::Agent
        );
    }
}
