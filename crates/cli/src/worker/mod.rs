//! `muster worker`: turns this machine into a worker for one agent identity. It claims
//! tasks (with a lease and a reservation), runs an agent CLI on each through an
//! adapter, streams the CLI's output into the run's log, reports its usage, heartbeats,
//! and stops the CLI's process group as soon as a run answer says `stopRequested`.
//! Everything it knows it learned from the API.

pub mod adapters;
mod args;
mod attempt;
mod conclude;
mod log_batch;
mod process;
pub mod prompt;
mod retry;
mod supervise;
pub mod workspace;

use std::time::Duration;

use anyhow::Context;
use muster_client::Client;
use muster_client::types::claims::ClaimBody;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;
use tracing::Instrument;

use adapters::AdapterKind;
pub use args::{OnSuccess, WorkerArgs};
use prompt::Template;
use workspace::Workspaces;

/// Whether the worker was told to stop, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    /// Keep working.
    No,
    /// SIGTERM or SIGINT: claim nothing more, let running CLIs finish within the grace.
    Graceful,
    /// A second signal: stop running CLIs now.
    Now,
}

/// The worker's settings, checked.
#[derive(Debug)]
pub struct Settings {
    pub adapter: AdapterKind,
    pub program: String,
    pub args: Vec<String>,
    pub model: Option<String>,
    pub capabilities: Vec<String>,
    pub project: Option<uuid::Uuid>,
    pub lease: u32,
    pub reserve: Option<i64>,
    pub on_success: OnSuccess,
    pub max_attempts: u32,
    pub grace: Duration,
    pub poll: Duration,
    pub template: Template,
    pub workspaces: Workspaces,
    pub pass_credentials: bool,
}

/// What every slot shares.
#[derive(Debug)]
pub struct Shared {
    pub client: Client,
    pub settings: Settings,
    pub shutdown: watch::Receiver<Shutdown>,
}

/// Runs `muster worker` until it is told to stop (or, with `--once`, after one task).
pub async fn run(args: WorkerArgs) -> anyhow::Result<()> {
    let settings = settings(&args)?;
    // A broken connection is sent again (under the same Idempotency-Key) for about
    // seven seconds: a worker outlives a server restart.
    let client = crate::config::connect(&args.connection)
        .await?
        .with_retries(8)
        .traced(current_trace);
    let (tell, shutdown) = watch::channel(Shutdown::No);
    let signals = listen(tell)?;
    let shared = std::sync::Arc::new(Shared {
        client,
        settings,
        shutdown,
    });
    let slots = if args.once { 1 } else { args.concurrency };
    say(&format!(
        "working as {} with {} ({} at a time)",
        args.adapter.name(),
        shared.settings.program,
        slots
    ));
    let mut running = tokio::task::JoinSet::new();
    for _ in 0..slots {
        let shared = shared.clone();
        let once = args.once;
        running.spawn(async move { slot(&shared, once).await });
    }
    let mut claim_failed = None;
    while let Some(done) = running.join_next().await {
        match done {
            Ok(Err(err)) => claim_failed = Some(err),
            Ok(Ok(())) => {}
            Err(err) => say(&format!("a slot ended unexpectedly: {err}")),
        }
    }
    signals.abort();
    say("stopped");
    // With --once, a claim the server refused is a failure, not "nothing to do".
    match claim_failed {
        Some(err) => Err(anyhow::anyhow!("could not claim: {err}")),
        None => Ok(()),
    }
}

/// Checks the arguments: a bad template, repository or command fails here, at start.
fn settings(args: &WorkerArgs) -> anyhow::Result<Settings> {
    let program = match (&args.program, args.adapter.default_program()) {
        (Some(program), _) => program.clone(),
        (None, Some(program)) => program.to_owned(),
        (None, None) => anyhow::bail!("--adapter command needs --command PATH: the program to run"),
    };
    let template = match &args.prompt_template {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| {
                format!("could not read the prompt template {}", path.display())
            })?;
            Template::parse(&text)
                .map_err(|err| anyhow::anyhow!("the prompt template {}: {err}", path.display()))?
        }
        None => Template::builtin(),
    };
    let root = args
        .workspace_root
        .clone()
        .unwrap_or_else(Workspaces::default_root);
    let workspaces = Workspaces::new(root, args.repo.clone())?;
    let model = args::model_in(&args.args).map(str::to_owned);
    if let Some(model) = &model {
        // What a run's start takes: refused there, it would fail every task.
        anyhow::ensure!(
            !model.trim().is_empty() && model.chars().count() <= 100,
            "--model must be 1 to 100 characters"
        );
    }
    Ok(Settings {
        adapter: args.adapter,
        model,
        program,
        args: args.args.clone(),
        capabilities: args.capabilities.clone(),
        project: args.project,
        lease: args.lease,
        reserve: args.reserve,
        on_success: args.on_success,
        max_attempts: args.max_attempts,
        grace: Duration::from_secs(u64::from(args.grace)),
        poll: Duration::from_secs(u64::from(args.poll)),
        template,
        workspaces,
        pass_credentials: args.pass_credentials,
    })
}

/// SIGTERM or SIGINT: a graceful stop; a second one: stop now.
fn listen(tell: watch::Sender<Shutdown>) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let mut term = signal(SignalKind::terminate()).context("could not listen for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("could not listen for SIGINT")?;
    Ok(tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            let next = match *tell.borrow() {
                Shutdown::No => Shutdown::Graceful,
                _ => Shutdown::Now,
            };
            say(match next {
                Shutdown::Graceful => {
                    "stopping: no new work; running CLIs get the grace period to finish (signal again to stop them now)"
                }
                _ => "stopping running CLIs now",
            });
            let _ = tell.send(next);
        }
    }))
}

/// One slot: claims a task, works on it, and again, until the worker stops. With
/// `once`, a claim's refusal ends it with that refusal.
async fn slot(shared: &Shared, once: bool) -> Result<(), muster_client::Error> {
    let settings = &shared.settings;
    let body = ClaimBody {
        capabilities: (!settings.capabilities.is_empty()).then(|| settings.capabilities.clone()),
        lease_seconds: Some(i64::from(settings.lease)),
        reserve_credits: settings.reserve,
        project_id: settings.project,
    };
    let mut shutdown = shared.shutdown.clone();
    loop {
        if *shutdown.borrow() != Shutdown::No {
            return Ok(());
        }
        // Each claim is a span (a trace of its own, exported when traces are on).
        let claim = tracing::debug_span!(
            target: "muster_worker",
            parent: None,
            "worker.claim",
            muster.task.id = tracing::field::Empty,
        );
        let claimed = shared
            .client
            .claim_task(&body)
            .instrument(claim.clone())
            .await;
        if let Ok(Some(task)) = &claimed {
            claim.record("muster.task.id", task.id.to_string().as_str());
        }
        drop(claim);
        let wait = match claimed {
            Ok(Some(task)) => {
                let ran = attempt::work_on(shared, task).await;
                if once {
                    return Ok(());
                }
                if ran {
                    continue;
                }
                // The CLI could not even start (a missing program, a workspace that
                // cannot be made): no hot loop through every claimable task.
                settings.poll
            }
            Ok(None) if once => {
                say("no task to claim");
                return Ok(());
            }
            Ok(None) => settings.poll,
            Err(err) => {
                say(&format!("could not claim: {err}"));
                if once {
                    return Err(err);
                }
                settings.poll
            }
        };
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            _ = shutdown.changed() => {}
        }
    }
}

/// The trace context of the current span, for the client's calls.
fn current_trace() -> Option<(String, Option<String>)> {
    muster_telemetry::Propagated::current().map(|trace| (trace.traceparent, trace.tracestate))
}

/// A line on stderr about what the worker does.
pub(crate) fn say(text: &str) {
    eprintln!("muster worker: {text}");
}
