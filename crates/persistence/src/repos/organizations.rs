use async_trait::async_trait;
use muster_domain::model::{OrgId, Organization};
use muster_domain::ports::{OrganizationRepository, RepositoryError};

use crate::Database;
use crate::error::from_diesel;
use crate::queries::organizations;

#[async_trait]
impl OrganizationRepository for Database {
    async fn get(&self, id: OrgId) -> Result<Option<Organization>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = organizations::find(&mut pooled.conn(), id)
            .await
            .map_err(from_diesel)?;
        row.map(Organization::try_from).transpose()
    }

    async fn default_organization(&self) -> Result<Option<Organization>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = organizations::find_default(&mut pooled.conn())
            .await
            .map_err(from_diesel)?;
        row.map(Organization::try_from).transpose()
    }

    async fn any_exists(&self) -> Result<bool, RepositoryError> {
        let mut pooled = self.pooled().await?;
        organizations::any(&mut pooled.conn())
            .await
            .map_err(from_diesel)
    }
}
