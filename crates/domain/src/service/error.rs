use crate::ValidationError;
use crate::policy::Forbidden;
use crate::ports::RepositoryError;
use crate::rules::transition::TransitionError;

/// Why a use case did not happen. Each variant carries one human sentence for the caller;
/// `Internal` carries the cause for the log only.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Bad input (400).
    #[error("{0}")]
    Validation(String),
    /// Missing, or in another organization (404).
    #[error("{0}")]
    NotFound(String),
    /// Authenticated but not allowed (403).
    #[error("{0}")]
    Forbidden(String),
    /// Breaks a rule of the current state (409).
    #[error("{0}")]
    Conflict(String),
    /// Storage temporarily unreachable (503).
    #[error("{0}")]
    Unavailable(String),
    /// A bug or an unexpected failure (500); the text is for logs.
    #[error("{0}")]
    Internal(String),
}

impl From<ValidationError> for ServiceError {
    fn from(err: ValidationError) -> Self {
        Self::Validation(err.message().to_owned())
    }
}

impl From<Forbidden> for ServiceError {
    fn from(err: Forbidden) -> Self {
        Self::Forbidden(err.0)
    }
}

impl From<TransitionError> for ServiceError {
    fn from(err: TransitionError) -> Self {
        match err {
            TransitionError::NotAllowed { .. } => Self::Conflict(err.to_string()),
            TransitionError::ApprovalRequired => Self::Forbidden(err.to_string()),
        }
    }
}

impl From<RepositoryError> for ServiceError {
    fn from(err: RepositoryError) -> Self {
        match err {
            RepositoryError::Conflict(message) => Self::Conflict(message),
            RepositoryError::Unavailable(message) => Self::Unavailable(message),
            RepositoryError::Internal(message) => Self::Internal(message),
        }
    }
}
