//! One run of the CLI, watched: its output into the run's log in batches, its usage
//! reported as the adapter reads it, a heartbeat at a third of the lease, and a stop as
//! soon as a run answer says `stopRequested` (or the worker is told to stop).

use std::time::Duration;

use muster_client::Client;
use muster_client::types::claims::HeartbeatBody;
use muster_client::types::model::StopReason;
use muster_client::types::runs::{RunResponse, UsageBody};
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, MissedTickBehavior, interval, sleep_until};
use uuid::Uuid;

use super::Shutdown;
use super::adapters::{Output, Reader, Stream};
use super::log_batch::LogBatch;
use super::process::{Line, Process};

/// How often waiting lines go to the server, at most.
const FLUSH_EVERY: Duration = Duration::from_millis(250);
/// A run that heard nothing from the server for this long asks for its run: a stop
/// takes effect within about this long even when the CLI prints nothing.
const CHECK_EVERY: Duration = Duration::from_secs(2);
/// After the CLI exits, how long its output may still take to drain.
const DRAIN: Duration = Duration::from_secs(2);
/// Attempts at one usage report that does not get through (same report id: safe).
const USAGE_ATTEMPTS: u32 = 5;

/// Why a run ended before its CLI did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A run answer said `stopRequested`.
    Asked(StopReason),
    /// The run was closed under the worker (its lease lapsed: `lost`).
    Lost,
    /// The worker was told to stop.
    Shutdown,
}

/// How the watch ended.
pub struct Ended {
    /// The CLI's exit code (`None`: ended by a signal).
    pub exit_code: Option<i32>,
    /// Set when the run was stopped rather than finished by the CLI.
    pub stop: Option<Stop>,
    /// What its usage reports added up to.
    pub usage: UsageTally,
}

/// The usage reports a run's CLI made, added up (for its span in traces).
#[derive(Debug, Clone, Copy, Default)]
pub struct UsageTally {
    pub reports: u64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_microusd: i64,
}

/// Settings of one watch.
pub struct Watch<'a> {
    pub client: &'a Client,
    pub run_id: Uuid,
    pub lease_seconds: u32,
    pub grace: Duration,
}

/// Watches `process` until it exited and its output is drained.
pub async fn watch(
    w: &Watch<'_>,
    mut process: Process,
    mut lines: mpsc::Receiver<Line>,
    reader: &mut dyn Reader,
    mut shutdown: watch::Receiver<Shutdown>,
) -> Ended {
    let mut log = LogBatch::default();
    let mut calls = Calls {
        w,
        stop: None,
        last_answer: Instant::now(),
        usage: UsageTally::default(),
    };
    let mut flush = interval(FLUSH_EVERY);
    flush.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let beat_every = Duration::from_secs(u64::from(w.lease_seconds.max(3) / 3));
    let mut beat = tokio::time::interval_at(Instant::now() + beat_every, beat_every);
    beat.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut check = interval(CHECK_EVERY);
    check.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut exit: Option<Option<i32>> = None;
    let mut lines_open = true;
    let mut drain_until: Option<Instant> = None;
    let mut shutdown_at: Option<Instant> = shutdown_deadline(*shutdown.borrow(), w.grace);
    // The stop that ended the CLI: one heard after the CLI exited on its own (the budget
    // spent by its final usage report) changes nothing of what it did.
    let mut interrupted: Option<Stop> = None;
    let far = Instant::now() + Duration::from_secs(86_400 * 365);
    loop {
        if exit.is_some() && !lines_open {
            break;
        }
        tokio::select! {
            line = lines.recv(), if lines_open => match line {
                Some(line) => {
                    let outputs = match line.stream {
                        Stream::Stderr => reader.stderr_line(&line.text),
                        _ => reader.stdout_line(&line.text),
                    };
                    for output in outputs {
                        match output {
                            Output::Log { stream, text } => log.push(stream, text),
                            Output::Usage(usage) => {
                                calls.flush(&mut log).await;
                                calls.report(usage).await;
                            }
                        }
                    }
                    if log.is_full() {
                        calls.flush(&mut log).await;
                    }
                }
                None => lines_open = false,
            },
            code = process.wait(), if exit.is_none() => {
                exit = Some(code.unwrap_or(None));
                // Nothing the CLI started outlives it, and its pipes close.
                process.reap_group();
                drain_until = Some(Instant::now() + DRAIN);
            },
            () = sleep_until(drain_until.unwrap_or(far)), if drain_until.is_some() => {
                // Output held open by something that escaped the group: stop reading.
                lines_open = false;
            },
            _ = flush.tick() => calls.flush(&mut log).await,
            _ = beat.tick(), if exit.is_none() => calls.heartbeat().await,
            _ = check.tick(), if exit.is_none() => {
                if calls.last_answer.elapsed() >= CHECK_EVERY {
                    calls.check().await;
                }
            },
            changed = shutdown.changed() => {
                if changed.is_err() {
                    // The worker is gone: nothing will tell this run to stop gracefully.
                    shutdown_at = Some(Instant::now());
                } else {
                    shutdown_at = shutdown_deadline(*shutdown.borrow(), w.grace);
                }
            },
            () = sleep_until(shutdown_at.unwrap_or(far)), if shutdown_at.is_some() && exit.is_none() => {
                calls.stop.get_or_insert(Stop::Shutdown);
            },
        }
        if let (Some(stop), None) = (calls.stop, exit) {
            // A CLI that already exited (its last line was the report that brought the
            // stop) was not interrupted: its own exit code stands.
            let code = if let Some(status) = process.exited() {
                status.code()
            } else {
                interrupted = Some(stop);
                process.stop(w.grace).await.unwrap_or(None)
            };
            exit = Some(code);
            process.reap_group();
            drain_until = Some(Instant::now() + DRAIN);
        }
    }
    calls.flush(&mut log).await;
    // A last word from the worker itself when it stopped the CLI.
    if let Some(stop) = interrupted {
        log.push(
            Stream::System,
            format!("[muster worker] {}", describe(stop)),
        );
        calls.flush(&mut log).await;
    }
    Ended {
        exit_code: exit.unwrap_or(None),
        stop: interrupted.or(calls.stop.filter(|stop| no_longer_ours(*stop))),
        usage: calls.usage,
    }
}

/// Whether a stop heard after the CLI exited on its own still ends the run as stopped:
/// when the task is no longer the worker's (cancelled, given to someone else, its run
/// closed), what the CLI did must not move it. A spent budget or a stop asked for does
/// not undo work already finished.
fn no_longer_ours(stop: Stop) -> bool {
    matches!(
        stop,
        Stop::Lost | Stop::Asked(StopReason::Cancelled | StopReason::Reassigned)
    )
}

/// What a stop did, for the log and the run's summary.
pub fn describe(stop: Stop) -> &'static str {
    match stop {
        Stop::Asked(StopReason::Cancelled) => "stopped: the task was cancelled",
        Stop::Asked(StopReason::Reassigned) => "stopped: the task went to someone else",
        Stop::Asked(StopReason::Budget) => "stopped: the agent's budget is exhausted",
        Stop::Asked(StopReason::Requested) => "stopped: a stop was asked for",
        Stop::Lost => "stopped: the run was closed (its lease lapsed)",
        Stop::Shutdown => "stopped: the worker was shut down",
    }
}

/// When running CLIs are stopped for a worker shutdown: after `grace` for a graceful
/// one, at once for an immediate one.
fn shutdown_deadline(shutdown: Shutdown, grace: Duration) -> Option<Instant> {
    match shutdown {
        Shutdown::No => None,
        Shutdown::Graceful => Some(Instant::now() + grace),
        Shutdown::Now => Some(Instant::now()),
    }
}

/// The run's calls to the server; every answer is read for a stop.
struct Calls<'a> {
    w: &'a Watch<'a>,
    stop: Option<Stop>,
    last_answer: Instant,
    usage: UsageTally,
}

impl Calls<'_> {
    fn answered(&mut self, run: &RunResponse) {
        self.last_answer = Instant::now();
        if run.stop_requested && self.stop.is_none() {
            self.stop = Some(Stop::Asked(
                run.stop_reason.unwrap_or(StopReason::Requested),
            ));
        }
    }

    fn refused(&mut self, what: &str, err: &muster_client::Error) {
        if err.code() == Some("run_closed") || err.code() == Some("run_not_found") {
            self.stop.get_or_insert(Stop::Lost);
        } else {
            eprintln!("muster worker: run {}: {what}: {err}", self.w.run_id);
        }
    }

    async fn flush(&mut self, log: &mut LogBatch) {
        while !log.is_empty() {
            let body = log.take();
            match self.w.client.append_run_log(self.w.run_id, &body).await {
                Ok(run) => self.answered(&run),
                Err(err) if err.is_retryable() || err.status().is_none() => {
                    // Not through: again with the next batch.
                    log.put_back(body);
                    eprintln!(
                        "muster worker: run {}: log not sent yet: {err}",
                        self.w.run_id
                    );
                    return;
                }
                Err(err) => {
                    self.refused("log refused", &err);
                    return;
                }
            }
        }
    }

    async fn report(&mut self, mut usage: UsageBody) {
        self.usage.reports += 1;
        self.usage.input_tokens = self.usage.input_tokens.saturating_add(usage.input_tokens);
        self.usage.output_tokens = self.usage.output_tokens.saturating_add(usage.output_tokens);
        self.usage.cost_microusd = self
            .usage
            .cost_microusd
            .saturating_add(usage.cost_microusd.unwrap_or(0));
        if usage.report_id.is_none() {
            usage.report_id = Some(format!("worker-{}", self.usage.reports));
        }
        for attempt in 1..=USAGE_ATTEMPTS {
            match self.w.client.report_usage(self.w.run_id, &usage).await {
                Ok(answer) => {
                    self.answered(&answer.data);
                    return;
                }
                Err(err)
                    if attempt < USAGE_ATTEMPTS
                        && (err.is_retryable() || err.status().is_none()) =>
                {
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
                }
                Err(err) => {
                    self.refused("usage report refused", &err);
                    return;
                }
            }
        }
    }

    async fn heartbeat(&mut self) {
        let body = HeartbeatBody {
            lease_seconds: Some(i64::from(self.w.lease_seconds)),
        };
        match self.w.client.heartbeat_run(self.w.run_id, &body).await {
            Ok(run) => self.answered(&run),
            // The task's claim is gone (its lease lapsed, or the run was closed): the run
            // is not the worker's any more. A retryable conflict (a concurrent change) is
            // not that: the next heartbeat tries again.
            Err(err) if err.status() == Some(409) && !err.is_retryable() => {
                self.stop.get_or_insert(Stop::Lost);
            }
            Err(err) => self.refused("heartbeat failed", &err),
        }
    }

    async fn check(&mut self) {
        match self.w.client.get_run(self.w.run_id).await {
            Ok(run) => {
                self.answered(&run);
                if !run.status.is_open() {
                    self.stop.get_or_insert(Stop::Lost);
                }
            }
            Err(err) => self.refused("could not read the run", &err),
        }
    }
}
