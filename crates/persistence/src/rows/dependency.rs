use diesel::prelude::*;
use muster_domain::model::{DependencyId, OrgId, TaskDependency, TaskId};

use crate::schema::task_dependencies;
use crate::types::{DbTime, DbUuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = task_dependencies, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct DependencyRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub task_id: DbUuid,
    pub depends_on_id: DbUuid,
    pub blocking: bool,
    pub created_at: DbTime,
}

impl From<&TaskDependency> for DependencyRow {
    fn from(d: &TaskDependency) -> Self {
        Self {
            id: DbUuid(d.id.as_uuid()),
            org_id: DbUuid(d.org_id.as_uuid()),
            task_id: DbUuid(d.task_id.as_uuid()),
            depends_on_id: DbUuid(d.depends_on_id.as_uuid()),
            blocking: d.blocking,
            created_at: DbTime(d.created_at),
        }
    }
}

impl From<DependencyRow> for TaskDependency {
    fn from(row: DependencyRow) -> Self {
        Self {
            id: DependencyId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            task_id: TaskId::from_uuid(row.task_id.0),
            depends_on_id: TaskId::from_uuid(row.depends_on_id.0),
            blocking: row.blocking,
            created_at: row.created_at.0,
        }
    }
}
