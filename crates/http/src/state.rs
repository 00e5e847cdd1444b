//! What handlers share: the use cases and the credential checker.

use std::sync::Arc;

use async_trait::async_trait;
use muster_auth::agent::AgentAuthenticator;
use muster_domain::service::{EventService, TaskService};

/// Answers whether the service's dependencies (the database) respond, for `GET /ready`.
#[async_trait]
pub trait Readiness: Send + Sync {
    /// `Err` with a reason when not ready.
    async fn check(&self) -> Result<(), String>;
}

/// The application state every handler receives.
#[derive(Clone)]
pub struct AppState {
    /// Task use cases.
    pub tasks: TaskService,
    /// Audit log use cases.
    pub events: EventService,
    /// Verifies signed agent requests.
    pub agent_auth: Arc<AgentAuthenticator>,
    /// Dependency check for `/ready`.
    pub readiness: Arc<dyn Readiness>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").finish_non_exhaustive()
    }
}
