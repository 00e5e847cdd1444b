//! Ports: the traits through which use cases reach the outside world. Adapters live in
//! other crates (`muster-persistence`, ...). With the `mocks` feature each trait has a
//! `mockall` mock named `Mock<Trait>`.

mod agents;
mod error;
mod events;
mod nonces;
mod organizations;
mod runtime;
mod secrets;
mod tasks;

pub use agents::AgentRepository;
pub use error::RepositoryError;
pub use events::{EventFilter, EventLog, EventPage};
pub use nonces::{NonceOutcome, NonceStore};
pub use organizations::{NewOrganization, OrganizationRepository};
pub use runtime::{Clock, IdGenerator};
pub use secrets::{SealError, SecretSealer};
pub use tasks::{TaskFilter, TaskRepository};

#[cfg(any(test, feature = "mocks"))]
pub use agents::MockAgentRepository;
#[cfg(any(test, feature = "mocks"))]
pub use events::MockEventLog;
#[cfg(any(test, feature = "mocks"))]
pub use nonces::MockNonceStore;
#[cfg(any(test, feature = "mocks"))]
pub use organizations::MockOrganizationRepository;
#[cfg(any(test, feature = "mocks"))]
pub use runtime::{MockClock, MockIdGenerator};
#[cfg(any(test, feature = "mocks"))]
pub use secrets::MockSecretSealer;
#[cfg(any(test, feature = "mocks"))]
pub use tasks::MockTaskRepository;
