//! The domain's ports, implemented on [`Database`](crate::Database).

mod agents;
mod events;
mod nonces;
mod organizations;
mod tasks;
mod users;
mod webhooks;
