use uuid::Uuid;

use super::{Actor, ActorKind, AgentId, UserId};

/// Who wrote or did something on a task: an agent or a human user. Tasks created by an
/// integration or the service itself have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Author {
    /// An agent, by its UUID.
    Agent(AgentId),
    /// A human user, by their UUID.
    User(UserId),
}

impl Author {
    /// The author of what `actor` does: its agent or user; `None` for the system.
    pub fn of(actor: &Actor) -> Option<Self> {
        match actor.kind {
            ActorKind::Agent { id, .. } => Some(Self::Agent(id)),
            ActorKind::User { id, .. } => Some(Self::User(id)),
            ActorKind::System => None,
        }
    }

    /// The UUID, whichever kind it is.
    pub const fn as_uuid(self) -> Uuid {
        match self {
            Self::Agent(id) => id.as_uuid(),
            Self::User(id) => id.as_uuid(),
        }
    }

    /// The agent, when the author is one.
    pub const fn agent(self) -> Option<AgentId> {
        match self {
            Self::Agent(id) => Some(id),
            Self::User(_) => None,
        }
    }

    /// The user, when the author is one.
    pub const fn user(self) -> Option<UserId> {
        match self {
            Self::User(id) => Some(id),
            Self::Agent(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{OrgId, UserRole};

    #[test]
    fn author_of_each_actor_kind() {
        let org = OrgId::from_uuid(Uuid::nil());
        let user = UserId::from_uuid(Uuid::from_u128(5));
        let actor = Actor {
            org_id: org,
            kind: ActorKind::User {
                id: user,
                role: UserRole::Viewer,
                key: None,
            },
        };
        assert_eq!(Author::of(&actor), Some(Author::User(user)));
        assert_eq!(Author::User(user).as_uuid(), Uuid::from_u128(5));
        assert_eq!(Author::User(user).agent(), None);
        assert_eq!(Author::User(user).user(), Some(user));
        let agent = AgentId::from_uuid(Uuid::from_u128(6));
        assert_eq!(Author::Agent(agent).as_uuid(), Uuid::from_u128(6));
        assert_eq!(Author::Agent(agent).agent(), Some(agent));
        assert_eq!(Author::Agent(agent).user(), None);
        let system = Actor {
            org_id: org,
            kind: ActorKind::System,
        };
        assert_eq!(Author::of(&system), None);
    }
}
