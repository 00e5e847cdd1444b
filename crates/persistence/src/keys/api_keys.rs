//! API keys (`api_keys`): the row and its queries, among them the lookup of a key by its
//! hash together with its owner, which signs a request in.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{ApiKey, ApiKeyId, ApiKeyName, ApiKeyScope, OrgId, TokenHash, UserId};
use muster_domain::ports::{Lock, RepositoryError};
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, on_conn};
use crate::error::corrupt;
use crate::organizations::users::UserRow;
use crate::reuse::Reuse;
use crate::schema::{api_keys, users};
use crate::types::{DbJson, DbTime, DbUuid, db_uuid, token_hash};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct ApiKeyRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub user_id: DbUuid,
    pub name: String,
    pub key_prefix: String,
    pub key_hash: Vec<u8>,
    pub scopes: DbJson,
    pub last_used_at: Option<DbTime>,
    pub expires_at: Option<DbTime>,
    pub created_at: DbTime,
}

impl From<&ApiKey> for ApiKeyRow {
    fn from(key: &ApiKey) -> Self {
        let scopes: Vec<&str> = key.scopes.iter().map(|s| s.as_str()).collect();
        Self {
            id: DbUuid(key.id.as_uuid()),
            org_id: DbUuid(key.org_id.as_uuid()),
            user_id: DbUuid(key.user_id.as_uuid()),
            name: key.name.as_str().to_owned(),
            key_prefix: key.key_prefix.clone(),
            key_hash: key.key_hash.0.to_vec(),
            scopes: DbJson(serde_json::Value::from(scopes)),
            last_used_at: key.last_used_at.map(DbTime),
            expires_at: key.expires_at.map(DbTime),
            created_at: DbTime(key.created_at),
        }
    }
}

impl TryFrom<ApiKeyRow> for ApiKey {
    type Error = RepositoryError;

    fn try_from(row: ApiKeyRow) -> Result<Self, Self::Error> {
        let names: Vec<String> =
            serde_json::from_value(row.scopes.0).map_err(|e| corrupt("API key scopes", e))?;
        let scopes = names
            .iter()
            .map(|name| ApiKeyScope::parse(name).ok_or_else(|| corrupt("API key scope", name)))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            id: ApiKeyId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            user_id: UserId::from_uuid(row.user_id.0),
            name: ApiKeyName::new(&row.name).map_err(|e| corrupt("API key name", e))?,
            key_prefix: row.key_prefix,
            key_hash: token_hash("API key hash", &row.key_hash)?,
            scopes,
            last_used_at: row.last_used_at.map(|t| t.0),
            expires_at: row.expires_at.map(|t| t.0),
            created_at: row.created_at.0,
        })
    }
}

/// Stores a new API key.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &ApiKeyRow) -> QueryResult<()> {
    let query = diesel::insert_into(api_keys::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// The key whose hash is `hash` (in any organization) with its owner, in one query.
pub(crate) async fn find_by_hash_with_owner(
    conn: &mut Conn<'_>,
    hash: &TokenHash,
) -> QueryResult<Option<(ApiKeyRow, UserRow)>> {
    on_conn!(conn, c => {
        api_keys::table
            .inner_join(users::table)
            .filter(api_keys::key_hash.eq(hash.0.as_slice()))
            .select((ApiKeyRow::as_select(), UserRow::as_select()))
            .get_result(c)
            .await
            .optional()
    })
}

/// The keys of `user` of `org`, newest first (ids are time-ordered).
pub(crate) async fn list_of(
    conn: &mut Conn<'_>,
    org: OrgId,
    user: UserId,
) -> QueryResult<Vec<ApiKeyRow>> {
    on_conn!(conn, c => {
        api_keys::table
            .filter(api_keys::org_id.eq(db_uuid(org)))
            .filter(api_keys::user_id.eq(db_uuid(user)))
            .select(ApiKeyRow::as_select())
            .order(api_keys::id.desc())
            .load(c)
            .await
    })
}

/// The key `id` if `user` of `org` owns it, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    user: UserId,
    id: ApiKeyId,
    lock: Option<Lock>,
) -> QueryResult<Option<ApiKeyRow>> {
    first_locked!(
        conn,
        lock,
        api_keys::table
            .filter(api_keys::org_id.eq(db_uuid(org)))
            .filter(api_keys::user_id.eq(db_uuid(user)))
            .filter(api_keys::id.eq(db_uuid(id)))
            .select(ApiKeyRow::as_select())
    )
}

/// Deletes the key `id` if `user` of `org` owns it; the deleted key. Read (locked on
/// PostgreSQL) before the delete, and answered only when this delete removed it.
pub(crate) async fn delete(
    conn: &mut Conn<'_>,
    org: OrgId,
    user: UserId,
    id: ApiKeyId,
) -> QueryResult<Option<ApiKeyRow>> {
    let Some(row) = find(conn, org, user, id, Some(Lock::Update)).await? else {
        return Ok(None);
    };
    let query = diesel::delete(api_keys::table.filter(api_keys::id.eq(row.id)));
    let deleted = on_conn!(conn, c => query.execute(c).await)?;
    Ok((deleted == 1).then_some(row))
}

/// Stamps key `id` as used at `at` unless a use at or after `unless_since` is recorded:
/// one conditional statement.
pub(crate) async fn touch(
    conn: &mut Conn<'_>,
    id: ApiKeyId,
    at: OffsetDateTime,
    unless_since: OffsetDateTime,
) -> QueryResult<()> {
    let query = diesel::update(
        api_keys::table.filter(api_keys::id.eq(db_uuid(id))).filter(
            api_keys::last_used_at
                .is_null()
                .or(api_keys::last_used_at.lt(DbTime(unless_since))),
        ),
    )
    .set(api_keys::last_used_at.eq(DbTime(at)))
    .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}
