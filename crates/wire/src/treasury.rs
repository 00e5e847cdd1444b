//! Shapes of the organization's treasury (decision D-101). Its grant takes the body of
//! an agent grant, [`AmountRequest`](super::agent_money::AmountRequest).

use muster_domain::model::{TaskId, Treasury, TreasuryEntry, TreasuryKind};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// `{orgId, balance, updatedAt}`: the credits the organization holds to pay the rewards
/// of the tasks people, API keys and integrations create.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TreasuryResponse {
    /// The organization's UUID.
    pub org_id: Uuid,
    /// Credits held, never below 0.
    pub balance: i64,
    /// When it last moved; `null` while it never did.
    #[serde(with = "super::time::option")]
    pub updated_at: Option<OffsetDateTime>,
}

impl From<Treasury> for TreasuryResponse {
    fn from(t: Treasury) -> Self {
        Self {
            org_id: t.org_id.as_uuid(),
            balance: t.balance,
            updated_at: t.updated_at,
        }
    }
}

/// One movement of the treasury, with the balance it left.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TreasuryEntryResponse {
    pub id: Uuid,
    pub org_id: Uuid,
    /// `granted` (in), `escrowed` (out, into a task's escrow) or `refunded` (back from one).
    #[serde(rename = "type")]
    pub kind: TreasuryKind,
    /// Signed: positive in, negative out.
    pub amount: i64,
    pub balance_after: i64,
    pub reason: Option<String>,
    /// The task whose escrow it fed or came back from.
    pub task_id: Option<Uuid>,
    /// Who granted it (a user or an agent); `null` for the service itself.
    pub actor_id: Option<Uuid>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<TreasuryEntry> for TreasuryEntryResponse {
    fn from(e: TreasuryEntry) -> Self {
        Self {
            id: e.id.as_uuid(),
            org_id: e.org_id.as_uuid(),
            kind: e.kind,
            amount: e.amount,
            balance_after: e.balance_after,
            reason: e.reason,
            task_id: e.task_id.map(TaskId::as_uuid),
            actor_id: e.actor_id,
            created_at: e.created_at,
        }
    }
}
