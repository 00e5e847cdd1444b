use diesel::prelude::*;
use diesel::query_dsl::methods::FilterDsl;
use diesel::result::QueryResult;
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use muster_domain::model::AgentId;
use time::OffsetDateTime;

use crate::conn::{Conn, on_conn};
use crate::reuse::Reuse;
use crate::rows::db_uuid;
use crate::schema::nonces;
use crate::types::DbTime;

/// Records `nonce` for `agent` until `expires_at` unless an unexpired record of it
/// exists; whether it was recorded. One statement, so the check and the record are
/// atomic without a transaction: a fresh nonce inserts, an expired one is overwritten,
/// a live one changes nothing.
pub(crate) async fn remember(
    conn: &mut Conn<'_>,
    agent: AgentId,
    nonce: &str,
    now: OffsetDateTime,
    expires_at: OffsetDateTime,
) -> QueryResult<bool> {
    let upsert = diesel::insert_into(nonces::table)
        .values((
            nonces::agent_id.eq(db_uuid(agent)),
            nonces::nonce.eq(nonce),
            nonces::expires_at.eq(DbTime(expires_at)),
        ))
        .on_conflict((nonces::agent_id, nonces::nonce))
        .do_update()
        .set(nonces::expires_at.eq(excluded(nonces::expires_at)));
    // `ON CONFLICT ... DO UPDATE ... WHERE`: only an expired record is overwritten.
    let query = FilterDsl::filter(upsert, nonces::expires_at.lt(DbTime(now))).reused();
    let written = on_conn!(conn, c => query.execute(c).await)?;
    Ok(written == 1)
}

/// [`remember`] for many distinct nonces on SQLite's synchronous connection, in one
/// `BEGIN IMMEDIATE` transaction. The indexes of the recorded entries.
///
/// Each nonce is a delete of its expired record (if any) and an insert that does
/// nothing on conflict, rather than [`remember`]'s upsert: Diesel never keeps an
/// `ON CONFLICT DO UPDATE` statement prepared, so the upsert was parsed again for every
/// nonce, while these two stay prepared. Inside the transaction the pair is as atomic
/// as the upsert, with the same outcome: a fresh or expired nonce is recorded, a live
/// one changes nothing.
pub(crate) fn remember_all_sqlite(
    conn: &mut diesel::SqliteConnection,
    entries: &[NonceEntry],
    now: OffsetDateTime,
) -> QueryResult<Vec<usize>> {
    conn.immediate_transaction(|conn| {
        let mut fresh = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let expired = QueryDsl::filter(
                nonces::table,
                nonces::agent_id
                    .eq(db_uuid(e.agent))
                    .and(nonces::nonce.eq(e.nonce.as_str()))
                    .and(nonces::expires_at.lt(DbTime(now))),
            );
            diesel::RunQueryDsl::execute(diesel::delete(expired), conn)?;
            let insert = diesel::insert_into(nonces::table)
                .values((
                    nonces::agent_id.eq(db_uuid(e.agent)),
                    nonces::nonce.eq(e.nonce.as_str()),
                    nonces::expires_at.eq(DbTime(e.expires_at)),
                ))
                .on_conflict_do_nothing();
            if diesel::RunQueryDsl::execute(insert, conn)? == 1 {
                fresh.push(i);
            }
        }
        Ok(fresh)
    })
}

/// Deletes every record that expired before `now`; how many.
pub(crate) async fn purge_expired(conn: &mut Conn<'_>, now: OffsetDateTime) -> QueryResult<usize> {
    let query = diesel::delete(QueryDsl::filter(
        nonces::table,
        nonces::expires_at.lt(DbTime(now)),
    ));
    on_conn!(conn, c => query.execute(c).await)
}

/// One nonce to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NonceEntry {
    pub agent: AgentId,
    pub nonce: String,
    pub expires_at: OffsetDateTime,
}

/// [`remember`] for many distinct nonces in ONE PostgreSQL statement; the indexes (into
/// `entries`) of those that were recorded. `now` is the earliest request time of the
/// batch, so no record is taken for expired before it is.
pub(crate) async fn remember_all_pg(
    conn: &mut diesel_async::AsyncPgConnection,
    entries: &[NonceEntry],
    now: OffsetDateTime,
) -> QueryResult<Vec<usize>> {
    let values: Vec<_> = entries
        .iter()
        .map(|e| {
            (
                nonces::agent_id.eq(db_uuid(e.agent)),
                nonces::nonce.eq(e.nonce.as_str()),
                nonces::expires_at.eq(DbTime(e.expires_at)),
            )
        })
        .collect();
    let upsert = diesel::insert_into(nonces::table)
        .values(values)
        .on_conflict((nonces::agent_id, nonces::nonce))
        .do_update()
        .set(nonces::expires_at.eq(excluded(nonces::expires_at)));
    let written: Vec<(crate::types::DbUuid, String)> =
        FilterDsl::filter(upsert, nonces::expires_at.lt(DbTime(now)))
            .returning((nonces::agent_id, nonces::nonce))
            .get_results(conn)
            .await?;
    let written: std::collections::HashSet<(uuid::Uuid, String)> = written
        .into_iter()
        .map(|(agent, nonce)| (agent.0, nonce))
        .collect();
    Ok(entries
        .iter()
        .enumerate()
        .filter(|(_, e)| written.contains(&(e.agent.as_uuid(), e.nonce.clone())))
        .map(|(i, _)| i)
        .collect())
}
