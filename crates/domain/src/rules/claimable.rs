//! Which tasks an agent may claim, and in which order (decisions D-31, D-35).
//!
//! The rule is data, [`CLAIMABLE`], because the stores must apply it where the tasks
//! are: a claim pages through the claimable tasks of an organization in claim order,
//! and only the database's partial index (`tasks_claimable`) makes that a walk rather
//! than a sort of every task. The SQL stores translate the filter and [`CLAIM_ORDER`]
//! into their query (word for word the index's predicate and expression); the memory
//! store applies [`ClaimFilter::admits`] and sorts by [`claim_key`] itself. Capability
//! coverage is decided afterwards, on the loaded candidates
//! ([`crate::rules::candidates::Requirement`]).

use time::OffsetDateTime;

use crate::model::{AgentId, TaskId, TaskPriority, TaskStatus};

/// What makes a task claimable: it is unassigned, in [`ClaimFilter::status`], and
/// every task it blocks on (its blocking dependencies) is in
/// [`ClaimFilter::blockers_in`] or gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimFilter {
    /// The status of a claimable task.
    pub status: TaskStatus,
    /// The status each of its blocking dependencies must be in.
    pub blockers_in: TaskStatus,
}

/// The claimable tasks: open (`todo`), unassigned, every blocking dependency done.
pub const CLAIMABLE: ClaimFilter = ClaimFilter {
    status: TaskStatus::Todo,
    blockers_in: TaskStatus::Done,
};

impl ClaimFilter {
    /// Whether a task in `status`, assigned to `assignee`, is still open to a claim,
    /// its dependencies aside: what a claimer checks again when it locks a candidate.
    pub fn open(&self, status: TaskStatus, assignee: Option<AgentId>) -> bool {
        status == self.status && assignee.is_none()
    }

    /// Whether a task in `status`, assigned to `assignee`, whose blocking dependencies
    /// are in `blockers` (`None` for one that is gone), may be claimed.
    pub fn admits(
        &self,
        status: TaskStatus,
        assignee: Option<AgentId>,
        blockers: impl IntoIterator<Item = Option<TaskStatus>>,
    ) -> bool {
        self.open(status, assignee)
            && blockers
                .into_iter()
                .all(|blocker| blocker.is_none_or(|b| b == self.blockers_in))
    }
}

/// The priorities in claim order: urgent first. A task's rank is its place here.
pub const CLAIM_ORDER: [TaskPriority; 4] = [
    TaskPriority::Urgent,
    TaskPriority::High,
    TaskPriority::Normal,
    TaskPriority::Low,
];

/// Where `priority` sorts among claimable tasks: its place in [`CLAIM_ORDER`].
pub const fn priority_rank(priority: TaskPriority) -> u8 {
    match priority {
        TaskPriority::Urgent => 0,
        TaskPriority::High => 1,
        TaskPriority::Normal => 2,
        TaskPriority::Low => 3,
    }
}

/// What a task sorts by among claimable ones, in claim order (ascending): its
/// priority's rank (urgent first), then when it was created (oldest first), then its id.
pub type ClaimKey = (u8, OffsetDateTime, TaskId);

/// The claim key of a task of `priority`, created at `created_at`, `id`.
pub fn claim_key(priority: TaskPriority, created_at: OffsetDateTime, id: TaskId) -> ClaimKey {
    (priority_rank(priority), created_at, id)
}

/// The status a claimed task holds its lease in.
pub const LEASED: TaskStatus = TaskStatus::InProgress;

/// Whether the claim lease of a task in `status`, leased until `lease_expires_at`, ran
/// out at `now`: the task is [`LEASED`] and the lease ended at or before `now`. The
/// stores find these tasks for the expiry sweep; the sweep hands them back.
pub fn lease_expired(
    status: TaskStatus,
    lease_expires_at: Option<OffsetDateTime>,
    now: OffsetDateTime,
) -> bool {
    status == LEASED && lease_expires_at.is_some_and(|until| until <= now)
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;

    fn agent() -> AgentId {
        AgentId::from_uuid(Uuid::from_u128(7))
    }

    /// Every blocker state a dependency can be in: gone, or in any status.
    fn blocker_states() -> Vec<Option<TaskStatus>> {
        std::iter::once(None)
            .chain(TaskStatus::ALL.into_iter().map(Some))
            .collect()
    }

    #[test]
    fn only_an_unassigned_todo_task_is_open() {
        for status in TaskStatus::ALL {
            for assignee in [None, Some(agent())] {
                assert_eq!(
                    CLAIMABLE.open(status, assignee),
                    status == TaskStatus::Todo && assignee.is_none(),
                    "{status:?} {assignee:?}"
                );
            }
        }
    }

    #[test]
    fn an_open_task_is_claimable_when_every_blocker_is_done_or_gone() {
        let states = blocker_states();
        for status in TaskStatus::ALL {
            for assignee in [None, Some(agent())] {
                assert_eq!(
                    CLAIMABLE.admits(status, assignee, []),
                    CLAIMABLE.open(status, assignee)
                );
                for first in &states {
                    for second in &states {
                        let blockers_done = [first, second]
                            .iter()
                            .all(|b| matches!(b, None | Some(TaskStatus::Done)));
                        assert_eq!(
                            CLAIMABLE.admits(status, assignee, [*first, *second]),
                            CLAIMABLE.open(status, assignee) && blockers_done,
                            "{status:?} {assignee:?} {first:?} {second:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_lease_runs_out_at_its_end_and_only_in_progress() {
        let now = datetime!(2026-01-01 12:00 UTC);
        let second = time::Duration::SECOND;
        for status in TaskStatus::ALL {
            let leased = status == TaskStatus::InProgress;
            assert!(!lease_expired(status, None, now), "{status:?}");
            assert_eq!(lease_expired(status, Some(now - second), now), leased);
            assert_eq!(lease_expired(status, Some(now), now), leased);
            assert!(
                !lease_expired(status, Some(now + second), now),
                "{status:?}"
            );
        }
    }

    #[test]
    fn urgent_work_ranks_first_and_low_last() {
        let ranks: Vec<u8> = TaskPriority::ALL.into_iter().map(priority_rank).collect();
        assert_eq!(ranks, [0, 1, 2, 3]);
        for (place, priority) in CLAIM_ORDER.into_iter().enumerate() {
            assert_eq!(usize::from(priority_rank(priority)), place, "{priority:?}");
        }
    }

    #[test]
    fn claim_order_is_priority_then_age_then_id() {
        use std::cmp::Ordering;
        let claim_order = |a: &ClaimKey, b: &ClaimKey| a.cmp(b);
        let old = datetime!(2026-01-01 0:00 UTC);
        let new = datetime!(2026-01-02 0:00 UTC);
        let (a, b) = (
            TaskId::from_uuid(Uuid::from_u128(1)),
            TaskId::from_uuid(Uuid::from_u128(2)),
        );
        let urgent_new = claim_key(TaskPriority::Urgent, new, b);
        let low_old = claim_key(TaskPriority::Low, old, a);
        assert_eq!(claim_order(&urgent_new, &low_old), Ordering::Less);
        let normal_old = claim_key(TaskPriority::Normal, old, b);
        let normal_new = claim_key(TaskPriority::Normal, new, a);
        assert_eq!(claim_order(&normal_old, &normal_new), Ordering::Less);
        let first = claim_key(TaskPriority::High, old, a);
        let second = claim_key(TaskPriority::High, old, b);
        assert_eq!(claim_order(&first, &second), Ordering::Less);
        assert_eq!(claim_order(&first, &first), Ordering::Equal);
    }
}
