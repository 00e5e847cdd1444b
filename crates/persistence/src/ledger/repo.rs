//! The domain's `TreasuryRepository` on [`Database`].

use async_trait::async_trait;
use muster_domain::model::{OrgId, Treasury, TreasuryEntry, TreasuryEntryId};
use muster_domain::ports::{RepositoryError, TreasuryRepository};

use crate::Database;
use crate::error::from_diesel;

use super::treasuries;

#[async_trait]
impl TreasuryRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.treasuries.treasury", skip_all, fields(otel.kind = "client"))]
    async fn treasury(&self, org: OrgId) -> Result<Treasury, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = treasuries::find(&mut pooled.conn(), org, None)
            .await
            .map_err(from_diesel)?;
        Ok(row.map_or_else(|| Treasury::empty(org), Treasury::from))
    }

    #[tracing::instrument(level = "debug", name = "db.treasuries.history", skip_all, fields(otel.kind = "client"))]
    async fn history(
        &self,
        org: OrgId,
        before: Option<TreasuryEntryId>,
        limit: u32,
    ) -> Result<Vec<TreasuryEntry>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = treasuries::history(&mut pooled.conn(), org, before, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(TreasuryEntry::try_from).collect()
    }
}
