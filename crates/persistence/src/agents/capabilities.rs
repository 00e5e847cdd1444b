//! Agent capabilities (`agent_capabilities`): the row and its queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{AgentId, Capability, CapabilityId, CapabilityName, OrgId, Proficiency};
use muster_domain::ports::{Lock, RepositoryError};

use crate::conn::{Conn, first_locked, insert_all, on_conn};
use crate::error::corrupt;
use crate::reuse::Reuse;
use crate::schema::agent_capabilities;
use crate::types::{DbTime, DbUuid, db_uuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = agent_capabilities, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct CapabilityRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub agent_id: DbUuid,
    pub capability: String,
    pub proficiency: String,
    pub created_at: DbTime,
}

impl From<&Capability> for CapabilityRow {
    fn from(c: &Capability) -> Self {
        Self {
            id: DbUuid(c.id.as_uuid()),
            org_id: DbUuid(c.org_id.as_uuid()),
            agent_id: DbUuid(c.agent_id.as_uuid()),
            capability: c.name.as_str().to_owned(),
            proficiency: c.proficiency.as_str().to_owned(),
            created_at: DbTime(c.created_at),
        }
    }
}

impl TryFrom<CapabilityRow> for Capability {
    type Error = RepositoryError;

    fn try_from(row: CapabilityRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: CapabilityId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            agent_id: AgentId::from_uuid(row.agent_id.0),
            name: CapabilityName::new(&row.capability).map_err(|e| corrupt("capability", e))?,
            proficiency: Proficiency::parse(&row.proficiency)
                .ok_or_else(|| corrupt("capability proficiency", &row.proficiency))?,
            created_at: row.created_at.0,
        })
    }
}

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
