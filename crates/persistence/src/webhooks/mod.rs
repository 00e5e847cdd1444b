//! Webhooks (`webhooks`, `webhook_subscriptions`), their delivery attempts
//! (`webhook_attempts`) and the outbox of deliveries (`webhook_deliveries`): the rows,
//! their queries, and the domain's `WebhookRepository`, `DeliveryQueue` and `WebhooksTx`
//! on them (appending events included: the audit log is the outbox).

mod deliveries;
mod queries;
mod repo;
mod rows;
mod tx;
