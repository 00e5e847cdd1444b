use async_trait::async_trait;
use muster_domain::model::{Agent, AgentCredentials, AgentHandle, AgentId, OrgId};
use muster_domain::ports::{AgentRepository, RepositoryError};

use crate::Database;
use crate::error::from_diesel;
use crate::queries::agents;

#[async_trait]
impl AgentRepository for Database {
    async fn get(&self, org: OrgId, id: AgentId) -> Result<Option<Agent>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = agents::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(|r| AgentCredentials::try_from(r).map(|c| c.agent))
            .transpose()
    }

    async fn find_credentials(
        &self,
        handle: &AgentHandle,
    ) -> Result<Option<AgentCredentials>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = agents::find_by_handle(&mut pooled.conn(), handle)
            .await
            .map_err(from_diesel)?;
        row.map(AgentCredentials::try_from).transpose()
    }
}
