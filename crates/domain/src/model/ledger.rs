use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{AgentId, LedgerEntryId, OrgId, ReputationEventId, TaskId};

/// Why credits moved (decisions D-58, D-101).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum CreditKind {
    /// A completed task's reward paid out of its escrow, net of the parent's fee.
    Earned,
    /// A parent's management fee from a child's reward.
    Fee,
    /// Created by an administrator.
    Granted,
    /// Spent by the agent itself.
    Spent,
    /// Received from another agent.
    TransferIn,
    /// Sent to another agent.
    TransferOut,
    /// Put in the escrow of a task it created, as the task's reward (decision D-101).
    Escrowed,
    /// Back from a task's escrow: cancelled, lowered, or done by itself or by nobody.
    Refunded,
    /// Spent on a run's token usage (decision D-106).
    Usage,
}

impl CreditKind {
    /// Every kind.
    pub const ALL: [Self; 9] = [
        Self::Earned,
        Self::Fee,
        Self::Granted,
        Self::Spent,
        Self::TransferIn,
        Self::TransferOut,
        Self::Escrowed,
        Self::Refunded,
        Self::Usage,
    ];

    /// The stored name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Earned => "earned",
            Self::Fee => "fee",
            Self::Granted => "granted",
            Self::Spent => "spent",
            Self::TransferIn => "transfer_in",
            Self::TransferOut => "transfer_out",
            Self::Escrowed => "escrowed",
            Self::Refunded => "refunded",
            Self::Usage => "usage",
        }
    }

    /// Parses a stored name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == value)
    }
}

/// One movement of an agent's credits, with the balance it left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    /// Identity.
    pub id: LedgerEntryId,
    /// The owning organization.
    pub org_id: OrgId,
    /// Whose balance moved.
    pub agent_id: AgentId,
    /// Why.
    pub kind: CreditKind,
    /// Signed amount: positive in, negative out.
    pub amount: i64,
    /// The balance right after.
    pub balance_after: i64,
    /// Free text.
    pub reason: Option<String>,
    /// The task that caused it, if any.
    pub task_id: Option<TaskId>,
    /// The other agent of a fee or transfer.
    pub counterparty_id: Option<AgentId>,
    /// When.
    pub created_at: OffsetDateTime,
}

/// What changed an agent's reputation, with its nominal amount (decision D-63).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ReputationKind {
    /// A task it worked on reached `done`: +5.
    TaskCompleted,
    /// ... by its due date: +2.
    OnTimeDelivery,
    /// ... after its due date: -5.
    LateDelivery,
    /// Cancelled after work started: -10.
    TaskFailed,
    /// Sent back from review to work: -3.
    TaskRework,
    /// Given by a senior agent: +amount.
    QualityBonus,
    /// Taken by a senior agent: -amount.
    QualityPenalty,
    /// Demoted one level: -5.
    LevelDown,
}

impl ReputationKind {
    /// Every kind.
    pub const ALL: [Self; 8] = [
        Self::TaskCompleted,
        Self::OnTimeDelivery,
        Self::LateDelivery,
        Self::TaskFailed,
        Self::TaskRework,
        Self::QualityBonus,
        Self::QualityPenalty,
        Self::LevelDown,
    ];

    /// The wire name (`type` of a reputation event).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::TaskCompleted => "task_completed",
            Self::OnTimeDelivery => "on_time_delivery",
            Self::LateDelivery => "late_delivery",
            Self::TaskFailed => "task_failed",
            Self::TaskRework => "task_rework",
            Self::QualityBonus => "quality_bonus",
            Self::QualityPenalty => "quality_penalty",
            Self::LevelDown => "level_down",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == value)
    }
}

/// One change of an agent's reputation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReputationEvent {
    /// Identity.
    pub id: ReputationEventId,
    /// The owning organization.
    pub org_id: OrgId,
    /// The agent.
    pub agent_id: AgentId,
    /// What happened.
    pub kind: ReputationKind,
    /// The nominal amount (the score itself clamps to 0..=100).
    pub amount: i32,
    /// Why, in words.
    pub reason: String,
    /// The task that caused it, if any.
    pub task_id: Option<TaskId>,
    /// When.
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in CreditKind::ALL {
            assert_eq!(CreditKind::parse(kind.as_str()), Some(kind));
        }
        for kind in ReputationKind::ALL {
            assert_eq!(ReputationKind::parse(kind.as_str()), Some(kind));
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
    }
}
