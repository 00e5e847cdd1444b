//! The rows of `webhooks`, `webhook_subscriptions`, `webhook_deliveries` and
//! `webhook_attempts`, and their conversions to and from the domain model.

use diesel::prelude::*;
use muster_domain::model::{
    AgentId, DeliveryAttempt, DeliveryAttemptId, EventId, HookEvents, HookName, HookTimeout,
    HookType, HookUrl, OrgId, PushConfigId, RemoteAgentLink, TaskId, TaskPush, Webhook, WebhookId,
};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::schema::{webhook_attempts, webhook_deliveries, webhook_subscriptions, webhooks};
use crate::types::{DbJson, DbTime, DbUuid};

/// A `webhooks` row. The lease columns belong to the delivery worker and are neither
/// read into the model nor written from it.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = webhooks, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_null = true)]
pub(crate) struct WebhookRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub name: String,
    pub url: String,
    pub sealed_secret: Option<Vec<u8>>,
    pub events: DbJson,
    pub hook_type: String,
    pub can_block: bool,
    pub timeout_ms: i32,
    pub enabled: bool,
    pub consecutive_failures: i32,
    pub last_error: Option<String>,
    pub created_at: DbTime,
    pub updated_at: DbTime,
    pub task_id: Option<DbUuid>,
    pub push_config_id: Option<String>,
    pub sealed_auth: Option<Vec<u8>>,
    pub remote_agent_id: Option<DbUuid>,
    pub remote_card_url: Option<String>,
    pub remote_callback_url: Option<String>,
}

impl From<&Webhook> for WebhookRow {
    fn from(hook: &Webhook) -> Self {
        Self {
            id: DbUuid(hook.id.as_uuid()),
            org_id: DbUuid(hook.org_id.as_uuid()),
            name: hook.name.as_str().to_owned(),
            url: hook.url.as_str().to_owned(),
            sealed_secret: hook.sealed_secret.clone(),
            events: DbJson(serde_json::Value::from(hook.events.as_slice().to_vec())),
            hook_type: hook.hook_type.as_str().to_owned(),
            can_block: hook.can_block,
            timeout_ms: i32::try_from(hook.timeout.ms()).unwrap_or(i32::MAX),
            enabled: hook.enabled,
            consecutive_failures: i32::try_from(hook.consecutive_failures).unwrap_or(i32::MAX),
            last_error: hook.last_error.clone(),
            created_at: DbTime(hook.created_at),
            updated_at: DbTime(hook.updated_at),
            task_id: hook.push.as_ref().map(|p| DbUuid(p.task_id.as_uuid())),
            push_config_id: hook.push.as_ref().map(|p| p.config_id.as_str().to_owned()),
            sealed_auth: match (&hook.push, &hook.remote) {
                (Some(push), _) => push.sealed_auth.clone(),
                (None, Some(remote)) => remote.sealed_auth.clone(),
                (None, None) => None,
            },
            remote_agent_id: hook.remote.as_ref().map(|r| DbUuid(r.agent_id.as_uuid())),
            remote_card_url: hook.remote.as_ref().map(|r| r.card_url.clone()),
            remote_callback_url: hook.remote.as_ref().map(|r| r.callback_url.clone()),
        }
    }
}

impl TryFrom<WebhookRow> for Webhook {
    type Error = RepositoryError;

    fn try_from(row: WebhookRow) -> Result<Self, Self::Error> {
        let events: Vec<String> =
            serde_json::from_value(row.events.0).map_err(|e| corrupt("webhook events", e))?;
        Ok(Self {
            id: WebhookId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            name: HookName::new(&row.name).map_err(|e| corrupt("webhook name", e))?,
            url: HookUrl::new(&row.url).map_err(|e| corrupt("webhook url", e))?,
            sealed_secret: row.sealed_secret,
            events: HookEvents::new(events).map_err(|e| corrupt("webhook events", e))?,
            hook_type: HookType::parse(&row.hook_type)
                .ok_or_else(|| corrupt("webhook type", &row.hook_type))?,
            can_block: row.can_block,
            timeout: HookTimeout::new(row.timeout_ms.into())
                .map_err(|e| corrupt("webhook timeout", e))?,
            enabled: row.enabled,
            consecutive_failures: u32::try_from(row.consecutive_failures)
                .map_err(|e| corrupt("webhook failures", e))?,
            last_error: row.last_error,
            remote: match (
                row.remote_agent_id,
                row.remote_card_url,
                row.remote_callback_url,
            ) {
                (Some(agent), Some(card_url), Some(callback_url)) => Some(RemoteAgentLink {
                    agent_id: AgentId::from_uuid(agent.0),
                    card_url,
                    callback_url,
                    sealed_auth: row.sealed_auth.clone(),
                }),
                _ => None,
            },
            push: match (row.task_id, row.push_config_id) {
                (Some(task), Some(config)) => Some(TaskPush {
                    task_id: TaskId::from_uuid(task.0),
                    config_id: PushConfigId::new(&config)
                        .map_err(|e| corrupt("push config id", e))?,
                    sealed_auth: row.sealed_auth,
                }),
                _ => None,
            },
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}

/// One subscribed type of a hook.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = webhook_subscriptions, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct SubscriptionRow {
    pub webhook_id: DbUuid,
    pub org_id: DbUuid,
    pub event_type: String,
}

impl SubscriptionRow {
    /// The rows of `hook`'s subscription; none for an A2A push config, which is found
    /// by its task (`webhooks.task_id`) when the task moves, nor for a remote agent's
    /// channel, found by the assignee (`webhooks.remote_agent_id`).
    pub(crate) fn of(hook: &Webhook) -> Vec<Self> {
        if !hook.is_own() {
            return Vec::new();
        }
        hook.events
            .as_slice()
            .iter()
            .map(|event_type| Self {
                webhook_id: DbUuid(hook.id.as_uuid()),
                org_id: DbUuid(hook.org_id.as_uuid()),
                event_type: event_type.clone(),
            })
            .collect()
    }
}

/// A pending post-hook delivery.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = webhook_deliveries, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct DeliveryRow {
    pub webhook_id: DbUuid,
    pub event_id: DbUuid,
    pub event_at: DbTime,
    pub attempts: i32,
    pub next_attempt_at: DbTime,
    pub trace_parent: Option<String>,
    pub trace_state: Option<String>,
}

/// One call in a hook's delivery log.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = webhook_attempts, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct AttemptRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub webhook_id: DbUuid,
    pub event_id: Option<DbUuid>,
    pub event_type: String,
    pub delivery_id: DbUuid,
    pub attempt: i32,
    pub status_code: Option<i32>,
    pub duration_ms: i32,
    pub error: Option<String>,
    pub created_at: DbTime,
}

impl From<&DeliveryAttempt> for AttemptRow {
    fn from(attempt: &DeliveryAttempt) -> Self {
        Self {
            id: DbUuid(attempt.id.as_uuid()),
            org_id: DbUuid(attempt.org_id.as_uuid()),
            webhook_id: DbUuid(attempt.webhook_id.as_uuid()),
            event_id: attempt.event_id.map(|id| DbUuid(id.as_uuid())),
            event_type: attempt.event_type.clone(),
            delivery_id: DbUuid(attempt.delivery_id),
            attempt: i32::try_from(attempt.attempt).unwrap_or(i32::MAX),
            status_code: attempt.status_code.map(i32::from),
            duration_ms: i32::try_from(attempt.duration_ms).unwrap_or(i32::MAX),
            error: attempt.error.clone(),
            created_at: DbTime(attempt.created_at),
        }
    }
}

impl TryFrom<AttemptRow> for DeliveryAttempt {
    type Error = RepositoryError;

    fn try_from(row: AttemptRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: DeliveryAttemptId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            webhook_id: WebhookId::from_uuid(row.webhook_id.0),
            event_id: row.event_id.map(|id| EventId::from_uuid(id.0)),
            event_type: row.event_type,
            delivery_id: row.delivery_id.0,
            attempt: u32::try_from(row.attempt).map_err(|e| corrupt("attempt number", e))?,
            status_code: row
                .status_code
                .map(u16::try_from)
                .transpose()
                .map_err(|e| corrupt("attempt status", e))?,
            duration_ms: u32::try_from(row.duration_ms)
                .map_err(|e| corrupt("attempt duration", e))?,
            error: row.error,
            created_at: row.created_at.0,
        })
    }
}
