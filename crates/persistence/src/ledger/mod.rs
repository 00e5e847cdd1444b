//! Credits and reputation: the credit ledger (`credit_ledger`), reputation events
//! (`reputation_events`) and each organization's treasury (`treasuries`,
//! `treasury_entries`); the rows, their queries, and the domain's `TreasuryRepository`
//! and `LedgerTx` on them. (An agent's ledger is read through `AgentRepository`.)

pub(crate) mod queries;
mod repo;
mod rows;
mod treasuries;
mod tx;
