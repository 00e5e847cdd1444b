//! The money's writes: ledger entries, reputation events and the treasury.

use async_trait::async_trait;
use muster_domain::model::{LedgerEntry, OrgId, ReputationEvent, Treasury, TreasuryEntry};
use muster_domain::ports::{LedgerTx, Lock, RepositoryError};

use super::{MemoryTransaction, insert_each};

#[async_trait]
impl LedgerTx for MemoryTransaction {
    async fn insert_ledger_entries(
        &mut self,
        entries: &[LedgerEntry],
    ) -> Result<(), RepositoryError> {
        insert_each(
            &mut self.state.ledger,
            entries,
            |row| row.id.as_uuid(),
            "credit_ledger",
        )
    }

    async fn treasury(&mut self, org: OrgId, lock: Lock) -> Result<Treasury, RepositoryError> {
        let treasury = self
            .state
            .treasuries
            .get(&org.as_uuid())
            .cloned()
            .unwrap_or_else(|| Treasury::empty(org));
        // Locking creates the row, as the SQL adapters do.
        if lock == Lock::Update {
            self.state.treasuries.put(org.as_uuid(), treasury.clone());
        }
        Ok(treasury)
    }

    async fn update_treasury(&mut self, treasury: &Treasury) -> Result<(), RepositoryError> {
        self.state
            .treasuries
            .put(treasury.org_id.as_uuid(), treasury.clone());
        Ok(())
    }

    async fn insert_treasury_entries(
        &mut self,
        entries: &[TreasuryEntry],
    ) -> Result<(), RepositoryError> {
        insert_each(
            &mut self.state.treasury_entries,
            entries,
            |row| row.id.as_uuid(),
            "treasury_entries",
        )
    }

    async fn insert_reputation_events(
        &mut self,
        events: &[ReputationEvent],
    ) -> Result<(), RepositoryError> {
        insert_each(
            &mut self.state.reputation,
            events,
            |row| row.id.as_uuid(),
            "reputation_events",
        )
    }
}
