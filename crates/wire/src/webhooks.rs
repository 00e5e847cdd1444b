//! Shapes of outbound webhooks (decisions D-81 to D-85). The secret is never answered.

use muster_domain::model::{
    DeliveryAttempt, HookEvents, HookName, HookTimeout, HookType, HookUrl, Webhook,
};
use muster_domain::service::{NewWebhook, TestOutcome, WebhookPatch};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::nullable::Patch;
use muster_domain::ValidationError;

/// Body of `POST /api/v1/webhooks`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateWebhookBody {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(format = "uri", max_length = 2048))]
    pub url: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 100))]
    pub events: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_type: Option<HookType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub can_block: Option<bool>,
    #[cfg_attr(feature = "openapi", schema(minimum = 1000, maximum = 30000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<i64>,
}

impl CreateWebhookBody {
    /// The checked hook.
    pub fn into_new(self) -> Result<NewWebhook, ValidationError> {
        let name = HookName::new(&self.name)?;
        let url = HookUrl::new(&self.url)?;
        let events = HookEvents::new(self.events)?;
        Ok(NewWebhook {
            secret: self.secret,
            hook_type: self.hook_type.unwrap_or(HookType::Post),
            can_block: self.can_block.unwrap_or(false),
            timeout: self
                .timeout_ms
                .map(HookTimeout::new)
                .transpose()?
                .unwrap_or(HookTimeout::DEFAULT),
            ..NewWebhook::new(name, url, events)
        })
    }
}

/// Body of `PATCH /api/v1/webhooks/:id`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateWebhookBody {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = String, min_length = 1, max_length = 255))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub name: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = "uri", max_length = 2048))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub url: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, min_length = 1, max_length = 255))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub secret: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, min_items = 1, max_items = 100))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub events: Patch<Vec<String>>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = HookType))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub hook_type: Patch<HookType>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = bool))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub can_block: Patch<bool>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 1000, maximum = 30000))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub timeout_ms: Patch<i64>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = bool))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub enabled: Patch<bool>,
}

impl UpdateWebhookBody {
    /// The checked patch; `secret: null` removes the secret.
    pub fn into_patch(self) -> Result<WebhookPatch, ValidationError> {
        Ok(WebhookPatch {
            name: self
                .name
                .required("name")?
                .map(|n| HookName::new(&n))
                .transpose()?,
            url: self
                .url
                .required("url")?
                .map(|u| HookUrl::new(&u))
                .transpose()?,
            secret: self.secret.clearable(Ok::<_, ValidationError>)?,
            events: self
                .events
                .required("events")?
                .map(HookEvents::new)
                .transpose()?,
            hook_type: self.hook_type.required("hookType")?,
            can_block: self.can_block.required("canBlock")?,
            timeout: self
                .timeout_ms
                .required("timeoutMs")?
                .map(HookTimeout::new)
                .transpose()?,
            enabled: self.enabled.required("enabled")?,
        })
    }
}

/// An outbound webhook as answered: never its secret, only whether it has one.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookResponse {
    pub id: Uuid,
    pub org_id: Uuid,
    pub name: String,
    pub url: String,
    pub events: Vec<String>,
    pub hook_type: HookType,
    pub can_block: bool,
    pub timeout_ms: u32,
    pub enabled: bool,
    pub has_secret: bool,
    pub consecutive_failures: u32,
    pub last_error: Option<String>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "super::time::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl From<&Webhook> for WebhookResponse {
    fn from(hook: &Webhook) -> Self {
        Self {
            id: hook.id.as_uuid(),
            org_id: hook.org_id.as_uuid(),
            name: hook.name.as_str().to_owned(),
            url: hook.url.as_str().to_owned(),
            events: hook.events.as_slice().to_vec(),
            hook_type: hook.hook_type,
            can_block: hook.can_block,
            timeout_ms: hook.timeout.ms(),
            enabled: hook.enabled,
            has_secret: hook.sealed_secret.is_some(),
            consecutive_failures: hook.consecutive_failures,
            last_error: hook.last_error.clone(),
            created_at: hook.created_at,
            updated_at: hook.updated_at,
        }
    }
}

/// One entry of `GET /api/v1/webhooks/:id/deliveries`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeliveryResponse {
    pub id: Uuid,
    pub webhook_id: Uuid,
    pub event_id: Option<Uuid>,
    pub event_type: String,
    pub delivery_id: Uuid,
    pub attempt: u32,
    pub status_code: Option<u16>,
    pub duration_ms: u32,
    pub success: bool,
    pub error: Option<String>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<&DeliveryAttempt> for DeliveryResponse {
    fn from(a: &DeliveryAttempt) -> Self {
        Self {
            id: a.id.as_uuid(),
            webhook_id: a.webhook_id.as_uuid(),
            event_id: a.event_id.map(muster_domain::model::EventId::as_uuid),
            event_type: a.event_type.clone(),
            delivery_id: a.delivery_id,
            attempt: a.attempt,
            status_code: a.status_code,
            duration_ms: a.duration_ms,
            success: a.error.is_none(),
            error: a.error.clone(),
            created_at: a.created_at,
        }
    }
}

/// Query of `GET /api/v1/webhooks/:id/deliveries`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct DeliveriesQuery {
    /// Page size (1..=200, default 50).
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 200))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Page number, from 1 (a u32: utoipa would say int32, whose maximum is half of it).
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 4_294_967_295_u64, format = Int64))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
}

/// `meta` of a page of deliveries.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryPageMeta {
    /// Deliveries of the hook in all pages.
    pub total: u64,
    /// This page's number, from 1.
    pub page: u32,
    /// The page size.
    pub limit: u32,
}

/// The answer of `POST /api/v1/webhooks/:id/test` (decision D-85).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TestResponse {
    pub delivered: bool,
    pub status_code: Option<u16>,
    pub duration_ms: u32,
    pub error: Option<String>,
}

impl From<TestOutcome> for TestResponse {
    fn from(outcome: TestOutcome) -> Self {
        Self {
            delivered: outcome.delivered,
            status_code: outcome.status_code,
            duration_ms: outcome.duration_ms,
            error: outcome.error,
        }
    }
}
