//! Shapes of budgets and credits (decisions D-57 to D-61).

use muster_domain::model::{AgentId, CreditKind, LedgerEntry, Reason};
use muster_domain::service::agent_limits::budget_limit;
use muster_domain::service::{BudgetStatus, CanSpend, CreditAmount, Transfer};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use muster_domain::ValidationError;

fn reason(value: Option<String>) -> Result<Option<Reason>, ValidationError> {
    value.map(Reason::new).transpose()
}

/// Body of `PATCH /agents/:id/budget`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BudgetRequest {
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub budget_period_limit: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_current_period: Option<bool>,
}

impl BudgetRequest {
    /// The checked limit and whether to start the period afresh.
    pub fn into_parts(self) -> Result<(i64, bool), ValidationError> {
        Ok((
            budget_limit(self.budget_period_limit)?,
            self.reset_current_period.unwrap_or(false),
        ))
    }
}

/// Query of `GET /agents/:id/budget/can-spend`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct CanSpendQuery {
    #[cfg_attr(feature = "openapi", param(minimum = 1))]
    pub amount: i64,
}

impl CanSpendQuery {
    /// The amount: a positive integer (decision D-60).
    pub fn amount(&self) -> Result<i64, ValidationError> {
        if self.amount < 1 {
            return Err(ValidationError::new("amount must be a positive integer"));
        }
        Ok(self.amount)
    }
}

/// Body of `POST /agents/:id/credits/grant`, `POST /agents/credits/spend` and
/// `POST /org/treasury/grant`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AmountRequest {
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1_000_000_000))]
    pub amount: i64,
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl AmountRequest {
    /// The checked amount and reason.
    pub fn into_parts(self) -> Result<(CreditAmount, Option<Reason>), ValidationError> {
        Ok((CreditAmount::new(self.amount)?, reason(self.reason)?))
    }
}

/// Body of `POST /agents/credits/transfer`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TransferRequest {
    pub to_agent_id: Uuid,
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1_000_000_000))]
    pub amount: i64,
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl TransferRequest {
    /// The checked receiver, amount and reason.
    pub fn into_parts(self) -> Result<(AgentId, CreditAmount, Option<Reason>), ValidationError> {
        Ok((
            AgentId::from_uuid(self.to_agent_id),
            CreditAmount::new(self.amount)?,
            reason(self.reason)?,
        ))
    }
}

/// The budget status object (decision D-57); `agentId` is the agent's UUID.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BudgetResponse {
    pub agent_id: Uuid,
    pub current_balance: i64,
    pub budget_period_limit: Option<i64>,
    pub budget_period_spent: i64,
    pub budget_remaining: Option<i64>,
    #[serde(with = "super::time::rfc3339")]
    pub budget_period_start: OffsetDateTime,
    pub utilization_percent: Option<i64>,
}

impl From<BudgetStatus> for BudgetResponse {
    fn from(b: BudgetStatus) -> Self {
        Self {
            agent_id: b.agent_id.as_uuid(),
            current_balance: b.current_balance,
            budget_period_limit: b.budget_period_limit,
            budget_period_spent: b.budget_period_spent,
            budget_remaining: b.budget_remaining,
            budget_period_start: b.budget_period_start,
            utilization_percent: b.utilization_percent,
        }
    }
}

/// `{canSpend, remaining}` (decision D-60).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CanSpendResponse {
    pub can_spend: bool,
    pub remaining: i64,
}

impl From<CanSpend> for CanSpendResponse {
    fn from(c: CanSpend) -> Self {
        Self {
            can_spend: c.can_spend,
            remaining: c.remaining,
        }
    }
}

/// `{agentId, currentBalance}`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BalanceResponse {
    /// The agent's UUID.
    pub agent_id: Uuid,
    /// Its credits.
    pub current_balance: i64,
}

impl From<&muster_domain::model::Agent> for BalanceResponse {
    fn from(agent: &muster_domain::model::Agent) -> Self {
        Self {
            agent_id: agent.id.as_uuid(),
            current_balance: agent.current_balance,
        }
    }
}

/// One ledger row on the wire.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LedgerResponse {
    pub id: Uuid,
    pub agent_id: Uuid,
    #[serde(rename = "type")]
    pub kind: CreditKind,
    pub amount: i64,
    pub balance_after: i64,
    pub reason: Option<String>,
    pub task_id: Option<Uuid>,
    pub counterparty_id: Option<Uuid>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<LedgerEntry> for LedgerResponse {
    fn from(e: LedgerEntry) -> Self {
        Self {
            id: e.id.as_uuid(),
            agent_id: e.agent_id.as_uuid(),
            kind: e.kind,
            amount: e.amount,
            balance_after: e.balance_after,
            reason: e.reason,
            task_id: e.task_id.map(muster_domain::model::TaskId::as_uuid),
            counterparty_id: e.counterparty_id.map(AgentId::as_uuid),
            created_at: e.created_at,
        }
    }
}

/// The result of a transfer (decision D-59).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TransferResponse {
    pub transfer_id: Uuid,
    pub from_agent_id: Uuid,
    pub to_agent_id: Uuid,
    pub amount: i64,
    pub reason: Option<String>,
    pub from_balance: i64,
    pub to_balance: i64,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<Transfer> for TransferResponse {
    fn from(t: Transfer) -> Self {
        Self {
            transfer_id: t.transfer_id,
            from_agent_id: t.from_agent_id.as_uuid(),
            to_agent_id: t.to_agent_id.as_uuid(),
            amount: t.amount,
            reason: t.reason,
            from_balance: t.from_balance,
            to_balance: t.to_balance,
            created_at: t.created_at,
        }
    }
}
