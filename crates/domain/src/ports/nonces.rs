use async_trait::async_trait;
use time::OffsetDateTime;

use super::RepositoryError;
use crate::model::AgentId;

/// Whether a nonce was new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonceOutcome {
    /// Not seen in its retention window; now recorded.
    Fresh,
    /// Already recorded for this agent and not yet expired: a replay.
    Replayed,
}

/// Replay protection for signed requests, shared by every server instance.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait NonceStore: Send + Sync {
    /// Records `nonce` for `agent` until `expires_at`, atomically with the check for an
    /// unexpired earlier use. An expired earlier record counts as absent.
    async fn remember(
        &self,
        agent: AgentId,
        nonce: &str,
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> Result<NonceOutcome, RepositoryError>;

    /// Deletes every record that expired before `now`; returns how many. Not one
    /// transaction: a store may delete in batches (the database does, so as not to hold
    /// its writer for long), and an error may come after some batches were deleted.
    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, RepositoryError>;
}
