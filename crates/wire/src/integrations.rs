//! The answer both integration endpoints give (decisions D-86, D-87), and code-host
//! connections as managed by admin users.

use muster_domain::model::{
    CodeHostConnection, HookName, InstallationId, IntegrationAnswer, RepositoryName, TaskId,
};
use muster_domain::service::NewConnection;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use muster_domain::ValidationError;

/// `{action, taskId, reason}`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct IntegrationAnswerResponse {
    pub action: String,
    pub task_id: Option<Uuid>,
    pub reason: Option<String>,
}

impl From<IntegrationAnswer> for IntegrationAnswerResponse {
    fn from(answer: IntegrationAnswer) -> Self {
        Self {
            action: answer.action.as_str().to_owned(),
            task_id: answer.task_id.map(TaskId::as_uuid),
            reason: answer.reason,
        }
    }
}

/// Body of `POST /api/v1/integrations/codehost/connections`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateConnectionBody {
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub installation_id: i64,
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 255))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
}

impl CreateConnectionBody {
    /// The checked connection.
    pub fn into_new(self) -> Result<NewConnection, ValidationError> {
        Ok(NewConnection {
            installation_id: InstallationId::new(self.installation_id)?,
            name: HookName::new(&self.name)?,
            repository: self
                .repository
                .as_deref()
                .map(RepositoryName::new)
                .transpose()?,
        })
    }
}

/// Body of `PATCH /api/v1/integrations/codehost/connections/:id`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateConnectionBody {
    /// Switch it on or off.
    #[cfg_attr(feature = "openapi", schema(value_type = bool, required = true))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// A connection as answered: the webhook secret only in the answer of create.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ConnectionResponse {
    pub id: Uuid,
    pub org_id: Uuid,
    pub installation_id: i64,
    pub name: String,
    pub repository: Option<String>,
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default)]
    pub webhook_secret: Option<String>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "super::time::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl ConnectionResponse {
    /// `connection`, with its secret when it is to be shown.
    pub fn new(connection: &CodeHostConnection, webhook_secret: Option<String>) -> Self {
        Self {
            id: connection.id.as_uuid(),
            org_id: connection.org_id.as_uuid(),
            installation_id: connection.installation_id.get(),
            name: connection.name.as_str().to_owned(),
            repository: connection
                .repository
                .as_ref()
                .map(|r| r.as_str().to_owned()),
            enabled: connection.enabled,
            webhook_secret,
            created_at: connection.created_at,
            updated_at: connection.updated_at,
        }
    }
}
