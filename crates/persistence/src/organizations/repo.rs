//! The domain's `OrganizationRepository` on [`Database`].

use async_trait::async_trait;
use muster_domain::model::{OrgId, Organization};
use muster_domain::ports::{OrganizationRepository, RepositoryError};

use crate::Database;
use crate::error::from_diesel;

use super::queries as organizations;

#[async_trait]
impl OrganizationRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.organizations.get", skip_all, fields(otel.kind = "client"))]
    async fn get(&self, id: OrgId) -> Result<Option<Organization>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = organizations::find(&mut pooled.conn(), id)
            .await
            .map_err(from_diesel)?;
        row.map(Organization::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.organizations.default_organization", skip_all, fields(otel.kind = "client"))]
    async fn default_organization(&self) -> Result<Option<Organization>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = organizations::find_default(&mut pooled.conn())
            .await
            .map_err(from_diesel)?;
        row.map(Organization::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.organizations.any_exists", skip_all, fields(otel.kind = "client"))]
    async fn any_exists(&self) -> Result<bool, RepositoryError> {
        let mut pooled = self.pooled().await?;
        organizations::any(&mut pooled.conn())
            .await
            .map_err(from_diesel)
    }
}
