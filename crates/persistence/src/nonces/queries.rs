//! The queries of `nonces`: recording one nonce or a batch, and purging expired ones.

use diesel::prelude::*;
use diesel::query_dsl::methods::FilterDsl;
use diesel::result::QueryResult;
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use muster_domain::model::AgentId;
use time::OffsetDateTime;

use crate::conn::{Conn, on_conn};
use crate::purge::delete_oldest;
use crate::reuse::Reuse;
use crate::schema::nonces;
use crate::types::{DbTime, db_uuid};

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

/// Deletes the oldest of the nonces that expired before `now`: a batch of a purge (see
/// [`crate::purge`]); how many.
pub(crate) async fn purge_expired(conn: &mut Conn<'_>, now: OffsetDateTime) -> QueryResult<usize> {
    delete_oldest!(conn, nonces::table, nonces::expires_at, now)
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
///
/// The rows travel as three arrays that `unnest` turns back into rows, so the text is
/// the same whatever the batch's size and the statement stays prepared on each
/// connection: a `VALUES` list of the batch's length was parsed and planned afresh for
/// every batch (about one in five signed requests under load).
pub(crate) async fn remember_all_pg(
    conn: &mut diesel_async::AsyncPgConnection,
    entries: &[NonceEntry],
    now: OffsetDateTime,
) -> QueryResult<Vec<usize>> {
    use diesel::sql_types::{Array, Text};

    use crate::types::{DbUuid, PortableTimestamp, PortableUuid};
    const REMEMBER_ALL: &str = "INSERT INTO nonces (agent_id, nonce, expires_at) \
        SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) \
        ON CONFLICT (agent_id, nonce) DO UPDATE SET expires_at = excluded.expires_at \
        WHERE nonces.expires_at < $4 \
        RETURNING agent_id, nonce";
    // Bound as the other statements bind them (times to the millisecond).
    let agents: Vec<DbUuid> = entries.iter().map(|e| db_uuid(e.agent)).collect();
    let values: Vec<&str> = entries.iter().map(|e| e.nonce.as_str()).collect();
    let expiries: Vec<DbTime> = entries.iter().map(|e| DbTime(e.expires_at)).collect();
    let written: Vec<Written> = diesel::sql_query(REMEMBER_ALL)
        .bind::<Array<PortableUuid>, _>(agents)
        .bind::<Array<Text>, _>(values)
        .bind::<Array<PortableTimestamp>, _>(expiries)
        .bind::<PortableTimestamp, _>(DbTime(now))
        .reused()
        .load(conn)
        .await?;
    let written: std::collections::HashSet<(uuid::Uuid, String)> = written
        .into_iter()
        .map(|row| (row.agent_id, row.nonce))
        .collect();
    Ok(entries
        .iter()
        .enumerate()
        .filter(|(_, e)| written.contains(&(e.agent.as_uuid(), e.nonce.clone())))
        .map(|(i, _)| i)
        .collect())
}

/// A nonce [`remember_all_pg`] recorded.
#[derive(QueryableByName)]
struct Written {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    agent_id: uuid::Uuid,
    #[diesel(sql_type = diesel::sql_types::Text)]
    nonce: String,
}
