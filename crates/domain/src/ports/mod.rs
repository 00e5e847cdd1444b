//! Ports: the traits through which use cases reach the outside world. Adapters live in
//! other crates (`muster-persistence`, ...). With the `mocks` feature each trait has a
//! `mockall` mock named `Mock<Trait>`, and `MockUnitOfWork` runs a use case against a
//! `MockTransaction`.

mod agents;
mod codehost;
mod credentials;
mod error;
mod events;
mod idempotency;
mod inbound;
mod nonces;
mod organizations;
mod projects;
mod remote;
pub(crate) mod replay;
mod routines;
mod run_observer;
mod runs;
mod runtime;
mod secrets;
mod signing;
mod targets;
mod tasks;
mod transaction;
mod treasury;
mod tx;
mod users;
mod webhooks;

pub use agents::{AgentChanges, AgentFilter, AgentRepository};
pub use codehost::CodeHostRepository;
pub use credentials::{
    ExternalIdentity, IdentityProvider, NewTotpSecret, PasswordHasher, ProviderError, SecretKind,
    TokenMinter, TotpAuthority,
};
pub use error::{BoxError, RepositoryError, UniqueKey};
pub use events::{EventFilter, EventLog, EventPage};
pub use idempotency::IdempotencyStore;
pub use inbound::InboundKeyRepository;
pub use nonces::{NonceOutcome, NonceStore};
pub use organizations::OrganizationRepository;
pub use projects::{ProjectRepository, TaskSpan};
pub use remote::{CardFetcher, RemoteCard};
pub use routines::RoutineRepository;
pub use run_observer::{RunObserver, Unobserved};
pub use runs::{RunFilter, RunRepository, UsageGroup, UsageGroupBy, UsageQuery};
pub use runtime::{Clock, IdGenerator};
pub use secrets::{SealError, SecretSealer, SecretVault};
pub use signing::MessageSigner;
pub use targets::{TargetGuard, TargetRefusal};
pub use tasks::{OutcomeFilter, Overdue, TaskFilter, TaskRepository};
pub use transaction::{Lock, Transaction, TxFuture, UnitOfWork, Work, WorkOutput, transact, work};
pub use treasury::TreasuryRepository;
pub use tx::{
    AgentsTx, GuardTx, IntegrationsTx, KeysTx, LedgerTx, OrganizationsTx, ProjectsTx, RoutinesTx,
    RunsTx, SessionsTx, TasksTx, WebhooksTx,
};
pub use users::UserRepository;
pub use webhooks::{
    CallKind, CallResult, DeliveryQueue, HandoverTarget, HookCall, HookCaller, PendingDelivery,
    PushRenderer, TraceParent, WebhookRepository,
};

#[cfg(any(test, feature = "mocks"))]
pub use agents::{MockAgentChanges, MockAgentRepository};
#[cfg(any(test, feature = "mocks"))]
pub use codehost::MockCodeHostRepository;
#[cfg(any(test, feature = "mocks"))]
pub use credentials::{
    MockIdentityProvider, MockPasswordHasher, MockTokenMinter, MockTotpAuthority,
};
#[cfg(any(test, feature = "mocks"))]
pub use events::MockEventLog;
#[cfg(any(test, feature = "mocks"))]
pub use idempotency::MockIdempotencyStore;
#[cfg(any(test, feature = "mocks"))]
pub use inbound::MockInboundKeyRepository;
#[cfg(any(test, feature = "mocks"))]
pub use nonces::MockNonceStore;
#[cfg(any(test, feature = "mocks"))]
pub use organizations::MockOrganizationRepository;
#[cfg(any(test, feature = "mocks"))]
pub use projects::MockProjectRepository;
#[cfg(any(test, feature = "mocks"))]
pub use remote::MockCardFetcher;
#[cfg(any(test, feature = "mocks"))]
pub use routines::MockRoutineRepository;
#[cfg(any(test, feature = "mocks"))]
pub use runs::MockRunRepository;
#[cfg(any(test, feature = "mocks"))]
pub use runtime::{MockClock, MockIdGenerator};
#[cfg(any(test, feature = "mocks"))]
pub use secrets::{MockSecretSealer, MockSecretVault};
#[cfg(any(test, feature = "mocks"))]
pub use signing::MockMessageSigner;
#[cfg(any(test, feature = "mocks"))]
pub use targets::MockTargetGuard;
#[cfg(any(test, feature = "mocks"))]
pub use tasks::MockTaskRepository;
#[cfg(any(test, feature = "mocks"))]
pub use transaction::{MockUnitOfWork, Outcome};
#[cfg(any(test, feature = "mocks"))]
pub use treasury::MockTreasuryRepository;
#[cfg(any(test, feature = "mocks"))]
pub use tx::MockTransaction;
#[cfg(any(test, feature = "mocks"))]
pub use users::MockUserRepository;
#[cfg(any(test, feature = "mocks"))]
pub use webhooks::{MockDeliveryQueue, MockHookCaller, MockPushRenderer, MockWebhookRepository};
