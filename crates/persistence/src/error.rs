//! Driver errors in the domain's terms.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use muster_domain::ports::RepositoryError;

/// Maps a Diesel error. Unique violations become conflicts; a lost connection is
/// "unavailable"; everything else is internal.
pub(crate) fn from_diesel(err: DieselError) -> RepositoryError {
    match err {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            RepositoryError::Conflict(conflict_message(info.constraint_name(), info.message()))
        }
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::SerializationFailure,
            info,
        ) => RepositoryError::Unavailable(info.message().to_owned()),
        // SQLite still locked after busy_timeout: contention, worth a retry.
        DieselError::DatabaseError(_, info) if info.message().contains("database is locked") => {
            RepositoryError::Unavailable(info.message().to_owned())
        }
        DieselError::BrokenTransactionManager => {
            RepositoryError::Unavailable("broken transaction manager".into())
        }
        other => RepositoryError::Internal(other.to_string()),
    }
}

/// A sentence for the caller; the engines name the constraint differently, so match both.
fn conflict_message(constraint: Option<&str>, message: &str) -> String {
    let names_agent_id =
        constraint.is_some_and(|c| c.contains("agent_id")) || message.contains("agents.agent_id");
    if names_agent_id {
        "agentId is already taken".into()
    } else if constraint.is_some_and(|c| c.contains("email")) || message.contains("users.email") {
        "email is already in use in this organization".into()
    } else {
        "a record with the same unique values already exists".into()
    }
}

/// Maps a pool error (timeout, connection refused).
#[allow(clippy::needless_pass_by_value)] // used as `map_err(from_pool)`
pub(crate) fn from_pool<E: std::fmt::Display>(
    err: deadpool::managed::PoolError<E>,
) -> RepositoryError {
    RepositoryError::Unavailable(err.to_string())
}

/// A stored value that the domain rejects: data was written by something else or the
/// schema drifted. Never the caller's fault.
pub(crate) fn corrupt(what: &str, detail: impl std::fmt::Display) -> RepositoryError {
    RepositoryError::Internal(format!("stored {what} is invalid: {detail}"))
}
