//! [`LedgerTx`] on a unit of work's transaction: the credit ledger, reputation events and
//! treasuries.

use async_trait::async_trait;
use muster_domain::model::{LedgerEntry, OrgId, ReputationEvent, Treasury, TreasuryEntry};
use muster_domain::ports::{LedgerTx, Lock, RepositoryError};

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::rows::{LedgerRow, ReputationRow};
use super::treasuries::{TreasuryEntryRow, TreasuryRow};
use super::{queries as ledger, treasuries};

#[async_trait]
impl LedgerTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.insert_ledger_entries", skip_all, fields(otel.kind = "client"))]
    async fn insert_ledger_entries(
        &mut self,
        entries: &[LedgerEntry],
    ) -> Result<(), RepositoryError> {
        let rows: Vec<LedgerRow> = entries.iter().map(LedgerRow::from).collect();
        ledger::insert_entries(&mut self.conn, &rows)
            .await
            .map_err(from_diesel)
    }

    /// With [`Lock::Update`] a missing row is created at 0 and locked (see
    /// [`treasuries::lock`]); otherwise a missing row reads as the empty treasury.
    #[tracing::instrument(level = "debug", name = "db.tx.treasury", skip_all, fields(otel.kind = "client"))]
    async fn treasury(&mut self, org: OrgId, lock: Lock) -> Result<Treasury, RepositoryError> {
        if lock == Lock::Update {
            let row = treasuries::lock(&mut self.conn, org)
                .await
                .map_err(from_diesel)?;
            return Ok(Treasury::from(row));
        }
        let row = treasuries::find(&mut self.conn, org, Some(lock))
            .await
            .map_err(from_diesel)?;
        Ok(row.map_or_else(|| Treasury::empty(org), Treasury::from))
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_treasury", skip_all, fields(otel.kind = "client"))]
    async fn update_treasury(&mut self, treasury: &Treasury) -> Result<(), RepositoryError> {
        treasuries::save(&mut self.conn, TreasuryRow::from(treasury))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_treasury_entries", skip_all, fields(otel.kind = "client"))]
    async fn insert_treasury_entries(
        &mut self,
        entries: &[TreasuryEntry],
    ) -> Result<(), RepositoryError> {
        let rows: Vec<TreasuryEntryRow> = entries.iter().map(TreasuryEntryRow::from).collect();
        treasuries::insert_entries(&mut self.conn, &rows)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_reputation_events", skip_all, fields(otel.kind = "client"))]
    async fn insert_reputation_events(
        &mut self,
        changes: &[ReputationEvent],
    ) -> Result<(), RepositoryError> {
        let rows: Vec<ReputationRow> = changes.iter().map(ReputationRow::from).collect();
        ledger::insert_reputation(&mut self.conn, &rows)
            .await
            .map_err(from_diesel)
    }
}
