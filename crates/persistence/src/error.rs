//! Driver errors in the domain's terms: which unique key, or which kind of failure, with
//! the driver's error kept as the source.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use muster_domain::ports::{RepositoryError, UniqueKey};

/// Maps a Diesel error. Unique violations name the key they broke; a lost connection,
/// a serialization failure or a still-locked SQLite file is "unavailable"; everything
/// else is internal.
pub(crate) fn from_diesel(err: DieselError) -> RepositoryError {
    match &err {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            RepositoryError::Duplicate(unique_key(info.constraint_name(), info.message()))
        }
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::SerializationFailure,
            _,
        )
        | DieselError::BrokenTransactionManager => RepositoryError::unavailable(err),
        // SQLite still locked after busy_timeout: contention, worth a retry.
        DieselError::DatabaseError(_, info) if info.message().contains("database is locked") => {
            RepositoryError::unavailable(err)
        }
        // The database cannot take writes for now (a full disk; a read-only file or a
        // PostgreSQL server that became a replica): nothing was written, reads still
        // work, and the condition is the operator's to fix.
        DieselError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, _) => {
            RepositoryError::unavailable(err)
        }
        DieselError::DatabaseError(_, info) if cannot_write(info.message()) => {
            RepositoryError::unavailable(err)
        }
        // SQLite rolled the transaction back by itself (it does on a full disk or an I/O
        // error), so the rollback that follows finds none: nothing was written.
        DieselError::DatabaseError(_, info)
            if info.message().contains("no transaction is active") =>
        {
            RepositoryError::unavailable(err)
        }
        _ => RepositoryError::internal(err),
    }
}

/// Whether a driver message says the database cannot take writes for now.
fn cannot_write(message: &str) -> bool {
    [
        "database or disk is full",
        "attempt to write a readonly database",
        "No space left on device",
        "could not extend file",
    ]
    .iter()
    .any(|sign| message.contains(sign))
}

/// Which unique key a violation broke. PostgreSQL names the constraint
/// (`agents_agent_id_key`); SQLite names the columns in its message
/// (`UNIQUE constraint failed: agents.agent_id`), or the index when it is on an
/// expression (`UNIQUE constraint failed: index 'agents_agent_id_folded'`).
fn unique_key(constraint: Option<&str>, message: &str) -> UniqueKey {
    let names = |pg: &str, sqlite: &str| constraint == Some(pg) || message.ends_with(sqlite);
    if names("agents_agent_id_key", "agents.agent_id")
        || names("agents_agent_id_folded", "index 'agents_agent_id_folded'")
    {
        UniqueKey::AgentHandle
    } else if names("users_org_id_email_key", "users.org_id, users.email") {
        UniqueKey::UserEmail
    } else if names("organizations_one_default", "organizations.is_default") {
        UniqueKey::DefaultOrganization
    } else if names(
        "task_dependencies_task_id_depends_on_id_key",
        "task_dependencies.task_id, task_dependencies.depends_on_id",
    ) {
        UniqueKey::Dependency
    } else if names(
        "task_templates_org_id_name_key_key",
        "task_templates.org_id, task_templates.name_key",
    ) {
        UniqueKey::TemplateName
    } else if names(
        "agent_capabilities_agent_id_capability_key",
        "agent_capabilities.agent_id, agent_capabilities.capability",
    ) {
        UniqueKey::Capability
    } else if names(
        "codehost_connections_installation_id_org_id_key",
        "codehost_connections.installation_id, codehost_connections.org_id",
    ) {
        UniqueKey::Installation
    } else if names("runs_one_open_per_task", "runs.task_id") {
        UniqueKey::OpenRun
    } else if names(
        "routine_firings_pkey",
        "routine_firings.routine_id, routine_firings.due_at",
    ) {
        UniqueKey::RoutineFiring
    } else {
        UniqueKey::Other(constraint.unwrap_or(message).to_owned())
    }
}

/// Maps a pool error (timeout, connection refused).
#[allow(clippy::needless_pass_by_value)] // used as `map_err(from_pool)`
pub(crate) fn from_pool<E: std::error::Error + Send + Sync + 'static>(
    err: deadpool::managed::PoolError<E>,
) -> RepositoryError {
    RepositoryError::unavailable(err)
}

/// A stored value that the domain rejects: data was written by something else or the
/// schema drifted. Never the caller's fault.
pub(crate) fn corrupt(what: &'static str, detail: impl std::fmt::Display) -> RepositoryError {
    RepositoryError::Corrupt {
        what,
        source: detail.to_string().into(),
    }
}

/// `err` and its sources, `: `-separated: "storage unavailable" alone does not tell an
/// operator that the certificate was refused.
pub(crate) fn with_sources(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_engines_name_the_same_keys() {
        let cases = [
            (Some("agents_agent_id_key"), "", UniqueKey::AgentHandle),
            (
                None,
                "UNIQUE constraint failed: agents.agent_id",
                UniqueKey::AgentHandle,
            ),
            // The same handle in another case (the index on lower(agent_id)).
            (Some("agents_agent_id_folded"), "", UniqueKey::AgentHandle),
            (
                None,
                "UNIQUE constraint failed: index 'agents_agent_id_folded'",
                UniqueKey::AgentHandle,
            ),
            (Some("users_org_id_email_key"), "", UniqueKey::UserEmail),
            (
                None,
                "UNIQUE constraint failed: users.org_id, users.email",
                UniqueKey::UserEmail,
            ),
            (
                Some("organizations_one_default"),
                "",
                UniqueKey::DefaultOrganization,
            ),
            (
                None,
                "UNIQUE constraint failed: organizations.is_default",
                UniqueKey::DefaultOrganization,
            ),
            (Some("runs_one_open_per_task"), "", UniqueKey::OpenRun),
            (
                None,
                "UNIQUE constraint failed: runs.task_id",
                UniqueKey::OpenRun,
            ),
            (
                Some("tasks_pkey"),
                "",
                UniqueKey::Other("tasks_pkey".into()),
            ),
        ];
        for (constraint, message, expected) in cases {
            assert_eq!(
                unique_key(constraint, message),
                expected,
                "{constraint:?} {message}"
            );
        }
    }
}
