use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use muster_domain::model::AgentId;
use muster_domain::ports::{NonceOutcome, NonceStore, RepositoryError};
use time::OffsetDateTime;

use crate::Database;
use crate::db::detached;
use crate::error::from_diesel;
use crate::macros::{transaction, with_conn};
use crate::rows::db_uuid;
use crate::schema::nonces;
use crate::types::DbTime;

#[async_trait]
impl NonceStore for Database {
    async fn remember(
        &self,
        agent: AgentId,
        nonce: &str,
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> Result<NonceOutcome, RepositoryError> {
        let db = self.clone();
        let agent = db_uuid(agent.as_uuid());
        let nonce = nonce.to_owned();
        detached(async move {
            transaction!(db, conn => {
                // An expired record of the same nonce no longer counts as a use.
                diesel::delete(
                    nonces::table
                        .filter(nonces::agent_id.eq(agent))
                        .filter(nonces::nonce.eq(&nonce))
                        .filter(nonces::expires_at.lt(DbTime(now))),
                )
                .execute(conn)
                .await?;
                let inserted = diesel::insert_into(nonces::table)
                    .values((
                        nonces::agent_id.eq(agent),
                        nonces::nonce.eq(&nonce),
                        nonces::expires_at.eq(DbTime(expires_at)),
                    ))
                    .on_conflict_do_nothing()
                    .execute(conn)
                    .await?;
                Ok(if inserted == 1 { NonceOutcome::Fresh } else { NonceOutcome::Replayed })
            })
        })
        .await
    }

    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, RepositoryError> {
        let deleted = with_conn!(self, conn, _Db => {
            diesel::delete(nonces::table.filter(nonces::expires_at.lt(DbTime(now))))
                .execute(conn)
                .await
                .map_err(from_diesel)?
        });
        Ok(deleted as u64)
    }
}
