//! Delivering post-hooks from the outbox (decision D-83): a worker leases the hooks that
//! have deliveries due, then drains each one's deliveries in event order, one call at a
//! time, recording every attempt, rescheduling failures and switching off a hook that
//! failed ten times in a row.

use std::sync::Arc;

use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::ServiceError;
use super::calls::{Attempted, check_handover, hook_call};
use crate::model::{
    AuditEvent, DeliveryAttempt, DeliveryAttemptId, Event, EventId, OrgId, TaskId, Webhook,
    WebhookDisabled, WebhookId,
};
use crate::ports::{
    CallResult, Clock, DeliveryQueue, HandoverTarget, HookCaller, IdGenerator, Lock, MessageSigner,
    PendingDelivery, PushRenderer, SecretVault, UnitOfWork, WebhookRepository, transact,
};
use crate::rules::delivery::{
    DISABLE_AFTER_FAILURES, RetrySchedule, after_failure, delivery_body, delivery_id, is_success,
};
use crate::rules::remote::push_token;

/// How long a lease outlives the call it covers, so that a slow commit does not let
/// another instance in.
const LEASE_MARGIN: Duration = Duration::seconds(10);

/// How much longer than the next call a lease is extended, so that a run of fast calls
/// does not extend it before each one.
const LEASE_RENEWAL: Duration = Duration::seconds(30);

/// What the log says of a hand-over that was not sent.
const NOT_HANDED_OVER: &str =
    "not sent: the task is closed or no longer assigned to the remote agent";

/// How many due deliveries of one hook are read, called and recorded at a time.
const BATCH: u32 = 50;

/// The longest a run of calls goes unrecorded.
const RECORD_EVERY: Duration = Duration::seconds(1);

/// What one drain of a hook did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Deliveries answered 2xx.
    pub delivered: u32,
    /// Attempts that failed.
    pub failed: u32,
    /// Whether the hook was switched off on the way.
    pub disabled: bool,
}

/// The delivery side of the outbox, for a worker to drive.
#[derive(Clone)]
pub struct DeliveryService {
    hooks: Arc<dyn WebhookRepository>,
    queue: Arc<dyn DeliveryQueue>,
    uow: Arc<dyn UnitOfWork>,
    vault: Arc<dyn SecretVault>,
    caller: Arc<dyn HookCaller>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    schedule: RetrySchedule,
    holder: Uuid,
    push: Option<Arc<dyn PushRenderer>>,
    signer: Option<Arc<dyn MessageSigner>>,
}

impl std::fmt::Debug for DeliveryService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeliveryService")
            .field("holder", &self.holder)
            .finish_non_exhaustive()
    }
}

impl DeliveryService {
    /// Wires the worker's use cases. `uow` must be the plain unit of work (recording an
    /// attempt is not an action a pre-hook is asked about). `holder` names this worker
    /// in the leases it takes: one per process.
    pub fn new(
        hooks: Arc<dyn WebhookRepository>,
        queue: Arc<dyn DeliveryQueue>,
        uow: Arc<dyn UnitOfWork>,
        vault: Arc<dyn SecretVault>,
        caller: Arc<dyn HookCaller>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        let holder = ids.new_id();
        Self {
            hooks,
            queue,
            uow,
            vault,
            caller,
            clock,
            ids,
            schedule: RetrySchedule::default(),
            holder,
            push: None,
            signer: None,
        }
    }

    /// Writes the bodies of A2A push notifications with `renderer`. Without one (or
    /// when it fails), a push config's deliveries fail and are retried, rather than go
    /// out in the wrong shape.
    #[must_use]
    pub fn with_push(mut self, renderer: Arc<dyn PushRenderer>) -> Self {
        self.push = Some(renderer);
        self
    }

    /// Hands tasks to remote A2A agents, with push tokens made by `signer` (the bodies
    /// are written by the [`with_push`](Self::with_push) renderer). Without it, a remote
    /// agent's deliveries fail and are retried.
    #[must_use]
    pub fn with_remote(mut self, signer: Arc<dyn MessageSigner>) -> Self {
        self.signer = Some(signer);
        self
    }

    /// Another retry schedule than decision D-83's (for tests and drills).
    #[must_use]
    pub fn with_schedule(mut self, schedule: RetrySchedule) -> Self {
        self.schedule = schedule;
        self
    }

    /// Leases at most `max_hooks` hooks with deliveries due and no other worker on them.
    pub async fn lease(&self, max_hooks: u32) -> Result<Vec<(OrgId, WebhookId)>, ServiceError> {
        if max_hooks == 0 {
            return Ok(Vec::new());
        }
        let now = self.clock.now();
        // Long enough for the slowest first call; extended before each later one.
        let until = now + Duration::milliseconds(30_000) + LEASE_MARGIN;
        Ok(self
            .queue
            .lease_due_hooks(now, until, self.holder, max_hooks)
            .await?)
    }

    /// Gives up every lease this worker holds, so that another instance (or this one,
    /// restarted) resumes its hooks at once rather than when the leases run out.
    /// Tried twice: a worker stopped mid-query may have left a broken connection in
    /// the pool for the first try to draw.
    pub async fn release_all(&self) -> Result<u64, ServiceError> {
        match self.queue.release_all(self.holder).await {
            Ok(released) => Ok(released),
            Err(_) => Ok(self.queue.release_all(self.holder).await?),
        }
    }

    /// Delivers the leased hook's due deliveries in event order, one call at a time, then
    /// gives the lease up. Stops early when the hook is switched off, deleted, or the
    /// lease is lost.
    pub async fn drain(&self, org: OrgId, hook: WebhookId) -> Result<DrainReport, ServiceError> {
        let report = self.drain_leased(org, hook).await;
        let released = self.queue.release(hook, self.holder).await;
        let report = report?;
        released?;
        Ok(report)
    }

    async fn drain_leased(&self, org: OrgId, id: WebhookId) -> Result<DrainReport, ServiceError> {
        let mut report = DrainReport::default();
        let mut lease_until = OffsetDateTime::UNIX_EPOCH;
        loop {
            let due = self.queue.due(id, self.clock.now(), BATCH).await?;
            if due.is_empty() {
                return Ok(report);
            }
            // Read once a run: recording the run re-reads the hook under lock and stops
            // the drain when it was switched off or deleted meanwhile.
            let Some(hook) = self.hooks.get(org, id).await?.filter(|h| h.enabled) else {
                return Ok(report);
            };
            let run_started = self.clock.now();
            let mut failures = hook.consecutive_failures;
            let mut attempts = Vec::new();
            for pending in due {
                let needed = self.clock.now()
                    + Duration::milliseconds(hook.timeout.ms().into())
                    + LEASE_MARGIN;
                if needed > lease_until {
                    lease_until = needed + LEASE_RENEWAL;
                    if !self
                        .queue
                        .extend_lease(id, self.holder, lease_until)
                        .await?
                    {
                        break;
                    }
                }
                let attempt = self.attempt(&hook, pending).await?;
                failures = if attempt.delivered() { 0 } else { failures + 1 };
                attempts.push(attempt);
                // Record before the failure that may switch the hook off is followed by
                // more calls, and at least once a second.
                if failures >= DISABLE_AFTER_FAILURES
                    || self.clock.now() - run_started >= RECORD_EVERY
                {
                    break;
                }
            }
            if attempts.is_empty() {
                return Ok(report);
            }
            let recorded = self.record(&hook, attempts).await?;
            report.delivered += recorded.delivered;
            report.failed += recorded.failed;
            report.disabled |= recorded.disabled;
            if recorded.stop {
                return Ok(report);
            }
        }
    }

    /// Makes one call of `hook` for `pending`: what to record, and what comes next.
    async fn attempt(
        &self,
        hook: &Webhook,
        pending: PendingDelivery,
    ) -> Result<Attempt, ServiceError> {
        let (event, trace) = (pending.event, pending.trace);
        // A push whose body cannot be written is a failed attempt: recorded, retried on
        // the schedule, counted toward switching the config off.
        let body = self.body(hook, &event).await;
        let skipped = matches!(body, Ok(None));
        let number = pending.attempts.saturating_add(1);
        let mut call = hook_call(
            self.vault.as_ref(),
            hook,
            &event.event_type,
            delivery_id(hook.id, event.id.as_uuid()),
            body.as_ref()
                .ok()
                .and_then(Option::as_ref)
                .unwrap_or(&serde_json::Value::Null),
        )?;
        call.attempt = number;
        call.trace = trace;
        let mut result = match body {
            Ok(Some(_)) => self.caller.call(&call).await,
            // Nothing to send: logged as such, never counted as a failure.
            Ok(None) => CallResult::default(),
            Err(error) => CallResult {
                error: Some(error),
                ..CallResult::default()
            },
        };
        if hook.remote.is_some() && !skipped {
            check_handover(&mut result);
        }
        let now = self.clock.now();
        let logged = if skipped {
            CallResult {
                error: Some(NOT_HANDED_OVER.to_owned()),
                ..CallResult::default()
            }
        } else {
            result.clone()
        };
        let record = Attempted {
            id: DeliveryAttemptId::from_uuid(self.ids.new_id()),
            hook,
            call: &call,
            event_id: Some(event.id),
            attempt: number,
            result: &logged,
            at: now,
        }
        .record();
        Ok(Attempt {
            next_at: self.schedule.next_attempt(number, now),
            record,
            result,
            skipped,
        })
    }

    /// The body of a delivery of `event` to `hook`: the contract's, an A2A push's, or a
    /// hand-over to a remote agent (`None` when that is no longer to be sent).
    async fn body(
        &self,
        hook: &Webhook,
        event: &Event,
    ) -> Result<Option<serde_json::Value>, String> {
        if hook.remote.is_some() {
            return self.handover(hook, event).await;
        }
        let Some(push) = &hook.push else {
            return Ok(Some(delivery_body(event, self.clock.now())));
        };
        let renderer = self
            .push
            .as_ref()
            .ok_or_else(|| "this instance cannot write A2A pushes".to_owned())?;
        renderer
            .render(hook.org_id, push.task_id, event)
            .await
            .map(Some)
            .map_err(|err| format!("cannot write the push: {err}"))
    }

    /// The `SendMessage` that hands the task of `event` to the remote agent of `hook`,
    /// with the push config (URL and token) its updates come back through; `None` when
    /// the task, read now, is closed or no longer the agent's (a retry hours later).
    async fn handover(
        &self,
        hook: &Webhook,
        event: &Event,
    ) -> Result<Option<serde_json::Value>, String> {
        let (Some(remote), Some(renderer), Some(signer)) = (&hook.remote, &self.push, &self.signer)
        else {
            return Err("this instance cannot hand tasks to remote agents".to_owned());
        };
        let secret = hook
            .sealed_secret
            .as_deref()
            .ok_or_else(|| "the remote agent's channel has no secret".to_owned())
            .and_then(|sealed| {
                self.vault
                    .open(Webhook::SECRET_PURPOSE, hook.id.as_uuid(), sealed)
                    .map_err(|err| err.to_string())
            })?;
        let task = TaskId::from_uuid(event.entity_id);
        let token = push_token(signer.as_ref(), &secret, remote.agent_id, task);
        let request_id = delivery_id(hook.id, event.id.as_uuid());
        let target = HandoverTarget {
            agent: remote.agent_id,
            request_id,
            push_url: remote.push_url(task),
            token,
        };
        renderer
            .render_handover(hook.org_id, task, &target)
            .await
            .map_err(|err| format!("cannot write the hand-over: {err}"))
    }

    /// Records a run of calls of one hook in one transaction: the log, the outbox rows
    /// (delivered or out of attempts: gone; else rescheduled), and the hook's count of
    /// failures, which may switch it off with `webhook.disabled`.
    async fn record(
        &self,
        hook: &Webhook,
        attempts: Vec<Attempt>,
    ) -> Result<Recorded, ServiceError> {
        let now = self.clock.now();
        let disabled_event = EventId::from_uuid(self.ids.new_id());
        let (org, id) = (hook.org_id, hook.id);
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let log: Vec<DeliveryAttempt> = attempts.iter().map(|a| a.record.clone()).collect();
                tx.insert_delivery_attempts(&log).await?;
                let mut finished = Vec::new();
                for attempt in &attempts {
                    let Some(event) = attempt.record.event_id else {
                        continue;
                    };
                    match (attempt.delivered(), attempt.next_at) {
                        (false, Some(next_at)) => {
                            tx.reschedule_delivery(id, event, attempt.record.attempt, next_at)
                                .await?;
                        }
                        _ => finished.push(event),
                    }
                }
                tx.finish_deliveries(id, &finished).await?;
                let delivered = attempts.iter().filter(|a| a.delivered()).count();
                let mut recorded = Recorded {
                    delivered: u32::try_from(delivered).unwrap_or(u32::MAX),
                    failed: u32::try_from(attempts.len() - delivered).unwrap_or(u32::MAX),
                    disabled: false,
                    stop: true,
                };
                let Some(mut hook) = tx.webhook(org, id, Lock::Update).await? else {
                    return Ok(recorded);
                };
                for attempt in attempts.iter().filter(|a| !a.skipped) {
                    recorded.disabled |= count(&mut hook, &attempt.result, now);
                }
                tx.update_webhook_health(&hook).await?;
                if recorded.disabled {
                    tx.append_events(&[disabled_record(disabled_event, &hook, now)])
                        .await?;
                }
                recorded.stop = !hook.enabled;
                Ok(recorded)
            })
        })
        .await
    }
}

/// One call made, not yet recorded.
#[derive(Debug, Clone)]
struct Attempt {
    record: DeliveryAttempt,
    result: CallResult,
    /// Nothing was sent: the hand-over was no longer due.
    skipped: bool,
    /// When to try again if it failed; `None` when it was the last attempt.
    next_at: Option<OffsetDateTime>,
}

impl Attempt {
    fn delivered(&self) -> bool {
        self.skipped || succeeded(&self.result)
    }
}

/// A 2xx with nothing found wrong in the answer.
fn succeeded(result: &CallResult) -> bool {
    result.status.is_some_and(is_success) && result.error.is_none()
}

/// What recording a run of calls decided.
#[derive(Debug)]
struct Recorded {
    delivered: u32,
    failed: u32,
    /// The run switched the hook off.
    disabled: bool,
    /// The hook is off or gone: stop draining it.
    stop: bool,
}

/// Counts the call's result on the hook: a success resets the failures, a failure adds
/// one and may switch the hook off. Answers whether it did.
fn count(hook: &mut Webhook, result: &CallResult, now: OffsetDateTime) -> bool {
    if succeeded(result) {
        hook.consecutive_failures = 0;
        return false;
    }
    let (failures, disable) = after_failure(hook.consecutive_failures);
    hook.consecutive_failures = failures;
    hook.last_error = Some(
        result
            .error
            .clone()
            .unwrap_or_else(|| "delivery failed".to_owned()),
    );
    hook.updated_at = now;
    // A remote agent's channel is never switched off: it is not one of the webhooks an
    // admin can switch back on, and its agent would take tasks it never hears of. Each
    // hand-over still gives up after its last attempt.
    let switched_off = disable && hook.enabled && hook.remote.is_none();
    if switched_off {
        hook.enabled = false;
    }
    switched_off
}

fn disabled_record(id: EventId, hook: &Webhook, now: OffsetDateTime) -> Event {
    Event::record(
        id,
        hook.org_id,
        None,
        hook.id.as_uuid(),
        now,
        &AuditEvent::WebhookDisabled(WebhookDisabled {
            name: hook.name.as_str().to_owned(),
            consecutive_failures: hook.consecutive_failures,
            last_error: hook.last_error.clone(),
        }),
    )
}
