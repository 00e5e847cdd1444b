use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;

use crate::conn::{Conn, insert_all};
use crate::rows::{LedgerRow, ReputationRow};
use crate::schema::{credit_ledger, reputation_events};

/// Appends movements of credits, in order (see [`insert_all`]).
pub(crate) async fn insert_entries(conn: &mut Conn<'_>, rows: &[LedgerRow]) -> QueryResult<()> {
    insert_all!(conn, credit_ledger::table, rows)
}

/// Appends changes of reputation, in order (see [`insert_all`]).
pub(crate) async fn insert_reputation(
    conn: &mut Conn<'_>,
    rows: &[ReputationRow],
) -> QueryResult<()> {
    insert_all!(conn, reputation_events::table, rows)
}
