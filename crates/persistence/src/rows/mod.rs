//! One row struct per table, shared by both engines (`check_for_backend(Pg, Sqlite)`),
//! and the conversions to and from the domain model.

mod agent;
mod event;
mod organization;
mod task;
mod user;

pub(crate) use agent::{AgentChanges, AgentRow};
pub(crate) use event::EventRow;
pub(crate) use organization::OrganizationRow;
pub(crate) use task::TaskRow;
pub(crate) use user::UserRow;

use crate::types::DbUuid;

pub(crate) fn db_uuid(id: impl Into<uuid::Uuid>) -> DbUuid {
    DbUuid(id.into())
}
