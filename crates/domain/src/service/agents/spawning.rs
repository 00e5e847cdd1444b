//! Agents making agents: spawn with capacity, the pending list, activation and
//! rejection, and the hierarchy (decisions D-51, D-52, D-53, D-56).

use super::lifecycle::{StatusMove, insert_new};
use super::{AgentService, budget_limit, locked_agent, unique_capabilities};
use crate::ValidationError;
use crate::model::{
    Actor, ActorKind, Agent, AgentHandle, AgentId, AgentMode, AgentSpawned, AgentStatus,
    AgentStatusChanged, AuditEvent, CapabilityName, Metadata, Proficiency, Reason,
};
use crate::policy::{self, Forbidden};
use crate::rules::spawn::{capacity, capacity_reached, child_level};
use crate::service::{Conflict, ServiceError};

use super::Registered;
use crate::ports::transact;

/// A child to spawn, validated field by field; the level is checked against the
/// parent's inside the spawning transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChild {
    /// Its `agentId`.
    pub handle: AgentHandle,
    /// Display name, trimmed, 1..=255 characters.
    pub name: String,
    /// Level asked for (default: the parent's minus one).
    pub level: Option<i64>,
    /// Model (default: the parent's).
    pub model: Option<String>,
    /// Mode (default worker).
    pub mode: AgentMode,
    /// Period limit; `None` for no limit.
    pub budget_period_limit: Option<i64>,
    /// Capabilities, normalized, without repeats.
    pub capabilities: Vec<(CapabilityName, Proficiency)>,
    /// Arbitrary JSON object.
    pub metadata: Metadata,
}

impl NewChild {
    /// Child `handle` named `name` (as [`Agent::check_name`] accepts it), every other
    /// field at its default: its parent's level minus one and its parent's model, worker
    /// mode, no budget limit, no capabilities, empty metadata.
    pub fn new(handle: AgentHandle, name: String) -> Self {
        Self {
            handle,
            name,
            level: None,
            model: None,
            mode: AgentMode::Worker,
            budget_period_limit: None,
            capabilities: Vec::new(),
            metadata: Metadata::default(),
        }
    }
}

/// What `GET /agents/capacity` reports about the caller (decision D-51).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capacity {
    /// Whether a spawn would pass the capacity check now.
    pub can_spawn: bool,
    /// Active and pending children.
    pub current: u32,
    /// What the caller's level allows.
    pub max: u32,
    /// Why not, when it cannot.
    pub reason: Option<String>,
}

/// One agent of a hierarchy with its children, to the depth asked (decision D-56).
#[derive(Debug, Clone, PartialEq)]
pub struct HierarchyNode {
    /// The agent.
    pub agent: Agent,
    /// Its children: level high to low, then by name.
    pub children: Vec<HierarchyNode>,
}

/// Default depth of `GET /agents/:id/hierarchy`.
pub const DEFAULT_DEPTH: u8 = 3;

/// Checks a hierarchy depth: 1..=10 (decision D-56).
pub fn hierarchy_depth(value: Option<i64>) -> Result<u8, ValidationError> {
    let Some(value) = value else {
        return Ok(DEFAULT_DEPTH);
    };
    u8::try_from(value)
        .ok()
        .filter(|d| (1..=10).contains(d))
        .ok_or_else(|| ValidationError::new("depth must be between 1 and 10"))
}

impl AgentService {
    /// Spawns a pending child of the calling agent (decision D-51) and answers its
    /// secret once. The parent row is locked while its children are counted, so
    /// concurrent spawns by one parent never exceed its capacity.
    pub async fn spawn(&self, actor: &Actor, new: NewChild) -> Result<Registered, ServiceError> {
        let parent_id = policy::acting_agent(actor)?;
        policy::may_write(actor)?;
        unique_capabilities(&new.capabilities)?;
        new.budget_period_limit.map(budget_limit).transpose()?;
        if let ActorKind::Agent { level, .. } = actor.kind {
            // Refuse a bad level before anything is locked; the stored level decides below.
            child_level(level, new.level)?;
        }
        let secret = self.sealer.generate().map_err(ServiceError::internal)?;
        let service = self.clone();
        let actor = actor.clone();
        let secret_for_tx = secret.clone();
        let view = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let parent = locked_agent(tx, actor.org_id, parent_id).await?;
                let max = capacity(parent.level);
                let current = tx.live_children(actor.org_id, parent_id).await?;
                if current >= max {
                    return Err(Conflict::SpawnCapacity { current, max }.into());
                }
                let level = child_level(parent.level, new.level)?.ok_or_else(|| {
                    ValidationError::new("level must be below the parent's level")
                })?;
                let now = service.clock.now();
                let mut child = Agent::new(
                    AgentId::from_uuid(service.ids.new_id()),
                    actor.org_id,
                    new.handle,
                    new.name,
                    now,
                    service.period.start_of(now),
                );
                child.level = level;
                child.model = new.model.or_else(|| parent.model.clone());
                child.mode = new.mode;
                child.status = AgentStatus::Pending;
                child.parent_id = Some(parent_id);
                child.budget_period_limit = new.budget_period_limit;
                child.metadata = new.metadata.as_map().clone();
                let capabilities = service.capability_rows(&child, &new.capabilities, now);
                let spawned = AuditEvent::AgentSpawned(AgentSpawned {
                    agent_id: child.handle.as_str().to_owned(),
                    parent_id,
                    level,
                    mode: child.mode,
                });
                let event = service.event(&actor, child.id, now, &spawned);
                let encrypted_secret = service
                    .sealer
                    .seal(child.id, &secret_for_tx)
                    .map_err(ServiceError::internal)?;
                let credentials = crate::model::AgentCredentials {
                    agent: child,
                    encrypted_secret,
                };
                insert_new(tx, credentials, capabilities, event).await
            })
        })
        .await?;
        Ok(Registered { view, secret })
    }

    /// How many children the caller has and may have (decision D-51). Users cannot
    /// spawn; neither can observers.
    pub async fn capacity(&self, actor: &Actor) -> Result<Capacity, ServiceError> {
        let Some(id) = actor.agent_id() else {
            return Ok(Capacity {
                can_spawn: false,
                current: 0,
                max: 0,
                reason: Some(Forbidden::AgentRequired.to_string()),
            });
        };
        let agent = self.find(actor.org_id, id).await?;
        let current = self.live_children(actor, id).await?;
        let max = capacity(agent.level);
        let reason = if agent.mode == AgentMode::Observer {
            Some(Forbidden::ObserverIsReadOnly.to_string())
        } else if current >= max {
            Some(capacity_reached(current, max))
        } else {
            None
        };
        Ok(Capacity {
            can_spawn: reason.is_none(),
            current,
            max,
            reason,
        })
    }

    /// Active and pending children of `parent` (at most its capacity, 100).
    async fn live_children(&self, actor: &Actor, parent: AgentId) -> Result<u32, ServiceError> {
        let children = self.agents.children(actor.org_id, &[parent]).await?;
        let live = children
            .iter()
            .filter(|c| matches!(c.status, AgentStatus::Active | AgentStatus::Pending))
            .count();
        Ok(u32::try_from(live).unwrap_or(u32::MAX))
    }

    /// Pending agents the caller may activate (decision D-52): its own pending children,
    /// or every pending agent of the organization for level-10 agents and admin users;
    /// newest first (decision D-7).
    pub async fn pending(&self, actor: &Actor) -> Result<Vec<Agent>, ServiceError> {
        let everyone = policy::is_user_admin(actor)
            || matches!(actor.kind, ActorKind::Agent { level, .. } if level.get() == 10);
        let parent = match actor.agent_id() {
            _ if everyone => None,
            Some(id) => Some(id),
            None => return Ok(Vec::new()),
        };
        Ok(self.agents.pending(actor.org_id, parent).await?)
    }

    /// Activates a pending agent (decision D-53): its parent, a level-10 agent or an
    /// admin; a non-pending agent is 409.
    pub async fn activate(&self, actor: &Actor, id: AgentId) -> Result<Agent, ServiceError> {
        policy::may_write(actor)?;
        self.set_status(actor, id, StatusMove::Activate).await
    }

    /// Rejects a pending agent (decision D-53): deletes it, so its `agentId` is free
    /// again, and records `agent.rejected`.
    pub async fn reject(
        &self,
        actor: &Actor,
        id: AgentId,
        reason: Option<Reason>,
    ) -> Result<Agent, ServiceError> {
        policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        let agent = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let agent = locked_agent(tx, actor.org_id, id).await?;
                policy::may_activate(&actor, &agent)?;
                if agent.status != AgentStatus::Pending {
                    return Err(Conflict::AgentStatus {
                        status: agent.status,
                        action: "rejected",
                    }
                    .into());
                }
                tx.delete_agent(actor.org_id, id).await?;
                let rejected = AuditEvent::AgentRejected(AgentStatusChanged {
                    agent_id: agent.handle.as_str().to_owned(),
                    reason: reason.map(|r| r.as_str().to_owned()),
                    breaker: None,
                });
                let now = service.clock.now();
                tx.append_events(&[service.event(&actor, id, now, &rejected)])
                    .await?;
                Ok(agent)
            })
        })
        .await?;
        self.changed(id);
        Ok(agent)
    }

    /// The agent `id` and its descendants `depth` levels down (decision D-56).
    pub async fn hierarchy(
        &self,
        actor: &Actor,
        id: AgentId,
        depth: u8,
    ) -> Result<HierarchyNode, ServiceError> {
        let root = self.find(actor.org_id, id).await?;
        let mut levels: Vec<Vec<Agent>> = Vec::new();
        let mut frontier = vec![id];
        for _ in 0..depth {
            if frontier.is_empty() {
                break;
            }
            let children = self.agents.children(actor.org_id, &frontier).await?;
            frontier = children.iter().map(|a| a.id).collect();
            levels.push(children);
        }
        Ok(build_tree(root, &mut levels, 0))
    }
}

/// The node of `agent` with its children taken from `levels[at..]`.
fn build_tree(agent: Agent, levels: &mut [Vec<Agent>], at: usize) -> HierarchyNode {
    let mut children: Vec<Agent> = match levels.get_mut(at) {
        Some(level) => {
            let (mine, rest): (Vec<Agent>, Vec<Agent>) = std::mem::take(level)
                .into_iter()
                .partition(|a| a.parent_id == Some(agent.id));
            *level = rest;
            mine
        }
        None => Vec::new(),
    };
    children.sort_by(|a, b| b.level.cmp(&a.level).then_with(|| a.name.cmp(&b.name)));
    let children = children
        .into_iter()
        .map(|child| build_tree(child, levels, at + 1))
        .collect();
    HierarchyNode { agent, children }
}

#[cfg(test)]
mod tests {
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;
    use crate::model::{Level, OrgId};

    fn agent(n: u128, name: &str, level: i64, parent: Option<u128>) -> Agent {
        let mut agent = Agent::new(
            AgentId::from_uuid(Uuid::from_u128(n)),
            OrgId::from_uuid(Uuid::nil()),
            AgentHandle::new(&format!("a{n}")).unwrap(),
            name.into(),
            OffsetDateTime::UNIX_EPOCH,
            OffsetDateTime::UNIX_EPOCH,
        );
        agent.level = Level::new(level).unwrap();
        agent.parent_id = parent.map(|p| AgentId::from_uuid(Uuid::from_u128(p)));
        agent
    }

    fn names(node: &HierarchyNode) -> Vec<&str> {
        node.children
            .iter()
            .map(|c| c.agent.name.as_str())
            .collect()
    }

    #[test]
    fn children_by_level_then_name() {
        let mut levels = vec![
            vec![
                agent(2, "beta", 5, Some(1)),
                agent(3, "alpha", 5, Some(1)),
                agent(4, "zulu", 8, Some(1)),
            ],
            vec![agent(5, "grandchild", 3, Some(3))],
        ];
        let tree = build_tree(agent(1, "root", 10, None), &mut levels, 0);
        assert_eq!(names(&tree), ["zulu", "alpha", "beta"]);
        assert_eq!(names(&tree.children[1]), ["grandchild"]);
        assert!(tree.children[0].children.is_empty());
    }

    #[test]
    fn depth_range() {
        assert_eq!(hierarchy_depth(None).unwrap(), 3);
        assert_eq!(hierarchy_depth(Some(1)).unwrap(), 1);
        assert_eq!(hierarchy_depth(Some(10)).unwrap(), 10);
        for bad in [0, 11, -1] {
            assert_eq!(
                hierarchy_depth(Some(bad)).unwrap_err().message(),
                "depth must be between 1 and 10"
            );
        }
    }
}
