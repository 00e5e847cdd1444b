//! Users (`users`): the row, the fields that change after creation, and the queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{Email, OrgId, TotpSettings, User, UserId, UserRole};
use muster_domain::ports::{Lock, RepositoryError};
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, on_conn};
use crate::error::corrupt;
use crate::reuse::Reuse;
use crate::schema::users;
use crate::types::{DbTime, DbUuid, db_uuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct UserRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub email: String,
    pub name: String,
    pub role: String,
    pub password_hash: String,
    pub email_verified: bool,
    pub totp_enabled: bool,
    pub totp_secret: Option<Vec<u8>>,
    pub totp_pending_secret: Option<Vec<u8>>,
    pub totp_last_step: Option<i64>,
    pub last_login_at: Option<DbTime>,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&User> for UserRow {
    fn from(user: &User) -> Self {
        // The mutable fields are converted in one place: UserChanges.
        let fields = UserChanges::new(user, user.created_at);
        Self {
            id: DbUuid(user.id.as_uuid()),
            org_id: DbUuid(user.org_id.as_uuid()),
            email: fields.email,
            name: fields.name,
            role: fields.role,
            password_hash: fields.password_hash,
            email_verified: fields.email_verified,
            totp_enabled: fields.totp_enabled,
            totp_secret: fields.totp_secret,
            totp_pending_secret: fields.totp_pending_secret,
            totp_last_step: fields.totp_last_step,
            last_login_at: fields.last_login_at,
            created_at: DbTime(user.created_at),
            updated_at: fields.updated_at,
        }
    }
}

impl TryFrom<UserRow> for User {
    type Error = RepositoryError;

    fn try_from(row: UserRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: UserId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            email: Email::stored(&row.email).map_err(|e| corrupt("user email", e))?,
            name: row.name,
            role: UserRole::parse(&row.role).ok_or_else(|| corrupt("user role", &row.role))?,
            password_hash: row.password_hash,
            email_verified: row.email_verified,
            totp: TotpSettings {
                enabled: row.totp_enabled,
                secret: row.totp_secret,
                pending_secret: row.totp_pending_secret,
                last_step: row.totp_last_step,
            },
            last_login_at: row.last_login_at.map(|t| t.0),
            created_at: row.created_at.0,
        })
    }
}

/// The fields of a user that change after creation (never its ids or creation time).
#[derive(Debug, Clone, AsChangeset)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_null = true)]
pub(crate) struct UserChanges {
    pub email: String,
    pub name: String,
    pub role: String,
    pub password_hash: String,
    pub email_verified: bool,
    pub totp_enabled: bool,
    pub totp_secret: Option<Vec<u8>>,
    pub totp_pending_secret: Option<Vec<u8>>,
    pub totp_last_step: Option<i64>,
    pub last_login_at: Option<DbTime>,
    pub updated_at: DbTime,
}

impl UserChanges {
    /// The mutable fields of `user`, stamped `at`.
    pub(crate) fn new(user: &User, at: OffsetDateTime) -> Self {
        Self {
            email: user.email.as_str().to_owned(),
            name: user.name.clone(),
            role: user.role.as_str().to_owned(),
            password_hash: user.password_hash.clone(),
            email_verified: user.email_verified,
            totp_enabled: user.totp.enabled,
            totp_secret: user.totp.secret.clone(),
            totp_pending_secret: user.totp.pending_secret.clone(),
            totp_last_step: user.totp.last_step,
            last_login_at: user.last_login_at.map(DbTime),
            updated_at: DbTime(at),
        }
    }
}

/// The user `id` of `org`, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: UserId,
    lock: Option<Lock>,
) -> QueryResult<Option<UserRow>> {
    first_locked!(
        conn,
        lock,
        users::table
            .filter(users::org_id.eq(db_uuid(org)))
            .filter(users::id.eq(db_uuid(id)))
            .select(UserRow::as_select())
    )
}

/// The user of `org` with the (normalized) `email`, locked as asked (PostgreSQL).
pub(crate) async fn find_by_email(
    conn: &mut Conn<'_>,
    org: OrgId,
    email: &Email,
    lock: Option<Lock>,
) -> QueryResult<Option<UserRow>> {
    let email = email.as_str().to_owned();
    first_locked!(
        conn,
        lock,
        users::table
            .filter(users::org_id.eq(db_uuid(org)))
            .filter(users::email.eq(&email))
            .select(UserRow::as_select())
    )
}

/// Stores a new user.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &UserRow) -> QueryResult<()> {
    let query = diesel::insert_into(users::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Writes `changes` to the user `id` of `org`; whether it exists.
pub(crate) async fn update(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: UserId,
    changes: &UserChanges,
) -> QueryResult<bool> {
    let query = diesel::update(
        users::table
            .filter(users::org_id.eq(db_uuid(org)))
            .filter(users::id.eq(db_uuid(id))),
    )
    .set(changes)
    .reused();
    let rows = on_conn!(conn, c => query.execute(c).await)?;
    Ok(rows == 1)
}
