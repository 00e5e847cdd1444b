//! The organization's treasury and who pays a task's reward (decision D-101).

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{AgentId, OrgId, TaskId, TreasuryEntryId};

/// The organization's own balance: funded by grants, it pays the rewards of the tasks
/// that people, API keys and integrations create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Treasury {
    /// The organization.
    pub org_id: OrgId,
    /// Credits held, never below 0.
    pub balance: i64,
    /// When it last moved; `None` while it never did.
    pub updated_at: Option<OffsetDateTime>,
}

impl Treasury {
    /// The treasury of `org` before anything moved it.
    pub const fn empty(org_id: OrgId) -> Self {
        Self {
            org_id,
            balance: 0,
            updated_at: None,
        }
    }
}

/// Why the treasury moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum TreasuryKind {
    /// Created by an administrator (or the operator at bootstrap).
    Granted,
    /// Put in a task's escrow as its reward.
    Escrowed,
    /// Back from a task's escrow: cancelled, lowered, or done with nobody to pay.
    Refunded,
}

impl TreasuryKind {
    /// Every kind.
    pub const ALL: [Self; 3] = [Self::Granted, Self::Escrowed, Self::Refunded];

    /// The stored and wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Granted => "granted",
            Self::Escrowed => "escrowed",
            Self::Refunded => "refunded",
        }
    }

    /// Parses a stored name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == value)
    }
}

/// One movement of the treasury, with the balance it left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreasuryEntry {
    /// Identity.
    pub id: TreasuryEntryId,
    /// The organization.
    pub org_id: OrgId,
    /// Why.
    pub kind: TreasuryKind,
    /// Signed amount: positive in, negative out.
    pub amount: i64,
    /// The balance right after.
    pub balance_after: i64,
    /// Free text.
    pub reason: Option<String>,
    /// The task whose escrow it fed or came back from.
    pub task_id: Option<TaskId>,
    /// Who caused it (the granting user or agent); `None` for the service itself.
    pub actor_id: Option<Uuid>,
    /// When.
    pub created_at: OffsetDateTime,
}

/// Whose credits a task's reward is escrowed from (decision D-101): the agent that
/// created the task, or the treasury for tasks that people, API keys, integrations and
/// the service create.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RewardPayer {
    /// The creating agent's balance.
    Agent(AgentId),
    /// The organization's treasury.
    Treasury,
}

impl RewardPayer {
    /// `agent` or `treasury`.
    pub const fn kind(self) -> &'static str {
        match self {
            Self::Agent(_) => "agent",
            Self::Treasury => "treasury",
        }
    }

    /// The payer's UUID: the agent's, or the organization's for the treasury.
    pub const fn id(self, org: OrgId) -> Uuid {
        match self {
            Self::Agent(id) => id.as_uuid(),
            Self::Treasury => org.as_uuid(),
        }
    }

    /// The paying agent, when an agent pays.
    pub const fn agent(self) -> Option<AgentId> {
        match self {
            Self::Agent(id) => Some(id),
            Self::Treasury => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in TreasuryKind::ALL {
            assert_eq!(TreasuryKind::parse(kind.as_str()), Some(kind));
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
        assert_eq!(TreasuryKind::parse("minted"), None);
    }

    #[test]
    fn payer_names_its_kind_and_id() {
        let org = OrgId::from_uuid(Uuid::from_u128(1));
        let agent = AgentId::from_uuid(Uuid::from_u128(2));
        assert_eq!(RewardPayer::Treasury.kind(), "treasury");
        assert_eq!(RewardPayer::Treasury.id(org), org.as_uuid());
        assert_eq!(RewardPayer::Agent(agent).kind(), "agent");
        assert_eq!(RewardPayer::Agent(agent).id(org), agent.as_uuid());
        assert_eq!(RewardPayer::Agent(agent).agent(), Some(agent));
        assert_eq!(RewardPayer::Treasury.agent(), None);
    }
}
