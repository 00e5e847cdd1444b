//! The audit log (`events`): the row, its queries, and the domain's `EventLog` on them.
//! Events are appended by `WebhooksTx::append_events` (in [`crate::webhooks`]), with
//! their deliveries; the cache of settled counts is [`crate::event_counts`].

pub(crate) mod queries;
mod repo;
pub(crate) mod rows;
