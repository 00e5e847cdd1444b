//! Registering and administering agents: register, edit, revoke, suspend, unsuspend,
//! demote (decisions D-18, D-50, D-54, D-64).

use serde_json::Map;

use super::{AgentService, AgentView, locked_agent, unique_capabilities};
use crate::ValidationError;
use crate::model::{
    Actor, Agent, AgentCredentials, AgentDemoted, AgentHandle, AgentId, AgentMode, AgentRegistered,
    AgentRole, AgentSecret, AgentStatus, AgentStatusChanged, AgentUpdated, AuditEvent,
    CapabilityName, FeePct, Level, Metadata, Proficiency, Reason, ReputationEventId,
    ReputationKind,
};
use crate::policy;
use crate::ports::{AgentsTx, RepositoryError, UniqueKey, WebhooksTx, transact};
use crate::service::scoring::rescore;
use crate::service::{Conflict, ServiceError};

/// An agent to register, validated field by field (decision D-50 for the defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct NewAgent {
    /// Its `agentId`.
    pub handle: AgentHandle,
    /// Display name, trimmed, 1..=255 characters.
    pub name: String,
    /// Level (default 1).
    pub level: Option<Level>,
    /// Model name.
    pub model: Option<String>,
    /// Role (default worker).
    pub role: AgentRole,
    /// Mode (default worker).
    pub mode: AgentMode,
    /// Fee taken from children's rewards.
    pub management_fee_pct: FeePct,
    /// Period limit; `None` for no limit.
    pub budget_period_limit: Option<i64>,
    /// Capabilities, normalized, without repeats.
    pub capabilities: Vec<(CapabilityName, Proficiency)>,
    /// Arbitrary JSON object.
    pub metadata: Metadata,
}

impl NewAgent {
    /// Agent `handle` named `name` (as [`Agent::check_name`] accepts it), every other
    /// field at its default (decision D-50): level 1, no model, a worker in worker mode,
    /// no management fee, no budget limit, no capabilities, empty metadata.
    pub fn new(handle: AgentHandle, name: String) -> Self {
        Self {
            handle,
            name,
            level: None,
            model: None,
            role: AgentRole::Worker,
            mode: AgentMode::Worker,
            management_fee_pct: FeePct::default(),
            budget_period_limit: None,
            capabilities: Vec::new(),
            metadata: Metadata::default(),
        }
    }
}

/// A new agent with its capabilities and its signing secret, shown this once.
#[derive(Debug, Clone, PartialEq)]
pub struct Registered {
    /// The agent and its capabilities.
    pub view: AgentView,
    /// The signing secret: 64 lowercase hex characters, never shown again.
    pub secret: AgentSecret,
}

/// The editable fields of `PATCH /agents/:id`: `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentPatch {
    /// New name.
    pub name: Option<String>,
    /// New level.
    pub level: Option<Level>,
    /// New model, or cleared.
    pub model: Option<Option<String>>,
    /// New mode.
    pub mode: Option<AgentMode>,
    /// New fee.
    pub management_fee_pct: Option<FeePct>,
    /// New period limit, or none.
    pub budget_period_limit: Option<Option<i64>>,
    /// New metadata, replacing the old.
    pub metadata: Option<Metadata>,
}

impl AgentPatch {
    /// Whether the patch names no field at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Checks a period limit: an integer of at least 0.
pub fn budget_limit(value: i64) -> Result<i64, ValidationError> {
    if value < 0 {
        return Err(ValidationError::new("budgetPeriodLimit must be at least 0"));
    }
    Ok(value)
}

impl AgentService {
    /// Registers an active agent (decisions D-18, D-50) with its capabilities and an
    /// `agent.registered` event, and answers its secret once. HR, founder and admin
    /// agents and admin users may; founder and admin agents are made only by founder or
    /// admin agents and admin users. A taken `agentId` is 409.
    pub async fn register(&self, actor: &Actor, new: NewAgent) -> Result<Registered, ServiceError> {
        let (agent, capabilities, event) = self.new_agent(actor, new)?;
        self.store_new(agent, capabilities, event).await
    }

    /// The agent `new` describes, its capabilities and its `agent.registered` event, ready
    /// to store, once the policy allows `actor` to register it.
    pub(crate) fn new_agent(
        &self,
        actor: &Actor,
        new: NewAgent,
    ) -> Result<(Agent, Vec<crate::model::Capability>, crate::model::Event), ServiceError> {
        policy::may_grant_agent_role(actor, new.role)?;
        unique_capabilities(&new.capabilities)?;
        new.budget_period_limit.map(budget_limit).transpose()?;
        let now = self.clock.now();
        let mut agent = Agent::new(
            AgentId::from_uuid(self.ids.new_id()),
            actor.org_id,
            new.handle,
            new.name,
            now,
            self.period.start_of(now),
        );
        agent.level = new.level.unwrap_or(agent.level);
        agent.model = new.model;
        agent.role = new.role;
        agent.mode = new.mode;
        agent.management_fee_pct = new.management_fee_pct;
        agent.budget_period_limit = new.budget_period_limit;
        agent.metadata.clone_from(new.metadata.as_map());
        let capabilities = self.capability_rows(&agent, &new.capabilities, now);
        let registered = AuditEvent::AgentRegistered(AgentRegistered {
            agent_id: agent.handle.as_str().to_owned(),
            role: agent.role,
            level: agent.level,
        });
        let event = self.event(actor, agent.id, now, &registered);
        Ok((agent, capabilities, event))
    }

    /// Seals a fresh secret for `agent` and stores both with its capabilities and its
    /// event in one transaction.
    pub(super) async fn store_new(
        &self,
        agent: Agent,
        capabilities: Vec<crate::model::Capability>,
        event: crate::model::Event,
    ) -> Result<Registered, ServiceError> {
        let (credentials, secret) = self.with_secret(agent)?;
        let view = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move { insert_new(tx, credentials, capabilities, event).await })
        })
        .await?;
        Ok(Registered { view, secret })
    }

    /// `agent` with a fresh signing secret, sealed; the secret in the clear.
    pub(crate) fn with_secret(
        &self,
        agent: Agent,
    ) -> Result<(AgentCredentials, AgentSecret), ServiceError> {
        let secret = self.sealer.generate().map_err(ServiceError::internal)?;
        let encrypted_secret = self
            .sealer
            .seal(agent.id, &secret)
            .map_err(ServiceError::internal)?;
        Ok((
            AgentCredentials {
                agent,
                encrypted_secret,
            },
            secret,
        ))
    }

    /// Edits an agent (HR, decision D-18) and writes `agent.updated` naming the changed
    /// fields. Nobody changes their own level. `metadata` replaces the old.
    pub async fn update(
        &self,
        actor: &Actor,
        id: AgentId,
        patch: AgentPatch,
    ) -> Result<AgentView, ServiceError> {
        if patch.level.is_some() {
            policy::may_change_rank(actor, id)?;
        } else {
            policy::may_administer_agents(actor)?;
        }
        if patch.is_empty() {
            return Err(ValidationError::new("at least one field must be given").into());
        }
        patch
            .budget_period_limit
            .flatten()
            .map(budget_limit)
            .transpose()?;
        let service = self.clone();
        let actor = actor.clone();
        let agent = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked_agent(tx, actor.org_id, id).await?;
                let mut agent = current.clone();
                let fields = apply_patch(&mut agent, patch);
                if fields.is_empty() {
                    return Ok(current);
                }
                let now = service.clock.now();
                tx.update_agent(&agent, now).await?;
                let updated = AuditEvent::AgentUpdated(AgentUpdated { fields });
                tx.append_events(&[service.event(&actor, id, now, &updated)])
                    .await?;
                Ok(agent)
            })
        })
        .await?;
        self.changed(id);
        let capabilities = self.agents.capabilities(agent.org_id, id).await?;
        Ok(AgentView {
            agent: self.current(agent, self.clock.now()),
            capabilities,
        })
    }

    /// Revokes an agent for good (decision D-54): never oneself (403), not twice (409).
    pub async fn revoke(&self, actor: &Actor, id: AgentId) -> Result<Agent, ServiceError> {
        policy::may_change_status(actor, id)?;
        self.set_status(actor, id, StatusMove::Revoke).await
    }

    /// Suspends an active agent (decision D-54); it can no longer sign requests.
    pub async fn suspend(&self, actor: &Actor, id: AgentId) -> Result<Agent, ServiceError> {
        policy::may_change_status(actor, id)?;
        self.set_status(actor, id, StatusMove::Suspend).await
    }

    /// Makes a suspended agent active again (decision D-54).
    pub async fn unsuspend(&self, actor: &Actor, id: AgentId) -> Result<Agent, ServiceError> {
        policy::may_change_status(actor, id)?;
        self.set_status(actor, id, StatusMove::Unsuspend).await
    }

    /// Moves the agent's status as `how` says, with its event, in one transaction.
    pub(super) async fn set_status(
        &self,
        actor: &Actor,
        id: AgentId,
        how: StatusMove,
    ) -> Result<Agent, ServiceError> {
        let service = self.clone();
        let actor = actor.clone();
        let agent = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut agent = locked_agent(tx, actor.org_id, id).await?;
                if let StatusMove::Activate = how {
                    policy::may_activate(&actor, &agent)?;
                }
                agent.status = how.apply(agent.status)?;
                let now = service.clock.now();
                tx.update_agent(&agent, now).await?;
                if let StatusMove::Unsuspend = how {
                    // A fresh start: the runaway guard's windows would trip it again.
                    tx.reset_tally(actor.org_id, id).await?;
                }
                let changed = AgentStatusChanged {
                    agent_id: agent.handle.as_str().to_owned(),
                    reason: None,
                    breaker: None,
                };
                tx.append_events(&[service.event(&actor, id, now, &how.event(changed))])
                    .await?;
                Ok(agent)
            })
        })
        .await?;
        self.changed(id);
        Ok(agent)
    }

    /// Demotes an agent one level (decision D-64) with a `level_down` reputation event:
    /// a founder or admin agent of level 9 or more strictly above it, or an admin user;
    /// an agent at level 1 is 409.
    pub async fn demote(
        &self,
        actor: &Actor,
        id: AgentId,
        reason: Option<Reason>,
    ) -> Result<Agent, ServiceError> {
        crate::policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        let agent = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut agent = locked_agent(tx, actor.org_id, id).await?;
                policy::may_demote(&actor, &agent)?;
                let from = agent.level;
                let to = from.below().ok_or(Conflict::LowestLevel)?;
                let now = service.clock.now();
                agent.level = to;
                // A blank reason says nothing: the event says what happened instead.
                let text = reason
                    .map(|r| r.as_str().trim().to_owned())
                    .filter(|r| !r.is_empty())
                    .unwrap_or_else(|| {
                        format!("demoted from level {} to {}", from.get(), to.get())
                    });
                let kind = ReputationKind::LevelDown;
                let amount = (kind, kind.fixed_amount().unwrap_or(0));
                let event_id = ReputationEventId::from_uuid(service.ids.new_id());
                let scored = rescore(&mut agent, event_id, amount, text, None, now);
                tx.update_agent(&agent, now).await?;
                tx.insert_reputation_events(&[scored.event]).await?;
                let demoted = AuditEvent::AgentDemoted(AgentDemoted {
                    from_level: from,
                    to_level: to,
                });
                tx.append_events(&[
                    service.event(&actor, id, now, &demoted),
                    service.event(&actor, id, now, &scored.audit),
                ])
                .await?;
                Ok(agent)
            })
        })
        .await?;
        self.changed(id);
        Ok(agent)
    }
}

/// A status change of decisions D-53 and D-54.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StatusMove {
    /// pending -> active.
    Activate,
    /// any but revoked -> revoked.
    Revoke,
    /// active -> suspended.
    Suspend,
    /// suspended -> active.
    Unsuspend,
}

impl StatusMove {
    /// The status after the move from `status`, or the conflict.
    fn apply(self, status: AgentStatus) -> Result<AgentStatus, Conflict> {
        use AgentStatus::{Active, Pending, Revoked, Suspended};
        let (allowed, to, action) = match self {
            Self::Activate => (status == Pending, Active, "activated"),
            Self::Revoke => (status != Revoked, Revoked, "revoked"),
            Self::Suspend => (status == Active, Suspended, "suspended"),
            Self::Unsuspend => (status == Suspended, Active, "unsuspended"),
        };
        if allowed {
            Ok(to)
        } else if status == Revoked {
            Err(Conflict::AlreadyRevoked)
        } else {
            Err(Conflict::AgentStatus { status, action })
        }
    }

    fn event(self, changed: AgentStatusChanged) -> AuditEvent {
        match self {
            Self::Activate => AuditEvent::AgentActivated(changed),
            Self::Revoke => AuditEvent::AgentRevoked(changed),
            Self::Suspend => AuditEvent::AgentSuspended(changed),
            Self::Unsuspend => AuditEvent::AgentUnsuspended(changed),
        }
    }
}

/// Stores a new agent with its capabilities and its event; a taken handle is the 409
/// that names it.
pub(crate) async fn insert_new<T: AgentsTx + WebhooksTx + ?Sized>(
    tx: &mut T,
    credentials: AgentCredentials,
    capabilities: Vec<crate::model::Capability>,
    event: crate::model::Event,
) -> Result<AgentView, ServiceError> {
    tx.insert_agent(&credentials)
        .await
        .map_err(|err| handle_taken(err, &credentials.agent.handle))?;
    if !capabilities.is_empty() {
        tx.insert_capabilities(&capabilities).await?;
    }
    tx.append_events(&[event]).await?;
    Ok(AgentView {
        agent: credentials.agent,
        capabilities,
    })
}

/// A taken handle as the 409 that names it.
fn handle_taken(err: RepositoryError, handle: &AgentHandle) -> ServiceError {
    match err {
        RepositoryError::Duplicate(UniqueKey::AgentHandle) => Conflict::HandleTaken {
            handle: handle.as_str().to_owned(),
        }
        .into(),
        other => other.into(),
    }
}

/// Applies `patch` to `agent`; the camelCase names of the fields that changed.
fn apply_patch(agent: &mut Agent, patch: AgentPatch) -> Vec<String> {
    let mut fields = Vec::new();
    let mut set = |name: &str, changed: bool| {
        if changed {
            fields.push(name.to_owned());
        }
    };
    if let Some(name) = patch.name {
        set("name", agent.name != name);
        agent.name = name;
    }
    if let Some(level) = patch.level {
        set("level", agent.level != level);
        agent.level = level;
    }
    if let Some(model) = patch.model {
        set("model", agent.model != model);
        agent.model = model;
    }
    if let Some(mode) = patch.mode {
        set("mode", agent.mode != mode);
        agent.mode = mode;
    }
    if let Some(fee) = patch.management_fee_pct {
        set("managementFeePct", agent.management_fee_pct != fee);
        agent.management_fee_pct = fee;
    }
    if let Some(limit) = patch.budget_period_limit {
        set("budgetPeriodLimit", agent.budget_period_limit != limit);
        agent.budget_period_limit = limit;
    }
    if let Some(metadata) = patch.metadata {
        let map: Map<String, serde_json::Value> = metadata.as_map().clone();
        set("metadata", agent.metadata != map);
        agent.metadata = map;
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_moves_of_d53_and_d54() {
        use AgentStatus::{Active, Pending, Revoked, Suspended};
        let table = [
            (StatusMove::Activate, Pending, Some(Active)),
            (StatusMove::Activate, Active, None),
            (StatusMove::Activate, Suspended, None),
            (StatusMove::Revoke, Active, Some(Revoked)),
            (StatusMove::Revoke, Pending, Some(Revoked)),
            (StatusMove::Revoke, Suspended, Some(Revoked)),
            (StatusMove::Revoke, Revoked, None),
            (StatusMove::Suspend, Active, Some(Suspended)),
            (StatusMove::Suspend, Suspended, None),
            (StatusMove::Suspend, Pending, None),
            (StatusMove::Suspend, Revoked, None),
            (StatusMove::Unsuspend, Suspended, Some(Active)),
            (StatusMove::Unsuspend, Active, None),
            (StatusMove::Unsuspend, Revoked, None),
        ];
        for (how, from, to) in table {
            assert_eq!(how.apply(from).ok(), to, "{how:?} from {from:?}");
        }
        assert_eq!(
            StatusMove::Revoke.apply(Revoked).unwrap_err().to_string(),
            "Agent is revoked; revocation is permanent"
        );
    }
}
