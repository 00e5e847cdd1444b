//! Why a signed request was refused.

use muster_domain::ports::RepositoryError;

/// Why a signed request was refused. The `Display` of each client error is the short
/// reason sent with the 401 (decision D-10); [`Internal`](Self::Internal) and
/// [`Storage`](Self::Storage) display a generic message and keep the detail for logs.
#[derive(Debug, thiserror::Error)]
pub enum AgentAuthError {
    /// A signing header is absent or empty; holds the header name.
    #[error("missing {0} header")]
    MissingHeader(&'static str),
    /// `X-Timestamp` is not a decimal integer of at most 19 digits.
    #[error("invalid timestamp")]
    InvalidTimestamp,
    /// `X-Timestamp` is more than 300 seconds away from server time.
    #[error("stale timestamp")]
    StaleTimestamp,
    /// `X-Nonce` is not 1..=128 printable ASCII characters.
    #[error("invalid nonce")]
    InvalidNonce,
    /// Unknown agent or wrong signature; deliberately not told apart.
    #[error("invalid signature")]
    InvalidSignature,
    /// The signature is valid but the agent is pending, suspended or revoked.
    #[error("agent is not active")]
    AgentNotActive,
    /// The nonce was already used by this agent within its retention window.
    #[error("nonce already used")]
    NonceReused,
    /// A server-side fault, such as a stored secret that cannot be decrypted (wrong
    /// `MUSTER_SECRET_KEY`). The string is for logs only.
    #[error("internal error")]
    Internal(String),
    /// The agent or nonce store failed.
    #[error("authentication storage unavailable")]
    Storage(#[source] RepositoryError),
}

impl AgentAuthError {
    /// Every code [`code`](Self::code) can answer (decision D-102).
    pub const CODES: &'static [&'static str] = &[
        "missing_signing_header",
        "invalid_timestamp",
        "stale_timestamp",
        "invalid_nonce",
        "invalid_signature",
        "agent_not_active",
        "nonce_reused",
        "internal",
        "unavailable",
    ];

    /// The stable code of the refusal (decision D-102), beside the 401's short reason:
    /// `stale_timestamp`, `nonce_reused`, `invalid_signature`... A server fault is
    /// `internal`, an unreachable store `unavailable`, as for any other route.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::MissingHeader(_) => "missing_signing_header",
            Self::InvalidTimestamp => "invalid_timestamp",
            Self::StaleTimestamp => "stale_timestamp",
            Self::InvalidNonce => "invalid_nonce",
            Self::InvalidSignature => "invalid_signature",
            Self::AgentNotActive => "agent_not_active",
            Self::NonceReused => "nonce_reused",
            Self::Storage(RepositoryError::Unavailable(_)) => "unavailable",
            Self::Internal(_) | Self::Storage(_) => "internal",
        }
    }

    /// Whether the caller is at fault: `true` for every 401 reason, `false` for
    /// [`Internal`](Self::Internal) and [`Storage`](Self::Storage), which are server
    /// faults.
    pub fn is_client_error(&self) -> bool {
        !matches!(self, Self::Internal(_) | Self::Storage(_))
    }
}

impl From<RepositoryError> for AgentAuthError {
    fn from(err: RepositoryError) -> Self {
        Self::Storage(err)
    }
}

#[cfg(test)]
mod tests;
