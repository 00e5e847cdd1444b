//! Wiring: adapters into use cases, use cases into the HTTP server.

use muster_a2a::push::TaskPushRenderer;
use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use anyhow::Context;
use async_trait::async_trait;
use muster_auth::agent::AgentAuthenticator;
use muster_auth::bearer::BearerAuthenticator;
use muster_auth::keys::ServerKey;
use muster_auth::password::{Argon2Hasher, default_threads, hash_password_at};
use muster_auth::signing::HmacSha256;
use muster_auth::tokens::TokenService;
use muster_auth::totp::TotpService;
use muster_domain::model::{Actor, ActorKind, OrgId};
use muster_domain::ports::{HookCaller, RunObserver, UnitOfWork, Unobserved, WebhookRepository};
use muster_domain::service::guard::{GuardService, GuardedUnitOfWork, RunawayGuard};
use muster_domain::service::{
    AccountPorts, AccountService, AgentService, ApiKeyService, ChatService, ChatSettings,
    CodeHostPorts, CodeHostService, DeliveryService, EventService, GatedUnitOfWork, HookGate,
    InboundPorts, InboundService, ProjectService, RemoteAgentService, RemotePorts, RoutineService,
    RunService, TaskService, TreasuryService, WebhookPorts, WebhookService,
};
use muster_http::{
    AppState, AuthMode, EventStreams, MetricsAccess, OAuthSettings, Readiness, ServerOptions,
    SignInStarts, StreamOptions,
};
use muster_outbound::oauth::HttpIdentityProvider;
use muster_outbound::{DocumentFetcher, HttpHookCaller};
use muster_persistence::{Database, NonceBatcher};

use crate::adapters::{A2aCards, SystemClock, UuidV7Ids};
use crate::auth_settings::{AuthModeSetting, AuthSettings, LocalPassword};
use crate::task_settings::TaskSettings;
use crate::webhook_settings::WebhookSettings;

/// `/ready` asks the database.
struct DatabaseReadiness(Database);

#[async_trait]
impl Readiness for DatabaseReadiness {
    async fn check(&self) -> Result<(), String> {
        // A pool that cannot give a connection within this is as good as down: a load
        // balancer's probe must not hang for the whole acquire timeout.
        const PATIENCE: std::time::Duration = std::time::Duration::from_millis(1_500);
        let Ok(answer) = tokio::time::timeout(PATIENCE, self.0.ping()).await else {
            let pool = self.0.pool_status();
            return Err(format!(
                "no database connection within {} ms ({} of {} open, {} free, {} waiting)",
                PATIENCE.as_millis(),
                pool.size,
                pool.max_size,
                pool.available,
                pool.waiting
            ));
        };
        answer.map_err(|e| e.to_string())
    }
}

/// Builds the HTTP state from a database, the server key, the user-authentication
/// settings, the task settings, the event streams' options and the metrics (`None`:
/// off; when on, they also count what runs report and how they end). Starts the nonce writer
/// (on SQLite on the database's writer thread) and the event-stream watcher (on the
/// current Tokio runtime); in auth modes `none` and
/// `local` makes sure the synthetic owner exists.
pub async fn app_state(
    db: &Database,
    key: &ServerKey,
    auth: &AuthSettings,
    task_settings: &TaskSettings,
    hooks: &WebhookSettings,
    streams: StreamOptions,
    metrics: Option<MetricsAccess>,
) -> anyhow::Result<AppState> {
    let db = Arc::new(db.clone());
    let clock = Arc::new(SystemClock);
    let ids = Arc::new(UuidV7Ids);
    let tokens = Arc::new(TokenService::new(key));
    let caller = hook_caller(hooks)?;
    let gate = Arc::new(HookGate::new(
        caller.clone(),
        Arc::new(key.secret_cipher()),
        clock.clone(),
        ids.clone(),
    ));
    // Every change is counted by the runaway guard, then passes the pre-hooks (decision
    // D-84), before it commits. The guard's own suspensions skip the pre-hooks.
    let gated: Arc<dyn UnitOfWork> = Arc::new(GatedUnitOfWork::new(db.clone(), gate.clone()));
    let agent_auth = Arc::new(AgentAuthenticator::new(
        db.clone(),
        // Signed requests record their nonces in batches (group commit).
        Arc::new(NonceBatcher::spawn(Database::clone(&db))),
        clock.clone(),
        key.secret_cipher(),
    ));
    let runaway = Arc::new(
        RunawayGuard::new(task_settings.guard_defaults(), clock.clone(), ids.clone())
            .with_changes(agent_auth.clone()),
    );
    let uow: Arc<dyn UnitOfWork> =
        Arc::new(GuardedUnitOfWork::new(gated, db.clone(), runaway.clone()));
    let guard = GuardService::new(uow.clone(), runaway, clock.clone(), ids.clone());
    let webhooks = WebhookService::new(WebhookPorts {
        hooks: db.clone(),
        uow: uow.clone(),
        guard: crate::webhook_settings::target_guard(hooks),
        vault: Arc::new(key.secret_cipher()),
        caller,
        clock: clock.clone(),
        ids: ids.clone(),
    })
    .with_gate(gate);
    let inbound = InboundService::new(InboundPorts {
        keys: db.clone(),
        uow: uow.clone(),
        vault: Arc::new(key.secret_cipher()),
        signer: Arc::new(HmacSha256),
        clock: clock.clone(),
        ids: ids.clone(),
    })
    .with_reward(task_settings.task_reward);
    let (tasks, runs) = work(&db, &uow, task_settings, metrics.as_ref())?;
    let (chat, codehost) = integrations(&tasks, &db, &uow, key, auth, hooks)?;
    let agents = AgentService::new(
        db.clone(),
        uow.clone(),
        Arc::new(key.secret_cipher()),
        clock.clone(),
        ids.clone(),
    )
    .with_period(task_settings.budget_period)
    .with_changes(agent_auth.clone());
    let remote = remote_agents(&agents, &tasks, &db, &uow, key, hooks)?;
    let accounts = AccountService::new(AccountPorts {
        uow: uow.clone(),
        users: db.clone(),
        orgs: db.clone(),
        hasher: Arc::new(password_hasher(auth)),
        tokens: tokens.clone(),
        totp: Arc::new(TotpService::from_server_key(key)),
        clock: clock.clone(),
        ids: ids.clone(),
    })
    .with_default_org(auth.default_org.map(OrgId::from_uuid));
    let auth_mode = auth_mode(&accounts, auth).await?;
    let events = EventService::new(db.clone());
    let oauth = oauth_settings(auth)?;
    Ok(AppState {
        routines: routine_service(&db, &uow, &tasks),
        guard,
        tasks,
        runs,
        chat,
        codehost,
        remote,
        agents,
        treasury: TreasuryService::new(db.clone(), uow.clone(), clock.clone(), ids.clone()),
        projects: ProjectService::new(db.clone(), uow.clone(), clock.clone(), ids.clone()),
        streams: EventStreams::start(events.clone(), streams),
        metrics,
        events,
        accounts,
        api_keys: ApiKeyService::new(uow, db.clone(), tokens.clone(), clock.clone(), ids),
        webhooks,
        inbound,
        agent_auth,
        bearer_auth: Arc::new(BearerAuthenticator::new(tokens, db.clone(), clock)),
        auth_mode,
        // Loopback names only until `muster serve` sets its edge settings.
        edge: muster_http::Edge::default(),
        oauth,
        idempotency: db.clone(),
        readiness: Arc::new(DatabaseReadiness(Database::clone(&db))),
        // Set by `muster serve` from its settings.
        trace_url: None,
    })
}

/// The task use cases, and the runs of tasks with their usage (decision D-106), priced
/// by the operator's table; the metrics, when on, count the usage recorded and the runs
/// ended (by their agent, or lost in the lease sweep).
///
/// # Errors
/// A price table that cannot be read or is not valid, named in the message.
fn work(
    db: &Arc<Database>,
    uow: &Arc<dyn UnitOfWork>,
    task_settings: &TaskSettings,
    metrics: Option<&MetricsAccess>,
) -> anyhow::Result<(TaskService, RunService)> {
    let observer: Arc<dyn RunObserver> = match metrics {
        Some(access) => access.metrics.clone(),
        None => Arc::new(Unobserved),
    };
    let (clock, ids) = (Arc::new(SystemClock), Arc::new(UuidV7Ids));
    let tasks = TaskService::new(db.clone(), uow.clone(), clock.clone(), ids.clone())
        .with_reward(task_settings.task_reward)
        .with_budget_period(task_settings.budget_period)
        .with_run_observer(observer.clone());
    let runs = RunService::new(db.clone(), uow.clone(), clock, ids)
        .with_prices(task_settings.runs.prices()?)
        .with_credits_per_usd(task_settings.runs.credits_per_usd)
        .with_budget_period(task_settings.budget_period)
        .with_observer(observer);
    Ok((tasks, runs))
}

/// The routines (decision D-108), creating their tasks through `tasks`.
fn routine_service(
    db: &Arc<Database>,
    uow: &Arc<dyn UnitOfWork>,
    tasks: &TaskService,
) -> RoutineService {
    RoutineService::new(
        db.clone(),
        db.clone(),
        uow.clone(),
        tasks.clone(),
        Arc::new(SystemClock),
        Arc::new(UuidV7Ids),
    )
}

/// The chat-platform and code-host integrations, driving `tasks`; chat is off without
/// its token (decision D-100).
///
/// # Errors
/// A chat token shorter than 16 characters.
fn integrations(
    tasks: &TaskService,
    db: &Arc<Database>,
    uow: &Arc<dyn UnitOfWork>,
    key: &ServerKey,
    auth: &AuthSettings,
    hooks: &WebhookSettings,
) -> anyhow::Result<(ChatService, CodeHostService)> {
    let chat = ChatService::new(
        tasks.clone(),
        db.clone(),
        db.clone(),
        db.clone(),
        ChatSettings {
            agents: hooks.chat_agent_map.0.clone(),
            default_org: auth.default_org.map(OrgId::from_uuid),
            token: hooks.chat_token()?,
        },
    );
    let codehost = CodeHostService::new(CodeHostPorts {
        tasks: tasks.clone(),
        connections: db.clone(),
        uow: uow.clone(),
        vault: Arc::new(key.secret_cipher()),
        signer: Arc::new(HmacSha256),
        clock: Arc::new(SystemClock),
        ids: Arc::new(UuidV7Ids),
    });
    Ok((chat, codehost))
}

/// The password hasher the settings ask for, with a warning in the log when its cost is
/// below the floor.
fn password_hasher(auth: &AuthSettings) -> Argon2Hasher {
    if auth.password_cost.is_below_floor() {
        tracing::warn!(
            memory_kib = auth.password_cost.memory_kib(),
            passes = auth.password_cost.passes(),
            "password hashes are made below the floor (MUSTER_PASSWORD_HASH_BELOW_FLOOR): \
             for test runs only"
        );
    }
    Argon2Hasher::with_cost(
        auth.password_hashers.unwrap_or_else(default_threads),
        auth.password_cost,
    )
}

/// The sign-in redirect flow, when it is set up.
fn oauth_settings(auth: &AuthSettings) -> anyhow::Result<Option<OAuthSettings>> {
    let Some(setting) = &auth.oauth else {
        return Ok(None);
    };
    Ok(Some(OAuthSettings {
        provider: Arc::new(
            HttpIdentityProvider::new(setting.provider.clone())
                .context("cannot set up the identity provider client")?,
        ),
        frontend_url: setting.frontend_url.clone(),
        starts: setting
            .starts_per_second
            .map(|n| Arc::new(SignInStarts::new(n, std::time::Instant::now()))),
    }))
}

/// Remote A2A agents: their cards read, and their channels guarded, as webhooks are.
fn remote_agents(
    agents: &AgentService,
    tasks: &TaskService,
    db: &Arc<Database>,
    uow: &Arc<dyn UnitOfWork>,
    key: &ServerKey,
    hooks: &WebhookSettings,
) -> anyhow::Result<RemoteAgentService> {
    let cards =
        DocumentFetcher::new(hooks.policy()).context("cannot set up the A2A card client")?;
    Ok(RemoteAgentService::new(
        agents.clone(),
        tasks.clone(),
        RemotePorts {
            agents: db.clone(),
            hooks: db.clone(),
            uow: uow.clone(),
            vault: Arc::new(key.secret_cipher()),
            signer: Arc::new(HmacSha256),
            guard: crate::webhook_settings::target_guard(hooks),
            cards: Arc::new(A2aCards(cards)),
            clock: Arc::new(SystemClock),
            ids: Arc::new(UuidV7Ids),
        },
    ))
}

/// The HTTP client calling hooks, with the SSRF guard the settings ask for.
fn hook_caller(hooks: &WebhookSettings) -> anyhow::Result<Arc<dyn HookCaller>> {
    let caller = HttpHookCaller::new(hooks.policy(), Arc::new(HmacSha256))
        .context("cannot set up the webhook client")?;
    Ok(Arc::new(caller))
}

/// The post-hook delivery side of the outbox, for the background worker.
pub fn deliveries(
    db: &Database,
    key: &ServerKey,
    hooks: &WebhookSettings,
) -> anyhow::Result<DeliveryService> {
    let db = Arc::new(db.clone());
    let repository: Arc<dyn WebhookRepository> = db.clone();
    Ok(DeliveryService::new(
        repository,
        db.clone(),
        db.clone(),
        Arc::new(key.secret_cipher()),
        hook_caller(hooks)?,
        Arc::new(SystemClock),
        Arc::new(UuidV7Ids),
    )
    .with_schedule(hooks.retry_schedule.clone())
    .with_push(Arc::new(TaskPushRenderer::new(db)))
    .with_remote(Arc::new(HmacSha256)))
}

/// The auth mode with its synthetic owner (created when missing).
async fn auth_mode(accounts: &AccountService, auth: &AuthSettings) -> anyhow::Result<AuthMode> {
    match auth.mode {
        AuthModeSetting::Full => Ok(AuthMode::Full),
        AuthModeSetting::None => {
            let owner = accounts
                .ensure_owner()
                .await
                .context("cannot create the owner")?;
            tracing::warn!(
                "auth mode is `none`: every request without credentials acts as the owner \
                 (an admin). Do not expose this service."
            );
            Ok(AuthMode::None {
                owner: Actor {
                    org_id: owner.org_id,
                    kind: ActorKind::User {
                        id: owner.id,
                        role: owner.role,
                        key: None,
                    },
                },
            })
        }
        AuthModeSetting::Local => {
            let password_hash = match &auth.local_password {
                Some(LocalPassword::Hash(hash)) => hash.clone(),
                Some(LocalPassword::Plain(plain)) => {
                    let (plain, cost) = (plain.clone(), auth.password_cost);
                    tokio::task::spawn_blocking(move || hash_password_at(&plain, cost))
                        .await
                        .context("hashing the local password failed")??
                }
                None => anyhow::bail!(
                    "auth mode local needs MUSTER_LOCAL_PASSWORD or MUSTER_LOCAL_PASSWORD_HASH"
                ),
            };
            let owner = accounts
                .ensure_owner()
                .await
                .context("cannot create the owner")?;
            Ok(AuthMode::Local {
                owner: Box::new(owner),
                password_hash,
            })
        }
    }
}

/// A server bound to its port, not yet running.
pub struct Application {
    port: u16,
    server: Server,
}

impl std::fmt::Debug for Application {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Application")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl Application {
    /// Binds `listener` and prepares the server. Tests bind `127.0.0.1:0` and read
    /// [`port`](Self::port).
    pub fn build(
        listener: TcpListener,
        state: AppState,
        options: ServerOptions,
    ) -> std::io::Result<Self> {
        let port = listener.local_addr()?.port();
        let dashboard = muster_dashboard::Dashboard::new();
        let server = muster_http::serve_with(listener, state, options, move |cfg| {
            dashboard.configure(cfg);
        })?;
        Ok(Self { port, server })
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A handle to stop the server gracefully.
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    /// Serves until stopped (SIGINT/SIGTERM or [`handle`](Self::handle)), after
    /// in-flight requests finish.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}
