//! Shapes of inbound webhook keys and of the tasks other systems send through them
//! (decision D-80). Management bodies refuse unknown fields; ingestion bodies, being
//! third-party payloads, ignore them (decision D-3).

use muster_domain::ValidationError;
use muster_domain::model::{
    AgentId, Description, HookName, InboundKey, Metadata, Tags, TaskPriority, Title,
};
use muster_domain::service::{InboundKeyPatch, InboundTask, MAX_BATCH, NewInboundKey};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::nullable::Patch;

/// Body of `POST /api/v1/inbound-webhooks`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateInboundKeyBody {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_agent_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_priority: Option<TaskPriority>,
    #[cfg_attr(feature = "openapi", schema(max_items = 50))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_tags: Option<Vec<String>>,
}

impl CreateInboundKeyBody {
    /// The checked key.
    pub fn into_new(self) -> Result<NewInboundKey, ValidationError> {
        Ok(NewInboundKey {
            name: HookName::new(&self.name)?,
            default_agent_id: self.default_agent_id.map(AgentId::from_uuid),
            default_priority: self.default_priority,
            default_tags: self.default_tags.map(Tags::new).transpose()?,
        })
    }
}

/// Body of `PATCH /api/v1/inbound-webhooks/:id`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateInboundKeyBody {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = String, min_length = 1, max_length = 255))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub name: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<uuid::Uuid>))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub default_agent_id: Patch<Uuid>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = TaskPriority))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub default_priority: Patch<TaskPriority>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, max_items = 50))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub default_tags: Patch<Vec<String>>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = bool))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub enabled: Patch<bool>,
}

impl UpdateInboundKeyBody {
    /// The checked patch; `defaultAgentId: null` clears the default assignee.
    pub fn into_patch(self) -> Result<InboundKeyPatch, ValidationError> {
        Ok(InboundKeyPatch {
            name: self
                .name
                .required("name")?
                .map(|n| HookName::new(&n))
                .transpose()?,
            default_agent_id: self
                .default_agent_id
                .clearable(|id| Ok::<_, ValidationError>(AgentId::from_uuid(id)))?,
            default_priority: self.default_priority.required("defaultPriority")?,
            default_tags: self
                .default_tags
                .required("defaultTags")?
                .map(Tags::new)
                .transpose()?,
            enabled: self.enabled.required("enabled")?,
        })
    }
}

/// An inbound key as answered: the key always (it is the URL), the secret only when it
/// was just drawn (create, rotate).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InboundKeyResponse {
    pub id: Uuid,
    pub org_id: Uuid,
    pub name: String,
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default)]
    pub secret: Option<String>,
    pub default_agent_id: Option<Uuid>,
    pub default_priority: TaskPriority,
    pub default_tags: Vec<String>,
    pub enabled: bool,
    #[serde(with = "super::time::option")]
    pub last_used_at: Option<OffsetDateTime>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "super::time::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl InboundKeyResponse {
    /// `key`, with `secret` when it is to be shown.
    pub fn new(key: &InboundKey, secret: Option<String>) -> Self {
        Self {
            id: key.id.as_uuid(),
            org_id: key.org_id.as_uuid(),
            name: key.name.as_str().to_owned(),
            key: key.key.clone(),
            secret,
            default_agent_id: key.default_agent_id.map(AgentId::as_uuid),
            default_priority: key.default_priority,
            default_tags: key.default_tags.as_slice().to_vec(),
            enabled: key.enabled,
            last_used_at: key.last_used_at,
            created_at: key.created_at,
            updated_at: key.updated_at,
        }
    }
}

/// One task of `POST /api/v1/webhooks/inbound/:key` (and of a batch).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InboundTaskBody {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 500))]
    pub title: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 100_000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<TaskPriority>,
    #[cfg_attr(feature = "openapi", schema(max_items = 50))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee_id: Option<Uuid>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl InboundTaskBody {
    /// The checked task.
    pub fn into_task(self) -> Result<InboundTask, ValidationError> {
        let title = Title::inbound(&self.title)?;
        Ok(InboundTask {
            description: self.description.map(Description::new).transpose()?,
            priority: self.priority,
            tags: self.tags.unwrap_or_default(),
            assignee_id: self.assignee_id.map(AgentId::from_uuid),
            metadata: self.metadata.map(Metadata::new).transpose()?,
            ..InboundTask::new(title)
        })
    }
}

/// Body of `POST /api/v1/webhooks/inbound/:key/batch`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InboundBatchBody {
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 100))]
    pub tasks: Vec<InboundTaskBody>,
}

impl InboundBatchBody {
    /// The checked tasks (1 to 100); a refusal names the item (`tasks[2].title ...`).
    pub fn into_tasks(self) -> Result<Vec<InboundTask>, ValidationError> {
        if self.tasks.is_empty() || self.tasks.len() > MAX_BATCH {
            return Err(ValidationError::new(format!(
                "tasks must hold 1 to {MAX_BATCH} items"
            )));
        }
        self.tasks
            .into_iter()
            .enumerate()
            .map(|(index, body)| {
                body.into_task().map_err(|err| {
                    ValidationError::new(format!("tasks[{index}].{}", err.message()))
                })
            })
            .collect()
    }
}
