//! The queries of the credit ledger and of reputation events.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{AgentId, LedgerEntryId, OrgId, ReputationKind};

use crate::conn::{Conn, insert_all, on_conn};
use crate::schema::{credit_ledger, reputation_events};
use crate::types::{DbUuid, db_uuid};

use super::rows::{LedgerRow, ReputationRow};

/// Appends movements of credits, in order (see [`insert_all`]).
pub(crate) async fn insert_entries(conn: &mut Conn<'_>, rows: &[LedgerRow]) -> QueryResult<()> {
    insert_all!(conn, credit_ledger::table, rows)
}

/// Appends changes of reputation, in order (see [`insert_all`]).
pub(crate) async fn insert_reputation(
    conn: &mut Conn<'_>,
    rows: &[ReputationRow],
) -> QueryResult<()> {
    insert_all!(conn, reputation_events::table, rows)
}

/// Up to `limit` ledger rows of `agent`, newest first, older than `before`.
pub(crate) async fn of_agent(
    conn: &mut Conn<'_>,
    org: OrgId,
    agent: AgentId,
    before: Option<LedgerEntryId>,
    limit: u32,
) -> QueryResult<Vec<LedgerRow>> {
    on_conn!(conn, c, Db => {
        let mut query = credit_ledger::table
            .filter(credit_ledger::org_id.eq(db_uuid(org)))
            .filter(credit_ledger::agent_id.eq(db_uuid(agent)))
            .select(LedgerRow::as_select())
            .into_boxed::<Db>();
        if let Some(cursor) = before {
            query = query.filter(credit_ledger::id.lt(db_uuid(cursor)));
        }
        query
            .order(credit_ledger::id.desc())
            .limit(i64::from(limit))
            .load(c)
            .await
    })
}

/// Up to `limit` reputation events of `agent` after `offset`, newest first.
pub(crate) async fn reputation_of(
    conn: &mut Conn<'_>,
    org: OrgId,
    agent: AgentId,
    limit: u32,
    offset: u64,
) -> QueryResult<Vec<ReputationRow>> {
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    on_conn!(conn, c => {
        reputation_events::table
            .filter(reputation_events::org_id.eq(db_uuid(org)))
            .filter(reputation_events::agent_id.eq(db_uuid(agent)))
            .order(reputation_events::id.desc())
            .limit(i64::from(limit))
            .offset(offset)
            .select(ReputationRow::as_select())
            .load(c)
            .await
    })
}

/// How many reputation events `agent` has.
pub(crate) async fn reputation_count(
    conn: &mut Conn<'_>,
    org: OrgId,
    agent: AgentId,
) -> QueryResult<i64> {
    on_conn!(conn, c => {
        reputation_events::table
            .filter(reputation_events::org_id.eq(db_uuid(org)))
            .filter(reputation_events::agent_id.eq(db_uuid(agent)))
            .count()
            .get_result(c)
            .await
    })
}

/// How many `task_completed` reputation events each of `agents` has.
pub(crate) async fn completed_counts(
    conn: &mut Conn<'_>,
    org: OrgId,
    agents: &[AgentId],
) -> QueryResult<Vec<(DbUuid, i64)>> {
    let ids: Vec<DbUuid> = agents.iter().map(|a| db_uuid(*a)).collect();
    on_conn!(conn, c => {
        reputation_events::table
            .filter(reputation_events::org_id.eq(db_uuid(org)))
            .filter(reputation_events::agent_id.eq_any(ids.clone()))
            .filter(reputation_events::kind.eq(ReputationKind::TaskCompleted.as_str()))
            .group_by(reputation_events::agent_id)
            .select((reputation_events::agent_id, diesel::dsl::count_star()))
            .load(c)
            .await
    })
}
