use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{AgentId, EscalationId, OrgId, Reason, TaskId};

/// Why a task was escalated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum EscalationReason {
    /// Blocked too long (found by the sweep).
    BlockedTimeout,
    /// No progress (found by the sweep).
    StaleTask,
    /// Past its due date (found by the sweep).
    SlaBreach,
    /// The assignee is suspended or revoked (found by the sweep).
    AssigneeInactive,
    /// Several rework cycles.
    QualityIssues,
    /// Asked for by a caller.
    Manual,
    /// Reassigned because the assignee is overloaded.
    CapacityOverflow,
}

impl EscalationReason {
    /// Every reason, in the contract's order.
    pub const ALL: [Self; 7] = [
        Self::BlockedTimeout,
        Self::StaleTask,
        Self::SlaBreach,
        Self::AssigneeInactive,
        Self::QualityIssues,
        Self::Manual,
        Self::CapacityOverflow,
    ];

    /// The reasons the background sweep finds by itself (decision D-37).
    pub const SWEPT: [Self; 4] = [
        Self::BlockedTimeout,
        Self::StaleTask,
        Self::SlaBreach,
        Self::AssigneeInactive,
    ];

    /// The wire name (`BLOCKED_TIMEOUT`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BlockedTimeout => "BLOCKED_TIMEOUT",
            Self::StaleTask => "STALE_TASK",
            Self::SlaBreach => "SLA_BREACH",
            Self::AssigneeInactive => "ASSIGNEE_INACTIVE",
            Self::QualityIssues => "QUALITY_ISSUES",
            Self::Manual => "MANUAL",
            Self::CapacityOverflow => "CAPACITY_OVERFLOW",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == value)
    }
}

/// One escalation of a task: why, from whom to whom (decision D-37).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    /// Identity.
    pub id: EscalationId,
    /// The owning organization.
    pub org_id: OrgId,
    /// The task escalated.
    pub task_id: TaskId,
    /// Why.
    pub reason: EscalationReason,
    /// Free text given by the caller.
    pub notes: Option<Reason>,
    /// The assignee before.
    pub from_agent_id: Option<AgentId>,
    /// The new assignee; `None` when the sweep found nobody to hand the task to.
    pub to_agent_id: Option<AgentId>,
    /// Who escalated (agent or user UUID); `None` for the sweep.
    pub actor_id: Option<Uuid>,
    /// Whether the sweep made it (at most one per task and reason).
    pub automatic: bool,
    /// When.
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for reason in EscalationReason::ALL {
            assert_eq!(EscalationReason::parse(reason.as_str()), Some(reason));
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str());
        }
        assert_eq!(EscalationReason::parse("manual"), None);
    }
}
