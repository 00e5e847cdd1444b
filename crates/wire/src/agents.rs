//! `/agents` shapes: the agent record, registration, edits, spawning and the hierarchy.

use muster_domain::model::{
    Agent, AgentHandle, AgentId, AgentMode, AgentRole, AgentStatus, Capability, CapabilityName,
    FeePct, Level, Metadata, Proficiency, Reason,
};
use muster_domain::ports::AgentFilter;
use muster_domain::service::agent_limits::budget_limit;
use muster_domain::service::{
    AgentPatch, AgentView, HierarchyNode, NewAgent, NewChild, Registered,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::nullable::Patch;
use muster_domain::ValidationError;

/// One capability in a register or spawn body.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CapabilityInput {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub capability: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proficiency: Option<Proficiency>,
}

/// Normalizes the capabilities of a body (decision D-50); repeats are refused by the
/// use case.
fn capabilities(
    input: Option<Vec<CapabilityInput>>,
) -> Result<Vec<(CapabilityName, Proficiency)>, ValidationError> {
    input
        .unwrap_or_default()
        .into_iter()
        .map(|c| {
            Ok((
                CapabilityName::new(&c.capability)?,
                c.proficiency.unwrap_or_default(),
            ))
        })
        .collect()
}

fn metadata(value: Option<Value>) -> Result<Metadata, ValidationError> {
    value.map_or_else(|| Ok(Metadata::default()), Metadata::new)
}

fn model(value: Option<String>) -> Result<Option<String>, ValidationError> {
    value.map(|m| Agent::check_model(&m)).transpose()
}

/// Body of `POST /agents/register`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RegisterRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub agent_id: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(max_length = 100))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<AgentRole>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<AgentMode>,
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 50))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub management_fee_pct: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_period_limit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Vec<CapabilityInput>>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl RegisterRequest {
    /// Validates every field into the domain's types.
    pub fn into_new_agent(self) -> Result<NewAgent, ValidationError> {
        let handle = AgentHandle::new(&self.agent_id)?;
        let name = Agent::check_name(&self.name)?;
        Ok(NewAgent {
            level: self.level.map(Level::new).transpose()?,
            model: model(self.model)?,
            role: self.role.unwrap_or(AgentRole::Worker),
            mode: self.mode.unwrap_or(AgentMode::Worker),
            management_fee_pct: self
                .management_fee_pct
                .map(FeePct::new)
                .transpose()?
                .unwrap_or_default(),
            budget_period_limit: self.budget_period_limit.map(budget_limit).transpose()?,
            capabilities: capabilities(self.capabilities)?,
            metadata: metadata(self.metadata)?,
            ..NewAgent::new(handle, name)
        })
    }
}

/// Body of `POST /agents/spawn`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SpawnRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub agent_id: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(max_length = 100))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<AgentMode>,
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_period_limit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Vec<CapabilityInput>>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl SpawnRequest {
    /// Validates every field; the level is checked against the parent's by the use case.
    pub fn into_new_child(self) -> Result<NewChild, ValidationError> {
        let handle = AgentHandle::new(&self.agent_id)?;
        let name = Agent::check_name(&self.name)?;
        Ok(NewChild {
            level: self.level,
            model: model(self.model)?,
            mode: self.mode.unwrap_or(AgentMode::Worker),
            budget_period_limit: self.budget_period_limit.map(budget_limit).transpose()?,
            capabilities: capabilities(self.capabilities)?,
            metadata: metadata(self.metadata)?,
            ..NewChild::new(handle, name)
        })
    }
}

/// Body of `PATCH /agents/:id`: every field optional; `null` clears `model` and
/// `budgetPeriodLimit` (no limit); `metadata` replaces the old.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchAgentRequest {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = String, min_length = 1, max_length = 255))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub name: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 1, maximum = 10))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub level: Patch<i64>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, max_length = 100))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub model: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = AgentMode))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub mode: Patch<AgentMode>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 0, maximum = 50))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub management_fee_pct: Patch<i64>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 0))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub budget_period_limit: Patch<i64>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub metadata: Patch<Value>,
}

impl PatchAgentRequest {
    /// Validates every given field into the domain's patch.
    pub fn into_patch(self) -> Result<AgentPatch, ValidationError> {
        Ok(AgentPatch {
            name: self
                .name
                .required("name")?
                .map(|n| Agent::check_name(&n))
                .transpose()?,
            level: self.level.required("level")?.map(Level::new).transpose()?,
            model: self.model.clearable(|m| Agent::check_model(&m))?,
            mode: self.mode.required("mode")?,
            management_fee_pct: self
                .management_fee_pct
                .required("managementFeePct")?
                .map(FeePct::new)
                .transpose()?,
            budget_period_limit: self.budget_period_limit.clearable(budget_limit)?,
            metadata: self
                .metadata
                .required("metadata")?
                .map(Metadata::new)
                .transpose()?,
        })
    }
}

/// An optional body with an optional `reason` (reject, demote).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReasonRequest {
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ReasonRequest {
    /// The checked reason.
    pub fn reason(self) -> Result<Option<Reason>, ValidationError> {
        self.reason.map(Reason::new).transpose()
    }
}

/// Query of `GET /agents` (decision D-7 paging).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListAgentsQuery {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<AgentStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<AgentRole>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<AgentMode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<Uuid>,
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `meta.nextCursor` of the previous page.
    #[cfg_attr(feature = "openapi", param(value_type = Option<uuid::Uuid>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl ListAgentsQuery {
    /// The filter.
    pub fn filter(&self) -> AgentFilter {
        AgentFilter {
            status: self.status,
            role: self.role,
            mode: self.mode,
            parent_id: self.parent_id.map(AgentId::from_uuid),
        }
    }

    /// The paging part.
    pub fn page(&self) -> Result<muster_domain::service::PageRequest<AgentId>, ValidationError> {
        super::paging::page_request(self.limit, self.cursor.as_deref())
    }
}

/// Query of `GET /agents/:id/hierarchy`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct HierarchyQuery {
    /// Levels below the root, 1..=10 (default 3).
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 10))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<i64>,
}

/// A capability on the wire.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CapabilityResponse {
    pub id: Uuid,
    pub agent_id: Uuid,
    pub capability: String,
    pub proficiency: Proficiency,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<Capability> for CapabilityResponse {
    fn from(c: Capability) -> Self {
        Self {
            id: c.id.as_uuid(),
            agent_id: c.agent_id.as_uuid(),
            capability: c.name.as_str().to_owned(),
            proficiency: c.proficiency,
            created_at: c.created_at,
        }
    }
}

/// An agent on the wire (never its secret). `agentId` is the handle; list entries leave
/// out `capabilities`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentResponse {
    pub id: Uuid,
    pub org_id: Uuid,
    pub agent_id: String,
    pub name: String,
    pub level: u8,
    pub model: Option<String>,
    pub role: AgentRole,
    pub mode: AgentMode,
    pub status: AgentStatus,
    pub parent_id: Option<Uuid>,
    pub current_balance: i64,
    pub budget_period_limit: Option<i64>,
    pub budget_period_spent: i64,
    #[serde(with = "super::time::rfc3339")]
    pub budget_period_start: OffsetDateTime,
    pub management_fee_pct: u8,
    pub reputation_score: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default)]
    pub capabilities: Option<Vec<CapabilityResponse>>,
    pub metadata: Value,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<Agent> for AgentResponse {
    fn from(a: Agent) -> Self {
        Self {
            id: a.id.as_uuid(),
            org_id: a.org_id.as_uuid(),
            agent_id: a.handle.as_str().to_owned(),
            name: a.name,
            level: a.level.get(),
            model: a.model,
            role: a.role,
            mode: a.mode,
            status: a.status,
            parent_id: a.parent_id.map(AgentId::as_uuid),
            current_balance: a.current_balance,
            budget_period_limit: a.budget_period_limit,
            budget_period_spent: a.budget_period_spent,
            budget_period_start: a.budget_period_start,
            management_fee_pct: a.management_fee_pct.get(),
            reputation_score: a.reputation_score,
            capabilities: None,
            metadata: Value::Object(a.metadata),
            created_at: a.created_at,
        }
    }
}

impl From<AgentView> for AgentResponse {
    fn from(view: AgentView) -> Self {
        let mut response = Self::from(view.agent);
        response.capabilities = Some(view.capabilities.into_iter().map(Into::into).collect());
        response
    }
}

/// `{data, secret, message}`: a new agent with its secret, shown once.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WithSecret {
    /// The agent.
    pub data: AgentResponse,
    /// The signing secret.
    pub secret: String,
    /// A sentence for people.
    pub message: String,
}

impl WithSecret {
    /// The answer of `POST /agents/register`.
    pub fn registered(registered: Registered) -> Self {
        Self::new(
            registered,
            "Agent registered. Store the secret now: it is shown only once.",
        )
    }

    /// The answer of `POST /agents/spawn`.
    pub fn spawned(spawned: Registered) -> Self {
        Self::new(
            spawned,
            "Agent spawned and pending activation. Store the secret now: it is shown only once.",
        )
    }

    fn new(made: Registered, message: &str) -> Self {
        Self {
            data: made.view.into(),
            secret: made.secret.expose().to_owned(),
            message: message.to_owned(),
        }
    }
}

/// `{id, agentId, status}`: the answer of a status change.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StatusResponse {
    pub id: Uuid,
    pub agent_id: String,
    pub status: AgentStatus,
    pub level: u8,
}

impl From<Agent> for StatusResponse {
    fn from(a: Agent) -> Self {
        Self {
            id: a.id.as_uuid(),
            agent_id: a.handle.as_str().to_owned(),
            status: a.status,
            level: a.level.get(),
        }
    }
}

/// A pending agent (decision D-52).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PendingResponse {
    pub id: Uuid,
    pub agent_id: String,
    pub name: String,
    pub level: u8,
    pub parent_id: Option<Uuid>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<Agent> for PendingResponse {
    fn from(a: Agent) -> Self {
        Self {
            id: a.id.as_uuid(),
            agent_id: a.handle.as_str().to_owned(),
            name: a.name,
            level: a.level.get(),
            parent_id: a.parent_id.map(AgentId::as_uuid),
            created_at: a.created_at,
        }
    }
}

/// A node of the hierarchy (decision D-56).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HierarchyResponse {
    pub id: Uuid,
    pub agent_id: String,
    pub name: String,
    pub level: u8,
    pub role: AgentRole,
    pub mode: AgentMode,
    pub status: AgentStatus,
    pub parent_id: Option<Uuid>,
    #[cfg_attr(feature = "openapi", schema(no_recursion))]
    pub children: Vec<HierarchyResponse>,
}

impl From<HierarchyNode> for HierarchyResponse {
    fn from(node: HierarchyNode) -> Self {
        let a = node.agent;
        Self {
            id: a.id.as_uuid(),
            agent_id: a.handle.as_str().to_owned(),
            name: a.name,
            level: a.level.get(),
            role: a.role,
            mode: a.mode,
            status: a.status,
            parent_id: a.parent_id.map(AgentId::as_uuid),
            children: node.children.into_iter().map(Into::into).collect(),
        }
    }
}

/// `{canSpawn, current, max, reason}` (decision D-51).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CapacityResponse {
    pub can_spawn: bool,
    pub current: u32,
    pub max: u32,
    pub reason: Option<String>,
}

impl From<muster_domain::service::Capacity> for CapacityResponse {
    fn from(c: muster_domain::service::Capacity) -> Self {
        Self {
            can_spawn: c.can_spawn,
            current: c.current,
            max: c.max,
            reason: c.reason,
        }
    }
}
