//! Who may do what. Handlers never decide permissions; use cases and authenticators ask
//! here.

use crate::model::{Actor, ActorKind, Agent, AgentMode, AgentStatus, TaskStatus, UserRole};

/// Why an actor is refused (answered as 403). The variant names the rule; `Display` is
/// the sentence for the caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Forbidden {
    /// Observer agents only read (decision D-55).
    #[error("observer agents are read-only")]
    ObserverIsReadOnly,
    /// Viewer users only read (decision D-14).
    #[error("viewer users are read-only")]
    ViewerIsReadOnly,
    /// Orchestrators coordinate but never execute (decision D-55).
    #[error("orchestrator agents do not execute tasks")]
    OrchestratorDoesNotExecute,
}

/// An agent that may not act at all: only `active` agents authenticate (decision D-54).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("agent is not active")]
pub struct AgentNotActive {
    /// The agent's status.
    pub status: AgentStatus,
}

/// May this stored agent act (sign requests, be the actor of a use case)? Only active
/// agents may; pending, suspended and revoked ones are refused.
pub fn agent_may_act(agent: &Agent) -> Result<(), AgentNotActive> {
    if agent.status == AgentStatus::Active {
        Ok(())
    } else {
        Err(AgentNotActive {
            status: agent.status,
        })
    }
}

/// Observer agents and viewer users are read-only (decision D-55, D-14).
pub fn may_write(actor: &Actor) -> Result<(), Forbidden> {
    match actor.kind {
        ActorKind::Agent {
            mode: AgentMode::Observer,
            ..
        } => Err(Forbidden::ObserverIsReadOnly),
        ActorKind::User {
            role: UserRole::Viewer,
            ..
        } => Err(Forbidden::ViewerIsReadOnly),
        _ => Ok(()),
    }
}

/// May `actor` move a task to `to`? Orchestrators coordinate but never execute, so they
/// cannot start work (decision D-55).
pub fn may_transition(actor: &Actor, to: TaskStatus) -> Result<(), Forbidden> {
    may_write(actor)?;
    if to == TaskStatus::InProgress
        && matches!(
            actor.kind,
            ActorKind::Agent {
                mode: AgentMode::Orchestrator,
                ..
            }
        )
    {
        return Err(Forbidden::OrchestratorDoesNotExecute);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;
    use crate::model::{AgentId, AgentRole, Level, OrgId, UserId};

    fn agent(mode: AgentMode) -> Actor {
        Actor {
            org_id: OrgId::from_uuid(Uuid::nil()),
            kind: ActorKind::Agent {
                id: AgentId::from_uuid(Uuid::nil()),
                role: AgentRole::Worker,
                mode,
                level: Level::new(3).unwrap(),
            },
        }
    }

    fn stored_agent(status: AgentStatus) -> Agent {
        let at = time::OffsetDateTime::UNIX_EPOCH;
        Agent {
            id: AgentId::from_uuid(Uuid::nil()),
            org_id: OrgId::from_uuid(Uuid::nil()),
            handle: crate::model::AgentHandle::new("w-1").unwrap(),
            name: "W".into(),
            level: Level::new(1).unwrap(),
            model: None,
            role: AgentRole::Worker,
            mode: AgentMode::Worker,
            status,
            parent_id: None,
            current_balance: 0,
            budget_period_limit: None,
            budget_period_spent: 0,
            budget_period_start: at,
            management_fee_pct: crate::model::FeePct::default(),
            reputation_score: 50,
            metadata: serde_json::Map::new(),
            created_at: at,
        }
    }

    fn user(role: UserRole) -> Actor {
        Actor {
            org_id: OrgId::from_uuid(Uuid::nil()),
            kind: ActorKind::User {
                id: UserId::from_uuid(Uuid::nil()),
                role,
                key: None,
            },
        }
    }

    #[test]
    fn read_only_actors_cannot_write() {
        assert!(may_write(&agent(AgentMode::Observer)).is_err());
        assert!(may_write(&user(UserRole::Viewer)).is_err());
        assert!(may_write(&agent(AgentMode::Worker)).is_ok());
        assert!(may_write(&agent(AgentMode::Orchestrator)).is_ok());
        assert!(may_write(&user(UserRole::Operator)).is_ok());
    }

    #[test]
    fn orchestrators_do_not_start_work() {
        let orchestrator = agent(AgentMode::Orchestrator);
        assert!(may_transition(&orchestrator, TaskStatus::InProgress).is_err());
        assert!(may_transition(&orchestrator, TaskStatus::Cancelled).is_ok());
        assert!(may_transition(&agent(AgentMode::Worker), TaskStatus::InProgress).is_ok());
        assert!(may_transition(&agent(AgentMode::Observer), TaskStatus::Cancelled).is_err());
    }

    #[test]
    fn only_active_agents_may_act() {
        for status in AgentStatus::ALL {
            let stored = stored_agent(*status);
            let verdict = agent_may_act(&stored);
            if *status == AgentStatus::Active {
                assert_eq!(verdict, Ok(()));
            } else {
                assert_eq!(verdict, Err(AgentNotActive { status: *status }));
                assert_eq!(verdict.unwrap_err().to_string(), "agent is not active");
            }
        }
    }
}
