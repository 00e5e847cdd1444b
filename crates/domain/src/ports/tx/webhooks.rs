//! [`WebhooksTx`]: what a transaction reads and writes of audit events and their delivery:
//! outbound webhooks, push configs and the outbox.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::model::{DeliveryAttempt, Event, EventId, OrgId, TaskId, Webhook, WebhookId};
use crate::ports::{Lock, RepositoryError};

/// Audit events and their delivery: outbound webhooks, push configs and the outbox. Part of
/// [`Transaction`](crate::ports::Transaction); every method is scoped to one organization
/// except where it says otherwise.
#[async_trait]
pub trait WebhooksTx: Send {
    /// Appends audit events, in order, in one statement.
    async fn append_events(&mut self, events: &[Event]) -> Result<(), RepositoryError>;

    /// The events appended so far in this transaction, in order: the would-be events a
    /// pre-hook is asked about (decision D-84).
    fn written_events(&self) -> Vec<Event>;

    /// The outbound webhook, if it is in `org`.
    async fn webhook(
        &mut self,
        org: OrgId,
        id: WebhookId,
        lock: Lock,
    ) -> Result<Option<Webhook>, RepositoryError>;

    /// The organization's enabled pre-hooks (read in the transaction whose events they
    /// would be asked about).
    async fn pre_hooks(&mut self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError>;

    /// The A2A push notification configs of `task` (webhooks scoped to it), oldest
    /// first.
    async fn push_configs(
        &mut self,
        org: OrgId,
        task: TaskId,
    ) -> Result<Vec<Webhook>, RepositoryError>;

    /// Registers a webhook.
    async fn insert_webhook(&mut self, hook: &Webhook) -> Result<(), RepositoryError>;

    /// Stores every field of a webhook; `false` when it is gone.
    async fn update_webhook(&mut self, hook: &Webhook) -> Result<bool, RepositoryError>;

    /// Stores only what a delivery changes on a hook (enabled, failures, last error,
    /// updated at); `false` when it is gone.
    async fn update_webhook_health(&mut self, hook: &Webhook) -> Result<bool, RepositoryError>;

    /// Deletes a webhook with its pending deliveries and log; `false` when it is gone.
    async fn delete_webhook(&mut self, org: OrgId, id: WebhookId) -> Result<bool, RepositoryError>;

    /// Records calls of hooks in their delivery logs.
    async fn insert_delivery_attempts(
        &mut self,
        attempts: &[DeliveryAttempt],
    ) -> Result<(), RepositoryError>;

    /// After a failed attempt at `event` for `hook`: `attempts` made so far, the next
    /// one at `next_at`.
    async fn reschedule_delivery(
        &mut self,
        hook: WebhookId,
        event: EventId,
        attempts: u32,
        next_at: OffsetDateTime,
    ) -> Result<(), RepositoryError>;

    /// Takes deliveries of `hook` out of the outbox: delivered, or out of attempts.
    async fn finish_deliveries(
        &mut self,
        hook: WebhookId,
        events: &[EventId],
    ) -> Result<(), RepositoryError>;
}
