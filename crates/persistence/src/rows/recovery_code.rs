use diesel::prelude::*;
use muster_domain::model::{TokenHash, UserId};

use crate::schema::recovery_codes;
use crate::types::{DbTime, DbUuid};

/// One recovery code of a user, stored as its hash; it has no domain type of its own
/// (the port speaks of hashes).
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = recovery_codes, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct RecoveryCodeRow {
    pub user_id: DbUuid,
    pub code_hash: Vec<u8>,
    pub used_at: Option<DbTime>,
}

impl RecoveryCodeRow {
    /// An unused code of `user`.
    pub(crate) fn unused(user: UserId, hash: &TokenHash) -> Self {
        Self {
            user_id: DbUuid(user.as_uuid()),
            code_hash: hash.0.to_vec(),
            used_at: None,
        }
    }
}
