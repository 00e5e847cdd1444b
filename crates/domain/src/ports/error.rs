/// A storage failure, in terms a use case can act on.
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    /// A uniqueness rule was broken (the message names what is duplicated).
    #[error("{0}")]
    Conflict(String),
    /// The store cannot be reached or is overloaded; retrying later may work.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// Anything else; logged, never shown to callers.
    #[error("storage failure: {0}")]
    Internal(String),
}
