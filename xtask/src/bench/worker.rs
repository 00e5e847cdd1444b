//! The `worker` scenario: what `muster worker` costs per task, apart from the agent CLI
//! it runs.
//!
//! Unassigned `todo` tasks are created, then `muster worker --adapter command --command
//! true` works through them as one of the seeded agents (claim, run started, workspace,
//! `true` on the prompt, run finished, result comment, task to `review`). It runs on the
//! database before the load scenarios' tasks are seeded, so that the tasks it claims are
//! exactly the ones created for it. Measured: the wall time, the server's CPU over the
//! whole run, the worker's own CPU and, apart, the CPU of the `true` children it ran.

use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::client::{Call, Client};
use super::seed::create_tasks;
use super::server::{children_cpu_ticks, cpu_ticks, peak_rss_kib};
use super::sign::Credentials;

/// The scenario's name on the command line.
pub const NAME: &str = "worker";

/// Tasks worked through by default (`--worker-tasks`).
pub const DEFAULT_TASKS: usize = 300;

/// `--concurrency` of the worker.
const CONCURRENCY: &str = "4";

/// How often the tasks' statuses are asked while the worker works: often enough that the
/// wall time is read to a few percent, rarely enough that asking costs the server
/// nothing worth counting (one `limit=1` list a time).
const POLL_EVERY: Duration = Duration::from_millis(50);

/// How long the worker may take to exit after SIGTERM (nothing is running by then).
const STOP_WITHIN: Duration = Duration::from_secs(20);

/// What measuring the worker needs.
#[derive(Debug)]
pub struct WorkerPlan<'a> {
    /// The `muster` binary under test (the worker is a subcommand of it).
    pub binary: &'a Path,
    /// Where the server listens.
    pub addr: SocketAddr,
    /// The server's process id, for its CPU.
    pub server_pid: u32,
    /// The seeded agents: the tasks are created by them, and the worker signs as the
    /// second (an active worker-mode agent; the first is the HR agent).
    pub agents: &'a Arc<Vec<Credentials>>,
    /// Tasks to create and work through.
    pub tasks: usize,
    /// A scratch folder (removed by the caller): workspaces, the worker's log.
    pub scratch: &'a Path,
}

/// What one worker run measured.
#[derive(Debug, Clone)]
pub struct WorkerFigures {
    /// Tasks created for the worker.
    pub tasks: usize,
    /// Of them, those that ended in `review` (the rest failed).
    pub reviewed: usize,
    /// From starting the worker to every task out of `todo` and `in_progress`.
    pub wall: Duration,
    /// Server CPU (user + system) over that time, clock ticks.
    pub server_ticks: u64,
    /// The worker process's own CPU, start-up included, clock ticks.
    pub worker_ticks: u64,
    /// The CPU of the programs the worker ran (`true`), clock ticks.
    pub children_ticks: u64,
    /// The worker's peak resident set, KiB.
    pub worker_peak_rss_kib: u64,
    /// `CLK_TCK`.
    pub ticks_per_second: u64,
}

impl WorkerFigures {
    /// Tasks that did not end in `review`.
    pub fn failed(&self) -> usize {
        self.tasks.saturating_sub(self.reviewed)
    }

    /// Tasks worked per second of wall time.
    pub fn tasks_per_second(&self) -> f64 {
        as_f64(self.tasks as u64) / self.wall.as_secs_f64().max(f64::EPSILON)
    }

    /// Milliseconds of CPU per task for `ticks`.
    pub fn ms_per_task(&self, ticks: u64) -> f64 {
        if self.tasks == 0 {
            return 0.0;
        }
        as_f64(ticks) * 1000.0 / as_f64(self.ticks_per_second.max(1)) / as_f64(self.tasks as u64)
    }

    /// The goal's figure: server plus worker CPU per task, ms (the children apart).
    pub fn overhead_ms_per_task(&self) -> f64 {
        self.ms_per_task(self.server_ticks + self.worker_ticks)
    }
}

/// Counts become floats only for rates, where 52 bits are plenty.
#[allow(clippy::cast_precision_loss)]
fn as_f64(n: u64) -> f64 {
    n as f64
}

/// Creates the tasks, lets a worker work through them, and measures it.
pub async fn measure(plan: &WorkerPlan<'_>) -> anyhow::Result<WorkerFigures> {
    anyhow::ensure!(
        plan.tasks > 0,
        "the worker scenario needs at least one task"
    );
    let agent = plan
        .agents
        .get(1)
        .or_else(|| plan.agents.first())
        .context("no agent to work as")?;
    create_tasks(plan.addr, plan.agents, plan.tasks, false).await?;
    let folder = plan.scratch.join("worker");
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let reader = &plan.agents[0];
    let mut client = Client::new(plan.addr);
    // Long enough for a slow machine, short enough that a worker that stalls fails.
    let deadline = Duration::from_mins(1) + Duration::from_millis(200) * count_u32(plan.tasks);

    let server_before = cpu_ticks(plan.server_pid)?;
    let started = Instant::now();
    let mut worker = WorkerProcess::start(plan.binary, plan.addr, agent, &folder)?;
    loop {
        if let Some(status) = worker.child.try_wait()? {
            bail!("muster worker exited ({status}):\n{}", worker.log_tail(20));
        }
        if started.elapsed() > deadline {
            bail!(
                "the worker had not worked through {} tasks after {deadline:?}:\n{}",
                plan.tasks,
                worker.log_tail(20)
            );
        }
        // Cheap checks first; the count, a whole page, only once they say it is over.
        if !any_with(&mut client, reader, "todo").await?
            && !any_with(&mut client, reader, "in_progress").await?
        {
            let finished = count_with(&mut client, reader, "review").await?
                + count_with(&mut client, reader, "blocked").await?;
            if finished >= plan.tasks {
                break;
            }
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
    let wall = started.elapsed();
    let pid = worker.child.id();
    // Every CLI has been waited for by now: its task would not have left `in_progress`.
    let worker_ticks = cpu_ticks(pid)?;
    let children_ticks = children_cpu_ticks(pid)?;
    let worker_peak_rss_kib = peak_rss_kib(pid).unwrap_or(0);
    let server_ticks = cpu_ticks(plan.server_pid)?.saturating_sub(server_before);
    let status = worker.stop().await?;
    anyhow::ensure!(
        status.success(),
        "muster worker exited with {status} after SIGTERM:\n{}",
        worker.log_tail(20)
    );
    let reviewed = count_with(&mut client, reader, "review").await?;
    if reviewed < plan.tasks {
        eprintln!(
            "xtask: worker: {} of {} tasks did not reach review; its log's tail:\n{}",
            plan.tasks - reviewed,
            plan.tasks,
            worker.log_tail(20)
        );
    }
    Ok(WorkerFigures {
        tasks: plan.tasks,
        reviewed,
        wall,
        server_ticks,
        worker_ticks,
        children_ticks,
        worker_peak_rss_kib,
        ticks_per_second: super::server::clock_ticks_per_second(),
    })
}

fn count_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Whether any task is in `status`.
async fn any_with(client: &mut Client, reader: &Credentials, status: &str) -> anyhow::Result<bool> {
    let (found, _) = page(client, reader, status, 1, None).await?;
    Ok(found > 0)
}

/// How many tasks are in `status`, page by page.
async fn count_with(
    client: &mut Client,
    reader: &Credentials,
    status: &str,
) -> anyhow::Result<usize> {
    let mut total = 0;
    let mut cursor = None;
    loop {
        let (found, next) = page(client, reader, status, 500, cursor.as_deref()).await?;
        total += found;
        match next {
            Some(next) if found > 0 => cursor = Some(next),
            _ => return Ok(total),
        }
    }
}

/// One page of `GET /tasks?status=`: how many tasks it holds, and the next cursor.
async fn page(
    client: &mut Client,
    reader: &Credentials,
    status: &str,
    limit: u32,
    cursor: Option<&str>,
) -> anyhow::Result<(usize, Option<String>)> {
    let mut target = format!("/tasks?status={status}&limit={limit}");
    if let Some(cursor) = cursor {
        target.push_str("&cursor=");
        target.extend(form_urlencoded::byte_serialize(cursor.as_bytes()));
    }
    let call = Call::get(target);
    let answer = client.send(&call, reader).await?;
    if !answer.status.is_success() {
        bail!("listing tasks failed: {}", answer.describe(&call));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&answer.body).context("the task list is not JSON")?;
    let found = json
        .get("data")
        .and_then(serde_json::Value::as_array)
        .context("the task list has no data")?
        .len();
    let next = json
        .pointer("/meta/nextCursor")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    Ok((found, next))
}

/// A running `muster worker`, stopped (SIGTERM, then SIGKILL) when dropped.
#[derive(Debug)]
struct WorkerProcess {
    child: Child,
    log: PathBuf,
    stopped: bool,
}

impl WorkerProcess {
    /// Starts the worker as `agent` against the server at `addr`; its workspaces and
    /// its log go in `folder`.
    fn start(
        binary: &Path,
        addr: SocketAddr,
        agent: &Credentials,
        folder: &Path,
    ) -> anyhow::Result<Self> {
        // An empty configuration file: no user profile on this machine interferes.
        let config = folder.join("no-config.toml");
        std::fs::write(&config, "").context("cannot write the worker's config file")?;
        let log = folder.join("worker.log");
        let out = File::create(&log).context("cannot create the worker log")?;
        let err = out.try_clone()?;
        let child = Command::new(binary)
            .args(["worker", "--adapter", "command", "--command", "true"])
            .args(["--concurrency", CONCURRENCY, "--poll", "1"])
            .arg("--workspace-root")
            .arg(folder.join("workspaces"))
            .env("MUSTER_SERVER", format!("http://{addr}"))
            .env("MUSTER_AGENT_ID", &agent.agent_id)
            .env("MUSTER_AGENT_SECRET", &agent.secret)
            .env("MUSTER_CONFIG", &config)
            .env_remove("MUSTER_PROFILE")
            .env("MUSTER_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .context("cannot start muster worker")?;
        Ok(Self {
            child,
            log,
            stopped: false,
        })
    }

    /// SIGTERM, and the exit status (SIGKILL and an error when it does not stop in time).
    async fn stop(&mut self) -> anyhow::Result<ExitStatus> {
        self.stopped = true;
        terminate(self.child.id());
        let deadline = Instant::now() + STOP_WITHIN;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        bail!(
            "muster worker did not stop within {STOP_WITHIN:?} of SIGTERM:\n{}",
            self.log_tail(20)
        )
    }

    /// The last `lines` lines the worker wrote.
    fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        if self.stopped || matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        terminate(self.child.id());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// SIGTERM to `pid` (std can only SIGKILL).
fn terminate(pid: u32) {
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
}
