//! Payloads of the routine events (issue 66, decision D-108): created, updated, deleted,
//! fired.

use serde::Serialize;

use crate::model::TaskId;

/// `routine.created`: a routine was created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoutineCreated {
    /// Its name.
    pub name: String,
    /// Its cron expression.
    pub schedule: String,
    /// Its time zone.
    pub timezone: String,
}

/// `routine.updated`: which fields changed (camelCase names), not their values; a
/// routine the service paused says why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoutineUpdated {
    /// The changed fields, such as `["schedule", "enabled"]`.
    pub fields: Vec<String>,
    /// Why the service switched it off, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_reason: Option<String>,
}

/// `routine.deleted`: a routine was deleted (the tasks it created stay).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoutineDeleted {
    /// Its name.
    pub name: String,
}

/// `routine.fired`: a routine created a task for a due time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoutineFired {
    /// The task it created.
    pub task_id: TaskId,
    /// The due time (RFC 3339).
    pub due_at: String,
    /// Whether someone ran it by hand (`POST /routines/:id/run`).
    pub manual: bool,
}
