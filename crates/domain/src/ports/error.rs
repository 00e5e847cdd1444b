use std::error::Error as StdError;

/// The cause of a storage failure, kept for logs (never shown to callers).
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// A uniqueness rule of the store that a write broke. Persistence recognizes its own
/// constraints and names them here; the domain decides how to word them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UniqueKey {
    /// An agent's `agentId` is taken, in any case (unique across the deployment, decision
    /// D-11).
    AgentHandle,
    /// A user's e-mail is taken in that organization.
    UserEmail,
    /// Another organization is already the default one.
    DefaultOrganization,
    /// The task already depends on that task.
    Dependency,
    /// A template of that name (in any case) exists in the organization.
    TemplateName,
    /// The agent already declares that capability.
    Capability,
    /// The organization already has a code-host connection for that installation.
    Installation,
    /// The task already has an open run (decision D-106).
    OpenRun,
    /// The routine already fired for that due time (decision D-108).
    RoutineFiring,
    /// A primary key or another unique value; holds the store's name for it.
    Other(String),
}

/// A storage failure, in terms a use case can act on. The cause stays reachable through
/// [`source`](std::error::Error::source) for logs.
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    /// A write broke a uniqueness rule; nothing of it was stored.
    #[error("unique value already stored: {0:?}")]
    Duplicate(UniqueKey),
    /// The store cannot be reached or is overloaded; retrying later may work.
    #[error("storage unavailable")]
    Unavailable(#[source] BoxError),
    /// A stored value the domain refuses: written by something else, or a schema drift.
    #[error("stored {what} is invalid")]
    Corrupt {
        /// Which value.
        what: &'static str,
        /// Why it was refused.
        #[source]
        source: BoxError,
    },
    /// Anything else.
    #[error("storage failure")]
    Internal(#[source] BoxError),
}

impl RepositoryError {
    /// An [`Unavailable`](Self::Unavailable) error from any cause.
    pub fn unavailable(cause: impl Into<BoxError>) -> Self {
        Self::Unavailable(cause.into())
    }

    /// An [`Internal`](Self::Internal) error from any cause.
    pub fn internal(cause: impl Into<BoxError>) -> Self {
        Self::Internal(cause.into())
    }
}
