//! Command line: flags win over `MUSTER_*` environment variables, which win over defaults.

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::auth_settings::AuthModeSetting;

/// Default embedded database.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://./muster-data/muster.db";

/// Muster: task and agent coordination.
#[derive(Debug, Parser)]
#[command(
    name = "muster",
    version,
    about = "Muster: task and agent coordination for AI agents and people"
)]
pub struct Cli {
    /// Log filter, e.g. `info` or `muster=debug,actix_web=info`.
    #[arg(long, global = true, env = "MUSTER_LOG", default_value = "info")]
    pub log: String,
    /// Log format.
    #[arg(long, global = true, env = "MUSTER_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Where to send traces over OTLP/HTTP (protobuf), as the collector's base URL, e.g.
    /// `http://otel-collector:4318`; spans go to `<url>/v1/traces`. Wins over
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` and `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, which apply
    /// when it is unset (with the other `OTEL_*` settings: docs/operations.md). None of
    /// them set: no traces.
    #[arg(long, global = true, env = "MUSTER_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable.
    Text,
    /// One JSON object per line.
    Json,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP service (migrates the database first). Boxed: its settings outweigh
    /// every other command's.
    Serve(Box<ServeArgs>),
    /// Apply pending database migrations and exit.
    Migrate(DatabaseArgs),
    /// Create an organization with its first admin user and HR agent; prints one JSON object.
    Bootstrap(BootstrapArgs),
    /// Print the signature headers of an agent request (for curl and client authors).
    Sign(SignArgs),
    /// Print the OpenAPI 3.1 document of the API (what `GET /openapi.json` serves).
    Openapi,
    /// Work with tasks on a running server: list, show, create, move, comment, claim.
    Task(muster_cli::TaskArgs),
    /// Work with agents on a running server: list, show, register, spawn.
    Agent(muster_cli::AgentArgs),
    /// Follow a running server's audit log live.
    Events(muster_cli::EventsArgs),
    /// Work with projects on a running server: list, show, create, update, archive.
    Project(muster_cli::ProjectArgs),
    /// Work with routines on a running server: list, show, create, enable, disable, run,
    /// delete.
    Routine(muster_cli::RoutineArgs),
    /// Work with runs of tasks on a running server: start, get, list, log, finish, stop.
    Run(muster_cli::RunArgs),
    /// Token usage, cost and credits on a running server, grouped.
    Usage(muster_cli::UsageArgs),
    /// Serve MCP on stdin/stdout for a local agent, relaying to a running server's `/mcp`
    /// as the agent (or user) of the environment or profile.
    Mcp(muster_cli::Connection),
    /// Work on tasks as an agent: claim them and run Claude Code, Codex, Gemini CLI or any
    /// command on each, with its log, usage and stops (docs/worker.md).
    Worker(muster_cli::WorkerArgs),
}

/// Where the database is.
#[derive(Args)]
pub struct DatabaseArgs {
    /// `sqlite://PATH` (created with its folder) or `postgres://USER@HOST/DB`.
    #[arg(long, env = "MUSTER_DATABASE_URL", hide_env_values = true, default_value = DEFAULT_DATABASE_URL)]
    pub database_url: String,
    /// Most database connections this process keeps open (SQLite uses at most 4 for
    /// reading and 1 for writing whatever this says).
    #[arg(long, env = "MUSTER_DB_POOL_SIZE", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub db_pool_size: u32,
    /// Milliseconds a request waits for a database connection before it fails with 503
    /// (and `Retry-After`) instead of queueing on.
    #[arg(long, env = "MUSTER_DB_ACQUIRE_TIMEOUT_MS", default_value_t = 3_000,
          value_parser = clap::value_parser!(u64).range(10..=600_000))]
    pub db_acquire_timeout_ms: u64,
    /// Milliseconds one PostgreSQL statement may run before the server cancels it; 0
    /// leaves the server's own setting.
    #[arg(long, env = "MUSTER_DB_STATEMENT_TIMEOUT_MS", default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub db_statement_timeout_ms: u64,
}

impl DatabaseArgs {
    /// The database URL, parsed.
    ///
    /// # Errors
    /// A URL that names no engine Muster supports.
    pub fn url(&self) -> anyhow::Result<muster_persistence::DatabaseUrl> {
        muster_persistence::DatabaseUrl::parse(&self.database_url)
            .map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// The pool settings these flags describe.
    pub fn pool_options(&self) -> muster_persistence::PoolOptions {
        muster_persistence::PoolOptions {
            max_size: usize::try_from(self.db_pool_size).unwrap_or(usize::MAX),
            timeout: std::time::Duration::from_millis(self.db_acquire_timeout_ms),
            statement_timeout: (self.db_statement_timeout_ms > 0)
                .then(|| std::time::Duration::from_millis(self.db_statement_timeout_ms)),
        }
    }
}

/// `muster serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "MUSTER_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// HTTP worker threads (default: one per core).
    #[arg(long, env = "MUSTER_WORKERS")]
    pub workers: Option<usize>,
    /// Threads that hash passwords for logins (default: one per core but one, at least
    /// one). Each holds 19 MiB while it hashes.
    #[arg(long, env = "MUSTER_PASSWORD_HASHERS", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub password_hashers: Option<u16>,
    /// What a request without credentials gets: `full` (401), `local` (log in with the
    /// deployment's password) or `none` (acts as the owner; never expose it).
    #[arg(long, env = "MUSTER_AUTH_MODE", value_enum, default_value_t = AuthModeSetting::Full)]
    pub auth_mode: AuthModeSetting,
    #[command(flatten)]
    pub tasks: crate::task_settings::TaskSettings,
    #[command(flatten)]
    pub webhooks: crate::webhook_settings::WebhookSettings,
    #[command(flatten)]
    pub streams: crate::stream_settings::StreamSettings,
    #[command(flatten)]
    pub metrics: crate::metrics_settings::MetricsSettings,
    #[command(flatten)]
    pub edge: crate::edge_settings::EdgeSettings,
    /// Where the dashboard links a run to its trace: your trace viewer's URL of a trace,
    /// with `{traceId}` where its id goes (e.g. `http://jaeger:16686/trace/{traceId}`).
    #[arg(long, env = "MUSTER_TRACE_URL")]
    pub trace_url: Option<String>,
    #[command(flatten)]
    pub database: DatabaseArgs,
}

/// `muster bootstrap`.
#[derive(Args)]
pub struct BootstrapArgs {
    /// Name of the new organization.
    #[arg(long)]
    pub org_name: String,
    /// E-mail of its first admin user.
    #[arg(long)]
    pub admin_email: String,
    /// Password of its first admin user (8 to 128 characters).
    #[arg(long, env = "MUSTER_ADMIN_PASSWORD", hide_env_values = true)]
    pub admin_password: String,
    /// `agentId` of its HR agent (default `hr-<org slug>`); unique across the deployment.
    #[arg(long)]
    pub hr_agent_id: Option<String>,
    /// Credits granted to the organization's treasury, which pays the rewards of the
    /// tasks people, API keys and integrations create (0 to 1,000,000,000; default 0).
    #[arg(long, default_value_t = 0,
          value_parser = clap::value_parser!(i64).range(0..=1_000_000_000))]
    pub treasury: i64,
    #[command(flatten)]
    pub database: DatabaseArgs,
}

/// `muster sign`.
#[derive(Args)]
pub struct SignArgs {
    /// The agent's `agentId`.
    #[arg(long)]
    pub agent_id: String,
    /// The agent's secret.
    #[arg(long, env = "MUSTER_AGENT_SECRET", hide_env_values = true)]
    pub secret: String,
    /// HTTP method.
    #[arg(long, default_value = "GET")]
    pub method: String,
    /// Request target as it will be sent: path plus `?query`.
    #[arg(long)]
    pub path: String,
    /// Raw body, exactly as it will be sent.
    #[arg(long, default_value = "")]
    pub body: String,
    /// Unix seconds (default: now).
    #[arg(long)]
    pub timestamp: Option<i64>,
    /// Nonce (default: a new UUID).
    #[arg(long)]
    pub nonce: Option<String>,
    /// `headers`: one `Name: value` per line; `curl`: `-H Name:value` arguments.
    #[arg(long, value_enum, default_value_t = SignFormat::Headers)]
    pub format: SignFormat,
}

/// Output of `muster sign`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SignFormat {
    /// `Name: value` lines.
    Headers,
    /// `-H Name:value` words for a shell command line.
    Curl,
}

// Hand-written so that passwords and secrets never reach a log or a panic message.
impl std::fmt::Debug for DatabaseArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseArgs").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for BootstrapArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BootstrapArgs")
            .field("org_name", &self.org_name)
            .field("admin_email", &self.admin_email)
            .field("hr_agent_id", &self.hr_agent_id)
            .field("treasury", &self.treasury)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for SignArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignArgs")
            .field("agent_id", &self.agent_id)
            .field("method", &self.method)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}
