use diesel::prelude::*;
use muster_domain::model::{OrgId, TaskId, Treasury, TreasuryEntry, TreasuryEntryId, TreasuryKind};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::schema::{treasuries, treasury_entries};
use crate::types::{DbTime, DbUuid};

/// An organization's treasury (decision D-101); `updated_at` NULL while it never moved.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = treasuries, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct TreasuryRow {
    pub org_id: DbUuid,
    pub balance: i64,
    pub updated_at: Option<DbTime>,
}

impl From<&Treasury> for TreasuryRow {
    fn from(t: &Treasury) -> Self {
        Self {
            org_id: DbUuid(t.org_id.as_uuid()),
            balance: t.balance,
            updated_at: t.updated_at.map(DbTime),
        }
    }
}

impl From<TreasuryRow> for Treasury {
    fn from(row: TreasuryRow) -> Self {
        Self {
            org_id: OrgId::from_uuid(row.org_id.0),
            balance: row.balance,
            updated_at: row.updated_at.map(|t| t.0),
        }
    }
}

/// One movement of a treasury.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = treasury_entries, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct TreasuryEntryRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub kind: String,
    pub amount: i64,
    pub balance_after: i64,
    pub reason: Option<String>,
    pub task_id: Option<DbUuid>,
    pub actor_id: Option<DbUuid>,
    pub created_at: DbTime,
}

impl From<&TreasuryEntry> for TreasuryEntryRow {
    fn from(e: &TreasuryEntry) -> Self {
        Self {
            id: DbUuid(e.id.as_uuid()),
            org_id: DbUuid(e.org_id.as_uuid()),
            kind: e.kind.as_str().to_owned(),
            amount: e.amount,
            balance_after: e.balance_after,
            reason: e.reason.clone(),
            task_id: e.task_id.map(|id| DbUuid(id.as_uuid())),
            actor_id: e.actor_id.map(DbUuid),
            created_at: DbTime(e.created_at),
        }
    }
}

impl TryFrom<TreasuryEntryRow> for TreasuryEntry {
    type Error = RepositoryError;

    fn try_from(row: TreasuryEntryRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: TreasuryEntryId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            kind: TreasuryKind::parse(&row.kind)
                .ok_or_else(|| corrupt("treasury entry kind", &row.kind))?,
            amount: row.amount,
            balance_after: row.balance_after,
            reason: row.reason,
            task_id: row.task_id.map(|id| TaskId::from_uuid(id.0)),
            actor_id: row.actor_id.map(|id| id.0),
            created_at: row.created_at.0,
        })
    }
}
