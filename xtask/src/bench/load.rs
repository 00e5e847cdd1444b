//! The load generator: N virtual clients, each on its own keep-alive connection, each
//! sending its next request as soon as the previous answer is read (closed loop, like
//! wrk). Only requests started after the warm-up and before the end are measured.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::client::Client;
use super::codehost::HostEvents;
use super::scenario::{OwnTask, Scenario, WorkerState};
use super::server::{cpu_ticks, peak_rss_kib as kernel_peak_rss_kib, reset_peak_rss, rss_kib};
use super::sign::Credentials;

/// How many failed answers are kept to show.
const ERROR_SAMPLES: usize = 5;

/// How often the server's resident memory is sampled.
const RSS_EVERY: Duration = Duration::from_millis(100);

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// The server.
    pub addr: SocketAddr,
    /// Its process id, for CPU and memory.
    pub pid: u32,
    /// What to send.
    pub scenario: Scenario,
    /// Virtual clients.
    pub connections: usize,
    /// Unmeasured run-in: connections open, caches and pools fill.
    pub warmup: Duration,
    /// Measured time.
    pub duration: Duration,
    /// Worker `i` signs as `agents[i % agents.len()]`.
    pub agents: Arc<Vec<Credentials>>,
    /// The UUIDs of `agents`, in the same order.
    pub agent_ids: Arc<Vec<String>>,
    /// Seeded tasks for reads.
    pub task_ids: Arc<Vec<String>>,
    /// One task per worker for transitions, when the scenario needs them.
    pub own_tasks: Vec<OwnTask>,
    /// The code-host connection, when the scenario sends its events.
    pub host: Option<Arc<HostEvents>>,
    /// The admin's access token, when the scenario browses the dashboard.
    pub session: Option<Arc<String>>,
}

/// What one scenario measured.
#[derive(Debug, Default)]
pub struct LoadOutcome {
    /// Latency of every measured request, in microseconds, sorted.
    pub latencies_us: Vec<u32>,
    /// Failed answers (non-2xx) and transport errors, warm-up included.
    pub errors: u64,
    /// The first few of them.
    pub error_samples: Vec<String>,
    /// Measured time.
    pub measured: Duration,
    /// Server CPU (user + system) during the measured time, in clock ticks.
    pub cpu_ticks: u64,
    /// Largest server resident set during the measured time, KiB: the larger of the
    /// kernel's `VmHWM` reset when measuring starts (where `/proc/<pid>/clear_refs` may be
    /// written) and `VmRSS` sampled every 100 ms.
    pub peak_rss_kib: u64,
    /// The kernel's peak resident set before measuring started (since the process
    /// started or the previous scenario's reset), KiB.
    pub earlier_peak_rss_kib: u64,
}

/// One worker's share.
#[derive(Debug, Default)]
struct Tally {
    latencies_us: Vec<u32>,
    errors: u64,
}

/// Runs `plan` to the end and gathers the numbers.
pub async fn run(plan: LoadPlan) -> anyhow::Result<LoadOutcome> {
    anyhow::ensure!(!plan.agents.is_empty(), "no agent to sign with");
    let started = Instant::now();
    let measure_from = started + plan.warmup;
    let until = measure_from + plan.duration;
    let kept_errors = Arc::new(Mutex::new(Vec::new()));

    let mut workers = Vec::with_capacity(plan.connections);
    for worker in 0..plan.connections {
        let own_task = plan.own_tasks.get(worker).cloned();
        let state = WorkerState::new(worker, Arc::clone(&plan.task_ids), own_task)
            .with_agents(Arc::clone(&plan.agent_ids))
            .with_host(plan.host.clone())
            .with_session(plan.session.clone());
        let credentials = plan.agents[worker % plan.agents.len()].clone();
        workers.push(tokio::spawn(worker_loop(
            plan.addr,
            plan.scenario,
            state,
            credentials,
            (measure_from, until),
            Arc::clone(&kept_errors),
        )));
    }

    tokio::time::sleep_until(measure_from.into()).await;
    let cpu_before = cpu_ticks(plan.pid)?;
    // The peak so far (set-up, warm-up, the scenarios before) is kept for the run's
    // overall figure before the reset starts this scenario's.
    let earlier_peak_rss_kib = kernel_peak_rss_kib(plan.pid).unwrap_or(0);
    let peak_known = reset_peak_rss(plan.pid);
    let sampler = tokio::spawn(sample_rss(plan.pid, until));
    tokio::time::sleep_until(until.into()).await;
    let cpu_after = cpu_ticks(plan.pid)?;
    let mut peak_rss_kib = sampler.await?;
    if peak_known {
        // The kernel's own peak since the reset also sees spikes between two samples.
        peak_rss_kib = peak_rss_kib.max(kernel_peak_rss_kib(plan.pid).unwrap_or(0));
    }

    let mut outcome = LoadOutcome {
        measured: plan.duration,
        cpu_ticks: cpu_after.saturating_sub(cpu_before),
        peak_rss_kib,
        earlier_peak_rss_kib,
        ..LoadOutcome::default()
    };
    for worker in workers {
        let tally = worker.await?;
        outcome.latencies_us.extend(tally.latencies_us);
        outcome.errors += tally.errors;
    }
    outcome.latencies_us.sort_unstable();
    outcome.error_samples = kept_errors.lock().map(|s| s.clone()).unwrap_or_default();
    Ok(outcome)
}

async fn worker_loop(
    addr: SocketAddr,
    scenario: Scenario,
    mut state: WorkerState,
    credentials: Credentials,
    (measure_from, until): (Instant, Instant),
    kept_errors: Arc<Mutex<Vec<String>>>,
) -> Tally {
    let mut client = Client::new(addr);
    let mut tally = Tally::default();
    loop {
        let now = Instant::now();
        if now >= until {
            break;
        }
        let measured = now >= measure_from;
        let (op, call) = state.next_call(scenario);
        let failure = match client.send(&call, &credentials).await {
            Ok(answer) => {
                if measured {
                    let micros = u32::try_from(answer.latency.as_micros()).unwrap_or(u32::MAX);
                    tally.latencies_us.push(micros);
                }
                if answer.status.is_success() && op.succeeded(&answer.body) {
                    state.accepted(op);
                    None
                } else {
                    Some(answer.describe(&call))
                }
            }
            Err(err) => {
                // A transport error has no latency worth keeping; back off a little so
                // that a dead server does not turn this loop into a busy spin.
                tokio::time::sleep(Duration::from_millis(10)).await;
                Some(format!("{} {} -> {err:#}", call.method, call.target))
            }
        };
        if let Some(text) = failure {
            tally.errors += 1;
            if let Ok(mut kept) = kept_errors.lock()
                && kept.len() < ERROR_SAMPLES
            {
                kept.push(text);
            }
        }
    }
    tally
}

/// The largest `VmRSS` seen from now until `until`, sampled every 100 ms.
async fn sample_rss(pid: u32, until: Instant) -> u64 {
    let mut peak = 0;
    loop {
        peak = peak.max(rss_kib(pid).unwrap_or(0));
        if Instant::now() >= until {
            return peak;
        }
        tokio::time::sleep(RSS_EVERY).await;
    }
}
