//! The parts of [`Transaction`](crate::ports::Transaction), one per aggregate: a use
//! case's transaction implements them all.

mod agents;
mod guard;
mod integrations;
mod keys;
mod ledger;
#[cfg(any(test, feature = "mocks"))]
mod mock;
mod organizations;
mod projects;
mod routines;
mod runs;
mod sessions;
mod tasks;
mod webhooks;

pub use agents::AgentsTx;
pub use guard::GuardTx;
pub use integrations::IntegrationsTx;
pub use keys::KeysTx;
pub use ledger::LedgerTx;
#[cfg(any(test, feature = "mocks"))]
pub use mock::MockTransaction;
pub use organizations::OrganizationsTx;
pub use projects::ProjectsTx;
pub use routines::RoutinesTx;
pub use runs::RunsTx;
pub use sessions::SessionsTx;
pub use tasks::TasksTx;
pub use webhooks::WebhooksTx;
