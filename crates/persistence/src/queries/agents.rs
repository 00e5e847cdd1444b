use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{AgentHandle, AgentId, AgentMode, AgentStatus, Level, OrgId};
use muster_domain::ports::Lock;

use crate::conn::{Conn, first_locked, on_conn};
use crate::rows::{AgentChanges, AgentRow, db_uuid};
use crate::schema::agents;

/// The agent `id` of `org`, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: AgentId,
    lock: Option<Lock>,
) -> QueryResult<Option<AgentRow>> {
    first_locked!(
        conn,
        lock,
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::id.eq(db_uuid(id)))
            .select(AgentRow::as_select())
    )
}

/// The agent whose `agentId` is `handle`, in any organization (handles are unique).
pub(crate) async fn find_by_handle(
    conn: &mut Conn<'_>,
    handle: &AgentHandle,
) -> QueryResult<Option<AgentRow>> {
    on_conn!(conn, c => {
        agents::table
            .filter(agents::agent_id.eq(handle.as_str()))
            .select(AgentRow::as_select())
            .first(c)
            .await
            .optional()
    })
}

/// Stores a new agent.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &AgentRow) -> QueryResult<()> {
    let query = diesel::insert_into(agents::table).values(row);
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Writes `changes` to the agent `id` of `org`; whether it exists.
pub(crate) async fn update(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: AgentId,
    changes: &AgentChanges,
) -> QueryResult<bool> {
    let query = diesel::update(
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::id.eq(db_uuid(id))),
    )
    .set(changes);
    let rows = on_conn!(conn, c => query.execute(c).await)?;
    Ok(rows == 1)
}

/// The most senior active, executing agent of `org` strictly above `level` (any level
/// when `None`): highest level, then earliest created.
pub(crate) async fn senior_above(
    conn: &mut Conn<'_>,
    org: OrgId,
    level: Option<Level>,
) -> QueryResult<Option<AgentRow>> {
    let floor = level.map_or(0, |l| i32::from(l.get()));
    on_conn!(conn, c => {
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::status.eq(AgentStatus::Active.as_str()))
            .filter(agents::mode.eq(AgentMode::Worker.as_str()))
            .filter(agents::level.gt(floor))
            .order((agents::level.desc(), agents::created_at.asc(), agents::id.asc()))
            .select(AgentRow::as_select())
            .first(c)
            .await
            .optional()
    })
}

/// Every active agent of `org`.
pub(crate) async fn active_of_org(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<Vec<AgentRow>> {
    on_conn!(conn, c => {
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::status.eq(AgentStatus::Active.as_str()))
            .order(agents::id.asc())
            .select(AgentRow::as_select())
            .load(c)
            .await
    })
}
