//! Inbound webhook keys (`inbound_webhook_keys`): the row and its queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{
    AgentId, HookName, InboundKey, InboundKeyId, OrgId, Tags, TaskPriority,
};
use muster_domain::ports::{Lock, RepositoryError};
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, on_conn};
use crate::error::corrupt;
use crate::reuse::Reuse;
use crate::schema::inbound_webhook_keys as keys;
use crate::types::{DbJson, DbTime, DbUuid, db_uuid};

/// An `inbound_webhook_keys` row.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = keys, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_null = true)]
pub(crate) struct InboundKeyRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub name: String,
    pub key: String,
    pub sealed_secret: Vec<u8>,
    pub default_agent_id: Option<DbUuid>,
    pub default_priority: String,
    pub default_tags: DbJson,
    pub enabled: bool,
    pub last_used_at: Option<DbTime>,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&InboundKey> for InboundKeyRow {
    fn from(key: &InboundKey) -> Self {
        Self {
            id: DbUuid(key.id.as_uuid()),
            org_id: DbUuid(key.org_id.as_uuid()),
            name: key.name.as_str().to_owned(),
            key: key.key.clone(),
            sealed_secret: key.sealed_secret.clone(),
            default_agent_id: key.default_agent_id.map(|id| DbUuid(id.as_uuid())),
            default_priority: key.default_priority.as_str().to_owned(),
            default_tags: DbJson(serde_json::Value::from(
                key.default_tags.as_slice().to_vec(),
            )),
            enabled: key.enabled,
            last_used_at: key.last_used_at.map(DbTime),
            created_at: DbTime(key.created_at),
            updated_at: DbTime(key.updated_at),
        }
    }
}

impl TryFrom<InboundKeyRow> for InboundKey {
    type Error = RepositoryError;

    fn try_from(row: InboundKeyRow) -> Result<Self, Self::Error> {
        let tags: Vec<String> = serde_json::from_value(row.default_tags.0)
            .map_err(|e| corrupt("inbound key tags", e))?;
        Ok(Self {
            id: InboundKeyId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            name: HookName::new(&row.name).map_err(|e| corrupt("inbound key name", e))?,
            key: row.key,
            sealed_secret: row.sealed_secret,
            default_agent_id: row.default_agent_id.map(|id| AgentId::from_uuid(id.0)),
            default_priority: TaskPriority::parse(&row.default_priority)
                .ok_or_else(|| corrupt("inbound key priority", &row.default_priority))?,
            default_tags: Tags::new(tags).map_err(|e| corrupt("inbound key tags", e))?,
            enabled: row.enabled,
            last_used_at: row.last_used_at.map(|t| t.0),
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}

/// Stores a new key.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &InboundKeyRow) -> QueryResult<()> {
    let query = diesel::insert_into(keys::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Stores every field of a key; `false` when it is gone.
pub(crate) async fn update(conn: &mut Conn<'_>, row: &InboundKeyRow) -> QueryResult<bool> {
    let target = keys::table
        .filter(keys::org_id.eq(row.org_id))
        .filter(keys::id.eq(row.id));
    let updated = on_conn!(conn, c => diesel::update(target).set(row).reused().execute(c).await)?;
    Ok(updated > 0)
}

/// Deletes a key; `false` when it is gone.
pub(crate) async fn delete(conn: &mut Conn<'_>, org: OrgId, id: InboundKeyId) -> QueryResult<bool> {
    let target = keys::table
        .filter(keys::org_id.eq(db_uuid(org)))
        .filter(keys::id.eq(db_uuid(id)));
    let deleted = on_conn!(conn, c => diesel::delete(target).execute(c).await)?;
    Ok(deleted > 0)
}

/// Notes the key's last use.
pub(crate) async fn touch(
    conn: &mut Conn<'_>,
    id: InboundKeyId,
    at: OffsetDateTime,
) -> QueryResult<()> {
    let target = keys::table.filter(keys::id.eq(db_uuid(id)));
    on_conn!(conn, c => {
        diesel::update(target)
            .set(keys::last_used_at.eq(Some(DbTime(at))))
            .reused()
            .execute(c)
            .await
    })?;
    Ok(())
}

/// The key `id` of `org`, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: InboundKeyId,
    lock: Option<Lock>,
) -> QueryResult<Option<InboundKeyRow>> {
    first_locked!(
        conn,
        lock,
        keys::table
            .filter(keys::org_id.eq(db_uuid(org)))
            .filter(keys::id.eq(db_uuid(id)))
            .select(InboundKeyRow::as_select())
    )
}

/// The record whose key is `key`, in any organization.
pub(crate) async fn find_by_key(
    conn: &mut Conn<'_>,
    key: &str,
) -> QueryResult<Option<InboundKeyRow>> {
    on_conn!(conn, c => {
        keys::table
            .filter(keys::key.eq(key))
            .select(InboundKeyRow::as_select())
            .get_result(c)
            .await
            .optional()
    })
}

/// The keys of `org`, newest first.
pub(crate) async fn list(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<Vec<InboundKeyRow>> {
    on_conn!(conn, c => {
        keys::table
            .filter(keys::org_id.eq(db_uuid(org)))
            .select(InboundKeyRow::as_select())
            .order((keys::created_at.desc(), keys::id.desc()))
            .load(c)
            .await
    })
}
