use async_trait::async_trait;

use super::RepositoryError;
use crate::model::{InboundKey, InboundKeyId, OrgId};

/// Reads of inbound webhook keys.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait InboundKeyRepository: Send + Sync {
    /// The organization's keys, newest first.
    async fn list(&self, org: OrgId) -> Result<Vec<InboundKey>, RepositoryError>;

    /// The key record `id`, if it is in `org`.
    async fn get(
        &self,
        org: OrgId,
        id: InboundKeyId,
    ) -> Result<Option<InboundKey>, RepositoryError>;

    /// The record whose key is `key`, in any organization (the key is the credential).
    async fn by_key(&self, key: &str) -> Result<Option<InboundKey>, RepositoryError>;
}
