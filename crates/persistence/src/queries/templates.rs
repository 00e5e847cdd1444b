use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, TemplateId};

use crate::conn::{Conn, on_conn};
use crate::reuse::Reuse;
use crate::rows::{TemplateRow, db_uuid};
use crate::schema::task_templates;

/// Stores a new template.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &TemplateRow) -> QueryResult<()> {
    let query = diesel::insert_into(task_templates::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// The template `id` of `org`.
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: TemplateId,
) -> QueryResult<Option<TemplateRow>> {
    on_conn!(conn, c => {
        task_templates::table
            .filter(task_templates::org_id.eq(db_uuid(org)))
            .filter(task_templates::id.eq(db_uuid(id)))
            .select(TemplateRow::as_select())
            .get_result(c)
            .await
            .optional()
    })
}

/// Templates of `org`, newest first, before `before`.
pub(crate) async fn list(
    conn: &mut Conn<'_>,
    org: OrgId,
    before: Option<TemplateId>,
    limit: u32,
) -> QueryResult<Vec<TemplateRow>> {
    on_conn!(conn, c, Db => {
        let mut query = task_templates::table
            .filter(task_templates::org_id.eq(db_uuid(org)))
            .select(TemplateRow::as_select())
            .into_boxed::<Db>();
        if let Some(before) = before {
            query = query.filter(task_templates::id.lt(db_uuid(before)));
        }
        query
            .order(task_templates::id.desc())
            .limit(i64::from(limit))
            .load(c)
            .await
    })
}
