//! [`KeysTx`] on a unit of work's transaction: API keys and inbound webhook keys.

use async_trait::async_trait;
use muster_domain::model::{ApiKey, ApiKeyId, InboundKey, InboundKeyId, OrgId, UserId};
use muster_domain::ports::{KeysTx, Lock, RepositoryError};
use time::OffsetDateTime;

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::api_keys::ApiKeyRow;
use super::inbound_keys::InboundKeyRow;
use super::{api_keys, inbound_keys};

#[async_trait]
impl KeysTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.insert_api_key", skip_all, fields(otel.kind = "client"))]
    async fn insert_api_key(&mut self, key: &ApiKey) -> Result<(), RepositoryError> {
        api_keys::insert(&mut self.conn, &ApiKeyRow::from(key))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_api_key", skip_all, fields(otel.kind = "client"))]
    async fn delete_api_key(
        &mut self,
        org: OrgId,
        user: UserId,
        id: ApiKeyId,
    ) -> Result<Option<ApiKey>, RepositoryError> {
        let row = api_keys::delete(&mut self.conn, org, user, id)
            .await
            .map_err(from_diesel)?;
        row.map(ApiKey::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.inbound_key", skip_all, fields(otel.kind = "client"))]
    async fn inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
        lock: Lock,
    ) -> Result<Option<InboundKey>, RepositoryError> {
        let row = inbound_keys::find(&mut self.conn, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(InboundKey::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_inbound_key", skip_all, fields(otel.kind = "client"))]
    async fn insert_inbound_key(&mut self, key: &InboundKey) -> Result<(), RepositoryError> {
        inbound_keys::insert(&mut self.conn, &InboundKeyRow::from(key))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_inbound_key", skip_all, fields(otel.kind = "client"))]
    async fn update_inbound_key(&mut self, key: &InboundKey) -> Result<bool, RepositoryError> {
        inbound_keys::update(&mut self.conn, &InboundKeyRow::from(key))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_inbound_key", skip_all, fields(otel.kind = "client"))]
    async fn delete_inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
    ) -> Result<bool, RepositoryError> {
        inbound_keys::delete(&mut self.conn, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.touch_inbound_key", skip_all, fields(otel.kind = "client"))]
    async fn touch_inbound_key(
        &mut self,
        id: InboundKeyId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        inbound_keys::touch(&mut self.conn, id, at)
            .await
            .map_err(from_diesel)
    }
}
