//! How work pays, escalates and is budgeted: the completion reward (decision D-58), the
//! escalation sweep's schedule and thresholds (D-37), and the budget period with its
//! roll-over job (D-57), and the expiry of claims' leases, from flags or `MUSTER_*`
//! variables.

use tracing::Instrument;

use crate::job_span::{finish, job_span};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use muster_domain::model::{Breakers, Threshold};
use muster_domain::rules::budget::BudgetPeriod;
use muster_domain::rules::escalation::SweepThresholds;
use muster_domain::rules::reward::DEFAULT_TASK_REWARD;
use muster_domain::service::{BudgetRollover, EscalationSweep, TaskService};
use muster_http::{JobOutcome, Metrics};

use crate::metrics_settings::record;

/// The task settings of `muster serve`.
#[derive(Debug, Clone, Args)]
pub struct TaskSettings {
    /// The reward a task gets when its creator names none: escrowed from its payer
    /// (the creating agent, else the organization's treasury) when the payer can fund
    /// it, and paid to the assignee when the task is done (decision D-101).
    #[arg(long, env = "MUSTER_TASK_REWARD", default_value_t = DEFAULT_TASK_REWARD,
          value_parser = clap::value_parser!(i64).range(0..=1_000_000))]
    pub task_reward: i64,
    /// Seconds between two runs of the escalation sweep; 0 turns it off.
    #[arg(long, env = "MUSTER_ESCALATION_SWEEP_SECS", default_value_t = 60)]
    pub escalation_sweep_secs: u64,
    /// Hours a blocked task waits before it escalates, by priority: urgent, high,
    /// normal, low.
    #[arg(long, env = "MUSTER_ESCALATION_BLOCKED_HOURS", default_value = "2,8,24,72",
          value_parser = parse_blocked_hours)]
    pub escalation_blocked_hours: BlockedHours,
    /// Hours an in-progress task may go without activity before it escalates.
    #[arg(long, env = "MUSTER_ESCALATION_STALE_HOURS", default_value_t = 72,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub escalation_stale_hours: u32,
    /// Length of agents' budget periods: day, week or month (each starts at 00:00 UTC;
    /// weeks on Monday).
    #[arg(long, env = "MUSTER_BUDGET_PERIOD", default_value = "day",
          value_parser = parse_period)]
    pub budget_period: BudgetPeriod,
    /// Seconds between two checks for budget periods to roll over; 0 turns the job off
    /// (reads and spends still see the new period at once).
    #[arg(long, env = "MUSTER_BUDGET_ROLLOVER_SECS", default_value_t = 60)]
    pub budget_rollover_secs: u64,
    /// Seconds between two looks for claims whose lease ran out (their tasks go back to
    /// `todo`); 0 turns the job off (a claim still hands back its organization's
    /// expired leases first).
    #[arg(long, env = "MUSTER_LEASE_SWEEP_SECS", default_value_t = 10)]
    pub lease_sweep_secs: u64,
    /// Milliseconds between two looks for routines that are due (decision D-108); 0
    /// turns routines off on this instance. Every instance may run it: each due time
    /// gets its task once.
    #[arg(long, env = "MUSTER_ROUTINE_TICK_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub routine_tick_ms: u64,
    /// The runaway guard's default for every organization without its own: writes an
    /// agent may make per minute before it is suspended; 0 is off.
    #[arg(long, env = "MUSTER_GUARD_ACTIONS_PER_MINUTE", default_value_t = 0,
          value_parser = clap::value_parser!(i64).range(0..=Breakers::MAX_ACTIONS_PER_MINUTE))]
    pub guard_actions_per_minute: i64,
    /// The runaway guard's default: credits an agent may spend (or send) per hour before
    /// it is suspended; 0 is off.
    #[arg(long, env = "MUSTER_GUARD_CREDITS_PER_HOUR", default_value_t = 0,
          value_parser = clap::value_parser!(i64).range(0..=Breakers::MAX_CREDITS_PER_HOUR))]
    pub guard_credits_per_hour: i64,
    /// What runs' usage costs (decision D-106).
    #[command(flatten)]
    pub runs: crate::run_settings::RunSettings,
}

impl TaskSettings {
    /// The runaway guard's defaults.
    pub fn guard_defaults(&self) -> Breakers {
        Breakers {
            actions_per_minute: Threshold::from_stored(self.guard_actions_per_minute),
            credits_per_hour: Threshold::from_stored(self.guard_credits_per_hour),
        }
    }
}

fn parse_period(value: &str) -> Result<BudgetPeriod, String> {
    BudgetPeriod::parse(value).ok_or_else(|| "expected day, week or month".to_owned())
}

impl Default for TaskSettings {
    fn default() -> Self {
        Self {
            task_reward: DEFAULT_TASK_REWARD,
            escalation_sweep_secs: 60,
            escalation_blocked_hours: BlockedHours([2, 8, 24, 72]),
            escalation_stale_hours: 72,
            budget_period: BudgetPeriod::Day,
            budget_rollover_secs: 60,
            lease_sweep_secs: 10,
            routine_tick_ms: 1000,
            guard_actions_per_minute: 0,
            guard_credits_per_hour: 0,
            runs: crate::run_settings::RunSettings::default(),
        }
    }
}

/// Four whole hours, urgent first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockedHours(pub [u32; 4]);

fn parse_blocked_hours(value: &str) -> Result<BlockedHours, String> {
    let hours: Vec<u32> = value
        .split(',')
        .map(|part| part.trim().parse::<u32>().ok().filter(|h| *h > 0))
        .collect::<Option<_>>()
        .ok_or("expected four positive whole numbers of hours, such as 2,8,24,72")?;
    <[u32; 4]>::try_from(hours)
        .map(BlockedHours)
        .map_err(|_| "expected four values: urgent,high,normal,low".to_owned())
}

impl TaskSettings {
    /// The sweep's thresholds.
    pub fn thresholds(&self) -> SweepThresholds {
        let hours = |h: u32| time::Duration::hours(i64::from(h));
        let [urgent, high, normal, low] = self.escalation_blocked_hours.0;
        SweepThresholds {
            blocked: [hours(urgent), hours(high), hours(normal), hours(low)],
            stale: hours(self.escalation_stale_hours),
        }
    }

    /// How often the sweep runs; `None` when it is off.
    pub fn sweep_every(&self) -> Option<Duration> {
        (self.escalation_sweep_secs > 0).then(|| Duration::from_secs(self.escalation_sweep_secs))
    }
}

impl TaskSettings {
    /// How often expired leases are looked for; `None` when the job is off.
    pub fn lease_sweep_every(&self) -> Option<Duration> {
        (self.lease_sweep_secs > 0).then(|| Duration::from_secs(self.lease_sweep_secs))
    }

    /// How often due routines are looked for; `None` when routines are off here.
    pub fn routine_every(&self) -> Option<Duration> {
        (self.routine_tick_ms > 0).then(|| Duration::from_millis(self.routine_tick_ms))
    }

    /// How often the budget roll-over job runs; `None` when it is off.
    pub fn rollover_every(&self) -> Option<Duration> {
        (self.budget_rollover_secs > 0).then(|| Duration::from_secs(self.budget_rollover_secs))
    }
}

/// Background worker: fires the routines that are due, every `every` (decision D-108).
/// Several instances may run it at once; a due time gets its task once all the same.
pub async fn fire_routines(
    routines: muster_domain::service::RoutineService,
    every: Duration,
    metrics: Option<Arc<Metrics>>,
) {
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let span = job_span("routines");
        let outcome = async {
            match routines.fire_due().await {
                Ok(report) => {
                    if report.created > 0 || report.paused > 0 {
                        tracing::info!(
                            created = report.created,
                            paused = report.paused,
                            "routines fired"
                        );
                    }
                    for failure in &report.failed {
                        tracing::warn!(
                            routine = %failure.routine,
                            err = %failure.error,
                            "a routine's firing created no task; it goes on to its next due time"
                        );
                    }
                    JobOutcome::Done(u64::try_from(report.created).unwrap_or(u64::MAX))
                }
                Err(err) => {
                    tracing::warn!(%err, "firing routines failed; the next run tries again");
                    JobOutcome::Failed
                }
            }
        }
        .instrument(span.clone())
        .await;
        finish(&span, &outcome);
        record(metrics.as_ref(), "routines", outcome);
    }
}

/// Background worker: rolls budget periods over every `every`. The roll-over is one
/// conditional update, so instances racing on it change each agent once per period.
pub async fn roll_budgets(job: BudgetRollover, every: Duration, metrics: Option<Arc<Metrics>>) {
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let span = job_span("budget_rollover");
        let outcome = async {
            match job.run_once().await {
                Ok(rolled) => {
                    if rolled > 0 {
                        tracing::info!(rolled, "budget periods rolled over");
                    }
                    JobOutcome::Done(rolled)
                }
                Err(err) => {
                    tracing::warn!(%err, "budget roll-over failed; the next run tries again");
                    JobOutcome::Failed
                }
            }
        }
        .instrument(span.clone())
        .await;
        finish(&span, &outcome);
        record(metrics.as_ref(), "budget_rollover", outcome);
    }
}

/// Background worker: every `every`, hands back the tasks of claims whose lease ran out
/// (a batch at a time until none is left). Each is a conditional change of its task, so
/// instances racing on it hand each task back once.
pub async fn expire_leases(tasks: TaskService, every: Duration, metrics: Option<Arc<Metrics>>) {
    const BATCH: u32 = 200;
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let span = job_span("lease_expiry");
        let mut expired = 0_u64;
        let outcome = async {
            loop {
                match tasks.expire_leases(None, BATCH).await {
                    Ok(done) if done.is_empty() => break JobOutcome::Done(expired),
                    Ok(done) => {
                        tracing::info!(expired = done.len(), "claims' leases ran out");
                        expired += u64::try_from(done.len()).unwrap_or(u64::MAX);
                    }
                    Err(err) => {
                        tracing::warn!(%err, "lease expiry failed; the next run tries again");
                        break JobOutcome::Failed;
                    }
                }
            }
        }
        .instrument(span.clone())
        .await;
        finish(&span, &outcome);
        record(metrics.as_ref(), "lease_expiry", outcome);
    }
}

/// Background worker: runs the escalation sweep every `every`. Several instances may
/// sweep at once; each task is escalated once per reason all the same.
pub async fn sweep_escalations(
    sweep: EscalationSweep,
    every: Duration,
    metrics: Option<Arc<Metrics>>,
) {
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let span = job_span("escalation_sweep");
        let outcome = async {
            match sweep.run_once().await {
                Ok(run) => {
                    if !run.escalated.is_empty() {
                        tracing::info!(escalated = run.escalated.len(), "escalation sweep");
                    }
                    for failure in &run.failed {
                        tracing::warn!(
                            task = %failure.task,
                            reason = failure.reason.as_str(),
                            err = %failure.error,
                            "could not escalate a task; the next sweep tries again"
                        );
                    }
                    if run.failed.is_empty() {
                        JobOutcome::Done(u64::try_from(run.escalated.len()).unwrap_or(u64::MAX))
                    } else {
                        JobOutcome::Failed
                    }
                }
                Err(err) => {
                    tracing::warn!(%err, "escalation sweep failed");
                    JobOutcome::Failed
                }
            }
        }
        .instrument(span.clone())
        .await;
        finish(&span, &outcome);
        record(metrics.as_ref(), "escalation_sweep", outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_hours_need_four_positive_numbers() {
        assert_eq!(
            parse_blocked_hours("1, 2,3,4"),
            Ok(BlockedHours([1, 2, 3, 4]))
        );
        assert!(parse_blocked_hours("1,2,3").is_err());
        assert!(parse_blocked_hours("1,2,3,0").is_err());
        assert!(parse_blocked_hours("a,2,3,4").is_err());
    }

    #[test]
    fn defaults_are_the_decided_ones() {
        assert_eq!(
            TaskSettings::default().thresholds(),
            SweepThresholds::default()
        );
        assert_eq!(
            TaskSettings::default().sweep_every(),
            Some(Duration::from_secs(60))
        );
        assert_eq!(TaskSettings::default().budget_period, BudgetPeriod::Day);
        assert_eq!(parse_period("week"), Ok(BudgetPeriod::Week));
        assert!(parse_period("year").is_err());
    }
}
