//! When a task escalates by itself, and to whom (decision D-37).

use time::{Duration, OffsetDateTime};

use crate::model::{Agent, AgentStatus, EscalationReason, Task, TaskPriority, TaskStatus};
use crate::rules::candidates::is_eligible;

/// How long a task may sit before the sweep escalates it. Defaults are decision D-37's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepThresholds {
    /// Blocked longer than this, by priority: urgent, high, normal, low.
    pub blocked: [Duration; 4],
    /// In progress with no activity for longer than this.
    pub stale: Duration,
}

impl Default for SweepThresholds {
    fn default() -> Self {
        Self {
            blocked: [
                Duration::hours(2),
                Duration::hours(8),
                Duration::hours(24),
                Duration::hours(72),
            ],
            stale: Duration::hours(72),
        }
    }
}

impl SweepThresholds {
    /// How long a task of `priority` may stay blocked.
    pub const fn blocked_for(&self, priority: TaskPriority) -> Duration {
        match priority {
            TaskPriority::Urgent => self.blocked[0],
            TaskPriority::High => self.blocked[1],
            TaskPriority::Normal => self.blocked[2],
            TaskPriority::Low => self.blocked[3],
        }
    }
}

/// Does `task` (with its current assignee, if any) call for an automatic escalation for
/// `reason` at `now`? The sweep's queries find candidates; this decides, on the locked
/// row, so that a task that moved meanwhile is left alone.
pub fn is_due(
    task: &Task,
    assignee: Option<&Agent>,
    reason: EscalationReason,
    thresholds: &SweepThresholds,
    now: OffsetDateTime,
) -> bool {
    if task.status.is_terminal() {
        return false;
    }
    match reason {
        EscalationReason::BlockedTimeout => {
            task.status == TaskStatus::Blocked
                && now - task.status_changed_at > thresholds.blocked_for(task.priority)
        }
        EscalationReason::StaleTask => {
            task.status == TaskStatus::InProgress && now - task.last_activity_at > thresholds.stale
        }
        EscalationReason::SlaBreach => task.due_at.is_some_and(|due| now > due),
        EscalationReason::AssigneeInactive => assignee.is_some_and(|agent| {
            matches!(agent.status, AgentStatus::Suspended | AgentStatus::Revoked)
        }),
        EscalationReason::QualityIssues
        | EscalationReason::Manual
        | EscalationReason::CapacityOverflow => false,
    }
}

/// Who takes over an escalated task when the caller names nobody: the assignee's parent
/// if it can take work, else the most senior agent above the assignee (`senior`, found
/// by the caller: active, executing, highest level strictly above, earliest created).
/// Orchestrators and observers never receive tasks (decision D-55), so a parent that
/// does not execute is passed over.
pub fn fallback_target<'a>(
    parent: Option<&'a Agent>,
    senior: Option<&'a Agent>,
) -> Option<&'a Agent> {
    parent
        .filter(|agent| is_eligible(agent))
        .or_else(|| senior.filter(|agent| is_eligible(agent)))
}
