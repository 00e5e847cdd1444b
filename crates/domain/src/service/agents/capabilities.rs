//! Capabilities: what agents declare they can do, and who matches a need (decision
//! D-62).

use super::{AgentService, locked_agent};
use crate::ValidationError;
use crate::model::{
    Actor, AgentCapabilityAdded, AgentCapabilityRemoved, AgentId, AgentMode, AuditEvent,
    Capability, CapabilityId, CapabilityName, Proficiency,
};
use crate::policy;
use crate::ports::{Lock, transact};
use crate::rules::candidates::{Candidate, Requirement, rank_all};
use crate::service::{Entity, NotFound, ServiceError};

/// The query of `GET /agents/capabilities/match` and `/best-match`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchQuery {
    /// The capabilities wanted, normalized, without repeats (at least one).
    pub capabilities: Vec<CapabilityName>,
    /// The weakest proficiency that counts (any when `None`).
    pub min_proficiency: Option<Proficiency>,
    /// Only active agents (the default) or agents in any status.
    pub only_active: bool,
}

impl MatchQuery {
    /// Parses the comma-separated `capabilities` list: names trimmed and lower-cased,
    /// empty items skipped, repeats kept once; at least one is needed.
    pub fn new(
        capabilities: &str,
        min_proficiency: Option<Proficiency>,
        only_active: bool,
    ) -> Result<Self, ValidationError> {
        let mut names: Vec<CapabilityName> = Vec::new();
        for item in capabilities.split(',').filter(|s| !s.trim().is_empty()) {
            let name = CapabilityName::new(item)?;
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if names.is_empty() {
            return Err(ValidationError::new(
                "capabilities must name at least one capability",
            ));
        }
        Ok(Self {
            capabilities: names,
            min_proficiency,
            only_active,
        })
    }
}

/// An agent matching a capability query: the matched capabilities and the coverage.
pub type CapabilityMatch = Candidate;

impl AgentService {
    /// The capabilities of the agent `id` (404 outside the organization).
    pub async fn capabilities(
        &self,
        actor: &Actor,
        id: AgentId,
    ) -> Result<Vec<Capability>, ServiceError> {
        self.find(actor.org_id, id).await?;
        Ok(self.agents.capabilities(actor.org_id, id).await?)
    }

    /// The distinct capability names of the organization, alphabetical.
    pub async fn capability_names(
        &self,
        actor: &Actor,
    ) -> Result<Vec<CapabilityName>, ServiceError> {
        Ok(self.agents.capability_names(actor.org_id).await?)
    }

    /// Adds a capability to the agent `id` (decision D-62): a name it has already is 409.
    pub async fn add_capability(
        &self,
        actor: &Actor,
        id: AgentId,
        name: CapabilityName,
        proficiency: Proficiency,
    ) -> Result<Capability, ServiceError> {
        policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let agent = tx
                    .agent(actor.org_id, id, Lock::Share)
                    .await?
                    .ok_or(NotFound::new(Entity::Agent, id))?;
                policy::may_manage_capabilities(&actor, &agent)?;
                let now = service.clock.now();
                let capability = service
                    .capability_rows(&agent, &[(name, proficiency)], now)
                    .remove(0);
                tx.insert_capabilities(std::slice::from_ref(&capability))
                    .await?;
                let added = AuditEvent::AgentCapabilityAdded(AgentCapabilityAdded {
                    capability: capability.name.as_str().to_owned(),
                    proficiency: proficiency.as_str().to_owned(),
                });
                tx.append_events(&[service.event(&actor, id, now, &added)])
                    .await?;
                Ok(capability)
            })
        })
        .await
    }

    /// Changes the proficiency of the capability `id`.
    pub async fn update_capability(
        &self,
        actor: &Actor,
        id: CapabilityId,
        proficiency: Proficiency,
    ) -> Result<Capability, ServiceError> {
        self.change_capability(actor, id, Some(proficiency)).await
    }

    /// Removes the capability `id`.
    pub async fn remove_capability(
        &self,
        actor: &Actor,
        id: CapabilityId,
    ) -> Result<Capability, ServiceError> {
        self.change_capability(actor, id, None).await
    }

    /// Sets the proficiency of the capability `id`, or removes it (`None`), with its
    /// event, after the permission check against its agent.
    async fn change_capability(
        &self,
        actor: &Actor,
        id: CapabilityId,
        proficiency: Option<Proficiency>,
    ) -> Result<Capability, ServiceError> {
        policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut capability = tx
                    .capability(actor.org_id, id, Lock::Update)
                    .await?
                    .ok_or(NotFound::new(Entity::Capability, id))?;
                let agent = locked_agent(tx, actor.org_id, capability.agent_id).await?;
                policy::may_manage_capabilities(&actor, &agent)?;
                let name = capability.name.as_str().to_owned();
                let what = if let Some(proficiency) = proficiency {
                    capability.proficiency = proficiency;
                    tx.update_capability(&capability).await?;
                    AuditEvent::AgentCapabilityUpdated(AgentCapabilityAdded {
                        capability: name,
                        proficiency: proficiency.as_str().to_owned(),
                    })
                } else {
                    tx.delete_capability(actor.org_id, id).await?;
                    AuditEvent::AgentCapabilityRemoved(AgentCapabilityRemoved { capability: name })
                };
                let now = service.clock.now();
                tx.append_events(&[service.event(&actor, agent.id, now, &what)])
                    .await?;
                Ok(capability)
            })
        })
        .await
    }

    /// Agents holding at least one of the capabilities asked, ranked as task candidates
    /// are (decisions D-35, D-62): coverage, proficiency sum, open tasks, reputation,
    /// `agentId`. Orchestrators and observers, who never execute, are left out.
    pub async fn matching(
        &self,
        actor: &Actor,
        query: &MatchQuery,
    ) -> Result<Vec<CapabilityMatch>, ServiceError> {
        let needed: Vec<Requirement> = query
            .capabilities
            .iter()
            .map(|name| Requirement {
                capability: name.clone(),
                min: query.min_proficiency,
            })
            .collect();
        let mut roster = self.agents.roster(actor.org_id, query.only_active).await?;
        roster.retain(|entry| entry.agent.mode == AgentMode::Worker);
        let ranked = rank_all(&needed, roster);
        Ok(ranked.into_iter().filter(|c| c.coverage > 0).collect())
    }
}
