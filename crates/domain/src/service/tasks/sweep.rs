//! The background escalation sweep (decision D-37), driven by the clock port.

use super::TaskService;
use crate::model::{Escalation, EscalationReason, OrgId, TaskId, TaskPriority};
use crate::ports::Overdue;
use crate::rules::escalation::SweepThresholds;
use crate::service::ServiceError;

/// Escalates overdue tasks by itself: blocked too long, stale, past due, or with an
/// inactive assignee, each at most once per task and reason however many instances
/// sweep at the same time.
#[derive(Debug, Clone)]
pub struct EscalationSweep {
    tasks: TaskService,
    thresholds: SweepThresholds,
    batch: u32,
}

impl EscalationSweep {
    /// Tasks looked at per reason and run; the rest wait for the next run.
    pub const DEFAULT_BATCH: u32 = 200;

    /// A sweep over the tasks of `tasks` with `thresholds`.
    pub fn new(tasks: TaskService, thresholds: SweepThresholds) -> Self {
        Self {
            tasks,
            thresholds,
            batch: Self::DEFAULT_BATCH,
        }
    }

    /// One pass at the clock's current time. A task that cannot be escalated (its
    /// transaction failed) is reported in [`SweepRun::failed`] and does not hold back the
    /// others; only a failed search stops the pass.
    pub async fn run_once(&self) -> Result<SweepRun, ServiceError> {
        let now = self.tasks.clock.now();
        let mut queries: Vec<Overdue> = TaskPriority::ALL
            .into_iter()
            .map(|priority| Overdue::BlockedSince {
                priority,
                since: now - self.thresholds.blocked_for(priority),
            })
            .collect();
        queries.push(Overdue::IdleSince {
            since: now - self.thresholds.stale,
        });
        queries.push(Overdue::PastDue { now });
        queries.push(Overdue::AssigneeInactive);
        let mut run = SweepRun::default();
        for query in queries {
            let reason = query.reason();
            for (org, task) in self.tasks.tasks.overdue(query, self.batch).await? {
                match self
                    .tasks
                    .escalate_overdue(org, task, reason, self.thresholds, now)
                    .await
                {
                    Ok(made) => run.escalated.extend(made),
                    Err(err) => run.failed.push(SweepFailure {
                        org,
                        task,
                        reason,
                        error: err,
                    }),
                }
            }
        }
        Ok(run)
    }
}

/// What one pass of the sweep did.
#[derive(Debug, Default)]
pub struct SweepRun {
    /// The escalations it made.
    pub escalated: Vec<Escalation>,
    /// The tasks it could not escalate; the next pass tries them again.
    pub failed: Vec<SweepFailure>,
}

/// A task the sweep could not escalate.
#[derive(Debug)]
pub struct SweepFailure {
    /// Its organization.
    pub org: OrgId,
    /// The task.
    pub task: TaskId,
    /// The reason it was due for.
    pub reason: EscalationReason,
    /// Why it failed.
    pub error: ServiceError,
}
