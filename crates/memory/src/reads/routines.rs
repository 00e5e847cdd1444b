//! The routines' reads: newest first, and the ones due (decision D-108).

use async_trait::async_trait;
use muster_domain::model::{OrgId, Routine, RoutineId};
use muster_domain::ports::{RepositoryError, RoutineRepository};
use time::OffsetDateTime;

use super::{first, newest_first};
use crate::MemoryStore;

#[async_trait]
impl RoutineRepository for MemoryStore {
    async fn routine(&self, org: OrgId, id: RoutineId) -> Result<Option<Routine>, RepositoryError> {
        Ok(self.snapshot().routines.in_org(&id.as_uuid(), org).cloned())
    }

    async fn routines(
        &self,
        org: OrgId,
        before: Option<RoutineId>,
        limit: u32,
    ) -> Result<Vec<Routine>, RepositoryError> {
        let state = self.snapshot();
        let routines = newest_first(&state.routines, before.map(RoutineId::as_uuid))
            .filter(|r| r.org_id == org)
            .cloned();
        Ok(first(routines, limit))
    }

    async fn due_routines(
        &self,
        now: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<(OrgId, RoutineId)>, RepositoryError> {
        let state = self.snapshot();
        let mut due: Vec<&Routine> = state
            .routines
            .values()
            .filter(|r| r.enabled && r.next_run_at.is_some_and(|at| at <= now))
            .collect();
        due.sort_by_key(|r| (r.next_run_at, r.id));
        Ok(first(due.into_iter().map(|r| (r.org_id, r.id)), limit))
    }
}
