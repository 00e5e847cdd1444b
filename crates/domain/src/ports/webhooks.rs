use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::RepositoryError;
use crate::model::{AgentId, DeliveryAttempt, Event, HookType, OrgId, TaskId, Webhook, WebhookId};

/// Reads of outbound webhooks and their delivery log.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait WebhookRepository: Send + Sync {
    /// The organization's hooks, newest first (not the A2A push configs of its tasks).
    async fn list(&self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError>;

    /// The hook, if it is in `org`.
    async fn get(&self, org: OrgId, id: WebhookId) -> Result<Option<Webhook>, RepositoryError>;

    /// The hand-over channel of the remote agent `agent`, in any organization.
    async fn remote_channel(&self, agent: AgentId) -> Result<Option<Webhook>, RepositoryError>;

    /// The A2A push notification configs of `task`, oldest first.
    async fn push_configs(&self, org: OrgId, task: TaskId)
    -> Result<Vec<Webhook>, RepositoryError>;

    /// The hook's recorded calls, newest first, skipping `offset`, at most `limit`, with
    /// how many there are in all.
    async fn attempts(
        &self,
        org: OrgId,
        id: WebhookId,
        limit: u32,
        offset: u64,
    ) -> Result<(Vec<DeliveryAttempt>, u64), RepositoryError>;
}

/// A post-hook delivery waiting in the outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingDelivery {
    /// The stored event to deliver.
    pub event: Event,
    /// Attempts already made.
    pub attempts: u32,
    /// The trace of the change that queued it, when traces were on: its calls continue it.
    pub trace: Option<TraceParent>,
}

/// A W3C trace context, kept opaque: the `traceparent` header's value and, when there is
/// one, the `tracestate`'s. Adapters that trace write and read it; the rules never look
/// inside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    /// `00-<trace id>-<span id>-<flags>`.
    pub traceparent: String,
    /// Vendor entries.
    pub tracestate: Option<String>,
}

/// What a hook call is for (the name of its span in traces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// A pre-hook asked whether a change may happen.
    PreHook,
    /// A post-hook delivery of an event (or a test delivery).
    Webhook,
    /// An A2A push notification to a task's push config.
    Push,
    /// A task handed to a remote A2A agent.
    Handover,
}

impl CallKind {
    /// The span name of such a call.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreHook => "hook.pre",
            Self::Webhook => "webhook.delivery",
            Self::Push => "a2a.push",
            Self::Handover => "a2a.handover",
        }
    }
}

/// The outbox of post-hook deliveries: a row per (hook, event) written with the event,
/// in its transaction, for every enabled post-hook subscribed to its type. Workers lease
/// a hook before delivering to it, so that several instances never call one hook
/// concurrently and its events go out in order.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait DeliveryQueue: Send + Sync {
    /// Leases, to `holder` until `until`, at most `max_hooks` enabled hooks that have a
    /// delivery due at `now` and no live lease; answers their ids.
    async fn lease_due_hooks(
        &self,
        now: OffsetDateTime,
        until: OffsetDateTime,
        holder: Uuid,
        max_hooks: u32,
    ) -> Result<Vec<(OrgId, WebhookId)>, RepositoryError>;

    /// Extends `holder`'s lease of `hook` to `until`; `false` when it no longer holds it.
    async fn extend_lease(
        &self,
        hook: WebhookId,
        holder: Uuid,
        until: OffsetDateTime,
    ) -> Result<bool, RepositoryError>;

    /// Gives up `holder`'s lease of `hook`.
    async fn release(&self, hook: WebhookId, holder: Uuid) -> Result<(), RepositoryError>;

    /// Gives up every lease `holder` has (it is stopping).
    async fn release_all(&self, holder: Uuid) -> Result<u64, RepositoryError>;

    /// The hook's deliveries due at `now`, oldest event first, at most `limit`.
    async fn due(
        &self,
        hook: WebhookId,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<PendingDelivery>, RepositoryError>;
}

/// One call of a hook, ready to send.
#[derive(Clone, PartialEq, Eq)]
pub struct HookCall {
    /// Where to POST.
    pub url: String,
    /// The signing secret (`X-Service-Signature`), when the hook has one.
    pub secret: Option<String>,
    /// How long the call may take, in milliseconds.
    pub timeout_ms: u32,
    /// `X-Service-Hook-Type`.
    pub hook_type: HookType,
    /// `X-Service-Event`.
    pub event_type: String,
    /// `X-Service-Delivery`.
    pub delivery_id: Uuid,
    /// The raw JSON body.
    pub body: Vec<u8>,
    /// Its media type: `application/json`, or `application/a2a+json` for A2A pushes.
    pub content_type: &'static str,
    /// Further headers (an A2A push's token and `Authorization`): secrets, never logged.
    pub headers: Vec<(&'static str, String)>,
    /// What the call is for.
    pub kind: CallKind,
    /// Which attempt of this delivery it is (1 for the first).
    pub attempt: u32,
    /// The trace it continues when not the current one: a queued delivery's.
    pub trace: Option<TraceParent>,
}

impl HookCall {
    /// The media type of webhook deliveries.
    pub const JSON: &'static str = "application/json";
    /// The media type of A2A push notifications.
    pub const A2A_JSON: &'static str = "application/a2a+json";
}

impl std::fmt::Debug for HookCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookCall")
            .field("url", &self.url)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .field("timeout_ms", &self.timeout_ms)
            .field("hook_type", &self.hook_type)
            .field("event_type", &self.event_type)
            .field("delivery_id", &self.delivery_id)
            .field("content_type", &self.content_type)
            .field("kind", &self.kind)
            .field("attempt", &self.attempt)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(name, _)| (*name, "<redacted>"))
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// What came of one call. Never an error: a failure is described in `error`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallResult {
    /// The receiver's status code, when it answered.
    pub status: Option<u16>,
    /// How long the call took.
    pub duration_ms: u32,
    /// Why it failed (no answer, refused target, non-2xx status); `None` on a 2xx.
    pub error: Option<String>,
    /// The answer's body (what a pre-hook decided), at most 64 KiB.
    pub body: Vec<u8>,
}

/// Calls hooks over HTTP: signs the body, sends the delivery headers, checks the target
/// again (decision D-81) and connects to the checked address, follows no redirect.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait HookCaller: Send + Sync {
    /// Makes the call within its timeout.
    async fn call(&self, call: &HookCall) -> CallResult;
}

/// Where a hand-over goes and how its updates come back.
#[derive(Clone, PartialEq, Eq)]
pub struct HandoverTarget {
    /// The agent standing for the remote one (the task must still be assigned to it).
    pub agent: AgentId,
    /// The JSON-RPC request id (and message id): the same for every retry.
    pub request_id: Uuid,
    /// Where the remote agent pushes the task's updates.
    pub push_url: String,
    /// The token it sends back with them.
    pub token: String,
}

impl std::fmt::Debug for HandoverTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandoverTarget")
            .field("agent", &self.agent)
            .field("request_id", &self.request_id)
            .field("push_url", &self.push_url)
            .finish_non_exhaustive()
    }
}

/// Writes the body of an A2A push notification: the protocol's view of what `event`
/// did to `task` (a status update), read when the push is sent.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait PushRenderer: Send + Sync {
    /// The JSON body; an error when the task cannot be read.
    async fn render(
        &self,
        org: OrgId,
        task: TaskId,
        event: &Event,
    ) -> Result<serde_json::Value, RepositoryError>;

    /// The body that hands `task` to the remote agent `target.agent` (a JSON-RPC
    /// `SendMessage` with id `target.request_id`), asking for its updates at
    /// `target.push_url` with `target.token`; `None` when the task, read now, is closed
    /// or no longer assigned to that agent (nothing is sent). By default an error: a
    /// renderer that writes only pushes fails remote agents' deliveries, which are then
    /// retried.
    async fn render_handover(
        &self,
        org: OrgId,
        task: TaskId,
        target: &HandoverTarget,
    ) -> Result<Option<serde_json::Value>, RepositoryError> {
        let _ = (org, target);
        Err(RepositoryError::Internal(
            format!("this renderer cannot hand the task {task} over").into(),
        ))
    }
}
