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

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::model::{
        AgentHandle, AgentId, AgentMode, AgentRole, FeePct, Level, OrgId, TaskId, Title,
    };

    const NOW: OffsetDateTime = datetime!(2026-06-01 12:00 UTC);

    fn task(status: TaskStatus, priority: TaskPriority) -> Task {
        let id = TaskId::from_uuid(Uuid::nil());
        let org = OrgId::from_uuid(Uuid::nil());
        Task {
            status,
            priority,
            created_at: NOW - Duration::days(30),
            ..Task::new(id, org, Title::new("t").unwrap(), NOW)
        }
    }

    fn agent(status: AgentStatus, mode: AgentMode) -> Agent {
        Agent {
            id: AgentId::from_uuid(Uuid::now_v7()),
            org_id: OrgId::from_uuid(Uuid::nil()),
            handle: AgentHandle::new("a").unwrap(),
            name: "A".into(),
            level: Level::new(4).unwrap(),
            model: None,
            role: AgentRole::Worker,
            mode,
            status,
            parent_id: None,
            current_balance: 0,
            budget_period_limit: None,
            budget_period_spent: 0,
            budget_period_start: NOW,
            reserved_credits: 0,
            budget_exhausted: false,
            management_fee_pct: FeePct::default(),
            reputation_score: 50,
            metadata: serde_json::Map::new(),
            created_at: NOW,
        }
    }

    #[test]
    fn blocked_too_long_depends_on_priority() {
        let limits = SweepThresholds::default();
        let hours = [
            (TaskPriority::Urgent, 2),
            (TaskPriority::High, 8),
            (TaskPriority::Normal, 24),
            (TaskPriority::Low, 72),
        ];
        for (priority, h) in hours {
            let mut blocked = task(TaskStatus::Blocked, priority);
            blocked.status_changed_at = NOW - Duration::hours(h);
            let due = |t: &Task| is_due(t, None, EscalationReason::BlockedTimeout, &limits, NOW);
            assert!(!due(&blocked), "{priority:?} exactly at the limit");
            blocked.status_changed_at -= Duration::seconds(1);
            assert!(due(&blocked), "{priority:?} past the limit");
            blocked.status = TaskStatus::InProgress;
            assert!(!due(&blocked), "{priority:?} no longer blocked");
        }
    }

    #[test]
    fn stale_past_due_and_inactive_assignee() {
        let limits = SweepThresholds::default();
        let mut working = task(TaskStatus::InProgress, TaskPriority::Normal);
        working.last_activity_at = NOW - Duration::hours(72);
        assert!(
            !is_due(&working, None, EscalationReason::StaleTask, &limits, NOW),
            "exactly at the limit"
        );
        working.last_activity_at -= Duration::seconds(1);
        assert!(is_due(
            &working,
            None,
            EscalationReason::StaleTask,
            &limits,
            NOW
        ));
        working.status = TaskStatus::Review;
        assert!(!is_due(
            &working,
            None,
            EscalationReason::StaleTask,
            &limits,
            NOW
        ));

        let mut late = task(TaskStatus::Todo, TaskPriority::Low);
        assert!(!is_due(
            &late,
            None,
            EscalationReason::SlaBreach,
            &limits,
            NOW
        ));
        late.due_at = Some(NOW);
        assert!(!is_due(
            &late,
            None,
            EscalationReason::SlaBreach,
            &limits,
            NOW
        ));
        late.due_at = Some(NOW - Duration::seconds(1));
        assert!(is_due(
            &late,
            None,
            EscalationReason::SlaBreach,
            &limits,
            NOW
        ));
        late.status = TaskStatus::Done;
        assert!(
            !is_due(&late, None, EscalationReason::SlaBreach, &limits, NOW),
            "closed"
        );

        let open = task(TaskStatus::Todo, TaskPriority::Low);
        for (status, due) in [
            (AgentStatus::Active, false),
            (AgentStatus::Pending, false),
            (AgentStatus::Suspended, true),
            (AgentStatus::Revoked, true),
        ] {
            let assignee = agent(status, AgentMode::Worker);
            let verdict = is_due(
                &open,
                Some(&assignee),
                EscalationReason::AssigneeInactive,
                &limits,
                NOW,
            );
            assert_eq!(verdict, due, "{status:?}");
        }
        assert!(!is_due(
            &open,
            None,
            EscalationReason::AssigneeInactive,
            &limits,
            NOW
        ));
        for reason in [
            EscalationReason::Manual,
            EscalationReason::QualityIssues,
            EscalationReason::CapacityOverflow,
        ] {
            assert!(
                !is_due(&late, None, reason, &limits, NOW),
                "{reason:?} is never swept"
            );
        }
    }

    #[test]
    fn the_parent_first_if_it_executes_then_the_senior() {
        let parent = agent(AgentStatus::Active, AgentMode::Worker);
        let senior = agent(AgentStatus::Active, AgentMode::Worker);
        let orchestrating = agent(AgentStatus::Active, AgentMode::Orchestrator);
        let suspended = agent(AgentStatus::Suspended, AgentMode::Worker);
        assert_eq!(
            fallback_target(Some(&parent), Some(&senior)).map(|a| a.id),
            Some(parent.id)
        );
        assert_eq!(
            fallback_target(Some(&orchestrating), Some(&senior)).map(|a| a.id),
            Some(senior.id)
        );
        assert_eq!(fallback_target(Some(&suspended), None).map(|a| a.id), None);
        assert_eq!(
            fallback_target(None, Some(&senior)).map(|a| a.id),
            Some(senior.id)
        );
        assert_eq!(
            fallback_target(None, Some(&orchestrating)).map(|a| a.id),
            None
        );
    }
}
