use crate::model::{AgentId, AgentSecret};

/// Sealing failed (the system's randomness or the cipher); never the caller's fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot seal the secret: {0}")]
pub struct SealError(pub String);

/// Protects an agent's signing secret for storage. The sealed value is bound to the
/// agent, so it does not open when copied onto another agent's row.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait SecretSealer: Send + Sync {
    /// Seals `secret` for `agent`.
    fn seal(&self, agent: AgentId, secret: &AgentSecret) -> Result<Vec<u8>, SealError>;

    /// Draws a new signing secret from the system's randomness: 64 lowercase hex
    /// characters (decision D-50).
    fn generate(&self) -> Result<AgentSecret, SealError>;
}

/// Protects the shared secrets of webhooks and integrations (inbound keys, outbound
/// hooks, code-host connections) at rest, and draws new ones. A sealed value is bound
/// to its `owner` (the record's UUID) and `purpose` (`"inbound_webhook"`,
/// `"webhook"`, ...), so it does not open when copied onto another row or kind.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait SecretVault: Send + Sync {
    /// Seals `plain` for the record `owner` of kind `purpose`.
    fn seal(&self, purpose: &str, owner: uuid::Uuid, plain: &str) -> Result<Vec<u8>, SealError>;

    /// Opens a value sealed by [`seal`](Self::seal) with the same `purpose` and `owner`.
    fn open(&self, purpose: &str, owner: uuid::Uuid, sealed: &[u8]) -> Result<String, SealError>;

    /// `bytes` fresh random bytes from the system's randomness, as lowercase hex
    /// (twice as many characters).
    fn random_hex(&self, bytes: usize) -> Result<String, SealError>;
}
