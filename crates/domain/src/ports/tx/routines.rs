//! [`RoutinesTx`]: what a transaction reads and writes of routines and their firings
//! (issue 66, decision D-108).

use async_trait::async_trait;

use crate::model::{OrgId, Routine, RoutineFiring, RoutineId};
use crate::ports::{Lock, RepositoryError};

/// Routines and the due times they fired for. Part of
/// [`Transaction`](crate::ports::Transaction); every method is scoped to one
/// organization.
#[async_trait]
pub trait RoutinesTx: Send {
    /// The routine `id` of `org`, held with `lock` until the end of the transaction.
    async fn routine(
        &mut self,
        org: OrgId,
        id: RoutineId,
        lock: Lock,
    ) -> Result<Option<Routine>, RepositoryError>;

    /// Stores a new routine.
    async fn insert_routine(&mut self, routine: &Routine) -> Result<(), RepositoryError>;

    /// Replaces the stored routine with `routine` (whose `version` is already bumped)
    /// only if the stored version is still `expected_version`; `false` when it is not.
    async fn update_routine(
        &mut self,
        routine: &Routine,
        expected_version: i64,
    ) -> Result<bool, RepositoryError>;

    /// Deletes the routine `id` of `org` with its firings; whether it was there.
    async fn delete_routine(&mut self, org: OrgId, id: RoutineId) -> Result<bool, RepositoryError>;

    /// Records that a routine fired for a due time. A second firing of the same routine
    /// for the same due time is refused by the store
    /// ([`UniqueKey::RoutineFiring`](crate::ports::UniqueKey::RoutineFiring)), whichever
    /// instance wrote it.
    async fn insert_routine_firing(
        &mut self,
        firing: &RoutineFiring,
    ) -> Result<(), RepositoryError>;
}
