//! The domain's `InboundKeyRepository` on [`Database`].

use async_trait::async_trait;
use muster_domain::model::{InboundKey, InboundKeyId, OrgId};
use muster_domain::ports::{InboundKeyRepository, RepositoryError};

use crate::Database;
use crate::error::from_diesel;

use super::inbound_keys;

#[async_trait]
impl InboundKeyRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.inbound_keys.list", skip_all, fields(otel.kind = "client"))]
    async fn list(&self, org: OrgId) -> Result<Vec<InboundKey>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = inbound_keys::list(&mut pooled.conn(), org)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(InboundKey::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.inbound_keys.get", skip_all, fields(otel.kind = "client"))]
    async fn get(
        &self,
        org: OrgId,
        id: InboundKeyId,
    ) -> Result<Option<InboundKey>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = inbound_keys::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(InboundKey::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.inbound_keys.by_key", skip_all, fields(otel.kind = "client"))]
    async fn by_key(&self, key: &str) -> Result<Option<InboundKey>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = inbound_keys::find_by_key(&mut pooled.conn(), key)
            .await
            .map_err(from_diesel)?;
        row.map(InboundKey::try_from).transpose()
    }
}
