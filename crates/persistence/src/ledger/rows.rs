//! The rows of `credit_ledger` and `reputation_events`, and their conversions to and from
//! the domain model.

use diesel::prelude::*;
use muster_domain::model::{
    AgentId, CreditKind, LedgerEntry, LedgerEntryId, OrgId, ReputationEvent, ReputationEventId,
    ReputationKind, TaskId,
};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::schema::{credit_ledger, reputation_events};
use crate::types::{DbTime, DbUuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = credit_ledger, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct LedgerRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub agent_id: DbUuid,
    pub kind: String,
    pub amount: i64,
    pub balance_after: i64,
    pub reason: Option<String>,
    pub task_id: Option<DbUuid>,
    pub counterparty_id: Option<DbUuid>,
    pub created_at: DbTime,
}

impl From<&LedgerEntry> for LedgerRow {
    fn from(e: &LedgerEntry) -> Self {
        Self {
            id: DbUuid(e.id.as_uuid()),
            org_id: DbUuid(e.org_id.as_uuid()),
            agent_id: DbUuid(e.agent_id.as_uuid()),
            kind: e.kind.as_str().to_owned(),
            amount: e.amount,
            balance_after: e.balance_after,
            reason: e.reason.clone(),
            task_id: e.task_id.map(|id| DbUuid(id.as_uuid())),
            counterparty_id: e.counterparty_id.map(|id| DbUuid(id.as_uuid())),
            created_at: DbTime(e.created_at),
        }
    }
}

impl TryFrom<LedgerRow> for LedgerEntry {
    type Error = RepositoryError;

    fn try_from(row: LedgerRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: LedgerEntryId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            agent_id: AgentId::from_uuid(row.agent_id.0),
            kind: CreditKind::parse(&row.kind).ok_or_else(|| corrupt("ledger kind", &row.kind))?,
            amount: row.amount,
            balance_after: row.balance_after,
            reason: row.reason,
            task_id: row.task_id.map(|id| TaskId::from_uuid(id.0)),
            counterparty_id: row.counterparty_id.map(|id| AgentId::from_uuid(id.0)),
            created_at: row.created_at.0,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = reputation_events, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct ReputationRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub agent_id: DbUuid,
    pub kind: String,
    pub amount: i32,
    pub reason: String,
    pub task_id: Option<DbUuid>,
    pub created_at: DbTime,
}

impl From<&ReputationEvent> for ReputationRow {
    fn from(e: &ReputationEvent) -> Self {
        Self {
            id: DbUuid(e.id.as_uuid()),
            org_id: DbUuid(e.org_id.as_uuid()),
            agent_id: DbUuid(e.agent_id.as_uuid()),
            kind: e.kind.as_str().to_owned(),
            amount: e.amount,
            reason: e.reason.clone(),
            task_id: e.task_id.map(|id| DbUuid(id.as_uuid())),
            created_at: DbTime(e.created_at),
        }
    }
}

impl TryFrom<ReputationRow> for ReputationEvent {
    type Error = RepositoryError;

    fn try_from(row: ReputationRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: ReputationEventId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            agent_id: AgentId::from_uuid(row.agent_id.0),
            kind: ReputationKind::parse(&row.kind)
                .ok_or_else(|| corrupt("reputation kind", &row.kind))?,
            amount: row.amount,
            reason: row.reason,
            task_id: row.task_id.map(|id| TaskId::from_uuid(id.0)),
            created_at: row.created_at.0,
        })
    }
}
