//! [`LedgerTx`]: what a transaction reads and writes of money and reputation: the ledger,
//! the treasury and reputation events.

use async_trait::async_trait;

use crate::model::{LedgerEntry, OrgId, ReputationEvent, Treasury, TreasuryEntry};
use crate::ports::{Lock, RepositoryError};

/// Money and reputation: the ledger, the treasury and reputation events. Part of
/// [`Transaction`](crate::ports::Transaction); every method is scoped to one organization
/// except where it says otherwise.
#[async_trait]
pub trait LedgerTx: Send {
    /// Appends movements of credits.
    async fn insert_ledger_entries(
        &mut self,
        entries: &[LedgerEntry],
    ) -> Result<(), RepositoryError>;

    /// The organization's treasury (decision D-101). With [`Lock::Update`] its row is
    /// created at 0 when missing and locked until the commit (after any task and agent
    /// rows: the treasury is always locked last); otherwise a missing row reads as 0.
    async fn treasury(&mut self, org: OrgId, lock: Lock) -> Result<Treasury, RepositoryError>;

    /// Stores the treasury's new balance (its row was locked with [`Lock::Update`]).
    async fn update_treasury(&mut self, treasury: &Treasury) -> Result<(), RepositoryError>;

    /// Appends movements of the treasury.
    async fn insert_treasury_entries(
        &mut self,
        entries: &[TreasuryEntry],
    ) -> Result<(), RepositoryError>;

    /// Appends changes of reputation.
    async fn insert_reputation_events(
        &mut self,
        events: &[ReputationEvent],
    ) -> Result<(), RepositoryError>;
}
