//! The domain's ports, implemented on [`Database`](crate::Database).

mod agents;
mod codehost;
mod events;
mod idempotency;
mod inbound_keys;
mod nonces;
mod organizations;
mod tasks;
mod treasuries;
mod users;
mod webhooks;
