//! Reads of routines (issue 66, decision D-108); they change through a
//! [`Transaction`](super::Transaction).

use async_trait::async_trait;
use time::OffsetDateTime;

use super::RepositoryError;
use crate::model::{OrgId, Routine, RoutineId};

/// Routines, read outside a transaction.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait RoutineRepository: Send + Sync {
    /// The routine `id` of `org`.
    async fn routine(&self, org: OrgId, id: RoutineId) -> Result<Option<Routine>, RepositoryError>;

    /// Up to `limit` routines of `org`, newest first, older than the `before` cursor when
    /// given.
    async fn routines(
        &self,
        org: OrgId,
        before: Option<RoutineId>,
        limit: u32,
    ) -> Result<Vec<Routine>, RepositoryError>;

    /// Up to `limit` enabled routines of every organization due at `now` (their next
    /// due time is at or before it), the longest due first.
    async fn due_routines(
        &self,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<(OrgId, RoutineId)>, RepositoryError>;
}
