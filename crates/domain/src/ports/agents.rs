use async_trait::async_trait;

use super::RepositoryError;
use crate::model::{Agent, AgentCredentials, AgentHandle, AgentId, OrgId};

/// Stored agents.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AgentRepository: Send + Sync {
    /// The agent with `id` in `org`, if any.
    async fn get(&self, org: OrgId, id: AgentId) -> Result<Option<Agent>, RepositoryError>;

    /// The agent whose `agentId` is `handle`, with its sealed secret. Handles are unique
    /// across the deployment (decision D-11), so this is the one lookup not scoped to an
    /// organization: it is how a signed request finds its organization.
    async fn find_credentials(
        &self,
        handle: &AgentHandle,
    ) -> Result<Option<AgentCredentials>, RepositoryError>;
}
