//! What handlers share: the use cases, the credential checkers and the auth mode.

use std::sync::Arc;

use async_trait::async_trait;
use muster_auth::agent::AgentAuthenticator;
use muster_auth::bearer::BearerAuthenticator;
use muster_domain::model::{Actor, User};
use muster_domain::ports::{IdempotencyStore, IdentityProvider};
use muster_domain::service::guard::GuardService;
use muster_domain::service::{
    AccountService, AgentService, ApiKeyService, ChatService, CodeHostService, EventService,
    InboundService, ProjectService, RemoteAgentService, RoutineService, RunService, TaskService,
    TreasuryService, WebhookService,
};

use crate::edge::Edge;
use crate::metrics::Metrics;
use crate::sign_in_starts::SignInStarts;
use crate::streams::EventStreams;

/// Answers whether the service's dependencies (the database) respond, for `GET /ready`.
#[async_trait]
pub trait Readiness: Send + Sync {
    /// `Err` with a reason when not ready.
    async fn check(&self) -> Result<(), String>;
}

/// How requests without credentials are treated (decision D-20). Supplied credentials
/// are verified in every mode.
#[derive(Clone)]
pub enum AuthMode {
    /// A request without credentials acts as the synthetic owner.
    None {
        /// The owner, an admin user of the default organization.
        owner: Actor,
    },
    /// `POST /auth/login {password}` with the deployment's password signs in the owner.
    Local {
        /// The synthetic owner.
        owner: Box<User>,
        /// Argon2 PHC hash of the deployment's password.
        password_hash: String,
    },
    /// Agent signatures, user logins and API keys only.
    Full,
}

impl std::fmt::Debug for AuthMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::None { .. } => "AuthMode::None",
            Self::Local { .. } => "AuthMode::Local",
            Self::Full => "AuthMode::Full",
        })
    }
}

/// The sign-in redirect flow (decision D-16), when configured.
#[derive(Clone)]
pub struct OAuthSettings {
    /// The identity provider.
    pub provider: Arc<dyn IdentityProvider>,
    /// Where the browser goes after the callback: `{frontend_url}/auth/callback?...`.
    pub frontend_url: String,
    /// How fast sign-ins may start on this instance; `None` (the default) for no limit.
    pub starts: Option<Arc<SignInStarts>>,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("frontend_url", &self.frontend_url)
            .finish_non_exhaustive()
    }
}

/// The application state every handler receives.
#[derive(Clone)]
pub struct AppState {
    /// Task use cases.
    pub tasks: TaskService,
    /// Runs of tasks, their logs and usage (decision D-106).
    pub runs: RunService,
    /// Projects and their progress (issue 66).
    pub projects: ProjectService,
    /// Routines: work that recurs on a schedule (decision D-108).
    pub routines: RoutineService,
    /// Agent use cases.
    pub agents: AgentService,
    /// The organization's treasury: its balance, ledger and grants.
    pub treasury: TreasuryService,
    /// Audit log use cases.
    pub events: EventService,
    /// The runaway guard's thresholds.
    pub guard: GuardService,
    /// Human users' accounts.
    pub accounts: AccountService,
    /// API keys.
    pub api_keys: ApiKeyService,
    /// Outbound webhooks.
    pub webhooks: WebhookService,
    /// Inbound webhook keys.
    pub inbound: InboundService,
    /// The chat-platform integration.
    pub chat: ChatService,
    /// The code-host integration.
    pub codehost: CodeHostService,
    /// Remote A2A agents: registering them, taking their reports.
    pub remote: RemoteAgentService,
    /// Verifies signed agent requests.
    pub agent_auth: Arc<AgentAuthenticator>,
    /// Verifies access tokens and API keys.
    pub bearer_auth: Arc<BearerAuthenticator>,
    /// What a request without credentials gets.
    pub auth_mode: AuthMode,
    /// How the server is reached: the names it answers to, its public URL, the proxies
    /// it believes (decision D-105).
    pub edge: Edge,
    /// The sign-in redirect flow; `None` answers its routes 404.
    pub oauth: Option<OAuthSettings>,
    /// `Idempotency-Key`s and the responses kept for their retries.
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// The open live event streams and their bound.
    pub streams: EventStreams,
    /// Prometheus metrics and the bearer token `GET /metrics` takes; `None`: off (the
    /// route answers 404 and nothing is counted).
    pub metrics: Option<MetricsAccess>,
    /// Dependency check for `/ready`.
    pub readiness: Arc<dyn Readiness>,
    /// Where the dashboard links a run's trace: a URL with `{traceId}` in it
    /// (`MUSTER_TRACE_URL`); `None`: the trace id is shown without a link.
    pub trace_url: Option<String>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").finish_non_exhaustive()
    }
}

/// The metrics and who may read them.
#[derive(Clone)]
pub struct MetricsAccess {
    /// What is counted.
    pub metrics: Arc<Metrics>,
    /// The bearer token a scrape must present.
    pub token: String,
}

impl std::fmt::Debug for MetricsAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsAccess").finish_non_exhaustive()
    }
}
