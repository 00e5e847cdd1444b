//! The message a client reads when a unique value is already taken: one per kind of
//! value, saying which value and never how the store names it.

use muster_domain::ports::{RepositoryError, UniqueKey};
use muster_domain::service::ServiceError;

#[test]
fn each_taken_value_has_its_own_message() {
    let cases = [
        (UniqueKey::AgentHandle, "agentId is already taken"),
        (
            UniqueKey::UserEmail,
            "email is already in use in this organization",
        ),
        (
            UniqueKey::DefaultOrganization,
            "another organization is already the default",
        ),
        (UniqueKey::Dependency, "Task already depends on that task"),
        (
            UniqueKey::TemplateName,
            "A template with that name already exists",
        ),
        (UniqueKey::Capability, "Agent already has that capability"),
        (
            UniqueKey::Installation,
            "A connection for that installation already exists",
        ),
        (
            UniqueKey::Other("tasks_pkey".into()),
            "a record with the same unique values already exists",
        ),
    ];
    for (key, message) in cases {
        let err = ServiceError::from(RepositoryError::Duplicate(key.clone()));
        assert_eq!(err.to_string(), message, "{key:?}");
    }
}
