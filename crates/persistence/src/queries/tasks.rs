use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, TaskId};
use muster_domain::ports::{Lock, TaskFilter};

use crate::conn::{Conn, first_locked, on_conn};
use crate::rows::{TaskRow, db_uuid};
use crate::schema::tasks;

/// The task `id` of `org`; with `lock`, the row stays locked until the transaction ends
/// (PostgreSQL; SQLite's write transactions already run one at a time).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: TaskId,
    lock: Option<Lock>,
) -> QueryResult<Option<TaskRow>> {
    first_locked!(
        conn,
        lock,
        tasks::table
            .filter(tasks::org_id.eq(db_uuid(org)))
            .filter(tasks::id.eq(db_uuid(id)))
            .select(TaskRow::as_select())
    )
}

/// Tasks of `org` matching `filter`, newest first, strictly older than `before`.
pub(crate) async fn list(
    conn: &mut Conn<'_>,
    org: OrgId,
    filter: &TaskFilter,
    before: Option<TaskId>,
    limit: u32,
) -> QueryResult<Vec<TaskRow>> {
    on_conn!(conn, c, Db => {
        let mut query = tasks::table
            .filter(tasks::org_id.eq(db_uuid(org)))
            .select(TaskRow::as_select())
            .into_boxed::<Db>();
        if let Some(status) = filter.status {
            query = query.filter(tasks::status.eq(status.as_str()));
        }
        if let Some(assignee) = filter.assignee_id {
            query = query.filter(tasks::assignee_id.eq(db_uuid(assignee)));
        }
        if let Some(creator) = filter.creator_id {
            query = query.filter(tasks::creator_id.eq(db_uuid(creator)));
        }
        if let Some(parent) = filter.parent_task_id {
            query = query.filter(tasks::parent_task_id.eq(db_uuid(parent)));
        }
        if let Some(cursor) = before {
            query = query.filter(tasks::id.lt(db_uuid(cursor)));
        }
        query
            .order(tasks::id.desc())
            .limit(i64::from(limit))
            .load(c)
            .await
    })
}

/// Stores a new task.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &TaskRow) -> QueryResult<()> {
    let query = diesel::insert_into(tasks::table).values(row);
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Replaces the task if its stored version is `expected_version`; whether it did.
pub(crate) async fn update(
    conn: &mut Conn<'_>,
    row: &TaskRow,
    expected_version: i64,
) -> QueryResult<bool> {
    let query = diesel::update(
        tasks::table
            .filter(tasks::org_id.eq(row.org_id))
            .filter(tasks::id.eq(row.id))
            .filter(tasks::version.eq(expected_version)),
    )
    .set(row);
    let changed = on_conn!(conn, c => query.execute(c).await)?;
    Ok(changed == 1)
}
