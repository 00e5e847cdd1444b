//! The routines' writes (decision D-108): routines and the due times they fired for.

use async_trait::async_trait;
use muster_domain::model::{OrgId, Routine, RoutineFiring, RoutineId};
use muster_domain::ports::{Lock, RepositoryError, RoutinesTx, UniqueKey};

use super::{MemoryTransaction, duplicate, insert_new};

/// A due time as a key: whole milliseconds, as the databases store it.
fn instant_key(at: time::OffsetDateTime) -> i128 {
    at.unix_timestamp_nanos() / 1_000_000
}

#[async_trait]
impl RoutinesTx for MemoryTransaction {
    async fn routine(
        &mut self,
        org: OrgId,
        id: RoutineId,
        _lock: Lock,
    ) -> Result<Option<Routine>, RepositoryError> {
        Ok(self.state.routines.in_org(&id.as_uuid(), org).cloned())
    }

    async fn insert_routine(&mut self, routine: &Routine) -> Result<(), RepositoryError> {
        insert_new(
            &mut self.state.routines,
            routine.id.as_uuid(),
            routine.clone(),
            "routines",
        )
    }

    async fn update_routine(
        &mut self,
        routine: &Routine,
        expected_version: i64,
    ) -> Result<bool, RepositoryError> {
        let stored = self
            .state
            .routines
            .row_mut(&routine.id.as_uuid())
            .filter(|r| r.org_id == routine.org_id && r.version == expected_version);
        Ok(stored.map(|r| *r = routine.clone()).is_some())
    }

    async fn delete_routine(&mut self, org: OrgId, id: RoutineId) -> Result<bool, RepositoryError> {
        if self.state.routines.in_org(&id.as_uuid(), org).is_none() {
            return Ok(false);
        }
        self.state.routines.take(&id.as_uuid());
        self.state
            .routine_firings
            .retain(|(routine, _), _| *routine != id.as_uuid());
        Ok(true)
    }

    async fn insert_routine_firing(
        &mut self,
        firing: &RoutineFiring,
    ) -> Result<(), RepositoryError> {
        let key = (firing.routine_id.as_uuid(), instant_key(firing.due_at));
        if self.state.routine_firings.contains_key(&key) {
            return duplicate(UniqueKey::RoutineFiring);
        }
        self.state.routine_firings.put(key, firing.clone());
        Ok(())
    }
}
