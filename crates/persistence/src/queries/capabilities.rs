use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{AgentId, CapabilityId, OrgId};
use muster_domain::ports::Lock;

use crate::conn::{Conn, first_locked, insert_all, on_conn};
use crate::reuse::Reuse;
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

/// The capabilities of `agent`, by name.
pub(crate) async fn of_agent(
    conn: &mut Conn<'_>,
    org: OrgId,
    agent: AgentId,
) -> QueryResult<Vec<CapabilityRow>> {
    on_conn!(conn, c => {
        agent_capabilities::table
            .filter(agent_capabilities::org_id.eq(db_uuid(org)))
            .filter(agent_capabilities::agent_id.eq(db_uuid(agent)))
            .order(agent_capabilities::capability.asc())
            .select(CapabilityRow::as_select())
            .load(c)
            .await
    })
}

/// The distinct capability names of `org`, alphabetical.
pub(crate) async fn names(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<Vec<String>> {
    on_conn!(conn, c => {
        agent_capabilities::table
            .filter(agent_capabilities::org_id.eq(db_uuid(org)))
            .select(agent_capabilities::capability)
            .distinct()
            .order(agent_capabilities::capability.asc())
            .load(c)
            .await
    })
}

/// The capability `id` of `org`, locked as asked.
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: CapabilityId,
    lock: Option<Lock>,
) -> QueryResult<Option<CapabilityRow>> {
    first_locked!(
        conn,
        lock,
        agent_capabilities::table
            .filter(agent_capabilities::org_id.eq(db_uuid(org)))
            .filter(agent_capabilities::id.eq(db_uuid(id)))
            .select(CapabilityRow::as_select())
    )
}

/// Stores new capabilities, in order.
pub(crate) async fn insert(conn: &mut Conn<'_>, rows: &[CapabilityRow]) -> QueryResult<()> {
    insert_all!(conn, agent_capabilities::table, rows)
}

/// Writes the proficiency of the capability `id`; whether it exists.
pub(crate) async fn set_proficiency(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: CapabilityId,
    proficiency: &str,
) -> QueryResult<bool> {
    let query = diesel::update(
        agent_capabilities::table
            .filter(agent_capabilities::org_id.eq(db_uuid(org)))
            .filter(agent_capabilities::id.eq(db_uuid(id))),
    )
    .set(agent_capabilities::proficiency.eq(proficiency.to_owned()))
    .reused();
    let rows = on_conn!(conn, c => query.execute(c).await)?;
    Ok(rows == 1)
}

/// Deletes the capability `id`; whether it existed.
pub(crate) async fn delete(conn: &mut Conn<'_>, org: OrgId, id: CapabilityId) -> QueryResult<bool> {
    let query = diesel::delete(
        agent_capabilities::table
            .filter(agent_capabilities::org_id.eq(db_uuid(org)))
            .filter(agent_capabilities::id.eq(db_uuid(id))),
    );
    let rows = on_conn!(conn, c => query.execute(c).await)?;
    Ok(rows == 1)
}
