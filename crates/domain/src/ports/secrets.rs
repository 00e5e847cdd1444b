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
