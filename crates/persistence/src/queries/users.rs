use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;

use crate::conn::{Conn, on_conn};
use crate::rows::UserRow;
use crate::schema::users;

/// Stores a new user.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &UserRow) -> QueryResult<()> {
    let query = diesel::insert_into(users::table).values(row);
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}
