//! [`WebhooksTx`] on a unit of work's transaction: the events appended with their queued
//! deliveries (the outbox), webhooks and delivery bookkeeping.

use async_trait::async_trait;
use muster_domain::model::{DeliveryAttempt, Event, EventId, OrgId, TaskId, Webhook, WebhookId};
use muster_domain::ports::{Lock, RepositoryError, WebhooksTx};
use time::OffsetDateTime;

use crate::error::from_diesel;
use crate::events::queries as events;
use crate::events::rows::EventRow;
use crate::transaction::DbTransaction;

use super::rows::{AttemptRow, SubscriptionRow, WebhookRow};
use super::{deliveries, queries as webhooks};

#[async_trait]
impl WebhooksTx for DbTransaction<'_> {
    /// Appends the events and, in the same transaction, queues their post-hook
    /// deliveries: the audit log is the outbox.
    #[tracing::instrument(level = "debug", name = "db.tx.append_events", skip_all, fields(otel.kind = "client"))]
    async fn append_events(&mut self, batch: &[Event]) -> Result<(), RepositoryError> {
        let rows: Vec<EventRow> = batch.iter().map(EventRow::from).collect();
        events::append(&mut self.conn, &rows)
            .await
            .map_err(from_diesel)?;
        deliveries::enqueue(&mut self.conn, batch)
            .await
            .map_err(from_diesel)?;
        self.written.extend_from_slice(batch);
        Ok(())
    }

    fn written_events(&self) -> Vec<Event> {
        self.written.clone()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.webhook", skip_all, fields(otel.kind = "client"))]
    async fn webhook(
        &mut self,
        org: OrgId,
        id: WebhookId,
        lock: Lock,
    ) -> Result<Option<Webhook>, RepositoryError> {
        let row = webhooks::find(&mut self.conn, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Webhook::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.pre_hooks", skip_all, fields(otel.kind = "client"))]
    async fn pre_hooks(&mut self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError> {
        let rows = webhooks::list(&mut self.conn, org, true)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Webhook::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.push_configs", skip_all, fields(otel.kind = "client"))]
    async fn push_configs(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<Webhook>, RepositoryError> {
        let rows = webhooks::push_configs(&mut self.conn, org, task)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Webhook::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_webhook", skip_all, fields(otel.kind = "client"))]
    async fn insert_webhook(&mut self, hook: &Webhook) -> Result<(), RepositoryError> {
        webhooks::insert(
            &mut self.conn,
            &WebhookRow::from(hook),
            &SubscriptionRow::of(hook),
        )
        .await
        .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_webhook", skip_all, fields(otel.kind = "client"))]
    async fn update_webhook(&mut self, hook: &Webhook) -> Result<bool, RepositoryError> {
        webhooks::update(
            &mut self.conn,
            &WebhookRow::from(hook),
            &SubscriptionRow::of(hook),
        )
        .await
        .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_webhook_health", skip_all, fields(otel.kind = "client"))]
    async fn update_webhook_health(&mut self, hook: &Webhook) -> Result<bool, RepositoryError> {
        webhooks::update_health(&mut self.conn, &WebhookRow::from(hook))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_webhook", skip_all, fields(otel.kind = "client"))]
    async fn delete_webhook(&mut self, org: OrgId, id: WebhookId) -> Result<bool, RepositoryError> {
        webhooks::delete(&mut self.conn, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_delivery_attempts", skip_all, fields(otel.kind = "client"))]
    async fn insert_delivery_attempts(
        &mut self,
        attempts: &[DeliveryAttempt],
    ) -> Result<(), RepositoryError> {
        let rows: Vec<AttemptRow> = attempts.iter().map(AttemptRow::from).collect();
        webhooks::insert_attempts(&mut self.conn, &rows)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.reschedule_delivery", skip_all, fields(otel.kind = "client"))]
    async fn reschedule_delivery(
        &mut self,
        hook: WebhookId,
        event: EventId,
        attempts: u32,
        next_at: OffsetDateTime,
    ) -> Result<(), RepositoryError> {
        let attempts = i32::try_from(attempts).unwrap_or(i32::MAX);
        deliveries::reschedule(&mut self.conn, hook, event, attempts, next_at)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.finish_deliveries", skip_all, fields(otel.kind = "client"))]
    async fn finish_deliveries(
        &mut self,
        hook: WebhookId,
        events: &[EventId],
    ) -> Result<(), RepositoryError> {
        deliveries::finish(&mut self.conn, hook, events)
            .await
            .map_err(from_diesel)
    }
}
