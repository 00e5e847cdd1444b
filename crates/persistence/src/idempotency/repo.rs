//! The [`IdempotencyStore`] port: keys and their kept responses in `idempotency_keys`,
//! claimed by an insert that only one request can make.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{Begun, IdempotencyKey, StoredResponse};
use muster_domain::ports::{IdempotencyStore, RepositoryError};
use time::OffsetDateTime;

use crate::Database;
use crate::conn::{Conn, on_conn};
use crate::error::{corrupt, from_diesel};
use crate::purge::{delete_oldest, purge_in_batches};
use crate::schema::idempotency_keys as keys;
use crate::types::DbTime;

/// An `idempotency_keys` row.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = keys, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
struct KeyRow {
    scope: String,
    method: String,
    path: String,
    key: String,
    fingerprint: Vec<u8>,
    status_code: Option<i32>,
    content_type: Option<String>,
    response_body: Option<Vec<u8>>,
    created_at: DbTime,
}

macro_rules! the_key {
    ($key:expr) => {
        keys::table
            .filter(keys::scope.eq(&$key.scope))
            .filter(keys::method.eq(&$key.method))
            .filter(keys::path.eq(&$key.path))
            .filter(keys::key.eq(&$key.key))
    };
}

#[async_trait]
impl IdempotencyStore for Database {
    #[tracing::instrument(level = "debug", name = "db.idempotency.begin", skip_all, fields(otel.kind = "client"))]
    async fn begin(
        &self,
        key: &IdempotencyKey,
        fingerprint: &[u8],
        now: OffsetDateTime,
    ) -> Result<Begun, RepositoryError> {
        let mut pooled = self.pooled_for_write().await?;
        let mut conn = pooled.conn();
        let row = KeyRow {
            scope: key.scope.clone(),
            method: key.method.clone(),
            path: key.path.clone(),
            key: key.key.clone(),
            fingerprint: fingerprint.to_vec(),
            status_code: None,
            content_type: None,
            response_body: None,
            created_at: DbTime(now),
        };
        let insert = diesel::insert_into(keys::table)
            .values(row)
            .on_conflict_do_nothing();
        let inserted = on_conn!(&mut conn, c => insert.execute(c).await).map_err(from_diesel)?;
        if inserted == 1 {
            return Ok(Begun::Claimed);
        }
        let found: Option<KeyRow> = on_conn!(&mut conn, c => {
            the_key!(key).select(KeyRow::as_select()).get_result(c).await.optional()
        })
        .map_err(from_diesel)?;
        let Some(found) = found else {
            // Let go between our insert and our read: the retry will claim it.
            return Ok(Begun::InProgress);
        };
        if found.fingerprint != fingerprint {
            return Ok(Begun::Mismatch);
        }
        let Some(status) = found.status_code else {
            return Ok(Begun::InProgress);
        };
        Ok(Begun::Replay(StoredResponse {
            status: u16::try_from(status).map_err(|e| corrupt("idempotency status", e))?,
            content_type: found.content_type,
            body: found.response_body.unwrap_or_default(),
        }))
    }

    #[tracing::instrument(level = "debug", name = "db.idempotency.finish", skip_all, fields(otel.kind = "client"))]
    async fn finish(
        &self,
        key: &IdempotencyKey,
        response: &StoredResponse,
    ) -> Result<(), RepositoryError> {
        let mut pooled = self.pooled_for_write().await?;
        let values = (
            keys::status_code.eq(Some(i32::from(response.status))),
            keys::content_type.eq(response.content_type.as_deref()),
            keys::response_body.eq(Some(response.body.as_slice())),
        );
        on_conn!(&mut pooled.conn(), c => {
            diesel::update(the_key!(key)).set(values).execute(c).await
        })
        .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", name = "db.idempotency.abandon", skip_all, fields(otel.kind = "client"))]
    async fn abandon(&self, key: &IdempotencyKey) -> Result<(), RepositoryError> {
        let mut pooled = self.pooled_for_write().await?;
        on_conn!(&mut pooled.conn(), c => {
            diesel::delete(the_key!(key).filter(keys::status_code.is_null()))
                .execute(c)
                .await
        })
        .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", name = "db.idempotency.purge", skip_all, fields(otel.kind = "client"))]
    async fn purge(&self, before: OffsetDateTime) -> Result<u64, RepositoryError> {
        purge_in_batches!(self, conn => purge_batch(conn, before))
    }
}

/// Deletes the oldest of the keys created before `before`: a batch of a purge (see
/// [`crate::purge`]); how many.
async fn purge_batch(conn: &mut Conn<'_>, before: OffsetDateTime) -> QueryResult<usize> {
    delete_oldest!(conn, keys::table, keys::created_at, before)
}
