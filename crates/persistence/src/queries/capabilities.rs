use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::OrgId;

use crate::conn::{Conn, on_conn};
use crate::rows::{CapabilityRow, db_uuid};
use crate::schema::agent_capabilities;

/// Every capability declared in `org`.
pub(crate) async fn of_org(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<Vec<CapabilityRow>> {
    on_conn!(conn, c => {
        agent_capabilities::table
            .filter(agent_capabilities::org_id.eq(db_uuid(org)))
            .order(agent_capabilities::id.asc())
            .select(CapabilityRow::as_select())
            .load(c)
            .await
    })
}
