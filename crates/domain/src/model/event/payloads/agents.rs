use serde::Serialize;
use uuid::Uuid;

use crate::model::{AgentId, AgentMode, AgentRole, Level, TaskId};

/// `agent.registered`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRegistered {
    /// The new agent's `agentId` (its handle).
    pub agent_id: String,
    /// Its role.
    pub role: AgentRole,
    /// Its level.
    pub level: Level,
}

/// `agent.spawned`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSpawned {
    /// The child's `agentId` (its handle).
    pub agent_id: String,
    /// The spawning agent.
    pub parent_id: AgentId,
    /// The child's level.
    pub level: Level,
    /// The child's mode.
    pub mode: AgentMode,
}

/// `agent.activated`, `agent.rejected`, `agent.revoked`, `agent.suspended` and
/// `agent.unsuspended`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatusChanged {
    /// The agent's `agentId` (its handle).
    pub agent_id: String,
    /// Why, when the caller said (or the runaway guard's sentence).
    pub reason: Option<String>,
    /// The breaker that suspended the agent, when the runaway guard did; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaker: Option<BreakerTripped>,
}

/// What the runaway guard measured when it suspended an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakerTripped {
    /// `action_rate` or `spend_velocity`.
    pub kind: &'static str,
    /// The count reached (writes, or credits spent), the refused change included.
    pub measured: i64,
    /// The threshold it went past.
    pub limit: i64,
    /// `minute` or `hour`: the window the threshold counts over.
    pub per: &'static str,
    /// Seconds from the window's start to the refused change.
    pub within_seconds: i64,
}

/// `guard.updated`: an organization's runaway-guard thresholds after the change (`null`
/// follows the deployment's default; `0` is off).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardUpdated {
    /// Writes per minute.
    pub actions_per_minute: Option<i64>,
    /// Credits per hour.
    pub credits_per_hour: Option<i64>,
}

/// `agent.updated`: which fields changed (camelCase names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentUpdated {
    /// The changed fields.
    pub fields: Vec<String>,
}

/// `agent.demoted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentDemoted {
    /// Level before.
    pub from_level: Level,
    /// Level after.
    pub to_level: Level,
}

/// `agent.budget_updated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentBudgetUpdated {
    /// The new period limit; `None` for no limit.
    pub budget_period_limit: Option<i64>,
}

/// `agent.capability_added`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilityAdded {
    /// The capability, lower-cased.
    pub capability: String,
    /// `basic`, `standard` or `expert`.
    pub proficiency: String,
}

/// `agent.capability_updated`.
pub type AgentCapabilityUpdated = AgentCapabilityAdded;

/// `agent.capability_removed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilityRemoved {
    /// The capability, lower-cased.
    pub capability: String,
}

/// `reputation.changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReputationChanged {
    /// The reputation event type, such as `task_completed` or `quality_bonus`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The nominal amount (negative for penalties).
    pub amount: i32,
    /// Score before (0..=100).
    pub score_before: i32,
    /// Score after, clamped to 0..=100.
    pub score_after: i32,
    /// Why.
    pub reason: Option<String>,
    /// The task it is about, if any.
    pub task_id: Option<TaskId>,
}

/// `credits.transferred` (recorded on the sender).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreditsTransferred {
    /// The transfer.
    pub transfer_id: uuid::Uuid,
    /// The sender.
    pub from_agent_id: AgentId,
    /// The receiver.
    pub to_agent_id: AgentId,
    /// How many credits.
    pub amount: i64,
    /// Why.
    pub reason: Option<String>,
}

/// `credits.granted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreditsGranted {
    /// How many credits.
    pub amount: i64,
    /// Why.
    pub reason: Option<String>,
    /// The balance afterwards.
    pub balance_after: i64,
}

/// `credits.spent`.
pub type CreditsSpent = CreditsGranted;

/// Who pays a task's reward, on the wire: `{kind: agent|treasury, id}` (decision D-101).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PayerRef {
    /// `agent` or `treasury`.
    pub kind: &'static str,
    /// The agent's UUID, or the organization's for the treasury.
    pub id: Uuid,
}

/// `credits.escrowed`: a task's reward (or a raise of it) left its payer for the task's
/// escrow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreditsEscrowed {
    /// How many credits.
    pub amount: i64,
    /// Whose credits.
    pub payer: PayerRef,
    /// The payer's balance afterwards.
    pub balance_after: i64,
}

/// `credits.refunded`: credits came back from a task's escrow to its payer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreditsRefunded {
    /// How many credits.
    pub amount: i64,
    /// Whose credits.
    pub payer: PayerRef,
    /// The payer's balance afterwards.
    pub balance_after: i64,
    /// `cancelled`, `lowered`, `unassigned` (done with no assignee) or `self` (done by
    /// its own payer).
    pub reason: &'static str,
}

/// `treasury.granted`: credits were created in the organization's treasury.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreasuryGranted {
    /// How many credits.
    pub amount: i64,
    /// Why.
    pub reason: Option<String>,
    /// The treasury's balance afterwards.
    pub balance_after: i64,
}

/// `credits.earned`: a completion reward, or a management fee taken from a child's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreditsEarned {
    /// How many credits.
    pub amount: i64,
    /// The finished task.
    pub task_id: TaskId,
    /// `reward` or `management_fee`.
    pub source: String,
    /// The balance afterwards.
    pub balance_after: i64,
}
