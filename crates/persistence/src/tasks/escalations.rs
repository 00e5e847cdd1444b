//! Escalations of tasks (`escalations`): the row and its queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{
    AgentId, Escalation, EscalationId, EscalationReason, OrgId, Reason, TaskId,
};
use muster_domain::ports::RepositoryError;

use crate::conn::{Conn, on_conn};
use crate::error::corrupt;
use crate::reuse::Reuse;
use crate::schema::escalations;
use crate::types::{DbTime, DbUuid, db_uuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = escalations, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct EscalationRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub task_id: DbUuid,
    pub reason: String,
    pub notes: Option<String>,
    pub from_agent_id: Option<DbUuid>,
    pub to_agent_id: Option<DbUuid>,
    pub actor_id: Option<DbUuid>,
    pub automatic: bool,
    pub created_at: DbTime,
}

impl From<&Escalation> for EscalationRow {
    fn from(e: &Escalation) -> Self {
        Self {
            id: DbUuid(e.id.as_uuid()),
            org_id: DbUuid(e.org_id.as_uuid()),
            task_id: DbUuid(e.task_id.as_uuid()),
            reason: e.reason.as_str().to_owned(),
            notes: e.notes.as_ref().map(|n| n.as_str().to_owned()),
            from_agent_id: e.from_agent_id.map(|id| DbUuid(id.as_uuid())),
            to_agent_id: e.to_agent_id.map(|id| DbUuid(id.as_uuid())),
            actor_id: e.actor_id.map(DbUuid),
            automatic: e.automatic,
            created_at: DbTime(e.created_at),
        }
    }
}

impl TryFrom<EscalationRow> for Escalation {
    type Error = RepositoryError;

    fn try_from(row: EscalationRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: EscalationId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            task_id: TaskId::from_uuid(row.task_id.0),
            reason: EscalationReason::parse(&row.reason)
                .ok_or_else(|| corrupt("escalation reason", &row.reason))?,
            notes: row
                .notes
                .map(|n| Reason::named("notes", n))
                .transpose()
                .map_err(|e| corrupt("escalation notes", e))?,
            from_agent_id: row.from_agent_id.map(|id| AgentId::from_uuid(id.0)),
            to_agent_id: row.to_agent_id.map(|id| AgentId::from_uuid(id.0)),
            actor_id: row.actor_id.map(|id| id.0),
            automatic: row.automatic,
            created_at: row.created_at.0,
        })
    }
}

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
