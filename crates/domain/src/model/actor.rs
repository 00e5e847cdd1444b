use uuid::Uuid;

use super::{AgentId, AgentMode, AgentRole, ApiKeyId, ApiKeyScope, Level, OrgId, UserId, UserRole};

/// Who is calling, as established by authentication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActorKind {
    /// An agent that signed its request.
    Agent {
        /// The agent's UUID.
        id: AgentId,
        /// Its role.
        role: AgentRole,
        /// Its mode.
        mode: AgentMode,
        /// Its level.
        level: Level,
    },
    /// A human user, signed in (access token) or through one of their API keys.
    User {
        /// The user's UUID.
        id: UserId,
        /// Their role.
        role: UserRole,
        /// The API key the request came with, which limits the user to its scope
        /// (decision D-17); `None` for a signed-in user.
        key: Option<KeyAccess>,
    },
    /// The service itself (background sweeps, bootstrap).
    System,
}

/// An API key a user's request came with: the user's powers, limited by its scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyAccess {
    /// The key.
    pub id: ApiKeyId,
    /// Its strongest scope (each scope includes the weaker ones).
    pub scope: ApiKeyScope,
}

/// The caller of a use case, always bound to one organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The organization every lookup is scoped to.
    pub org_id: OrgId,
    /// Who it is.
    pub kind: ActorKind,
}

impl Actor {
    /// The UUID recorded as `actorId` on audit events.
    pub fn actor_id(&self) -> Option<Uuid> {
        match self.kind {
            ActorKind::Agent { id, .. } => Some(id.as_uuid()),
            ActorKind::User { id, .. } => Some(id.as_uuid()),
            ActorKind::System => None,
        }
    }

    /// The agent's UUID when the caller is an agent.
    pub fn agent_id(&self) -> Option<AgentId> {
        match self.kind {
            ActorKind::Agent { id, .. } => Some(id),
            _ => None,
        }
    }

    /// The user's UUID when the caller is a human user (signed in or through a key).
    pub fn user_id(&self) -> Option<UserId> {
        match self.kind {
            ActorKind::User { id, .. } => Some(id),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_actor_answers_only_its_own_id() {
        let org = OrgId::from_uuid(Uuid::from_u128(1));
        let agent_id = AgentId::from_uuid(Uuid::from_u128(2));
        let user_id = UserId::from_uuid(Uuid::from_u128(3));
        let agent = Actor {
            org_id: org,
            kind: ActorKind::Agent {
                id: agent_id,
                role: AgentRole::Worker,
                mode: AgentMode::Worker,
                level: Level::new(1).unwrap(),
            },
        };
        let user = Actor {
            org_id: org,
            kind: ActorKind::User {
                id: user_id,
                role: UserRole::Viewer,
                key: None,
            },
        };
        let system = Actor {
            org_id: org,
            kind: ActorKind::System,
        };
        assert_eq!(agent.agent_id(), Some(agent_id));
        assert_eq!(agent.user_id(), None);
        assert_eq!(agent.actor_id(), Some(agent_id.as_uuid()));
        assert_eq!(user.user_id(), Some(user_id));
        assert_eq!(user.agent_id(), None);
        assert_eq!(user.actor_id(), Some(user_id.as_uuid()));
        assert_eq!(system.agent_id(), None);
        assert_eq!(system.user_id(), None);
        assert_eq!(system.actor_id(), None);
    }
}
