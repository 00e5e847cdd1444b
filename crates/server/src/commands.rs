//! What each subcommand does. Every failure is one clear line for `main` to print.

use tracing::Instrument;

use crate::job_span::{finish, job_span};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use muster_auth::keys::ServerKey;
use muster_domain::model::IdempotencyKey;
use muster_domain::ports::{
    Clock, IdempotencyStore, NonceStore, OrganizationRepository, UserRepository,
};
use muster_domain::service::{BudgetRollover, EscalationSweep};
use muster_http::{JobOutcome, Metrics, ServerOptions};
use muster_persistence::{Database, DatabaseUrl, PoolOptions, run_migrations};

use crate::adapters::SystemClock;
use crate::app::{Application, app_state};
use crate::auth_settings::AuthSettings;
use crate::bootstrap::{BootstrapInput, bootstrap};
use crate::cli::{BootstrapArgs, DatabaseArgs, ServeArgs};
use crate::key::load_server_key;
use crate::task_settings::{expire_leases, roll_budgets, sweep_escalations};
use crate::webhook_settings::deliver_webhooks;

/// Ends the open event streams when SIGTERM or SIGINT arrives. The same signal starts
/// the server's graceful shutdown, which waits for open responses: a stream never ends
/// by itself, and would hold the process for the whole shutdown timeout.
async fn close_streams_on_signal(streams: muster_http::EventStreams) {
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                terminate.recv().await;
            }
            Err(err) => {
                tracing::warn!(error = %err, "cannot listen for SIGTERM; streams end by themselves");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = terminate => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    tracing::info!("shutting down: ending the open event streams");
    streams.close();
}

/// How often expired nonces and sign-ins are deleted.
const PURGE_EVERY: Duration = Duration::from_secs(60);

fn secret_key_setting() -> Option<String> {
    std::env::var("MUSTER_SECRET_KEY")
        .ok()
        .filter(|v| !v.trim().is_empty())
}

/// The server key for `db` (D-12).
async fn server_key(db: &Database) -> anyhow::Result<ServerKey> {
    let has_data = OrganizationRepository::any_exists(db).await?;
    load_server_key(secret_key_setting().as_deref(), db.url(), has_data)
}

/// Connects to `url`, migrates, and opens the pool.
async fn open_database(url: &DatabaseUrl, args: &DatabaseArgs) -> anyhow::Result<Database> {
    // Connecting first turns "unreachable" into a clear message before migrating.
    let db = Database::connect(url, args.pool_options()).await?;
    let applied = run_migrations(url).await?;
    if !applied.is_empty() {
        tracing::info!(?applied, "applied database migrations");
    }
    Ok(db)
}

/// `muster serve`.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let url = args.database.url()?;
    let _alone = crate::serve_lock::lock(&url)?;
    let db = open_database(&url, &args.database).await?;
    let key = server_key(&db).await?;
    // Everything that can take time or fail (the owner, hashing the local password)
    // happens before the port opens: once it accepts connections, the server serves and
    // shuts down gracefully.
    let mut auth = AuthSettings::from_env(args.auth_mode)?;
    auth.password_hashers = args.password_hashers.map(usize::from);
    args.webhooks.warn_if_relaxed();
    let access = args.metrics.access(&db)?;
    let edge = args.edge.edge()?;
    args.edge.warn_if_unnamed(&edge, &args.bind);
    let metrics = access.as_ref().map(|a| Arc::clone(&a.metrics));
    let mut state = app_state(
        &db,
        &key,
        &auth,
        &args.tasks,
        &args.webhooks,
        args.streams.options(),
        access,
    )
    .await?;
    state.edge = edge;
    state.trace_url = crate::telemetry_settings::trace_url(args.trace_url.as_deref())?;
    let deliveries = crate::app::deliveries(&db, &key, &args.webhooks)?;
    let sweep = EscalationSweep::new(state.tasks.clone(), args.tasks.thresholds());

    // Background jobs start before the port opens, so that once it accepts connections
    // nothing stands between it and the server handling requests and signals.
    let purger = tokio::spawn(purge_expired(db.clone(), metrics.clone()));
    let sweeper = args
        .tasks
        .sweep_every()
        .map(|every| tokio::spawn(sweep_escalations(sweep, every, metrics.clone())));
    let expirer = args
        .tasks
        .lease_sweep_every()
        .map(|every| tokio::spawn(expire_leases(state.tasks.clone(), every, metrics.clone())));
    let roller = args.tasks.rollover_every().map(|every| {
        let job = BudgetRollover::new(
            Arc::new(db.clone()),
            Arc::new(SystemClock),
            args.tasks.budget_period,
        );
        tokio::spawn(roll_budgets(job, every, metrics.clone()))
    });
    let firer = args.tasks.routine_every().map(|every| {
        tokio::spawn(crate::task_settings::fire_routines(
            state.routines.clone(),
            every,
            metrics.clone(),
        ))
    });
    let deliverer = args.webhooks.poll_every().map(|every| {
        tokio::spawn(deliver_webhooks(
            deliveries.clone(),
            every,
            args.webhooks.webhook_concurrency,
            metrics.clone(),
        ))
    });
    let closer = tokio::spawn(close_streams_on_signal(state.streams.clone()));
    let listener =
        TcpListener::bind(&args.bind).with_context(|| format!("cannot listen on {}", args.bind))?;
    let options = ServerOptions {
        workers: args.workers,
        ..ServerOptions::default()
    };
    let app = Application::build(listener, state, options)?;
    tracing::info!(bind = %args.bind, port = app.port(), database = %db.url().redacted(), "muster is listening");

    let result = app.run_until_stopped().await;
    closer.abort();
    purger.abort();
    if let Some(roller) = roller {
        roller.abort();
    }
    if let Some(expirer) = expirer {
        expirer.abort();
    }
    if let Some(sweeper) = sweeper {
        sweeper.abort();
    }
    if let Some(firer) = firer {
        firer.abort();
    }
    if let Some(deliverer) = deliverer {
        deliverer.abort();
        // Wait until the worker is gone: a worker still running could lease a hook again
        // after the release below, leaving it held until the lease ran out.
        let _ = deliverer.await;
        // Calls cut short are retried; the hooks are free for the next instance at once.
        if let Err(err) = deliveries.release_all().await {
            tracing::warn!(%err, "could not release webhook delivery leases");
        }
    }
    result.context("server failed")?;
    tracing::info!("muster stopped");
    Ok(())
}

/// Background worker: forget nonces past their retention window, identity-provider
/// sign-ins abandoned in the browser, and login-throttle streaks a day quiet.
async fn purge_expired(db: Database, metrics: Option<Arc<Metrics>>) {
    let mut ticker = tokio::time::interval(PURGE_EVERY);
    loop {
        ticker.tick().await;
        let span = job_span("purge");
        let now = SystemClock.now();
        let kept = time::Duration::hours(IdempotencyKey::KEPT_HOURS);
        let runs = async {
            [
                ("expired nonces", db.purge_expired(now).await),
                ("expired sign-ins", db.purge_expired_sign_ins(now).await),
                (
                    "forgotten login-throttle streaks",
                    db.purge_login_throttles(now - muster_domain::rules::login::FORGOTTEN_AFTER)
                        .await,
                ),
                (
                    "expired idempotency keys",
                    IdempotencyStore::purge(&db, now - kept).await,
                ),
            ]
        }
        .instrument(span.clone())
        .await;
        let mut outcome = JobOutcome::Done(0);
        for (what, run) in runs {
            match (run, &mut outcome) {
                (Ok(deleted), JobOutcome::Done(purged)) => {
                    tracing::debug!(deleted, "purged {what}");
                    *purged += deleted;
                }
                (Ok(_), JobOutcome::Failed) => {}
                (Err(err), _) => {
                    tracing::warn!(%err, "could not purge {what}");
                    outcome = JobOutcome::Failed;
                }
            }
        }
        finish(&span, &outcome);
        crate::metrics_settings::record(metrics.as_ref(), "purge", outcome);
    }
}

/// `muster migrate`.
pub async fn migrate(args: DatabaseArgs) -> anyhow::Result<()> {
    let url = args.url()?;
    Database::connect(
        &url,
        PoolOptions {
            max_size: 1,
            ..PoolOptions::default()
        },
    )
    .await?;
    let applied = run_migrations(&url).await?;
    if applied.is_empty() {
        eprintln!("database is up to date");
    } else {
        eprintln!("applied migrations: {}", applied.join(", "));
    }
    Ok(())
}

/// `muster bootstrap`: prints exactly one JSON object on stdout.
pub async fn bootstrap_command(args: BootstrapArgs) -> anyhow::Result<()> {
    let db = open_database(&args.database.url()?, &args.database).await?;
    let key = server_key(&db).await?;
    let input = BootstrapInput {
        org_name: args.org_name,
        admin_email: args.admin_email,
        admin_password: args.admin_password,
        hr_agent_id: args.hr_agent_id,
        treasury: args.treasury,
        password_cost: crate::auth_settings::password_cost_from_env()?,
    };
    let output = bootstrap(&db, &key, input).await?;
    println!("{}", serde_json::to_string(&output)?);
    Ok(())
}
