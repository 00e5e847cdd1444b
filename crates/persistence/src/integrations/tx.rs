//! [`IntegrationsTx`] on a unit of work's transaction: code-host connections, their
//! deliveries and links.

use async_trait::async_trait;
use muster_domain::model::{
    CodeHostConnection, CodeHostConnectionId, CodeHostLink, IntegrationAnswer, ItemRef, OrgId,
};
use muster_domain::ports::{IntegrationsTx, Lock, RepositoryError};
use time::OffsetDateTime;

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::queries as codehost;
use super::rows::{ConnectionRow, HostDeliveryRow};

#[async_trait]
impl IntegrationsTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.codehost_connection", skip_all, fields(otel.kind = "client"))]
    async fn codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
        lock: Lock,
    ) -> Result<Option<CodeHostConnection>, RepositoryError> {
        let row = codehost::find(&mut self.conn, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(CodeHostConnection::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_codehost_connection", skip_all, fields(otel.kind = "client"))]
    async fn insert_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<(), RepositoryError> {
        codehost::insert(&mut self.conn, &ConnectionRow::from(connection))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_codehost_connection", skip_all, fields(otel.kind = "client"))]
    async fn update_codehost_connection(
        &mut self,
        connection: &CodeHostConnection,
    ) -> Result<bool, RepositoryError> {
        codehost::update(&mut self.conn, &ConnectionRow::from(connection))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_codehost_connection", skip_all, fields(otel.kind = "client"))]
    async fn delete_codehost_connection(
        &mut self,
        org: OrgId,
        id: CodeHostConnectionId,
    ) -> Result<bool, RepositoryError> {
        codehost::delete(&mut self.conn, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.claim_codehost_delivery", skip_all, fields(otel.kind = "client"))]
    async fn claim_codehost_delivery(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        codehost::claim_delivery(&mut self.conn, connection, delivery, at)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.codehost_answer", skip_all, fields(otel.kind = "client"))]
    async fn codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
    ) -> Result<Option<IntegrationAnswer>, RepositoryError> {
        let row = codehost::find_delivery(&mut self.conn, connection, delivery)
            .await
            .map_err(from_diesel)?;
        Ok(row.map(HostDeliveryRow::answer).transpose()?.flatten())
    }

    #[tracing::instrument(level = "debug", name = "db.tx.record_codehost_answer", skip_all, fields(otel.kind = "client"))]
    async fn record_codehost_answer(
        &mut self,
        connection: CodeHostConnectionId,
        delivery: &str,
        answer: &IntegrationAnswer,
    ) -> Result<(), RepositoryError> {
        codehost::record_answer(&mut self.conn, connection, delivery, answer)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.codehost_link", skip_all, fields(otel.kind = "client"))]
    async fn codehost_link(
        &mut self,
        connection: CodeHostConnectionId,
        item: &ItemRef,
    ) -> Result<Option<CodeHostLink>, RepositoryError> {
        let row = codehost::find_link(&mut self.conn, connection, item)
            .await
            .map_err(from_diesel)?;
        row.map(CodeHostLink::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.link_codehost_item", skip_all, fields(otel.kind = "client"))]
    async fn link_codehost_item(
        &mut self,
        link: &CodeHostLink,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        codehost::upsert_link(&mut self.conn, link, at)
            .await
            .map_err(from_diesel)
    }
}
