//! Reading and changing an organization's runaway-guard thresholds.

use std::sync::Arc;

use super::RunawayGuard;
use crate::ValidationError;
use crate::model::{
    Actor, AuditEvent, Breakers, Event, EventId, GuardSettings, GuardUpdated, Threshold,
};
use crate::policy;
use crate::ports::{Clock, IdGenerator, UnitOfWork, transact};
use crate::service::ServiceError;

/// An organization's thresholds: its own, the deployment's defaults, and those in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardView {
    /// The organization's own (`None` follows the default).
    pub own: GuardSettings,
    /// The deployment's defaults.
    pub defaults: Breakers,
    /// What applies: its own where set, else the default.
    pub in_force: Breakers,
}

/// A change of thresholds: `None` leaves one as it is, `Some(None)` returns it to the
/// default, `Some(Some(t))` sets it (`0` switches the breaker off).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GuardPatch {
    /// Writes per minute.
    pub actions_per_minute: Option<Option<Threshold>>,
    /// Credits per hour.
    pub credits_per_hour: Option<Option<Threshold>>,
}

/// Reads and changes the thresholds of the caller's organization.
#[derive(Clone)]
pub struct GuardService {
    uow: Arc<dyn UnitOfWork>,
    guard: Arc<RunawayGuard>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for GuardService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardService").finish_non_exhaustive()
    }
}

impl GuardService {
    /// A service storing through `uow`, whose changes `guard` hears of at once.
    pub fn new(
        uow: Arc<dyn UnitOfWork>,
        guard: Arc<RunawayGuard>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            uow,
            guard,
            clock,
            ids,
        }
    }

    /// The thresholds of the caller's organization; anyone in it may read them.
    pub async fn settings(&self, actor: &Actor) -> Result<GuardView, ServiceError> {
        let org = actor.org_id;
        let own = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move { Ok(tx.guard_settings(org).await?) })
        })
        .await?;
        Ok(self.view(own))
    }

    /// Changes the thresholds of the caller's organization (admin users, founder and
    /// admin agents) with a `guard.updated` event; applies on this instance at once and
    /// on the others within a second.
    pub async fn update(
        &self,
        actor: &Actor,
        patch: GuardPatch,
    ) -> Result<GuardView, ServiceError> {
        policy::may_set_guard(actor)?;
        if patch == GuardPatch::default() {
            return Err(ValidationError::new(
                "at least one of actionsPerMinute and creditsPerHour must be given",
            )
            .into());
        }
        let org = actor.org_id;
        let now = self.clock.now();
        let event_id = EventId::from_uuid(self.ids.new_id());
        let actor_id = actor.actor_id();
        let own = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut own = tx.guard_settings(org).await?;
                if let Some(actions) = patch.actions_per_minute {
                    own.actions_per_minute = actions;
                }
                if let Some(credits) = patch.credits_per_hour {
                    own.credits_per_hour = credits;
                }
                tx.set_guard_settings(org, &own).await?;
                let updated = AuditEvent::GuardUpdated(GuardUpdated {
                    actions_per_minute: own.actions_per_minute.map(Threshold::get),
                    credits_per_hour: own.credits_per_hour.map(Threshold::get),
                });
                let event = Event::record(event_id, org, actor_id, org.as_uuid(), now, &updated);
                tx.append_events(&[event]).await?;
                Ok(own)
            })
        })
        .await?;
        self.guard.forget(org);
        Ok(self.view(own))
    }

    fn view(&self, own: GuardSettings) -> GuardView {
        let defaults = self.guard.defaults();
        GuardView {
            own,
            defaults,
            in_force: own.in_force(defaults),
        }
    }
}
