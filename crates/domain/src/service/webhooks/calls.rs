//! Building one call of a hook, and the log record of what came of it.

use time::OffsetDateTime;
use uuid::Uuid;

use super::ServiceError;
use crate::model::{
    DeliveryAttempt, DeliveryAttemptId, EventId, PushAuth, TaskPush, Webhook, WebhookId,
};
use crate::ports::{CallResult, HookCall, SecretVault};

/// The call of `hook` with `body` for an event of `event_type`, its secret opened. A
/// push config's call also carries its token and `Authorization`, as A2A JSON.
pub(super) fn hook_call(
    vault: &dyn SecretVault,
    hook: &Webhook,
    event_type: &str,
    delivery_id: Uuid,
    body: &serde_json::Value,
) -> Result<HookCall, ServiceError> {
    let secret = hook
        .sealed_secret
        .as_deref()
        .map(|sealed| vault.open(Webhook::SECRET_PURPOSE, hook.id.as_uuid(), sealed))
        .transpose()
        .map_err(ServiceError::internal)?;
    let mut headers = Vec::new();
    let mut content_type = HookCall::JSON;
    if let Some(push) = &hook.push {
        content_type = HookCall::A2A_JSON;
        if let Some(token) = &secret {
            headers.push((PUSH_TOKEN_HEADER, token.clone()));
        }
        if let Some(auth) = open_auth(vault, hook.id, push)?.and_then(|auth| auth.header()) {
            headers.push(("authorization", auth));
        }
    }
    Ok(HookCall {
        url: hook.url.as_str().to_owned(),
        secret,
        timeout_ms: hook.timeout.ms(),
        hook_type: hook.hook_type,
        event_type: event_type.to_owned(),
        delivery_id,
        body: serde_json::to_vec(body).map_err(ServiceError::internal)?,
        content_type,
        headers,
    })
}

/// The header an A2A push's token travels in (what the protocol's SDKs read).
const PUSH_TOKEN_HEADER: &str = "x-a2a-notification-token";

/// A push config's `Authorization` scheme and credentials, opened.
pub(super) fn open_auth(
    vault: &dyn SecretVault,
    id: WebhookId,
    push: &TaskPush,
) -> Result<Option<PushAuth>, ServiceError> {
    let Some(sealed) = push.sealed_auth.as_deref() else {
        return Ok(None);
    };
    let plain = vault
        .open(TaskPush::AUTH_PURPOSE, id.as_uuid(), sealed)
        .map_err(ServiceError::internal)?;
    let (scheme, credentials): (String, Option<String>) =
        serde_json::from_str(&plain).map_err(ServiceError::internal)?;
    PushAuth::new(&scheme, credentials.as_deref())
        .map(Some)
        .map_err(ServiceError::internal)
}

/// Seals a push config's scheme and credentials.
pub(super) fn seal_auth(
    vault: &dyn SecretVault,
    id: WebhookId,
    auth: &PushAuth,
) -> Result<Vec<u8>, ServiceError> {
    let plain = serde_json::to_string(&(auth.scheme(), auth.credentials()))
        .map_err(ServiceError::internal)?;
    vault
        .seal(TaskPush::AUTH_PURPOSE, id.as_uuid(), &plain)
        .map_err(ServiceError::internal)
}

/// The log record of a call.
pub(super) struct Attempted<'a> {
    pub(super) id: DeliveryAttemptId,
    pub(super) hook: &'a Webhook,
    pub(super) call: &'a HookCall,
    pub(super) event_id: Option<EventId>,
    pub(super) attempt: u32,
    pub(super) result: &'a CallResult,
    pub(super) at: OffsetDateTime,
}

impl Attempted<'_> {
    pub(super) fn record(&self) -> DeliveryAttempt {
        DeliveryAttempt {
            id: self.id,
            org_id: self.hook.org_id,
            webhook_id: self.hook.id,
            event_id: self.event_id,
            event_type: self.call.event_type.clone(),
            delivery_id: self.call.delivery_id,
            attempt: self.attempt,
            status_code: self.result.status,
            duration_ms: self.result.duration_ms,
            error: self.result.error.clone(),
            created_at: self.at,
        }
    }
}
