use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;

use crate::conn::Conn;
use crate::rows::{LedgerRow, ReputationRow};
use crate::schema::{credit_ledger, reputation_events};

/// Appends movements of credits: one statement on PostgreSQL, one per row on SQLite
/// (whose Diesel backend has no multi-row insert), inside the caller's transaction.
pub(crate) async fn insert_entries(conn: &mut Conn<'_>, rows: &[LedgerRow]) -> QueryResult<()> {
    match conn {
        Conn::Pg(c) => {
            diesel::insert_into(credit_ledger::table)
                .values(rows)
                .execute(*c)
                .await?;
        }
        Conn::Sqlite(c) => {
            for row in rows {
                diesel::insert_into(credit_ledger::table)
                    .values(row)
                    .execute(*c)
                    .await?;
            }
        }
    }
    Ok(())
}

/// Appends changes of reputation, as [`insert_entries`] does.
pub(crate) async fn insert_reputation(
    conn: &mut Conn<'_>,
    rows: &[ReputationRow],
) -> QueryResult<()> {
    match conn {
        Conn::Pg(c) => {
            diesel::insert_into(reputation_events::table)
                .values(rows)
                .execute(*c)
                .await?;
        }
        Conn::Sqlite(c) => {
            for row in rows {
                diesel::insert_into(reputation_events::table)
                    .values(row)
                    .execute(*c)
                    .await?;
            }
        }
    }
    Ok(())
}
