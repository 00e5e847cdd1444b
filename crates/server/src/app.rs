//! Wiring: adapters into use cases, use cases into the HTTP server.

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use async_trait::async_trait;
use muster_auth::agent::AgentAuthenticator;
use muster_auth::keys::ServerKey;
use muster_domain::service::{EventService, TaskService};
use muster_http::{AppState, Readiness, ServerOptions};
use muster_persistence::{Database, NonceBatcher};

use crate::adapters::{SystemClock, UuidV7Ids};

/// `/ready` asks the database.
struct DatabaseReadiness(Database);

#[async_trait]
impl Readiness for DatabaseReadiness {
    async fn check(&self) -> Result<(), String> {
        self.0.ping().await.map_err(|e| e.to_string())
    }
}

/// Builds the HTTP state from a database and the server key. Starts the nonce writer on
/// the current Tokio runtime.
pub fn app_state(db: &Database, key: &ServerKey) -> AppState {
    let db = Arc::new(db.clone());
    let clock = Arc::new(SystemClock);
    let ids = Arc::new(UuidV7Ids);
    AppState {
        tasks: TaskService::new(db.clone(), db.clone(), clock.clone(), ids.clone()),
        events: EventService::new(db.clone()),
        agent_auth: Arc::new(AgentAuthenticator::new(
            db.clone(),
            // Signed requests record their nonces in batches (group commit).
            Arc::new(NonceBatcher::spawn(Database::clone(&db))),
            clock,
            key.secret_cipher(),
        )),
        readiness: Arc::new(DatabaseReadiness(Database::clone(&db))),
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
        db: &Database,
        key: &ServerKey,
        options: ServerOptions,
    ) -> std::io::Result<Self> {
        let port = listener.local_addr()?.port();
        let server = muster_http::serve(listener, app_state(db, key), options)?;
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
