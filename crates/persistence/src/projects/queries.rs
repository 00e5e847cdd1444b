//! The queries of `projects`, and of a project's tasks for its burn-up.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, ProjectId, ProjectStatus, TaskStatus};
use muster_domain::ports::Lock;
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, load_rows, on_conn};
use crate::reuse::Reuse;
use crate::schema::{projects, tasks};
use crate::types::{DbTime, db_uuid};

use super::rows::ProjectRow;

/// The project `id` of `org`, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: ProjectId,
    lock: Option<Lock>,
) -> QueryResult<Option<ProjectRow>> {
    first_locked!(
        conn,
        lock,
        projects::table
            .filter(projects::org_id.eq(db_uuid(org)))
            .filter(projects::id.eq(db_uuid(id)))
            .select(ProjectRow::as_select())
    )
}

/// Stores a new project.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &ProjectRow) -> QueryResult<()> {
    let query = diesel::insert_into(projects::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Replaces the project if its stored version is still `expected`; whether it was.
pub(crate) async fn update(
    conn: &mut Conn<'_>,
    row: &ProjectRow,
    expected: i64,
) -> QueryResult<bool> {
    let query = diesel::update(
        projects::table
            .filter(projects::org_id.eq(row.org_id))
            .filter(projects::id.eq(row.id))
            .filter(projects::version.eq(expected)),
    )
    .set(row)
    .reused();
    let changed = on_conn!(conn, c => query.execute(c).await)?;
    Ok(changed == 1)
}

/// Up to `limit` projects of `org` (in `status` when given), newest first, older than
/// `before`.
pub(crate) async fn list(
    conn: &mut Conn<'_>,
    org: OrgId,
    status: Option<ProjectStatus>,
    before: Option<ProjectId>,
    limit: u32,
) -> QueryResult<Vec<ProjectRow>> {
    load_rows!(conn, Db => {
        let mut query = projects::table
            .filter(projects::org_id.eq(db_uuid(org)))
            .select(ProjectRow::as_select())
            .into_boxed::<Db>();
        if let Some(status) = status {
            query = query.filter(projects::status.eq(status.as_str()));
        }
        if let Some(cursor) = before {
            query = query.filter(projects::id.lt(db_uuid(cursor)));
        }
        query.order(projects::id.desc()).limit(i64::from(limit))
    })
}

/// When each task of project `id` created before `until` was created, its status and
/// when it entered it: up to `limit`, oldest first.
pub(crate) async fn spans(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: ProjectId,
    until: OffsetDateTime,
    limit: u32,
) -> QueryResult<Vec<(DbTime, String, Option<DbTime>, DbTime)>> {
    load_rows!(conn, Db => {
        tasks::table
            .filter(tasks::org_id.eq(db_uuid(org)))
            .filter(tasks::project_id.eq(db_uuid(id)))
            .filter(tasks::created_at.lt(DbTime(until)))
            .select((
                tasks::created_at,
                tasks::status,
                tasks::status_changed_at,
                tasks::updated_at,
            ))
            .order(tasks::id.asc())
            .limit(i64::from(limit))
            .into_boxed::<Db>()
    })
}

/// The status name of a done task, as stored.
pub(crate) const DONE: &str = TaskStatus::Done.as_str();
