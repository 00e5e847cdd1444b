use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{Email, OrgId, UserId};
use muster_domain::ports::Lock;

use crate::conn::{Conn, first_locked, on_conn};
use crate::reuse::Reuse;
use crate::rows::{UserChanges, UserRow, db_uuid};
use crate::schema::users;

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
