//! The queries of `agents`.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{AgentHandle, AgentId, AgentMode, AgentStatus, Level, OrgId};
use muster_domain::ports::{AgentFilter, Lock};

use crate::conn::{Conn, first_locked, on_conn};
use crate::reuse::Reuse;
use crate::schema::agents;
use crate::types::{DbTime, DbUuid, db_uuid};

use super::rows::{AgentChanges, AgentRow};

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

/// The agent `id`, in any organization.
pub(crate) async fn find_anywhere(
    conn: &mut Conn<'_>,
    id: AgentId,
) -> QueryResult<Option<AgentRow>> {
    on_conn!(conn, c => {
        agents::table
            .filter(agents::id.eq(db_uuid(id)))
            .select(AgentRow::as_select())
            .get_result(c)
            .await
            .optional()
    })
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
            .get_result(c)
            .await
            .optional()
    })
}

/// Stores a new agent.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &AgentRow) -> QueryResult<()> {
    let query = diesel::insert_into(agents::table).values(row).reused();
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
    .set(changes)
    .reused();
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

/// Up to `limit` agents of `org` matching `filter`, newest first, older than `before`.
pub(crate) async fn list(
    conn: &mut Conn<'_>,
    org: OrgId,
    filter: &AgentFilter,
    before: Option<AgentId>,
    limit: u32,
) -> QueryResult<Vec<AgentRow>> {
    on_conn!(conn, c, Db => {
        let mut query = agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .select(AgentRow::as_select())
            .into_boxed::<Db>();
        if let Some(status) = filter.status {
            query = query.filter(agents::status.eq(status.as_str()));
        }
        if let Some(role) = filter.role {
            query = query.filter(agents::role.eq(role.as_str()));
        }
        if let Some(mode) = filter.mode {
            query = query.filter(agents::mode.eq(mode.as_str()));
        }
        if let Some(parent) = filter.parent_id {
            query = query.filter(agents::parent_id.eq(db_uuid(parent)));
        }
        if let Some(cursor) = before {
            query = query.filter(agents::id.lt(db_uuid(cursor)));
        }
        query
            .order(agents::id.desc())
            .limit(i64::from(limit))
            .load(c)
            .await
    })
}

/// Every agent of `org`, or only its active ones.
pub(crate) async fn of_org(
    conn: &mut Conn<'_>,
    org: OrgId,
    active_only: bool,
) -> QueryResult<Vec<AgentRow>> {
    if active_only {
        return active_of_org(conn, org).await;
    }
    on_conn!(conn, c => {
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .order(agents::id.asc())
            .select(AgentRow::as_select())
            .load(c)
            .await
    })
}

/// Pending agents of `org`, newest first; only the children of `parent` when given.
pub(crate) async fn pending(
    conn: &mut Conn<'_>,
    org: OrgId,
    parent: Option<AgentId>,
) -> QueryResult<Vec<AgentRow>> {
    on_conn!(conn, c, Db => {
        let mut query = agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::status.eq(AgentStatus::Pending.as_str()))
            .select(AgentRow::as_select())
            .into_boxed::<Db>();
        if let Some(parent) = parent {
            query = query.filter(agents::parent_id.eq(db_uuid(parent)));
        }
        query.order(agents::id.desc()).load(c).await
    })
}

/// The children of any of `parents`.
pub(crate) async fn children(
    conn: &mut Conn<'_>,
    org: OrgId,
    parents: &[AgentId],
) -> QueryResult<Vec<AgentRow>> {
    let ids: Vec<DbUuid> = parents.iter().map(|p| db_uuid(*p)).collect();
    on_conn!(conn, c => {
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::parent_id.eq_any(ids.clone()))
            .order(agents::id.asc())
            .select(AgentRow::as_select())
            .load(c)
            .await
    })
}

/// How many children of `parent` are active or pending.
pub(crate) async fn live_children(
    conn: &mut Conn<'_>,
    org: OrgId,
    parent: AgentId,
) -> QueryResult<i64> {
    let live = [AgentStatus::Active.as_str(), AgentStatus::Pending.as_str()];
    on_conn!(conn, c => {
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::parent_id.eq(db_uuid(parent)))
            .filter(agents::status.eq_any(live))
            .count()
            .get_result(c)
            .await
    })
}

/// Active agents of `org` with a budget limit above 0.
pub(crate) async fn limited(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<Vec<AgentRow>> {
    on_conn!(conn, c => {
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::status.eq(AgentStatus::Active.as_str()))
            .filter(agents::budget_period_limit.gt(0))
            .order(agents::id.asc())
            .select(AgentRow::as_select())
            .load(c)
            .await
    })
}

/// The `limit` active agents of `org` with the highest reputation, ties by `agentId`.
pub(crate) async fn top_reputation(
    conn: &mut Conn<'_>,
    org: OrgId,
    limit: u32,
) -> QueryResult<Vec<AgentRow>> {
    on_conn!(conn, c => {
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::status.eq(AgentStatus::Active.as_str()))
            .order((agents::reputation_score.desc(), agents::agent_id.asc()))
            .limit(i64::from(limit))
            .select(AgentRow::as_select())
            .load(c)
            .await
    })
}

/// Deletes the agent `id` of `org`; whether it existed.
pub(crate) async fn delete(conn: &mut Conn<'_>, org: OrgId, id: AgentId) -> QueryResult<bool> {
    let query = diesel::delete(
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::id.eq(db_uuid(id))),
    );
    let rows = on_conn!(conn, c => query.execute(c).await)?;
    Ok(rows == 1)
}

/// Starts a new budget period at `start` for every agent whose period began before it.
pub(crate) async fn roll_budget_periods(
    conn: &mut Conn<'_>,
    start: time::OffsetDateTime,
) -> QueryResult<usize> {
    let query = diesel::update(agents::table.filter(agents::budget_period_start.lt(DbTime(start))))
        .set((
            agents::budget_period_spent.eq(0_i64),
            agents::budget_exhausted.eq(false),
            agents::budget_period_start.eq(DbTime(start)),
        ))
        .reused();
    on_conn!(conn, c => query.execute(c).await)
}
