//! Replay protection that costs a signed request almost nothing: concurrent nonce
//! records are written together, in one statement (PostgreSQL) or one transaction
//! (SQLite), by a single writer task. The store stays exact and shared: a nonce is
//! recorded in the database before its request is accepted, so every instance refuses
//! it for as long as it is remembered.

use std::collections::HashSet;

use async_trait::async_trait;
use muster_domain::model::AgentId;
use muster_domain::ports::{NonceOutcome, NonceStore, RepositoryError};
use time::OffsetDateTime;
use tokio::sync::{mpsc, oneshot};

use crate::Database;
use crate::conn::PooledConn;
use crate::error::from_diesel;

use super::queries::{self as nonces, NonceEntry};

/// The most records written together.
const MAX_BATCH: usize = 512;

/// How many requests may wait for the writer before new ones wait to enqueue.
const QUEUE: usize = 8192;

/// One request waiting for its nonce to be recorded.
struct Pending {
    entry: NonceEntry,
    now: OffsetDateTime,
    reply: oneshot::Sender<Result<NonceOutcome, RepositoryError>>,
}

/// A [`NonceStore`] that hands records to a writer task, which writes whatever has
/// queued up since its last write as one batch (group commit). Cheap to clone.
#[derive(Debug, Clone)]
pub struct NonceBatcher {
    db: Database,
    queue: mpsc::Sender<Pending>,
}

impl NonceBatcher {
    /// Starts the writer (on SQLite on the database's writer thread, on PostgreSQL on
    /// the current Tokio runtime); it stops when every clone of the batcher is dropped.
    pub fn spawn(db: Database) -> Self {
        let (queue, inbox) = mpsc::channel(QUEUE);
        db.spawn_writing(write_batches(db.clone(), inbox));
        Self { db, queue }
    }
}

#[async_trait]
impl NonceStore for NonceBatcher {
    async fn remember(
        &self,
        agent: AgentId,
        nonce: &str,
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> Result<NonceOutcome, RepositoryError> {
        let (reply, answer) = oneshot::channel();
        let pending = Pending {
            entry: NonceEntry {
                agent,
                nonce: nonce.to_owned(),
                expires_at,
            },
            now,
            reply,
        };
        self.queue
            .send(pending)
            .await
            .map_err(|_| RepositoryError::unavailable("the nonce writer has stopped"))?;
        answer
            .await
            .map_err(|_| RepositoryError::unavailable("the nonce writer has stopped"))?
    }

    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, RepositoryError> {
        self.db.purge_expired(now).await
    }
}

/// The writer: waits for a first record, takes every other one already queued (up to
/// [`MAX_BATCH`]), writes them together and answers each.
async fn write_batches(db: Database, mut inbox: mpsc::Receiver<Pending>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while inbox.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let outcomes = write_batch(&db, &batch).await;
        for (pending, outcome) in batch.drain(..).zip(outcomes) {
            // The requester may have gone away; its nonce is recorded all the same.
            let _ = pending.reply.send(outcome);
        }
    }
}

/// Records the batch; one outcome per pending record, in order. A nonce that appears
/// twice in one batch is a replay racing its first use: the first occurrence is
/// written, the others are replays.
async fn write_batch(
    db: &Database,
    batch: &[Pending],
) -> Vec<Result<NonceOutcome, RepositoryError>> {
    let mut seen = HashSet::with_capacity(batch.len());
    let mut unique = Vec::with_capacity(batch.len());
    let mut first_use = Vec::with_capacity(batch.len());
    for pending in batch {
        let key = (pending.entry.agent, pending.entry.nonce.as_str());
        if seen.insert(key) {
            unique.push(pending.entry.clone());
            first_use.push(Some(unique.len() - 1));
        } else {
            first_use.push(None);
        }
    }
    let now = batch
        .iter()
        .map(|p| p.now)
        .min()
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    match record(db, &unique, now).await {
        Ok(fresh) => first_use
            .into_iter()
            .map(|slot| {
                Ok(match slot {
                    Some(index) if fresh.contains(&index) => NonceOutcome::Fresh,
                    _ => NonceOutcome::Replayed,
                })
            })
            .collect(),
        Err(err) => {
            // Every waiting request answers 503 with the cause in its log line.
            let reason = format!("{err}: {}", source_text(&err));
            batch
                .iter()
                .map(|_| Err(RepositoryError::unavailable(reason.clone())))
                .collect()
        }
    }
}

/// Writes distinct records; the indexes of those that were recorded (fresh).
async fn record(
    db: &Database,
    entries: &[NonceEntry],
    now: OffsetDateTime,
) -> Result<HashSet<usize>, RepositoryError> {
    let mut pooled = db.pooled_for_write().await?;
    let fresh = match &mut *pooled {
        PooledConn::Pg(conn) => nonces::remember_all_pg(conn, entries, now)
            .await
            .map_err(from_diesel)?,
        PooledConn::Sqlite(conn) => {
            let entries = entries.to_vec();
            conn.spawn_blocking(move |sync| nonces::remember_all_sqlite(sync, &entries, now))
                .await
                .map_err(from_diesel)?
        }
    };
    Ok(fresh.into_iter().collect())
}

/// The cause of `err`, for the copies handed to each waiting request.
fn source_text(err: &RepositoryError) -> String {
    std::error::Error::source(err).map_or_else(String::new, ToString::to_string)
}
