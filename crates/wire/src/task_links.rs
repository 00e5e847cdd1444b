//! Shapes of what hangs off a task: assignment, dependencies, comments, escalations.

use muster_domain::model::{
    AgentId, Author, Comment, CommentBody, CommentId, Escalation, EscalationReason, Reason,
    TaskDependency,
};
use muster_domain::service::NewEscalation;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use muster_domain::ValidationError;

/// Body of `POST /tasks/:id/approve`: nothing (an empty body or `{}`).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EmptyRequest {}

/// Body of `POST /tasks/:id/assign`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AssignRequest {
    /// The new assignee.
    pub assignee_id: Uuid,
}

/// Body of `POST /tasks/:id/dependencies`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DependencyRequest {
    /// The task depended on.
    pub depends_on_id: Uuid,
    /// Whether it blocks (default false).
    #[serde(default)]
    pub blocking: bool,
}

/// A dependency on the wire.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DependencyResponse {
    pub id: Uuid,
    pub task_id: Uuid,
    pub depends_on_id: Uuid,
    pub blocking: bool,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<TaskDependency> for DependencyResponse {
    fn from(d: TaskDependency) -> Self {
        Self {
            id: d.id.as_uuid(),
            task_id: d.task_id.as_uuid(),
            depends_on_id: d.depends_on_id.as_uuid(),
            blocking: d.blocking,
            created_at: d.created_at,
        }
    }
}

/// `{data, message}`: what a removal or an escalation answers.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DataWithMessage<T> {
    /// The record.
    pub data: T,
    /// A sentence for people.
    pub message: String,
}

/// Body of `POST /tasks/:id/comments`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CommentRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 20000))]
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_comment_id: Option<Uuid>,
}

impl CommentRequest {
    /// The checked body and parent.
    pub fn into_parts(self) -> Result<(CommentBody, Option<CommentId>), ValidationError> {
        Ok((
            CommentBody::new(self.body)?,
            self.parent_comment_id.map(CommentId::from_uuid),
        ))
    }
}

/// A comment on the wire: its author is `agentId` or `userId` (decision D-40).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CommentResponse {
    pub id: Uuid,
    pub task_id: Uuid,
    pub body: String,
    pub agent_id: Option<Uuid>,
    pub user_id: Option<Uuid>,
    pub parent_comment_id: Option<Uuid>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<Comment> for CommentResponse {
    fn from(c: Comment) -> Self {
        Self {
            id: c.id.as_uuid(),
            task_id: c.task_id.as_uuid(),
            body: c.body.as_str().to_owned(),
            agent_id: c.author.and_then(Author::agent).map(AgentId::as_uuid),
            user_id: c
                .author
                .and_then(Author::user)
                .map(muster_domain::model::UserId::as_uuid),
            parent_comment_id: c.parent_comment_id.map(CommentId::as_uuid),
            created_at: c.created_at,
        }
    }
}

/// Body of `POST /tasks/:id/escalate`.
#[derive(Debug, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EscalateRequest {
    pub reason: EscalationReason,
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_agent_id: Option<Uuid>,
}

impl EscalateRequest {
    /// The checked escalation.
    pub fn into_escalation(self) -> Result<NewEscalation, ValidationError> {
        Ok(NewEscalation {
            reason: self.reason,
            notes: self.notes.map(|n| Reason::named("notes", n)).transpose()?,
            target: self.target_agent_id.map(AgentId::from_uuid),
        })
    }
}

/// An escalation on the wire.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EscalationResponse {
    pub id: Uuid,
    pub task_id: Uuid,
    pub reason: EscalationReason,
    pub notes: Option<String>,
    pub from_agent_id: Option<Uuid>,
    pub to_agent_id: Option<Uuid>,
    pub actor_id: Option<Uuid>,
    pub automatic: bool,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<Escalation> for EscalationResponse {
    fn from(e: Escalation) -> Self {
        Self {
            id: e.id.as_uuid(),
            task_id: e.task_id.as_uuid(),
            reason: e.reason,
            notes: e.notes.map(|n| n.as_str().to_owned()),
            from_agent_id: e.from_agent_id.map(AgentId::as_uuid),
            to_agent_id: e.to_agent_id.map(AgentId::as_uuid),
            actor_id: e.actor_id,
            automatic: e.automatic,
            created_at: e.created_at,
        }
    }
}
