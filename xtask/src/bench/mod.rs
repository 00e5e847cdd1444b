//! `cargo xtask bench`: throughput and latency of a release `muster serve` on each
//! database engine, driven by a built-in load generator (see docs/benchmarks.md).
//!
//! Per engine: a fresh database, `muster bootstrap`, `muster serve` on a free port,
//! seeded tasks, then each scenario in turn (`health` first: the others are compared
//! with it). The server, the scratch folder and the PostgreSQL database are removed at
//! the end whatever happens: they are guards dropped on every path, Ctrl-C included.

pub mod admin;
pub(crate) mod client;
mod codehost;
mod collector;
pub(crate) mod database;
pub(crate) mod hooks;
mod load;
mod metrics;
mod remote;
mod report;
mod scenario;
mod seed;
pub(crate) mod server;
pub(crate) mod sign;
mod worker;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};

use database::{BenchDatabase, Engine};
use load::LoadPlan;
use report::{EngineReport, Restarts, RunInfo, ScenarioRow, planned_note};
use scenario::{OwnTask, Scenario};
use seed::{AGENTS_WANTED, AgentSeed, create_tasks, seed_agents};
use server::{
    Server, bootstrap, build_release, clock_ticks_per_second, generate_secret_key, target_dir,
};

/// `cargo xtask bench` options.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Database engine(s) to measure.
    #[arg(long, value_enum, default_value_t = EngineChoice::Both)]
    engine: EngineChoice,
    /// Measured seconds per scenario (after a warm-up).
    #[arg(long, value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    duration: u64,
    /// Concurrent keep-alive connections (virtual clients).
    #[arg(long, value_name = "N", default_value_t = 32,
          value_parser = clap::value_parser!(u16).range(1..=4096))]
    connections: u16,
    /// Scenario to run, repeatable (default: all): health, get-task, list-tasks,
    /// create-task, create-task-hooked, create-task-keyed, codehost-issue, transition,
    /// list-events, mixed, comment, candidates, get-agent, transfer, mcp-get-task,
    /// a2a-get-task, remote-push, dashboard-board, run-log, usage-report, claim, login,
    /// login-flood, worker.
    /// `health` always runs first. `worker` is not a request load: it measures the CPU
    /// `muster worker` and the server spend per task, with `true` as the agent CLI
    /// (its own table), before the other scenarios' tasks are seeded.
    #[arg(long = "scenario", value_name = "NAME", value_parser = Asked::parse)]
    scenarios: Vec<Asked>,
    /// Rewrite docs/benchmarks.md with the results (the analysis section is kept).
    #[arg(long)]
    record: bool,
    /// Tasks to seed (fewer for a quick smoke run).
    #[arg(long, hide = true, default_value_t = 10_000)]
    tasks: usize,
    /// Benchmark this `muster` binary instead of building the working tree's (to compare
    /// builds, or while the tree does not build).
    #[arg(long, hide = true, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// Unmeasured warm-up seconds before each scenario.
    #[arg(long, hide = true, default_value_t = 2)]
    warmup: u64,
    /// Export the server's traces to a sink on loopback, sampling this fraction of them
    /// (0 to 1): what tracing costs (without it, traces are off).
    #[arg(long, value_name = "RATIO", value_parser = sampling_ratio)]
    traces: Option<f64>,
    /// Tasks the `worker` scenario works through.
    #[arg(long, hide = true, value_name = "N", default_value_t = worker::DEFAULT_TASKS)]
    worker_tasks: usize,
}

/// A `--traces` ratio: a number from 0 to 1.
fn sampling_ratio(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(ratio) if (0.0..=1.0).contains(&ratio) => Ok(ratio),
        _ => Err(format!("{text:?} is not a number from 0 to 1")),
    }
}

/// A `--scenario`: a request load, or the worker's overhead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    Load(Scenario),
    Worker,
}

impl Asked {
    fn parse(name: &str) -> Result<Self, String> {
        if name == worker::NAME {
            return Ok(Self::Worker);
        }
        Scenario::parse(name).map(Self::Load).map_err(|err| {
            // The load scenarios' message ends with their names: the worker's goes last.
            if err.starts_with("unknown scenario") {
                format!("{err}, {}", worker::NAME)
            } else {
                err
            }
        })
    }
}

/// Whether the `worker` scenario runs: when asked, and in a run of every scenario.
fn worker_asked(asked: &[Asked]) -> bool {
    asked.is_empty() || asked.contains(&Asked::Worker)
}

/// `--engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum EngineChoice {
    Sqlite,
    Postgres,
    Both,
}

impl EngineChoice {
    pub(crate) fn engines(self) -> Vec<Engine> {
        match self {
            Self::Sqlite => vec![Engine::Sqlite],
            Self::Postgres => vec![Engine::Postgres],
            Self::Both => vec![Engine::Sqlite, Engine::Postgres],
        }
    }
}

/// Runs the benchmark; `Ok(false)` when it ran but some scenario had errors.
pub fn run(args: &BenchArgs) -> anyhow::Result<bool> {
    let root = workspace_root();
    let engines = args.engine.engines();
    if engines.contains(&Engine::Postgres) {
        crate::ci::ensure_postgres().map_err(anyhow::Error::msg)?;
    }
    if cfg!(debug_assertions) && std::env::var_os(OPTIMIZED).is_none() {
        // `cargo xtask` runs a debug build, whose HTTP client and HMAC cost several
        // times what the server spends per request: the load generator would be what is
        // measured. Run the same command again from the optimized build.
        return rerun_optimized(&build_release(&root)?);
    }
    // Gathered before anything is written, so `+dirty` describes the code measured.
    let info = RunInfo::gather(&root, command_line());
    let binary = match &args.binary {
        Some(path) => path.clone(),
        None => build_release(&root)?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let scenarios = scenarios_to_run(&args.scenarios);
    let with_worker = worker_asked(&args.scenarios);
    let mut reports = Vec::new();
    let sink = args.traces.map(|_| collector::Sink::start()).transpose()?;
    let traced: Vec<(String, String)> = match (&sink, args.traces) {
        (Some(sink), Some(ratio)) => sink.env(ratio),
        _ => Vec::new(),
    };
    for engine in engines {
        eprintln!("xtask: benchmarking {engine}");
        let report = runtime.block_on(interruptible(bench_engine(
            engine,
            args,
            &binary,
            &scenarios,
            with_worker,
            &traced,
        )))?;
        println!("\n## {engine}\n\n{}", report.markdown());
        reports.push(report);
    }
    if let Some(sink) = &sink {
        let (exports, bytes) = sink.received();
        eprintln!("xtask: the trace sink received {exports} exports, {bytes} bytes");
    }
    if let Some(table) = report::worker_markdown(&reports) {
        println!("\n## Worker overhead\n\n{table}");
    }
    println!("{}", planned_note());
    if args.record {
        let path = root.join("docs").join("benchmarks.md");
        report::record(&path, &info, &reports)?;
        eprintln!("xtask: wrote {}", path.display());
    }
    let clean = !reports.iter().any(EngineReport::has_errors);
    if !clean {
        eprintln!("xtask: some scenarios had errors (see above)");
    }
    Ok(clean)
}

/// Everything on one engine. Locals are dropped in reverse order, on success, error or
/// cancellation alike: first the server (SIGTERM), then the database and scratch folder.
async fn bench_engine(
    engine: Engine,
    args: &BenchArgs,
    binary: &Path,
    scenarios: &[Scenario],
    with_worker: bool,
    traced: &[(String, String)],
) -> anyhow::Result<EngineReport> {
    let db = BenchDatabase::create(engine)?;
    let key = generate_secret_key()?;
    let bootstrapped = bootstrap(binary, &db.url, &key)?;
    let mut server = Server::start_traced(binary, &db.url, &key, db.work_dir(), traced)?;
    let ready = server.wait_ready().await?;
    eprintln!("xtask: {engine}: ready in {} ms", ready.as_millis());

    let (agents, agent_ids) = seed_agents(&AgentSeed {
        database_url: &db.url,
        secret_key: &key,
        bootstrap: &bootstrapped,
        wanted: AGENTS_WANTED,
    })
    .await?;
    let (agents, agent_ids) = (Arc::new(agents), Arc::new(agent_ids));
    // Before the seeded tasks: the worker must find only the tasks made for it.
    let worker =
        measure_worker(with_worker, engine, args, binary, &mut server, &agents, &db).await?;
    let seeding = Instant::now();
    let task_ids = Arc::new(create_tasks(server.addr, &agents, args.tasks, false).await?);
    let seeded = (task_ids.len(), seeding.elapsed());
    eprintln!(
        "xtask: {engine}: seeded {} tasks in {:.1} s",
        seeded.0,
        seeded.1.as_secs_f64()
    );

    let connections = usize::from(args.connections);
    let ticks_per_second = clock_ticks_per_second();
    let scrape_token = metrics::token();
    let mut rows = Vec::new();
    let mut deliveries = None;
    let mut peak_rss_kib = 0;
    for &scenario in scenarios {
        // Fresh tasks per scenario, one per worker, so that no two workers move the same
        // task and every scenario starts from the same state.
        let (_remote, own_tasks) = own_tasks(scenario, server.addr, &agents, connections).await?;
        // The health ceiling is a reference, not a soak: it runs at most
        // HEALTH_MAX_SECONDS, so a ten-minute run of a scenario lasts ten minutes.
        let seconds = if scenario == Scenario::Health {
            args.duration.min(HEALTH_MAX_SECONDS)
        } else {
            args.duration
        };
        // The pid lets a profiler attach for exactly this scenario (`health` runs first).
        eprintln!(
            "xtask: {engine}: {scenario} ({} s warm-up + {seconds} s; server pid {})",
            args.warmup,
            server.pid()
        );
        let (host, session) = connections_for(scenario, server.addr).await?;
        let hooked = if scenario == Scenario::CreateTaskHooked {
            Some(hooks::Hooked::start(server.addr).await?)
        } else {
            None
        };
        let counted =
            metrics::Counted::now(scrape_token.as_deref(), server.addr, &agents[0]).await?;
        let outcome = load::run(LoadPlan {
            addr: server.addr,
            pid: server.pid(),
            scenario,
            connections,
            warmup: Duration::from_secs(args.warmup),
            duration: Duration::from_secs(seconds),
            agents: Arc::clone(&agents),
            agent_ids: Arc::clone(&agent_ids),
            task_ids: Arc::clone(&task_ids),
            own_tasks,
            host,
            session,
        })
        .await?;
        report_errors(engine, scenario, &outcome, &server);
        server.ensure_running()?;
        counted
            .check(&format!("{engine}: {scenario}"), outcome.latencies_us.len())
            .await?;
        if let Some(hooked) = hooked {
            let figures = hooked.finish().await?;
            eprintln!("xtask: {engine}: {}", figures.line());
            deliveries = Some(figures);
        }
        peak_rss_kib = peak_rss_kib
            .max(outcome.peak_rss_kib)
            .max(outcome.earlier_peak_rss_kib);
        rows.push(ScenarioRow::new(scenario, &outcome, ticks_per_second));
    }
    let peak_rss_kib = peak_rss_kib.max(server::peak_rss_kib(server.pid()).unwrap_or(0));
    drop(server);
    // A failed restart loses only its own line, not the scenarios measured.
    let restarts = restarts(engine, binary, &db, &key)
        .await
        .inspect_err(|err| eprintln!("xtask: {engine}: restarting failed: {err:#}"))
        .ok();
    Ok(EngineReport {
        engine,
        ready,
        seeded,
        agents: agents.len(),
        connections,
        peak_rss_kib,
        rows,
        deliveries,
        restarts,
        worker,
    })
}

/// What `scenario` signs in with besides its agents: a code-host connection for
/// `codehost-issue`, an administrator's session for `dashboard-board`.
async fn connections_for(
    scenario: Scenario,
    addr: std::net::SocketAddr,
) -> anyhow::Result<(Option<Arc<codehost::HostEvents>>, Option<Arc<String>>)> {
    let host = if scenario == Scenario::CodeHostIssue {
        Some(Arc::new(codehost::connect(addr).await?))
    } else {
        None
    };
    let session = if scenario == Scenario::DashboardBoard {
        Some(Arc::new(admin::access_token(addr).await?))
    } else {
        None
    };
    Ok((host, session))
}

/// How many times the server is restarted on the database a run leaves behind.
const RESTARTS: usize = 5;

/// Start to ready on an existing database: the server (already stopped) started again,
/// [`RESTARTS`] times, on everything the scenarios wrote.
async fn restarts(
    engine: Engine,
    binary: &Path,
    db: &BenchDatabase,
    key: &str,
) -> anyhow::Result<Restarts> {
    let tasks = db.task_count().await?;
    let mut ready = Vec::with_capacity(RESTARTS);
    for _ in 0..RESTARTS {
        let mut server = Server::start(binary, &db.url, key, db.work_dir())?;
        ready.push(server.wait_ready().await?);
    }
    let restarts = Restarts { tasks, ready };
    eprintln!("xtask: {engine}: {}", restarts.line());
    Ok(restarts)
}

/// The tasks of each worker for `scenario`: none; one in `in_progress` per worker for
/// the transition scenarios; one handed to a remote agent per worker for `remote-push`
/// (with the agent, which must keep serving during the run).
async fn own_tasks(
    scenario: Scenario,
    addr: std::net::SocketAddr,
    agents: &Arc<Vec<sign::Credentials>>,
    connections: usize,
) -> anyhow::Result<(Option<remote::Prepared>, Vec<OwnTask>)> {
    if scenario == Scenario::RemotePush {
        let prepared = remote::prepare(addr, agents, connections).await?;
        let tasks = prepared.tasks.clone();
        return Ok((Some(prepared), tasks));
    }
    if scenario.needs_own_runs() {
        return Ok((None, seed::own_runs(addr, agents, connections).await?));
    }
    if !scenario.needs_own_tasks() {
        return Ok((None, Vec::new()));
    }
    let ids = create_tasks(addr, agents, connections, true).await?;
    let tasks = ids
        .into_iter()
        .map(|id| OwnTask {
            id,
            blocked: false,
            push: None,
            run: None,
        })
        .collect();
    Ok((None, tasks))
}

/// Prints a scenario's first errors and the server log's tail, when it had errors.
fn report_errors(engine: Engine, scenario: Scenario, outcome: &load::LoadOutcome, server: &Server) {
    if outcome.errors > 0 {
        eprintln!(
            "xtask: {engine}: {scenario}: {} errors; first ones:",
            outcome.errors
        );
        for sample in &outcome.error_samples {
            eprintln!("  {sample}");
        }
        let tail = server.log_tail(10);
        if !tail.is_empty() {
            eprintln!("xtask: server log tail:\n{tail}");
        }
        // The scratch folder, log included, goes when the engine's run ends.
        let kept = target_dir(&workspace_root())
            .unwrap_or_else(|_| std::env::temp_dir())
            .join("bench-logs")
            .join(format!(
                "{}-{scenario}-{}.log",
                engine.to_string().to_lowercase(),
                time::OffsetDateTime::now_utc().unix_timestamp()
            ));
        match server.keep_log(&kept) {
            Ok(()) => eprintln!(
                "xtask: the server's whole log is kept in {}",
                kept.display()
            ),
            Err(err) => eprintln!("xtask: could not keep the server's log: {err:#}"),
        }
    }
}

/// Runs `work` unless Ctrl-C comes first; then `work` is dropped, and with it the guards
/// that stop the server and remove the database.
async fn interruptible<T>(work: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    tokio::select! {
        result = work => result,
        _ = tokio::signal::ctrl_c() => anyhow::bail!("interrupted"),
    }
}

/// The `worker` scenario on `engine`'s server, before any other task exists (when
/// `asked`).
async fn measure_worker(
    asked: bool,
    engine: Engine,
    args: &BenchArgs,
    binary: &Path,
    server: &mut Server,
    agents: &Arc<Vec<sign::Credentials>>,
    db: &BenchDatabase,
) -> anyhow::Result<Option<worker::WorkerFigures>> {
    if !asked {
        return Ok(None);
    }
    eprintln!(
        "xtask: {engine}: worker ({} tasks; server pid {})",
        args.worker_tasks,
        server.pid()
    );
    let figures = worker::measure(&worker::WorkerPlan {
        binary,
        addr: server.addr,
        server_pid: server.pid(),
        agents,
        tasks: args.worker_tasks,
        scratch: db.work_dir(),
    })
    .await?;
    server.ensure_running()?;
    eprintln!(
        "xtask: {engine}: worker: {:.0} tasks/s, {:.2} ms server + worker CPU per task",
        figures.tasks_per_second(),
        figures.overhead_ms_per_task()
    );
    Ok(Some(figures))
}

/// The asked load scenarios in their canonical order, without repeats, `health` first
/// (also when only `worker` is asked).
fn scenarios_to_run(asked: &[Asked]) -> Vec<Scenario> {
    Scenario::ALL
        .into_iter()
        .filter(|s| asked.is_empty() || *s == Scenario::Health || asked.contains(&Asked::Load(*s)))
        .collect()
}

/// The workspace, whichever folder cargo was started from.
/// Longest measurement of the `health` reference, whatever `--duration` says.
const HEALTH_MAX_SECONDS: u64 = 10;

/// Set for the optimized re-run of the command.
const OPTIMIZED: &str = "MUSTER_XTASK_OPTIMIZED";

/// Runs this command again with the release `xtask` built beside `muster`.
fn rerun_optimized(muster: &Path) -> anyhow::Result<bool> {
    let xtask = muster.with_file_name("xtask");
    anyhow::ensure!(xtask.is_file(), "{} was not built", xtask.display());
    let status = std::process::Command::new(&xtask)
        .args(std::env::args_os().skip(1))
        .env(OPTIMIZED, "1")
        .status()
        .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", xtask.display()))?;
    Ok(status.success())
}

pub(crate) fn workspace_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

/// The command as typed, for the record.
fn command_line() -> String {
    let mut words = vec!["cargo".to_owned(), "xtask".to_owned()];
    for arg in std::env::args().skip(1) {
        let plain = !arg.is_empty()
            && arg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=./:,".contains(c));
        words.push(if plain {
            arg
        } else {
            format!("'{}'", arg.replace('\'', r"'\''"))
        });
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_always_runs_first() {
        assert_eq!(scenarios_to_run(&[]), Scenario::ALL.to_vec());
        let asked = [Scenario::Mixed, Scenario::GetTask, Scenario::Mixed].map(Asked::Load);
        assert_eq!(
            scenarios_to_run(&asked),
            vec![Scenario::Health, Scenario::GetTask, Scenario::Mixed]
        );
        assert_eq!(scenarios_to_run(&[Asked::Worker]), vec![Scenario::Health]);
    }

    #[test]
    fn the_worker_runs_when_asked_and_in_a_full_run() {
        assert_eq!(Asked::parse("worker"), Ok(Asked::Worker));
        assert_eq!(Asked::parse("get-task"), Ok(Asked::Load(Scenario::GetTask)));
        assert!(Asked::parse("nope").unwrap_err().ends_with(", worker"));
        assert!(worker_asked(&[]));
        assert!(worker_asked(&[Asked::Worker]));
        assert!(!worker_asked(&[Asked::Load(Scenario::GetTask)]));
    }
}
