use async_trait::async_trait;

use super::RepositoryError;
use crate::model::{OrgId, Treasury, TreasuryEntry, TreasuryEntryId};

/// The organizations' treasuries and their ledgers (reads; they change through a
/// [`Transaction`](super::Transaction)).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TreasuryRepository: Send + Sync {
    /// The treasury of `org`; balance 0 when it never moved.
    async fn treasury(&self, org: OrgId) -> Result<Treasury, RepositoryError>;

    /// Up to `limit` movements of the treasury of `org`, newest first, older than the
    /// `before` cursor when given.
    async fn history(
        &self,
        org: OrgId,
        before: Option<TreasuryEntryId>,
        limit: u32,
    ) -> Result<Vec<TreasuryEntry>, RepositoryError>;
}
