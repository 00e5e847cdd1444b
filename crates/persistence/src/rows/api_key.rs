use diesel::prelude::*;
use muster_domain::model::{ApiKey, ApiKeyId, ApiKeyName, ApiKeyScope, OrgId, UserId};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::rows::token_hash;
use crate::schema::api_keys;
use crate::types::{DbJson, DbTime, DbUuid};

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
