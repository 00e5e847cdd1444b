//! The domain's `NonceStore` on [`Database`], one nonce at a time (see
//! [`NonceBatcher`](super::NonceBatcher) for batches).

use async_trait::async_trait;
use muster_domain::model::AgentId;
use muster_domain::ports::{NonceOutcome, NonceStore, RepositoryError};
use time::OffsetDateTime;

use crate::Database;
use crate::db::detached;
use crate::error::from_diesel;
use crate::purge::purge_in_batches;

use super::queries as nonces;

#[async_trait]
impl NonceStore for Database {
    #[tracing::instrument(level = "debug", name = "db.nonces.remember", skip_all, fields(otel.kind = "client"))]
    async fn remember(
        &self,
        agent: AgentId,
        nonce: &str,
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> Result<NonceOutcome, RepositoryError> {
        let db = self.clone();
        let nonce = nonce.to_owned();
        detached(async move {
            let mut pooled = db.pooled_for_write().await?;
            let fresh = nonces::remember(&mut pooled.conn(), agent, &nonce, now, expires_at)
                .await
                .map_err(from_diesel)?;
            Ok(if fresh {
                NonceOutcome::Fresh
            } else {
                NonceOutcome::Replayed
            })
        })
        .await
    }

    #[tracing::instrument(level = "debug", name = "db.nonces.purge_expired", skip_all, fields(otel.kind = "client"))]
    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, RepositoryError> {
        purge_in_batches!(self, conn => nonces::purge_expired(conn, now))
    }
}
