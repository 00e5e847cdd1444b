//! The background escalation sweep (decision D-37), driven by the clock port.

use super::TaskService;
use crate::model::{Escalation, TaskPriority};
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

    /// One pass at the clock's current time; the escalations it made.
    pub async fn run_once(&self) -> Result<Vec<Escalation>, ServiceError> {
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
        let mut made = Vec::new();
        for query in queries {
            for (org, task) in self.tasks.tasks.overdue(query, self.batch).await? {
                let escalated = self
                    .tasks
                    .escalate_overdue(org, task, query.reason(), self.thresholds, now)
                    .await?;
                made.extend(escalated);
            }
        }
        Ok(made)
    }
}
