//! Building one call of a hook, and the log record of what came of it.

use time::OffsetDateTime;
use uuid::Uuid;

use super::ServiceError;
use crate::model::{DeliveryAttempt, DeliveryAttemptId, EventId, Webhook};
use crate::ports::{CallResult, HookCall, SecretVault};

/// The call of `hook` with `body` for an event of `event_type`, its secret opened.
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
    Ok(HookCall {
        url: hook.url.as_str().to_owned(),
        secret,
        timeout_ms: hook.timeout.ms(),
        hook_type: hook.hook_type,
        event_type: event_type.to_owned(),
        delivery_id,
        body: serde_json::to_vec(body).map_err(ServiceError::internal)?,
    })
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
