//! [`KeysTx`]: what a transaction reads and writes of aPI keys and inbound webhook keys.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::model::{ApiKey, ApiKeyId, InboundKey, InboundKeyId, OrgId, UserId};
use crate::ports::{Lock, RepositoryError};

/// API keys and inbound webhook keys. Part of [`Transaction`](crate::ports::Transaction);
/// every method is scoped to one organization except where it says otherwise.
#[async_trait]
pub trait KeysTx: Send {
    /// Stores a new API key.
    async fn insert_api_key(&mut self, key: &ApiKey) -> Result<(), RepositoryError>;

    /// Deletes the key `id` if `user` of `org` owns it; the deleted key, or `None`.
    async fn delete_api_key(
        &mut self,
        org: OrgId,
        user: UserId,
        id: ApiKeyId,
    ) -> Result<Option<ApiKey>, RepositoryError>;

    /// The inbound webhook key record, if it is in `org`.
    async fn inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
        lock: Lock,
    ) -> Result<Option<InboundKey>, RepositoryError>;

    /// Stores a new inbound webhook key.
    async fn insert_inbound_key(&mut self, key: &InboundKey) -> Result<(), RepositoryError>;

    /// Stores every field of an inbound webhook key; `false` when it is gone.
    async fn update_inbound_key(&mut self, key: &InboundKey) -> Result<bool, RepositoryError>;

    /// Deletes an inbound webhook key; `false` when it is gone.
    async fn delete_inbound_key(
        &mut self,
        org: OrgId,
        id: InboundKeyId,
    ) -> Result<bool, RepositoryError>;

    /// Notes that the key created tasks at `at`.
    async fn touch_inbound_key(
        &mut self,
        id: InboundKeyId,
        at: OffsetDateTime,
    ) -> Result<(), RepositoryError>;
}
