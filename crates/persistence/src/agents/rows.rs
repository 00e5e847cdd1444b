//! The `agents` row, the fields of an agent that change after creation, and their
//! conversions to and from the domain model.

use diesel::prelude::*;
use muster_domain::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentRole, AgentStatus, FeePct,
    Level, OrgId,
};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::schema::agents;
use crate::types::{DbJson, DbTime, DbUuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = agents, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct AgentRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub agent_id: String,
    pub name: String,
    pub level: i32,
    pub model: Option<String>,
    pub role: String,
    pub mode: String,
    pub status: String,
    pub parent_id: Option<DbUuid>,
    pub current_balance: i64,
    pub budget_period_limit: Option<i64>,
    pub budget_period_spent: i64,
    pub budget_period_start: DbTime,
    pub management_fee_pct: i32,
    pub reputation_score: i32,
    pub metadata: DbJson,
    pub encrypted_secret: Vec<u8>,
    pub created_at: DbTime,
    pub updated_at: DbTime,
    /// Credits held for the agent's open runs (decision D-106).
    pub reserved_credits: i64,
    /// Whether a run's usage cost more than the agent could still spend.
    pub budget_exhausted: bool,
}

impl From<&AgentCredentials> for AgentRow {
    fn from(creds: &AgentCredentials) -> Self {
        let agent = &creds.agent;
        // The mutable fields are converted in one place: AgentChanges.
        let fields = AgentChanges::new(agent, agent.created_at);
        Self {
            id: DbUuid(agent.id.as_uuid()),
            org_id: DbUuid(agent.org_id.as_uuid()),
            agent_id: agent.handle.as_str().to_owned(),
            name: fields.name,
            level: fields.level,
            model: fields.model,
            role: fields.role,
            mode: fields.mode,
            status: fields.status,
            parent_id: fields.parent_id,
            current_balance: fields.current_balance,
            budget_period_limit: fields.budget_period_limit,
            budget_period_spent: fields.budget_period_spent,
            budget_period_start: fields.budget_period_start,
            management_fee_pct: fields.management_fee_pct,
            reputation_score: fields.reputation_score,
            metadata: fields.metadata,
            encrypted_secret: creds.encrypted_secret.clone(),
            created_at: DbTime(agent.created_at),
            updated_at: fields.updated_at,
            reserved_credits: fields.reserved_credits,
            budget_exhausted: fields.budget_exhausted,
        }
    }
}

impl TryFrom<AgentRow> for AgentCredentials {
    type Error = RepositoryError;

    fn try_from(row: AgentRow) -> Result<Self, Self::Error> {
        let serde_json::Value::Object(metadata) = row.metadata.0 else {
            return Err(corrupt("agent metadata", "not an object"));
        };
        let agent = Agent {
            id: AgentId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            handle: AgentHandle::new(&row.agent_id).map_err(|e| corrupt("agentId", e))?,
            name: row.name,
            level: Level::new(i64::from(row.level)).map_err(|e| corrupt("agent level", e))?,
            model: row.model,
            role: AgentRole::parse(&row.role).ok_or_else(|| corrupt("agent role", &row.role))?,
            mode: AgentMode::parse(&row.mode).ok_or_else(|| corrupt("agent mode", &row.mode))?,
            status: AgentStatus::parse(&row.status)
                .ok_or_else(|| corrupt("agent status", &row.status))?,
            parent_id: row.parent_id.map(|id| AgentId::from_uuid(id.0)),
            current_balance: row.current_balance,
            budget_period_limit: row.budget_period_limit,
            budget_period_spent: row.budget_period_spent,
            budget_period_start: row.budget_period_start.0,
            reserved_credits: row.reserved_credits,
            budget_exhausted: row.budget_exhausted,
            management_fee_pct: FeePct::new(i64::from(row.management_fee_pct))
                .map_err(|e| corrupt("managementFeePct", e))?,
            reputation_score: row.reputation_score,
            metadata,
            created_at: row.created_at.0,
        };
        Ok(Self {
            agent,
            encrypted_secret: row.encrypted_secret,
        })
    }
}

/// The fields of an agent that change after registration (never its ids, handle,
/// secret or creation time).
#[derive(Debug, Clone, AsChangeset)]
#[diesel(table_name = agents, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_null = true)]
pub(crate) struct AgentChanges {
    pub name: String,
    pub level: i32,
    pub model: Option<String>,
    pub role: String,
    pub mode: String,
    pub status: String,
    pub parent_id: Option<DbUuid>,
    pub current_balance: i64,
    pub budget_period_limit: Option<i64>,
    pub budget_period_spent: i64,
    pub budget_period_start: DbTime,
    pub management_fee_pct: i32,
    pub reputation_score: i32,
    pub metadata: DbJson,
    pub updated_at: DbTime,
    pub reserved_credits: i64,
    pub budget_exhausted: bool,
}

impl AgentChanges {
    /// The mutable fields of `agent`, stamped `at`.
    pub(crate) fn new(agent: &Agent, at: time::OffsetDateTime) -> Self {
        Self {
            name: agent.name.clone(),
            level: i32::from(agent.level.get()),
            model: agent.model.clone(),
            role: agent.role.as_str().to_owned(),
            mode: agent.mode.as_str().to_owned(),
            status: agent.status.as_str().to_owned(),
            parent_id: agent.parent_id.map(|id| DbUuid(id.as_uuid())),
            current_balance: agent.current_balance,
            budget_period_limit: agent.budget_period_limit,
            budget_period_spent: agent.budget_period_spent,
            budget_period_start: DbTime(agent.budget_period_start),
            management_fee_pct: i32::from(agent.management_fee_pct.get()),
            reputation_score: agent.reputation_score,
            metadata: DbJson(serde_json::Value::Object(agent.metadata.clone())),
            updated_at: DbTime(at),
            reserved_credits: agent.reserved_credits,
            budget_exhausted: agent.budget_exhausted,
        }
    }
}

/// Stored rows as agents (never their secrets).
pub(crate) fn agents_of(rows: Vec<AgentRow>) -> Result<Vec<Agent>, RepositoryError> {
    rows.into_iter()
        .map(|r| AgentCredentials::try_from(r).map(|c| c.agent))
        .collect()
}
