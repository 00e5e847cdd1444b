//! The runaway guard: an agent stuck in a loop stops itself. Every change an agent makes
//! is counted, in the change's own transaction, on two windows kept on the agent's row
//! (writes per minute, credits spent per hour; see [`crate::rules::guard`]). A change that
//! takes a window past its organization's threshold is refused (the whole change rolls
//! back) and the agent is suspended in a transaction of its own, with an
//! `agent.suspended` event (warning) that names the breaker and what it measured; post-
//! hooks hear it as they hear any event. Its signed requests then fail (decision D-54)
//! until an HR caller unsuspends it, which empties both windows.
//!
//! [`GuardedUnitOfWork`] wraps the unit of work every use case runs through, so no use
//! case has to remember to count. The count is one `UPDATE` of the agent's row per
//! change, and none at all while both thresholds in force are off.

mod settings;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

pub use settings::{GuardPatch, GuardService, GuardView};

use super::ServiceError;
use crate::model::{
    AgentId, AgentStatus, AgentStatusChanged, AuditEvent, BreakerTripped, Breakers, Event, EventId,
    OrgId, event_types,
};
use crate::ports::{
    AgentChanges, Clock, GuardTx, IdGenerator, Lock, UnitOfWork, WebhooksTx, Work, transact,
};
use crate::rules::guard::{Trip, addition, check};

/// How long an organization's thresholds are reused before they are read again: the
/// delay after which a change made on another instance applies.
const CACHE_TTL: Duration = Duration::seconds(1);

/// A change refused by the runaway guard: who, and which breaker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{trip}")]
pub struct Runaway {
    /// The agent's organization.
    pub org_id: OrgId,
    /// The agent.
    pub agent_id: AgentId,
    /// What tripped.
    pub trip: Trip,
}

/// Counts agents' changes and suspends those that run away.
pub struct RunawayGuard {
    defaults: Breakers,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
    cache: Mutex<HashMap<OrgId, Cached>>,
    changes: Option<Arc<dyn AgentChanges>>,
}

impl std::fmt::Debug for RunawayGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunawayGuard")
            .field("defaults", &self.defaults)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Copy)]
struct Cached {
    read_at: OffsetDateTime,
    breakers: Breakers,
}

impl RunawayGuard {
    /// A guard applying `defaults` to every organization without thresholds of its own.
    pub fn new(defaults: Breakers, clock: Arc<dyn Clock>, ids: Arc<dyn IdGenerator>) -> Self {
        Self {
            defaults,
            clock,
            ids,
            cache: Mutex::default(),
            changes: None,
        }
    }

    /// Tells `changes` of every agent the guard suspends.
    #[must_use]
    pub fn with_changes(mut self, changes: Arc<dyn AgentChanges>) -> Self {
        self.changes = Some(changes);
        self
    }

    /// The deployment's defaults.
    pub const fn defaults(&self) -> Breakers {
        self.defaults
    }

    /// Forgets what is known of `org`'s thresholds (they changed on this instance).
    pub fn forget(&self, org: OrgId) {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&org);
    }

    /// The thresholds in force for `org`, read through `tx` at most once per
    /// [`CACHE_TTL`].
    async fn in_force<T: GuardTx + ?Sized>(
        &self,
        tx: &mut T,
        org: OrgId,
        now: OffsetDateTime,
    ) -> Result<Breakers, ServiceError> {
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&org)
            .copied()
            .filter(|c| now - c.read_at < CACHE_TTL);
        if let Some(cached) = cached {
            return Ok(cached.breakers);
        }
        let breakers = tx.guard_settings(org).await?.in_force(self.defaults);
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                org,
                Cached {
                    read_at: now,
                    breakers,
                },
            );
        Ok(breakers)
    }

    /// Counts the change `tx` holds for each actor of its events; the first breaker it
    /// trips refuses it.
    async fn count_change<T: GuardTx + WebhooksTx + ?Sized>(
        &self,
        tx: &mut T,
    ) -> Result<(), ServiceError> {
        let events = tx.written_events();
        let Some(org) = events.first().map(|e| e.org_id) else {
            return Ok(());
        };
        let now = self.clock.now();
        let breakers = self.in_force(tx, org, now).await?;
        if breakers.all_off() {
            return Ok(());
        }
        for (actor, credits) in actors_and_spending(&events) {
            let Some(tally) = tx.tally_agent(org, actor, &addition(now, credits)).await? else {
                continue;
            };
            if let Some(trip) = check(&tally, breakers, now) {
                return Err(ServiceError::Runaway(Runaway {
                    org_id: org,
                    agent_id: AgentId::from_uuid(actor),
                    trip,
                }));
            }
        }
        Ok(())
    }

    /// Suspends the agent `runaway` names, if it is still active, with its event.
    async fn suspend(&self, uow: &dyn UnitOfWork, runaway: &Runaway) -> Result<(), ServiceError> {
        let Runaway {
            org_id,
            agent_id,
            trip,
        } = runaway.clone();
        let now = self.clock.now();
        let event_id = EventId::from_uuid(self.ids.new_id());
        let suspended = transact(uow, move |tx| {
            Box::pin(async move {
                let Some(mut agent) = tx.agent(org_id, agent_id, Lock::Update).await? else {
                    return Ok(false);
                };
                if agent.status != AgentStatus::Active {
                    return Ok(false);
                }
                agent.status = AgentStatus::Suspended;
                tx.update_agent(&agent, now).await?;
                let suspended = AuditEvent::AgentSuspended(AgentStatusChanged {
                    agent_id: agent.handle.as_str().to_owned(),
                    reason: Some(trip.to_string()),
                    breaker: Some(tripped(&trip)),
                });
                let event =
                    Event::record(event_id, org_id, None, agent_id.as_uuid(), now, &suspended);
                tx.append_events(&[event]).await?;
                Ok(true)
            })
        })
        .await?;
        if suspended && let Some(changes) = &self.changes {
            changes.changed(agent_id);
        }
        Ok(())
    }
}

/// The payload's account of `trip`.
fn tripped(trip: &Trip) -> BreakerTripped {
    BreakerTripped {
        kind: trip.breaker.as_str(),
        measured: trip.measured,
        limit: trip.limit,
        per: trip.breaker.per(),
        within_seconds: trip.elapsed_secs,
    }
}

/// Each actor of `events` once, in order of first appearance, with the credits it spent
/// or sent in them.
fn actors_and_spending(events: &[Event]) -> Vec<(Uuid, i64)> {
    let mut actors: Vec<(Uuid, i64)> = Vec::new();
    for event in events {
        let Some(actor) = event.actor_id else {
            continue;
        };
        let spent = match event.event_type.as_str() {
            // A reward escrowed by an agent leaves its balance like a spend (D-101).
            event_types::CREDITS_SPENT
            | event_types::CREDITS_TRANSFERRED
            | event_types::CREDITS_ESCROWED => event
                .payload
                .get("amount")
                .and_then(serde_json::Value::as_i64)
                .unwrap_or(0),
            _ => 0,
        };
        match actors.iter_mut().find(|(a, _)| *a == actor) {
            Some((_, credits)) => *credits = credits.saturating_add(spent),
            None => actors.push((actor, spent)),
        }
    }
    actors
}

/// The unit of work every use case runs through: the inner one, with each change counted
/// by the runaway guard before it commits. A refused change suspends its agent through
/// `direct` (a unit of work without pre-hooks: no hook may veto the guard).
pub struct GuardedUnitOfWork {
    inner: Arc<dyn UnitOfWork>,
    direct: Arc<dyn UnitOfWork>,
    guard: Arc<RunawayGuard>,
}

impl std::fmt::Debug for GuardedUnitOfWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardedUnitOfWork").finish_non_exhaustive()
    }
}

impl GuardedUnitOfWork {
    /// Wraps `inner`; suspensions run through `direct`.
    pub fn new(
        inner: Arc<dyn UnitOfWork>,
        direct: Arc<dyn UnitOfWork>,
        guard: Arc<RunawayGuard>,
    ) -> Self {
        Self {
            inner,
            direct,
            guard,
        }
    }
}

#[async_trait]
impl UnitOfWork for GuardedUnitOfWork {
    async fn run(&self, work: Work) -> Result<crate::ports::WorkOutput, ServiceError> {
        let guard = self.guard.clone();
        let counted = crate::ports::work(move |tx| {
            let (work, guard) = (work.clone(), guard.clone());
            Box::pin(async move {
                let output = work(&mut *tx).await?;
                guard.count_change(&mut *tx).await?;
                Ok(output)
            })
        });
        match self.inner.run(counted).await {
            Err(ServiceError::Runaway(runaway)) => {
                // A failed suspension answers its own error: the next change of the agent
                // trips the breaker again and retries it.
                self.guard.suspend(self.direct.as_ref(), &runaway).await?;
                Err(ServiceError::Runaway(runaway))
            }
            other => other,
        }
    }
}
