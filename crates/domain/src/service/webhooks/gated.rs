//! The unit of work every use case runs through: its change passes the pre-hooks
//! (decision D-84), and no transaction is open while they answer.
//!
//! A change runs once, in a transaction, to learn the events it would write. When no
//! enabled pre-hook hears any of them, that run commits, and the change cost nothing
//! more. Otherwise the run is rolled back, releasing what it held (its rows' locks, its
//! pooled connection, on SQLite the one writer), and the hooks are asked with nothing
//! held: a hook that takes its whole timeout stalls only the request that asked it. Then
//! the change runs again from the start and commits only if every question it raises
//! now was answered already (the same hook, about the same event). A change whose
//! inputs moved while the hooks answered writes other events: it is decided anew and
//! its new questions asked, at most [`MAX_ASKS`] times in all.
//!
//! For an unchanged change to write the same events again, ids and timestamps included,
//! its runs replay the first run's clock readings and ids (see [`Clock::now`]): the
//! event committed is the very event the hooks saw.
//!
//! [`Clock::now`]: crate::ports::Clock::now

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use tracing::Instrument;
use tracing::field::Empty;

use super::ServiceError;
use super::gate::{HookGate, Question};
use crate::model::{DeliveryAttempt, Event, WebhookId};
use crate::ports::replay::Replay;
use crate::ports::{UnitOfWork, Work, WorkOutput, transact, work};
use crate::service::Conflict;

/// How many rounds of questions one change may raise: more means other changes kept
/// moving its inputs while the hooks answered, and it is refused (409) rather than
/// decided again without end.
const MAX_ASKS: u32 = 3;

/// Why a run was rolled back although its work succeeded: never seen by a caller.
const TO_ASK: &str = "rolled back to ask the pre-hooks";

/// Questions answered (allowed), by hook and event.
type Answered = Vec<(WebhookId, Event)>;

/// The inner unit of work, with the pre-hooks asked between runs of each change, and the
/// calls made logged after it.
pub struct GatedUnitOfWork {
    inner: Arc<dyn UnitOfWork>,
    gate: Arc<HookGate>,
}

impl std::fmt::Debug for GatedUnitOfWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatedUnitOfWork").finish_non_exhaustive()
    }
}

impl GatedUnitOfWork {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn UnitOfWork>, gate: Arc<HookGate>) -> Self {
        Self { inner, gate }
    }

    /// One run of `work`: it commits when it raises no question not answered yet, and
    /// otherwise leaves its questions in `pending` and rolls back.
    fn run_once(
        &self,
        work: &Work,
        replay: &Arc<Replay>,
        answered: Arc<Answered>,
        pending: &Arc<Mutex<Vec<Question>>>,
    ) -> Work {
        let (work, replay, gate, pending) = (
            work.clone(),
            replay.clone(),
            self.gate.clone(),
            pending.clone(),
        );
        self::work(move |tx| {
            let (work, replay, gate) = (work.clone(), replay.clone(), gate.clone());
            let (answered, pending) = (answered.clone(), pending.clone());
            Box::pin(async move {
                let output = replay.run(|| work(&mut *tx)).await?;
                let events = tx.written_events();
                if events.is_empty() {
                    return Ok(output);
                }
                let unanswered: Vec<Question> = gate
                    .questions(&mut *tx, &events)
                    .await?
                    .into_iter()
                    .filter(|q| {
                        !answered
                            .iter()
                            .any(|(hook, event)| *hook == q.hook.id && *event == q.event)
                    })
                    .collect();
                if unanswered.is_empty() {
                    return Ok(output);
                }
                *pending.lock().unwrap_or_else(PoisonError::into_inner) = unanswered;
                Err(ServiceError::internal(TO_ASK))
            })
        })
    }

    /// Writes the calls made and the refusal's event, whatever became of the change.
    /// Failing to write them does not change its answer.
    async fn log(&self, attempts: Vec<DeliveryAttempt>, blocked: Option<Event>) {
        if attempts.is_empty() {
            return;
        }
        let _ = transact(self.inner.as_ref(), move |tx| {
            Box::pin(async move {
                tx.insert_delivery_attempts(&attempts).await?;
                if let Some(event) = &blocked {
                    tx.append_events(std::slice::from_ref(event)).await?;
                }
                Ok(())
            })
        })
        .await;
    }
}

#[async_trait]
impl UnitOfWork for GatedUnitOfWork {
    /// Runs the change in a `unit_of_work` span (a trace-only span: debug level), which
    /// records how many times it ran, how many rounds of questions it asked, and whether
    /// it committed; each run and each question are spans under it.
    async fn run(&self, work: Work) -> Result<WorkOutput, ServiceError> {
        let span = tracing::debug_span!(
            "unit_of_work",
            muster.uow.runs = Empty,
            muster.uow.asks = Empty,
            muster.uow.committed = Empty,
        );
        let (result, runs, asks) = self.run_gated(work).instrument(span.clone()).await;
        span.record("muster.uow.runs", i64::from(runs));
        span.record("muster.uow.asks", i64::from(asks));
        span.record("muster.uow.committed", result.is_ok());
        result
    }
}

impl GatedUnitOfWork {
    /// The change's outcome, how many times it ran, how many rounds it asked.
    async fn run_gated(&self, work: Work) -> (Result<WorkOutput, ServiceError>, u32, u32) {
        let mut runs: u32 = 0;
        let replay = Arc::new(Replay::default());
        let mut answered = Answered::new();
        let mut attempts = Vec::new();
        let mut blocked = None;
        let mut asks: u32 = 0;
        let result = loop {
            let pending = Arc::default();
            runs += 1;
            let ran = self
                .inner
                .run(self.run_once(&work, &replay, Arc::new(answered.clone()), &pending))
                .await;
            let questions =
                std::mem::take(&mut *pending.lock().unwrap_or_else(PoisonError::into_inner));
            if questions.is_empty() {
                // Committed, or failed on its own account.
                break ran;
            }
            if asks == MAX_ASKS {
                break Err(Conflict::OvertakenWhileAsking.into());
            }
            let verdict = match self.gate.ask(&questions, asks).await {
                Ok(verdict) => verdict,
                Err(err) => break Err(err),
            };
            asks += 1;
            attempts.extend(verdict.attempts);
            if let Some((forbidden, event)) = verdict.refusal {
                blocked = Some(event);
                break Err(forbidden.into());
            }
            answered.extend(questions.into_iter().map(|q| (q.hook.id, q.event)));
        };
        self.log(attempts, blocked).await;
        (result, runs, asks)
    }
}
