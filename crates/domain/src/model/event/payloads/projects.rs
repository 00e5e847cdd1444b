//! Payloads of the project events (issue 66): created, updated, archived.

use serde::Serialize;

/// `project.created`: a project was created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectCreated {
    /// Its name.
    pub name: String,
    /// Its due date (RFC 3339), if it has one.
    pub due_at: Option<String>,
}

/// `project.updated`: which fields changed (camelCase names), not their values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectUpdated {
    /// The changed fields, such as `["name", "goal"]`.
    pub fields: Vec<String>,
}

/// `project.archived`: a project was put away; its tasks stay in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectArchived {
    /// Its name.
    pub name: String,
}
