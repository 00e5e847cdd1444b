//! Pre-hooks (decision D-84): before a change commits, every enabled pre-hook
//! subscribed to the type of an event the change would write is asked, in parallel,
//! each within its own timeout. A `canBlock` hook answering `allow: false` blocks the
//! change (403, nothing written, `webhook.blocked` recorded); a timeout, an HTTP error or
//! an answer that is not the expected JSON lets it through.
//!
//! [`HookGate`] finds the questions a change raises (which enabled pre-hook hears which
//! of its would-be events) and asks them; [`GatedUnitOfWork`](super::GatedUnitOfWork)
//! runs every use case's change through it, with no transaction open while hooks answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::join_all;
use serde::Deserialize;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::ServiceError;
use super::calls::{Attempted, hook_call};
use crate::model::{
    AuditEvent, DeliveryAttempt, DeliveryAttemptId, Event, EventId, OrgId, Webhook, WebhookBlocked,
    WebhookId,
};
use crate::policy::Forbidden;
use crate::ports::{CallResult, Clock, HookCaller, IdGenerator, SecretVault, WebhooksTx};
use crate::rules::delivery::{delivery_body, delivery_id, is_success};
use crate::rules::hearing;

/// How long the list of an organization's pre-hooks is reused before it is read again:
/// the delay after which a hook changed on another instance is asked.
const CACHE_TTL: Duration = Duration::seconds(1);

/// The reason given when a blocking hook gives none.
const NO_REASON: &str = "no reason given";

/// Asks pre-hooks about would-be events.
pub struct HookGate {
    caller: Arc<dyn HookCaller>,
    vault: Arc<dyn SecretVault>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    cache: Mutex<HashMap<OrgId, Cached>>,
}

impl std::fmt::Debug for HookGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookGate").finish_non_exhaustive()
    }
}

struct Cached {
    read_at: OffsetDateTime,
    hooks: Arc<Vec<Webhook>>,
}

/// One pre-hook to ask about one would-be event.
#[derive(Debug, Clone)]
pub(super) struct Question {
    pub(super) hook: Webhook,
    pub(super) event: Event,
}

/// What asking the pre-hooks came to.
#[derive(Debug, Default)]
pub(super) struct Verdict {
    /// The calls made, for the hooks' logs.
    pub(super) attempts: Vec<DeliveryAttempt>,
    /// The first refusal of a blocking hook, with the event recording it.
    pub(super) refusal: Option<(Forbidden, Event)>,
}

/// The answer a pre-hook gives (decision D-84).
#[derive(Debug, Deserialize)]
struct Answer {
    allow: bool,
    #[serde(default)]
    reason: Option<String>,
}

impl HookGate {
    /// A gate calling pre-hooks through `caller`.
    pub fn new(
        caller: Arc<dyn HookCaller>,
        vault: Arc<dyn SecretVault>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            caller,
            vault,
            clock,
            ids,
            cache: Mutex::default(),
        }
    }

    /// Forgets what is known of `org`'s pre-hooks (they changed on this instance).
    pub fn forget(&self, org: OrgId) {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&org);
    }

    async fn pre_hooks<T: WebhooksTx + ?Sized>(
        &self,
        tx: &mut T,
        org: OrgId,
    ) -> Result<Arc<Vec<Webhook>>, ServiceError> {
        let now = self.clock.now();
        if let Some(cached) = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&org)
            .filter(|cached| now - cached.read_at < CACHE_TTL)
        {
            return Ok(cached.hooks.clone());
        }
        let hooks = Arc::new(tx.pre_hooks(org).await?);
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                org,
                Cached {
                    read_at: now,
                    hooks: hooks.clone(),
                },
            );
        Ok(hooks)
    }

    /// Which enabled pre-hook hears which of `events` (written in `tx`, whose
    /// organization's hooks it reads when they are not known from the last second).
    pub(super) async fn questions<T: WebhooksTx + ?Sized>(
        &self,
        tx: &mut T,
        events: &[Event],
    ) -> Result<Vec<Question>, ServiceError> {
        let mut questions = Vec::new();
        let mut orgs: Vec<OrgId> = events.iter().map(|e| e.org_id).collect();
        orgs.dedup();
        for org in orgs {
            let hooks = self.pre_hooks(tx, org).await?;
            for event in events.iter().filter(|e| e.org_id == org) {
                for hook in hooks
                    .iter()
                    .filter(|h| hearing::asked(h, &event.event_type))
                {
                    questions.push(Question {
                        hook: hook.clone(),
                        event: event.clone(),
                    });
                }
            }
        }
        Ok(questions)
    }

    /// Asks `questions`, all in parallel, each within its hook's timeout, as the
    /// `round`-th round of questions about one change (from 0). Holds nothing of any
    /// transaction: the caller has none open.
    pub(super) async fn ask(
        &self,
        questions: &[Question],
        round: u32,
    ) -> Result<Verdict, ServiceError> {
        let now = self.clock.now();
        let mut calls = Vec::with_capacity(questions.len());
        for Question { hook, event } in questions {
            let body = delivery_body(event, now);
            let id = question_id(hook.id, event.id, round);
            calls.push(hook_call(
                self.vault.as_ref(),
                hook,
                &event.event_type,
                id,
                &body,
            )?);
        }
        let results = join_all(calls.iter().map(|call| self.caller.call(call))).await;
        let mut verdict = Verdict::default();
        for ((Question { hook, event }, call), result) in questions.iter().zip(&calls).zip(&results)
        {
            verdict.attempts.push(
                Attempted {
                    id: DeliveryAttemptId::from_uuid(self.ids.new_id()),
                    hook,
                    call,
                    event_id: Some(event.id),
                    attempt: 1,
                    result,
                    at: now,
                }
                .record(),
            );
            if verdict.refusal.is_none()
                && hook.can_block
                && let Some(Refused { reason }) = refusal(result)
            {
                verdict.refusal = Some(self.blocked(hook, event, reason, now));
            }
        }
        Ok(verdict)
    }

    fn blocked(
        &self,
        hook: &Webhook,
        event: &Event,
        reason: Option<String>,
        now: OffsetDateTime,
    ) -> (Forbidden, Event) {
        let record = Event::record(
            EventId::from_uuid(self.ids.new_id()),
            hook.org_id,
            event.actor_id,
            hook.id.as_uuid(),
            now,
            &AuditEvent::WebhookBlocked(WebhookBlocked {
                name: hook.name.as_str().to_owned(),
                blocked_event_type: event.event_type.clone(),
                reason: reason.clone(),
            }),
        );
        let forbidden = Forbidden::BlockedByHook {
            hook: hook.name.as_str().to_owned(),
            reason: reason.unwrap_or_else(|| NO_REASON.to_owned()),
        };
        (forbidden, record)
    }
}

/// The `X-Service-Delivery` of a question: the event's delivery id in the first round;
/// in a later one (the change was worked out anew, its event ids replayed but its
/// content changed) one of its own, so that a receiver dropping repeated ids does not
/// take a new question for one it answered.
fn question_id(hook: WebhookId, event: EventId, round: u32) -> Uuid {
    let event = event.as_uuid();
    if round == 0 {
        return delivery_id(hook, event);
    }
    delivery_id(hook, Uuid::new_v5(&event, &round.to_be_bytes()))
}

/// A hook's `allow: false`, with its reason if it gave one.
struct Refused {
    reason: Option<String>,
}

/// `Some` when a hook answered 2xx with `{allow: false}`; everything else (an error, a
/// timeout, another status, another body) lets the action through.
fn refusal(result: &CallResult) -> Option<Refused> {
    if !result.status.is_some_and(is_success) {
        return None;
    }
    let answer: Answer = serde_json::from_slice(&result.body).ok()?;
    if answer.allow {
        return None;
    }
    Some(Refused {
        reason: answer.reason.filter(|r| !r.trim().is_empty()),
    })
}
