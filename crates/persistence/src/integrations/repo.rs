//! The domain's `CodeHostRepository` on [`Database`].

use async_trait::async_trait;
use muster_domain::model::{CodeHostConnection, CodeHostConnectionId, InstallationId, OrgId};
use muster_domain::ports::{CodeHostRepository, RepositoryError};

use crate::Database;
use crate::error::from_diesel;

use super::queries as codehost;

#[async_trait]
impl CodeHostRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.codehost.list", skip_all, fields(otel.kind = "client"))]
    async fn list(&self, org: OrgId) -> Result<Vec<CodeHostConnection>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = codehost::list(&mut pooled.conn(), org)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(CodeHostConnection::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.codehost.get", skip_all, fields(otel.kind = "client"))]
    async fn get(
        &self,
        org: OrgId,
        id: CodeHostConnectionId,
    ) -> Result<Option<CodeHostConnection>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = codehost::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(CodeHostConnection::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.codehost.by_installation", skip_all, fields(otel.kind = "client"))]
    async fn by_installation(
        &self,
        installation: InstallationId,
    ) -> Result<Vec<CodeHostConnection>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = codehost::find_by_installation(&mut pooled.conn(), installation.get())
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(CodeHostConnection::try_from).collect()
    }
}
