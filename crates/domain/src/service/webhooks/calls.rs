//! Building one call of a hook, and the log record of what came of it.

use time::OffsetDateTime;
use uuid::Uuid;

use super::ServiceError;
use crate::model::{
    DeliveryAttempt, DeliveryAttemptId, EventId, HookType, PushAuth, RemoteAgentLink, TaskPush,
    Webhook, WebhookId,
};
use crate::ports::{CallKind, CallResult, HookCall, SecretVault};

/// The call of `hook` with `body` for an event of `event_type`, its secret opened. A
/// push config's call also carries its token and `Authorization`, as A2A JSON.
pub(super) fn hook_call(
    vault: &dyn SecretVault,
    hook: &Webhook,
    event_type: &str,
    delivery_id: Uuid,
    body: &serde_json::Value,
) -> Result<HookCall, ServiceError> {
    // A remote agent's channel secret keys the push tokens: it is never sent.
    let secret = hook
        .sealed_secret
        .as_deref()
        .filter(|_| hook.remote.is_none())
        .map(|sealed| vault.open(Webhook::SECRET_PURPOSE, hook.id.as_uuid(), sealed))
        .transpose()
        .map_err(ServiceError::internal)?;
    let mut headers = Vec::new();
    let mut content_type = HookCall::JSON;
    if let Some(remote) = &hook.remote {
        headers.push((A2A_VERSION_HEADER, A2A_VERSION.to_owned()));
        if let Some(auth) = open_remote_auth(vault, hook.id, remote)?.and_then(|a| a.header()) {
            headers.push(("authorization", auth));
        }
    }
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
        kind: if hook.remote.is_some() {
            CallKind::Handover
        } else if hook.push.is_some() {
            CallKind::Push
        } else if hook.hook_type == HookType::Pre {
            CallKind::PreHook
        } else {
            CallKind::Webhook
        },
        attempt: 1,
        trace: None,
    })
}

/// The header an A2A push's token travels in (what the protocol's SDKs read).
const PUSH_TOKEN_HEADER: &str = "x-a2a-notification-token";

/// The header that names the A2A version a request is written in.
const A2A_VERSION_HEADER: &str = "a2a-version";
/// The A2A version Muster speaks to remote agents.
const A2A_VERSION: &str = "1.0";

/// A remote agent's `Authorization`, opened.
fn open_remote_auth(
    vault: &dyn SecretVault,
    id: WebhookId,
    remote: &RemoteAgentLink,
) -> Result<Option<PushAuth>, ServiceError> {
    let sealed = remote.sealed_auth.as_deref();
    open_auth_for(vault, RemoteAgentLink::AUTH_PURPOSE, id, sealed)
}

/// A JSON-RPC answer of a remote agent to a hand-over: an `error` member (or no
/// `result`) makes the 2xx a failed attempt, retried like any other.
pub(super) fn check_handover(result: &mut CallResult) {
    if result.error.is_some() {
        return;
    }
    let Ok(answer) = serde_json::from_slice::<serde_json::Value>(&result.body) else {
        result.error = Some("the remote agent's answer is not JSON".to_owned());
        return;
    };
    if let Some(error) = answer.get("error") {
        let code = error.get("code").and_then(serde_json::Value::as_i64);
        let message = error
            .get("message")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("no message");
        let message: String = message.chars().take(500).collect();
        result.error = Some(match code {
            Some(code) => format!("the remote agent refused the task ({code}): {message}"),
            None => format!("the remote agent refused the task: {message}"),
        });
    } else if answer.get("result").is_none() {
        result.error = Some("the remote agent's answer has no result".to_owned());
    }
}

/// A push config's `Authorization` scheme and credentials, opened.
pub(super) fn open_auth(
    vault: &dyn SecretVault,
    id: WebhookId,
    push: &TaskPush,
) -> Result<Option<PushAuth>, ServiceError> {
    open_auth_for(
        vault,
        TaskPush::AUTH_PURPOSE,
        id,
        push.sealed_auth.as_deref(),
    )
}

/// A scheme and credentials sealed for the hook `id` under `purpose`, opened.
fn open_auth_for(
    vault: &dyn SecretVault,
    purpose: &str,
    id: WebhookId,
    sealed: Option<&[u8]>,
) -> Result<Option<PushAuth>, ServiceError> {
    let Some(sealed) = sealed else {
        return Ok(None);
    };
    let plain = vault
        .open(purpose, id.as_uuid(), sealed)
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
    seal_auth_for(vault, TaskPush::AUTH_PURPOSE, id, auth)
}

/// Seals a scheme and credentials for the hook `id` under `purpose`.
pub(crate) fn seal_auth_for(
    vault: &dyn SecretVault,
    purpose: &str,
    id: WebhookId,
    auth: &PushAuth,
) -> Result<Vec<u8>, ServiceError> {
    let plain = serde_json::to_string(&(auth.scheme(), auth.credentials()))
        .map_err(ServiceError::internal)?;
    vault
        .seal(purpose, id.as_uuid(), &plain)
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
