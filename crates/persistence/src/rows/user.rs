use diesel::prelude::*;
use muster_domain::model::User;

use crate::schema::users;
use crate::types::{DbTime, DbUuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct UserRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub email: String,
    pub name: String,
    pub role: String,
    pub password_hash: String,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&User> for UserRow {
    fn from(user: &User) -> Self {
        Self {
            id: DbUuid(user.id.as_uuid()),
            org_id: DbUuid(user.org_id.as_uuid()),
            email: user.email.as_str().to_owned(),
            name: user.name.clone(),
            role: user.role.as_str().to_owned(),
            password_hash: user.password_hash.clone(),
            created_at: DbTime(user.created_at),
            updated_at: DbTime(user.created_at),
        }
    }
}
