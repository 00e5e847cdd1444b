use diesel::prelude::*;
use muster_domain::model::{LoginFamilyId, OrgId, RefreshToken, RefreshTokenId, UserId};
use muster_domain::ports::RepositoryError;

use crate::rows::token_hash;
use crate::schema::refresh_tokens;
use crate::types::{DbTime, DbUuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = refresh_tokens, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct RefreshTokenRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub user_id: DbUuid,
    pub family_id: DbUuid,
    pub token_hash: Vec<u8>,
    pub created_at: DbTime,
    pub expires_at: DbTime,
    pub replaced_at: Option<DbTime>,
    pub revoked_at: Option<DbTime>,
}

impl From<&RefreshToken> for RefreshTokenRow {
    fn from(token: &RefreshToken) -> Self {
        Self {
            id: DbUuid(token.id.as_uuid()),
            org_id: DbUuid(token.org_id.as_uuid()),
            user_id: DbUuid(token.user_id.as_uuid()),
            family_id: DbUuid(token.family_id.as_uuid()),
            token_hash: token.token_hash.0.to_vec(),
            created_at: DbTime(token.created_at),
            expires_at: DbTime(token.expires_at),
            replaced_at: token.replaced_at.map(DbTime),
            revoked_at: token.revoked_at.map(DbTime),
        }
    }
}

impl TryFrom<RefreshTokenRow> for RefreshToken {
    type Error = RepositoryError;

    fn try_from(row: RefreshTokenRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: RefreshTokenId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            user_id: UserId::from_uuid(row.user_id.0),
            family_id: LoginFamilyId::from_uuid(row.family_id.0),
            token_hash: token_hash("refresh token hash", &row.token_hash)?,
            created_at: row.created_at.0,
            expires_at: row.expires_at.0,
            replaced_at: row.replaced_at.map(|t| t.0),
            revoked_at: row.revoked_at.map(|t| t.0),
        })
    }
}
