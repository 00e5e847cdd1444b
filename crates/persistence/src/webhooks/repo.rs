//! The domain's `WebhookRepository` and `DeliveryQueue` on [`Database`].

use async_trait::async_trait;
use muster_domain::model::{AgentId, DeliveryAttempt, Event, OrgId, TaskId, Webhook, WebhookId};
use muster_domain::ports::{
    DeliveryQueue, PendingDelivery, RepositoryError, TraceParent, WebhookRepository,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::Database;
use crate::db::detached;
use crate::error::{corrupt, from_diesel};

use super::{deliveries, queries as webhooks};

#[async_trait]
impl WebhookRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.webhooks.list", skip_all, fields(otel.kind = "client"))]
    async fn list(&self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = webhooks::list(&mut pooled.conn(), org, false)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Webhook::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.webhooks.get", skip_all, fields(otel.kind = "client"))]
    async fn get(&self, org: OrgId, id: WebhookId) -> Result<Option<Webhook>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = webhooks::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(Webhook::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.webhooks.remote_channel", skip_all, fields(otel.kind = "client"))]
    async fn remote_channel(&self, agent: AgentId) -> Result<Option<Webhook>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = webhooks::remote_channel(&mut pooled.conn(), agent)
            .await
            .map_err(from_diesel)?;
        row.map(Webhook::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.webhooks.push_configs", skip_all, fields(otel.kind = "client"))]
    async fn push_configs(
        &self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<Webhook>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = webhooks::push_configs(&mut pooled.conn(), org, task)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Webhook::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.webhooks.attempts", skip_all, fields(otel.kind = "client"))]
    async fn attempts(
        &self,
        org: OrgId,
        id: WebhookId,
        limit: u32,
        offset: u64,
    ) -> Result<(Vec<DeliveryAttempt>, u64), RepositoryError> {
        let mut pooled = self.pooled().await?;
        let (rows, total) = webhooks::attempts(&mut pooled.conn(), org, id, limit, offset)
            .await
            .map_err(from_diesel)?;
        let attempts = rows
            .into_iter()
            .map(DeliveryAttempt::try_from)
            .collect::<Result<_, _>>()?;
        Ok((attempts, total))
    }
}

#[async_trait]
impl DeliveryQueue for Database {
    #[tracing::instrument(level = "debug", name = "db.webhooks.lease_due_hooks", skip_all, fields(otel.kind = "client"))]
    async fn lease_due_hooks(
        &self,
        now: OffsetDateTime,
        until: OffsetDateTime,
        holder: Uuid,
        max_hooks: u32,
    ) -> Result<Vec<(OrgId, WebhookId)>, RepositoryError> {
        let mut reader = self.pooled().await?;
        let due = deliveries::any_due(&mut reader.conn(), now)
            .await
            .map_err(from_diesel)?;
        drop(reader);
        if !due {
            return Ok(Vec::new());
        }
        let db = self.clone();
        detached(async move {
            let mut pooled = db.pooled_for_write().await?;
            deliveries::lease_due(&mut pooled.conn(), now, until, holder, max_hooks)
                .await
                .map_err(from_diesel)
        })
        .await
    }

    #[tracing::instrument(level = "debug", name = "db.webhooks.extend_lease", skip_all, fields(otel.kind = "client"))]
    async fn extend_lease(
        &self,
        hook: WebhookId,
        holder: Uuid,
        until: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        let db = self.clone();
        detached(async move {
            let mut pooled = db.pooled_for_write().await?;
            deliveries::extend_lease(&mut pooled.conn(), hook, holder, until)
                .await
                .map_err(from_diesel)
        })
        .await
    }

    #[tracing::instrument(level = "debug", name = "db.webhooks.release", skip_all, fields(otel.kind = "client"))]
    async fn release(&self, hook: WebhookId, holder: Uuid) -> Result<(), RepositoryError> {
        let db = self.clone();
        detached(async move {
            let mut pooled = db.pooled_for_write().await?;
            deliveries::release(&mut pooled.conn(), hook, holder)
                .await
                .map_err(from_diesel)
        })
        .await
    }

    #[tracing::instrument(level = "debug", name = "db.webhooks.release_all", skip_all, fields(otel.kind = "client"))]
    async fn release_all(&self, holder: Uuid) -> Result<u64, RepositoryError> {
        let db = self.clone();
        detached(async move {
            let mut pooled = db.pooled_for_write().await?;
            deliveries::release_all(&mut pooled.conn(), holder)
                .await
                .map_err(from_diesel)
        })
        .await
    }

    #[tracing::instrument(level = "debug", name = "db.webhooks.due", skip_all, fields(otel.kind = "client"))]
    async fn due(
        &self,
        hook: WebhookId,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<PendingDelivery>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = deliveries::due(&mut pooled.conn(), hook, now, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter()
            .map(|(event, attempts, traceparent, tracestate)| {
                Ok(PendingDelivery {
                    event: Event::try_from(event)?,
                    attempts: u32::try_from(attempts)
                        .map_err(|e| corrupt("delivery attempts", e))?,
                    trace: traceparent.map(|traceparent| TraceParent {
                        traceparent,
                        tracestate,
                    }),
                })
            })
            .collect()
    }
}
