use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{EscalationId, OrgId, TaskId};

use crate::conn::{Conn, on_conn};
use crate::reuse::Reuse;
use crate::rows::{EscalationRow, db_uuid};
use crate::schema::escalations;

/// Stores an escalation; an automatic one that already exists for its task and reason
/// is skipped (`ON CONFLICT DO NOTHING`, against the partial unique index). Whether it
/// was stored.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &EscalationRow) -> QueryResult<bool> {
    let query = diesel::insert_into(escalations::table)
        .values(row)
        .on_conflict_do_nothing()
        .reused();
    let written = on_conn!(conn, c => query.execute(c).await)?;
    Ok(written == 1)
}

/// Escalations of `task`, newest first, before `before`.
pub(crate) async fn of_task(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
    before: Option<EscalationId>,
    limit: u32,
) -> QueryResult<Vec<EscalationRow>> {
    on_conn!(conn, c, Db => {
        let mut query = escalations::table
            .filter(escalations::org_id.eq(db_uuid(org)))
            .filter(escalations::task_id.eq(db_uuid(task)))
            .select(EscalationRow::as_select())
            .into_boxed::<Db>();
        if let Some(before) = before {
            query = query.filter(escalations::id.lt(db_uuid(before)));
        }
        query
            .order(escalations::id.desc())
            .limit(i64::from(limit))
            .load(c)
            .await
    })
}
