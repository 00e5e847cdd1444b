use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{CommentId, OrgId, TaskId};

use crate::conn::{Conn, on_conn};
use crate::reuse::Reuse;
use crate::rows::{CommentRow, db_uuid};
use crate::schema::task_comments;

/// Stores a new comment.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &CommentRow) -> QueryResult<()> {
    let query = diesel::insert_into(task_comments::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// The comment `id` of `task`.
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
    id: CommentId,
) -> QueryResult<Option<CommentRow>> {
    on_conn!(conn, c => {
        task_comments::table
            .filter(task_comments::org_id.eq(db_uuid(org)))
            .filter(task_comments::task_id.eq(db_uuid(task)))
            .filter(task_comments::id.eq(db_uuid(id)))
            .select(CommentRow::as_select())
            .get_result(c)
            .await
            .optional()
    })
}

/// Comments of `task`, oldest first, after `after`.
pub(crate) async fn of_task(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
    after: Option<CommentId>,
    limit: u32,
) -> QueryResult<Vec<CommentRow>> {
    on_conn!(conn, c, Db => {
        let mut query = task_comments::table
            .filter(task_comments::org_id.eq(db_uuid(org)))
            .filter(task_comments::task_id.eq(db_uuid(task)))
            .select(CommentRow::as_select())
            .into_boxed::<Db>();
        if let Some(after) = after {
            query = query.filter(task_comments::id.gt(db_uuid(after)));
        }
        query
            .order(task_comments::id.asc())
            .limit(i64::from(limit))
            .load(c)
            .await
    })
}
