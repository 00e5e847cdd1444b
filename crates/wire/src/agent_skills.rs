//! Shapes of capabilities, matching and reputation (decisions D-62 to D-65).

use muster_domain::model::{CapabilityName, Proficiency, Reason, ReputationEvent, ReputationKind};
use muster_domain::service::agent_limits::{
    HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, LEADERBOARD_DEFAULT_LIMIT, LEADERBOARD_MAX_LIMIT,
    limit_of,
};
use muster_domain::service::{
    CapabilityMatch, LeaderboardEntry, MatchQuery, ReputationSummary, ScoreChange,
};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::routing::MatchedCapability;
use muster_domain::ValidationError;

/// Body of `POST /agents/:id/capabilities`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AddCapabilityRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub capability: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proficiency: Option<Proficiency>,
}

impl AddCapabilityRequest {
    /// The normalized name and the proficiency (default standard).
    pub fn into_parts(self) -> Result<(CapabilityName, Proficiency), ValidationError> {
        Ok((
            CapabilityName::new(&self.capability)?,
            self.proficiency.unwrap_or_default(),
        ))
    }
}

/// Body of `PATCH /agents/capabilities/:capabilityId`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ProficiencyRequest {
    /// The new proficiency.
    pub proficiency: Proficiency,
}

/// Query of `GET /agents/capabilities/match` and `/best-match`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MatchRequest {
    /// Comma-separated capability names (at least one).
    #[cfg_attr(
        feature = "openapi",
        param(pattern = "^[^\\x00]*[^,\\s\\x00][^\\x00]*$")
    )]
    pub capabilities: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_proficiency: Option<Proficiency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub only_active: Option<bool>,
}

impl MatchRequest {
    /// The checked query.
    pub fn into_query(self) -> Result<MatchQuery, ValidationError> {
        MatchQuery::new(
            &self.capabilities,
            self.min_proficiency,
            self.only_active.unwrap_or(true),
        )
    }
}

/// A capability match (decision D-62): `agentId` is the handle, beside `id`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MatchResponse {
    pub id: Uuid,
    pub agent_id: String,
    pub name: String,
    pub level: u8,
    pub status: muster_domain::model::AgentStatus,
    pub matched_capabilities: Vec<MatchedCapability>,
    pub coverage_score: u8,
}

impl From<CapabilityMatch> for MatchResponse {
    fn from(c: CapabilityMatch) -> Self {
        Self {
            id: c.agent.id.as_uuid(),
            agent_id: c.agent.handle.as_str().to_owned(),
            name: c.agent.name,
            level: c.agent.level.get(),
            status: c.agent.status,
            matched_capabilities: c
                .matched
                .into_iter()
                .map(|(name, level)| MatchedCapability::new(name.as_str(), level))
                .collect(),
            coverage_score: c.coverage,
        }
    }
}

/// Body of `POST /agents/:id/reputation/bonus` and `/penalty`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ScoreRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2000))]
    pub reason: String,
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 50))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<i64>,
}

impl ScoreRequest {
    /// The checked change.
    pub fn into_change(self) -> Result<ScoreChange, ValidationError> {
        ScoreChange::new(Reason::new(self.reason)?, self.amount)
    }
}

/// Query of `GET /agents/:id/reputation/history`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 100))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    #[cfg_attr(feature = "openapi", param(minimum = 0))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
}

impl HistoryQuery {
    /// The checked limit (1..=100, default 20) and offset (at least 0).
    pub fn into_parts(self) -> Result<(u32, u64), ValidationError> {
        let limit = limit_of(self.limit, HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT)?;
        let offset = u64::try_from(self.offset.unwrap_or(0))
            .map_err(|_| ValidationError::new("offset must be at least 0"))?;
        Ok((limit, offset))
    }
}

/// Query of `GET /agents/leaderboard/trust`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct LeaderboardQuery {
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 100))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
}

impl LeaderboardQuery {
    /// The checked limit (1..=100, default 10).
    pub fn limit(&self) -> Result<u32, ValidationError> {
        limit_of(self.limit, LEADERBOARD_DEFAULT_LIMIT, LEADERBOARD_MAX_LIMIT)
    }
}

/// The reputation summary; `agentId` is the agent's UUID.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SummaryResponse {
    pub agent_id: Uuid,
    pub reputation_score: i32,
    pub level: String,
    pub total_events: u64,
}

impl From<ReputationSummary> for SummaryResponse {
    fn from(s: ReputationSummary) -> Self {
        Self {
            agent_id: s.agent_id.as_uuid(),
            reputation_score: s.reputation_score,
            level: s.level.to_owned(),
            total_events: s.total_events,
        }
    }
}

/// A reputation event on the wire.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReputationEventResponse {
    pub id: Uuid,
    pub agent_id: Uuid,
    #[serde(rename = "type")]
    pub kind: ReputationKind,
    pub amount: i32,
    pub reason: String,
    pub task_id: Option<Uuid>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<ReputationEvent> for ReputationEventResponse {
    fn from(e: ReputationEvent) -> Self {
        Self {
            id: e.id.as_uuid(),
            agent_id: e.agent_id.as_uuid(),
            kind: e.kind,
            amount: e.amount,
            reason: e.reason,
            task_id: e.task_id.map(muster_domain::model::TaskId::as_uuid),
            created_at: e.created_at,
        }
    }
}

/// `{data, total}` of the reputation history.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HistoryResponse {
    /// The events, newest first.
    pub data: Vec<ReputationEventResponse>,
    /// How many there are in all.
    pub total: u64,
}

/// A leaderboard row (decision D-65): `agentId` is the handle, beside `id`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LeaderboardResponse {
    pub id: Uuid,
    pub agent_id: String,
    pub name: String,
    pub level: u8,
    pub reputation_score: i32,
    pub reputation_level: String,
    pub tasks_completed: u64,
}

impl From<LeaderboardEntry> for LeaderboardResponse {
    fn from(e: LeaderboardEntry) -> Self {
        Self {
            id: e.agent.id.as_uuid(),
            agent_id: e.agent.handle.as_str().to_owned(),
            name: e.agent.name,
            level: e.agent.level.get(),
            reputation_score: e.agent.reputation_score,
            reputation_level: e.reputation_level.to_owned(),
            tasks_completed: e.tasks_completed,
        }
    }
}
