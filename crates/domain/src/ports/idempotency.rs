use async_trait::async_trait;
use time::OffsetDateTime;

use super::RepositoryError;
use crate::model::{Begun, IdempotencyKey, StoredResponse};

/// Where `Idempotency-Key`s and their responses are kept, shared by every instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims `key` for a request whose body has `fingerprint`, or says why not: the
    /// response to replay, another request holding it, or another body.
    async fn begin(
        &self,
        key: &IdempotencyKey,
        fingerprint: &[u8],
        now: OffsetDateTime,
    ) -> Result<Begun, RepositoryError>;

    /// Keeps the response of a claimed key.
    async fn finish(
        &self,
        key: &IdempotencyKey,
        response: &StoredResponse,
    ) -> Result<(), RepositoryError>;

    /// Lets a claimed key go (its request failed on our side): a retry does it afresh.
    async fn abandon(&self, key: &IdempotencyKey) -> Result<(), RepositoryError>;

    /// Forgets keys first seen before `before`; how many. Like
    /// [`NonceStore::purge_expired`](super::NonceStore::purge_expired), possibly in
    /// batches, so an error may come after some keys were forgotten.
    async fn purge(&self, before: OffsetDateTime) -> Result<u64, RepositoryError>;
}
