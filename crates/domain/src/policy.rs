//! Who may do what. Handlers never decide permissions; use cases ask here.

use crate::model::{Actor, ActorKind, AgentMode, TaskStatus, UserRole};

/// Why an actor is refused (answered as 403).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Forbidden(pub String);

/// Observer agents and viewer users are read-only (decision D-55, D-14).
pub fn may_write(actor: &Actor) -> Result<(), Forbidden> {
    match actor.kind {
        ActorKind::Agent {
            mode: AgentMode::Observer,
            ..
        } => Err(Forbidden("observer agents are read-only".into())),
        ActorKind::User {
            role: UserRole::Viewer,
            ..
        } => Err(Forbidden("viewer users are read-only".into())),
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
        return Err(Forbidden("orchestrator agents do not execute tasks".into()));
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

    fn user(role: UserRole) -> Actor {
        Actor {
            org_id: OrgId::from_uuid(Uuid::nil()),
            kind: ActorKind::User {
                id: UserId::from_uuid(Uuid::nil()),
                role,
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
}
