//! The running application under test and the tools to talk to it: signed requests,
//! hand-made headers, extra agents inserted through the persistence's typed ports, and
//! assertions on the contract's bodies.

use std::net::TcpListener;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::dev::ServerHandle;
use muster_auth::keys::ServerKey;
use muster_auth::password::PasswordCost;
use muster_auth::signing::RequestSignature;
use muster_domain::model::{AgentMode, AgentStatus};
use muster_domain::service::DeliveryService;
use muster_http::{ServerOptions, StreamOptions};
use muster_persistence::testing::TestDatabase;
use muster_persistence::{Database, Engine};
use muster_server::app::{Application, app_state, deliveries};
pub use muster_server::auth_settings::{AuthModeSetting, AuthSettings, LocalPassword};
use muster_server::bootstrap::{BootstrapInput, bootstrap};
pub use muster_server::edge_settings::EdgeSettings;
pub use muster_server::metrics_settings::MetricsSettings;
pub use muster_server::run_settings::RunSettings;
pub use muster_server::task_settings::TaskSettings;
pub use muster_server::webhook_settings::WebhookSettings;
use muster_server::webhook_settings::deliver_webhooks;
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::Value;
use uuid::Uuid;

mod reply;
mod rng;

pub use rng::Rng;

pub use reply::{
    PAGE_REFUSALS, Reply, assert_bad_queries, assert_error, assert_error_code, assert_error_exact,
    assert_timestamp, keys_of, send, str_of,
};

/// An agent the tests can sign as.
#[derive(Debug, Clone)]
pub struct Agent {
    /// Agent UUID (`id`).
    pub uuid: Uuid,
    /// `agentId`, sent as `X-Agent-ID`.
    pub handle: String,
    /// Signing secret (64 hex characters).
    pub secret: String,
}

/// An organization created by `bootstrap`, with its HR agent.
#[derive(Debug, Clone)]
pub struct Org {
    /// Organization id.
    pub id: Uuid,
    /// Its first admin user's e-mail (password [`ADMIN_PASSWORD`]).
    pub admin_email: String,
    /// Its HR agent (role hr, level 10, mode worker, active).
    pub hr: Agent,
}

/// A server on a free port over a fresh database with two organizations.
#[derive(Debug)]
pub struct TestApp {
    /// `http://127.0.0.1:port`.
    pub base: String,
    /// Shared HTTP client.
    pub client: reqwest::Client,
    /// The first organization.
    pub org: Org,
    /// A second organization, for isolation checks.
    pub other: Org,
    handle: ServerHandle,
    /// The webhook delivery worker, when it runs.
    worker: Option<(DeliveryService, tokio::task::JoinHandle<()>)>,
    /// What it was started with, to start it again.
    settings: AppSettings,
    /// The server key, to seal the secrets of agents inserted by the tests.
    key: ServerKey,
    // Last: the database outlives the server handle.
    db: TestDatabase,
}

/// A second instance of the app over the same database.
#[derive(Debug)]
pub struct Sibling {
    /// `http://127.0.0.1:port`.
    pub base: String,
    handle: ServerHandle,
    worker: tokio::task::JoinHandle<()>,
    deliveries: DeliveryService,
}

/// Signing headers set by hand; `None` leaves a header out.
#[derive(Debug, Clone)]
pub struct Headers {
    /// `X-Agent-ID`.
    pub agent_id: Option<String>,
    /// `X-Timestamp`.
    pub timestamp: Option<String>,
    /// `X-Nonce`.
    pub nonce: Option<String>,
    /// `X-Signature`.
    pub signature: Option<String>,
}

/// The password of every bootstrapped admin.
pub const ADMIN_PASSWORD: &str = "correct horse";

/// Unix time in seconds.
pub fn now_secs() -> i64 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    i64::try_from(secs).unwrap()
}

/// A fresh nonce.
pub fn new_nonce() -> String {
    Uuid::now_v7().to_string()
}

/// A deployment-unique agent handle.
pub fn unique_handle(prefix: &str) -> String {
    format!("{prefix}-{}", Uuid::now_v7().simple())
}

/// The hex signature of a request, as a client computes it.
pub fn signature(
    secret: &str,
    method: &str,
    path: &str,
    ts: &str,
    nonce: &str,
    body: &[u8],
) -> String {
    RequestSignature::at(secret, method, path, ts, nonce, body).signature
}

/// Starts the application on `engine`; `None` when PostgreSQL is unreachable outside CI.
pub async fn spawn_app(engine: Engine) -> Option<TestApp> {
    spawn_app_with(engine, AppSettings::default()).await
}

/// What a test app is started with: user-authentication settings, and webhook settings
/// with the delivery worker running (off unless asked for).
#[derive(Debug, Clone)]
pub struct AppSettings {
    /// User authentication.
    pub auth: AuthSettings,
    /// Webhooks; `Some` also runs the delivery worker.
    pub hooks: Option<WebhookSettings>,
    /// The live event streams' bound and timings.
    pub streams: StreamOptions,
    /// `GET /metrics` and its token; off when `None`.
    pub metrics: MetricsSettings,
    /// Public URLs, allowed hosts, trusted proxies (default: loopback only).
    pub edge: EdgeSettings,
    /// Rewards, budgets, leases and what runs' usage costs.
    pub tasks: TaskSettings,
}

impl Default for AppSettings {
    /// Passwords hashed at argon2's minimum cost (the throw-away passwords of a test
    /// need no more, and hashing at the service's cost was a fifth of the API tests'
    /// CPU); settings of a test's own (`AuthSettings { .. }`) keep the service's cost.
    fn default() -> Self {
        Self {
            auth: AuthSettings {
                password_cost: PasswordCost::MINIMUM,
                ..AuthSettings::default()
            },
            hooks: None,
            streams: StreamOptions::default(),
            metrics: MetricsSettings::default(),
            edge: EdgeSettings::default(),
            tasks: TaskSettings::default(),
        }
    }
}

impl From<AuthSettings> for AppSettings {
    fn from(auth: AuthSettings) -> Self {
        Self {
            auth,
            ..Self::default()
        }
    }
}

impl From<WebhookSettings> for AppSettings {
    fn from(hooks: WebhookSettings) -> Self {
        Self {
            hooks: Some(hooks),
            ..Self::default()
        }
    }
}

impl From<MetricsSettings> for AppSettings {
    fn from(metrics: MetricsSettings) -> Self {
        Self {
            metrics,
            ..Self::default()
        }
    }
}

impl From<EdgeSettings> for AppSettings {
    fn from(edge: EdgeSettings) -> Self {
        Self {
            edge,
            ..Self::default()
        }
    }
}

impl From<TaskSettings> for AppSettings {
    fn from(tasks: TaskSettings) -> Self {
        Self {
            tasks,
            ..Self::default()
        }
    }
}

impl From<StreamOptions> for AppSettings {
    fn from(streams: StreamOptions) -> Self {
        Self {
            streams,
            ..Self::default()
        }
    }
}

/// [`spawn_app`] with other settings (auth mode, identity provider, webhooks).
pub async fn spawn_app_with(engine: Engine, settings: impl Into<AppSettings>) -> Option<TestApp> {
    let settings = settings.into();
    let db = TestDatabase::new(engine).await?;
    let key = ServerKey::generate().unwrap();
    let cost = settings.auth.password_cost;
    let org = bootstrap_org(&db, &key, "Acme", cost).await;
    let other = bootstrap_org(&db, &key, "Globex", cost).await;
    Some(start(db, key, org, other, settings).await)
}

/// [`spawn_app`] over a database of the caller's (a throw-away server's, say).
pub async fn spawn_app_over(db: TestDatabase) -> TestApp {
    let key = ServerKey::generate().unwrap();
    let settings = AppSettings::default();
    let cost = settings.auth.password_cost;
    let org = bootstrap_org(&db, &key, "Acme", cost).await;
    let other = bootstrap_org(&db, &key, "Globex", cost).await;
    start(db, key, org, other, settings).await
}

/// Starts the server (and the delivery worker, when asked) over `db`.
async fn start(
    db: TestDatabase,
    key: ServerKey,
    org: Org,
    other: Org,
    settings: AppSettings,
) -> TestApp {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let options = ServerOptions {
        workers: Some(1),
        shutdown_timeout: Duration::from_secs(1),
    };
    let hooks = settings.hooks.clone().unwrap_or_default();
    let mut state = app_state(
        &db.db,
        &key,
        &settings.auth,
        &settings.tasks,
        &hooks,
        settings.streams,
        settings.metrics.access(&db.db).unwrap(),
    )
    .await
    .unwrap();
    state.edge = settings.edge.edge().unwrap();
    let metrics = state.metrics.as_ref().map(|a| a.metrics.clone());
    let worker = settings.hooks.as_ref().map(|hooks| {
        let deliveries = deliveries(&db.db, &key, hooks).unwrap();
        let every = hooks.poll_every().unwrap_or(Duration::from_millis(50));
        let task = tokio::spawn(deliver_webhooks(
            deliveries.clone(),
            every,
            hooks.webhook_concurrency,
            metrics.clone(),
        ));
        (deliveries, task)
    });
    let app = Application::build(listener, state, options).unwrap();
    let base = format!("http://127.0.0.1:{}", app.port());
    let handle = app.handle();
    tokio::spawn(app.run_until_stopped());
    // reqwest's TLS (turned on by muster-client) needs a crypto provider; the other
    // clients of a test are built after this one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    TestApp {
        base,
        client,
        org,
        other,
        handle,
        worker,
        settings,
        key,
        db,
    }
}

async fn bootstrap_org(db: &TestDatabase, key: &ServerKey, name: &str, cost: PasswordCost) -> Org {
    let admin_email = format!("admin-{}@example.com", Uuid::now_v7().simple());
    let input = BootstrapInput {
        org_name: name.to_owned(),
        admin_email: admin_email.clone(),
        admin_password: ADMIN_PASSWORD.to_owned(),
        hr_agent_id: Some(unique_handle("hr")),
        treasury: 0,
        password_cost: cost,
    };
    let out = bootstrap(&db.db, key, input).await.unwrap();
    Org {
        id: out.org_id,
        admin_email,
        hr: Agent {
            uuid: out.hr_agent.id,
            handle: out.hr_agent.agent_id,
            secret: out.hr_agent.secret,
        },
    }
}

impl TestApp {
    /// Stops the server at once (the database is removed when `self` drops).
    pub async fn stop(self) {
        self.halt().await;
    }

    /// Stops the server and the delivery worker as `muster serve` does on a signal,
    /// keeping the database.
    async fn halt(&self) {
        self.handle.stop(false).await;
        if let Some((deliveries, task)) = &self.worker {
            task.abort();
            // As `muster serve` does: release only once the worker is gone, or it could
            // lease a hook again right after.
            while !task.is_finished() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            deliveries.release_all().await.unwrap();
        }
    }

    /// A second instance over the same database (PostgreSQL scale-out), with its own
    /// port and delivery worker; stop it with [`TestApp::stop_sibling`].
    pub async fn sibling(&self) -> Sibling {
        self.sibling_over(&self.db.db).await
    }

    /// [`sibling`](Self::sibling) over `db`: the same database through a pool of its
    /// own (a small one, say).
    pub async fn sibling_over(&self, db: &Database) -> Sibling {
        let hooks = self.settings.hooks.clone().unwrap_or_default();
        let mut state = app_state(
            db,
            &self.key,
            &self.settings.auth,
            &self.settings.tasks,
            &hooks,
            self.settings.streams,
            None,
        )
        .await
        .unwrap();
        state.edge = self.settings.edge.edge().unwrap();
        let deliveries = deliveries(db, &self.key, &hooks).unwrap();
        let every = hooks.poll_every().unwrap_or(Duration::from_millis(50));
        let worker = tokio::spawn(deliver_webhooks(
            deliveries.clone(),
            every,
            hooks.webhook_concurrency,
            None,
        ));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let options = ServerOptions {
            workers: Some(1),
            shutdown_timeout: Duration::from_secs(1),
        };
        let app = Application::build(listener, state, options).unwrap();
        let base = format!("http://127.0.0.1:{}", app.port());
        let handle = app.handle();
        tokio::spawn(app.run_until_stopped());
        Sibling {
            base,
            handle,
            worker,
            deliveries,
        }
    }

    /// Stops a sibling whose database cannot take writes (so its delivery leases stay
    /// until they expire, as after a crash).
    pub async fn halt_sibling(sibling: Sibling) {
        sibling.handle.stop(false).await;
        sibling.worker.abort();
    }

    /// Stops a sibling as a signal would.
    pub async fn stop_sibling(sibling: Sibling) {
        sibling.handle.stop(false).await;
        sibling.worker.abort();
        let _ = sibling.worker.await;
        sibling.deliveries.release_all().await.unwrap();
    }

    /// Stops this instance and starts a new one over the same database (a restart).
    pub async fn restart(self) -> Self {
        let settings = self.settings.clone();
        self.restart_with(settings).await
    }

    /// [`restart`](Self::restart) with other settings (ones that name the agents the
    /// first start created, say).
    pub async fn restart_with(self, settings: impl Into<AppSettings>) -> Self {
        self.halt().await;
        let Self {
            org,
            other,
            key,
            db,
            ..
        } = self;
        start(db, key, org, other, settings.into()).await
    }

    /// The deployment's server key.
    pub fn server_key(&self) -> &ServerKey {
        &self.key
    }

    /// The test database: its typed ports, and raw SQL for what they cannot do.
    pub fn db(&self) -> &TestDatabase {
        &self.db
    }

    /// The engine its database runs on.
    pub fn engine(&self) -> Engine {
        self.db.db.engine()
    }

    /// `base + path`.
    pub fn url(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.base)
    }

    /// A request with no credentials at all.
    pub fn anonymous(&self, method: Method, path_and_query: &str) -> RequestBuilder {
        self.client.request(method, self.url(path_and_query))
    }

    /// Correct signing headers for this request, signed now with a fresh nonce.
    pub fn headers_for(agent: &Agent, method: &Method, path: &str, body: &[u8]) -> Headers {
        let signed = RequestSignature::now(&agent.secret, method.as_str(), path, body);
        Headers {
            agent_id: Some(agent.handle.clone()),
            timestamp: Some(signed.timestamp),
            nonce: Some(signed.nonce),
            signature: Some(signed.signature),
        }
    }

    /// A request carrying exactly `headers` and the raw `body` (JSON content type when a
    /// body is given). Nothing is computed: the test decides every header.
    pub fn with_headers(
        &self,
        method: Method,
        path_and_query: &str,
        headers: &Headers,
        body: Option<Vec<u8>>,
    ) -> RequestBuilder {
        self.with_headers_on(&self.base, method, path_and_query, headers, body)
    }

    /// [`with_headers`](Self::with_headers), sent to the instance at `base` (a sibling).
    pub fn with_headers_on(
        &self,
        base: &str,
        method: Method,
        path_and_query: &str,
        headers: &Headers,
        body: Option<Vec<u8>>,
    ) -> RequestBuilder {
        let mut request = self
            .client
            .request(method, format!("{base}{path_and_query}"));
        let named = [
            ("X-Agent-ID", &headers.agent_id),
            ("X-Timestamp", &headers.timestamp),
            ("X-Nonce", &headers.nonce),
            ("X-Signature", &headers.signature),
        ];
        for (name, value) in named {
            if let Some(value) = value {
                request = request.header(name, value.as_str());
            }
        }
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body);
        }
        request
    }

    /// A request signed by `agent` now, with the body sent byte for byte as given.
    pub fn signed(
        &self,
        agent: &Agent,
        method: Method,
        path_and_query: &str,
        body: Option<&str>,
    ) -> RequestBuilder {
        self.signed_bytes(
            agent,
            method,
            path_and_query,
            body.map(|b| b.as_bytes().to_vec()),
        )
    }

    /// [`signed`](Self::signed), sent to the instance at `base` (a sibling).
    pub fn signed_on(
        &self,
        base: &str,
        agent: &Agent,
        method: Method,
        path_and_query: &str,
        body: Option<&str>,
    ) -> RequestBuilder {
        let bytes = body.unwrap_or_default().as_bytes();
        let headers = Self::headers_for(agent, &method, path_and_query, bytes);
        self.with_headers_on(
            base,
            method,
            path_and_query,
            &headers,
            body.map(|b| b.as_bytes().to_vec()),
        )
    }

    /// [`signed`](Self::signed) with a body of raw bytes.
    pub fn signed_bytes(
        &self,
        agent: &Agent,
        method: Method,
        path_and_query: &str,
        body: Option<Vec<u8>>,
    ) -> RequestBuilder {
        let bytes = body.as_deref().unwrap_or_default();
        let headers = Self::headers_for(agent, &method, path_and_query, bytes);
        self.with_headers(method, path_and_query, &headers, body)
    }

    /// Signed GET, answered.
    pub async fn get(&self, agent: &Agent, path_and_query: &str) -> Reply {
        send(self.signed(agent, Method::GET, path_and_query, None)).await
    }

    /// Signed POST with a raw JSON body, answered.
    pub async fn post(&self, agent: &Agent, path_and_query: &str, body: &str) -> Reply {
        send(self.signed(agent, Method::POST, path_and_query, Some(body))).await
    }

    /// Creates a task as `agent` from a JSON body and answers the task (asserting 200).
    pub async fn create_task(&self, agent: &Agent, body: &Value) -> Value {
        let reply = self.post(agent, "/tasks", &body.to_string()).await;
        assert_eq!(reply.status, StatusCode::OK, "create task: {}", reply.text);
        reply.data().clone()
    }

    /// Creates a task with just a title, answering its id.
    pub async fn task_titled(&self, agent: &Agent, title: &str) -> String {
        let task = self
            .create_task(agent, &serde_json::json!({ "title": title }))
            .await;
        str_of(&task, "id")
    }

    /// Moves a task, answering the reply.
    pub async fn transition(&self, agent: &Agent, task_id: &str, body: &str) -> Reply {
        self.post(agent, &format!("/tasks/{task_id}/transition"), body)
            .await
    }

    /// Every event of `entity_id` visible to `agent`, newest first.
    pub async fn events_of(&self, agent: &Agent, entity_id: &str) -> Vec<Value> {
        let reply = self
            .get(agent, &format!("/events?entityId={entity_id}&limit=200"))
            .await;
        reply.list().clone()
    }

    /// The events of `entity_id` of type `event_type` visible to `agent`, newest first.
    pub async fn events_of_type(
        &self,
        agent: &Agent,
        entity_id: &str,
        event_type: &str,
    ) -> Vec<Value> {
        let mut events = self.events_of(agent, entity_id).await;
        events.retain(|e| e["type"] == event_type);
        events
    }

    /// Inserts a level-5 `worker`-role agent into `org` as a copy of its HR agent (so it
    /// shares that secret) with a new id and handle and the given mode and status (no
    /// route registers an agent straight into any status, or HR into a mode it lacks).
    pub async fn add_agent(&self, org: &Org, mode: &str, status: &str) -> Agent {
        let (mode, status) = (
            AgentMode::parse(mode).unwrap(),
            AgentStatus::parse(status).unwrap(),
        );
        let handle = unique_handle(&format!("{}-{}", mode.as_str(), status.as_str()));
        crate::stored::insert_worker(self, org, &handle, |agent| {
            agent.mode = mode;
            agent.status = status;
        })
        .await
    }

    /// A request with `Authorization: Bearer <credential>` and an optional JSON body.
    pub fn bearer(
        &self,
        credential: &str,
        method: Method,
        path_and_query: &str,
        body: Option<&Value>,
    ) -> RequestBuilder {
        let request = self
            .client
            .request(method, self.url(path_and_query))
            .bearer_auth(credential);
        match body {
            Some(body) => request.json(body),
            None => request,
        }
    }

    /// A request with no credentials and a JSON body, answered.
    pub async fn post_public(&self, path: &str, body: &Value) -> Reply {
        send(self.anonymous(Method::POST, path).json(body)).await
    }

    /// Logs in with e-mail and password (asserting 200), answering the whole reply body.
    pub async fn login(&self, email: &str, password: &str) -> Value {
        let reply = self
            .post_public(
                "/auth/login",
                &serde_json::json!({ "email": email, "password": password }),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "login: {}", reply.text);
        reply.body
    }

    /// The access token of `org`'s admin, freshly logged in (naming the organization).
    pub async fn admin_token(&self, org: &Org) -> String {
        let body = serde_json::json!({
            "email": org.admin_email, "password": ADMIN_PASSWORD, "orgId": org.id,
        });
        let reply = self.post_public("/auth/login", &body).await;
        assert_eq!(reply.status, StatusCode::OK, "login: {}", reply.text);
        str_of(&reply.body, "accessToken")
    }

    /// Creates a user in `org` through `/auth/register` as its admin and answers an
    /// access token of the new user.
    pub async fn user_token(&self, org: &Org, role: &str) -> (String, String) {
        let admin = self.admin_token(org).await;
        let email = format!("{role}-{}@example.com", Uuid::now_v7().simple());
        let body = serde_json::json!({
            "email": email, "password": ADMIN_PASSWORD, "name": role,
            "orgId": org.id, "role": role,
        });
        let reply = send(self.bearer(&admin, Method::POST, "/auth/register", Some(&body))).await;
        assert_eq!(reply.status, StatusCode::OK, "register: {}", reply.text);
        let body = serde_json::json!({"email": email, "password": ADMIN_PASSWORD, "orgId": org.id});
        let reply = self.post_public("/auth/login", &body).await;
        assert_eq!(reply.status, StatusCode::OK, "login: {}", reply.text);
        (email, str_of(&reply.body, "accessToken"))
    }

    /// Creates an API key with `scopes` as the holder of `token`, answering the key.
    pub async fn api_key(&self, token: &str, scopes: &[&str]) -> String {
        let body = serde_json::json!({ "name": "test key", "scopes": scopes });
        let reply = send(self.bearer(token, Method::POST, "/api-keys", Some(&body))).await;
        assert_eq!(reply.status, StatusCode::OK, "create key: {}", reply.text);
        str_of(&reply.body, "secret")
    }

    /// An active worker agent (mode worker, role worker, level 5) in `org`.
    pub async fn worker(&self, org: &Org) -> Agent {
        self.add_agent(org, "worker", "active").await
    }
}
