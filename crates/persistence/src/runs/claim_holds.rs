//! `claim_reservations`: the credits a claim reserved for its task (decision D-106), its
//! row and its queries. A task holds at most one (its primary key).

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{AgentId, ClaimReservation, OrgId, TaskId};
use muster_domain::ports::Lock;

use crate::conn::{Conn, first_locked, on_conn};
use crate::reuse::Reuse;
use crate::schema::claim_reservations;
use crate::types::{DbTime, DbUuid, db_uuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = claim_reservations, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct ClaimReservationRow {
    pub task_id: DbUuid,
    pub org_id: DbUuid,
    pub agent_id: DbUuid,
    pub credits: i64,
    pub created_at: DbTime,
}

impl From<&ClaimReservation> for ClaimReservationRow {
    fn from(held: &ClaimReservation) -> Self {
        Self {
            task_id: db_uuid(held.task_id),
            org_id: db_uuid(held.org_id),
            agent_id: db_uuid(held.agent_id),
            credits: held.credits,
            created_at: DbTime(held.created_at),
        }
    }
}

impl From<ClaimReservationRow> for ClaimReservation {
    fn from(row: ClaimReservationRow) -> Self {
        Self {
            org_id: OrgId::from_uuid(row.org_id.0),
            task_id: TaskId::from_uuid(row.task_id.0),
            agent_id: AgentId::from_uuid(row.agent_id.0),
            credits: row.credits,
            created_at: row.created_at.0,
        }
    }
}

/// The reservation of the claim of `task` in `org`, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
    lock: Option<Lock>,
) -> QueryResult<Option<ClaimReservationRow>> {
    first_locked!(
        conn,
        lock,
        claim_reservations::table
            .filter(claim_reservations::task_id.eq(db_uuid(task)))
            .filter(claim_reservations::org_id.eq(db_uuid(org)))
            .select(ClaimReservationRow::as_select())
    )
}

/// Stores a claim's reservation.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &ClaimReservationRow) -> QueryResult<()> {
    let query = diesel::insert_into(claim_reservations::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Removes the reservation of the claim of `task` in `org`; whether there was one.
pub(crate) async fn delete(conn: &mut Conn<'_>, org: OrgId, task: TaskId) -> QueryResult<bool> {
    let query = diesel::delete(
        claim_reservations::table
            .filter(claim_reservations::task_id.eq(db_uuid(task)))
            .filter(claim_reservations::org_id.eq(db_uuid(org))),
    );
    let deleted = on_conn!(conn, c => query.execute(c).await)?;
    Ok(deleted == 1)
}
