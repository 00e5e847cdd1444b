//! The queries of `organizations` (its runaway-guard thresholds: [`crate::guard`]).

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::OrgId;

use crate::conn::{Conn, on_conn};
use crate::reuse::Reuse;
use crate::schema::organizations;
use crate::types::{DbUuid, db_uuid};

use super::rows::OrganizationRow;

/// The organization `id`.
pub(crate) async fn find(conn: &mut Conn<'_>, id: OrgId) -> QueryResult<Option<OrganizationRow>> {
    on_conn!(conn, c => {
        organizations::table
            .filter(organizations::id.eq(db_uuid(id)))
            .select(OrganizationRow::as_select())
            .get_result(c)
            .await
            .optional()
    })
}

/// The default organization (decision D-14), if any.
pub(crate) async fn find_default(conn: &mut Conn<'_>) -> QueryResult<Option<OrganizationRow>> {
    on_conn!(conn, c => {
        organizations::table
            .filter(organizations::is_default.eq(true))
            .select(OrganizationRow::as_select())
            .get_result(c)
            .await
            .optional()
    })
}

/// Whether any organization exists.
pub(crate) async fn any(conn: &mut Conn<'_>) -> QueryResult<bool> {
    let query = organizations::table.select(organizations::id);
    let found: Option<DbUuid> = on_conn!(conn, c => query.first(c).await.optional())?;
    Ok(found.is_some())
}

/// Stores a new organization.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &OrganizationRow) -> QueryResult<()> {
    let query = diesel::insert_into(organizations::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}
