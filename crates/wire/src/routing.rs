//! Shapes of routing (candidates, auto-assign) and templates.

use muster_domain::model::{AgentId, TaskId, TaskPriority, TaskTemplate, TemplateName, Title};
use muster_domain::rules::candidates::Candidate;
use muster_domain::service::{AutoAssign, CandidateQuery, TemplateOverrides};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::time::{DayEdge, parse};
use muster_domain::ValidationError;

/// Query of `GET /tasks/:id/candidates`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CandidatesQuery {
    #[cfg_attr(feature = "openapi", param(minimum = 0, maximum = 100))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_coverage: Option<i64>,
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 100))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_results: Option<i64>,
}

impl CandidatesQuery {
    /// The checked query.
    pub fn into_query(self) -> Result<CandidateQuery, ValidationError> {
        CandidateQuery::new(self.min_coverage, self.max_results)
    }
}

/// A candidate on the wire: `agentId` is the agent's UUID (decision D-9).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CandidateResponse {
    pub agent_id: Uuid,
    pub name: String,
    pub coverage_score: u8,
    pub handle: String,
    pub level: u8,
    pub matched_capabilities: Vec<MatchedCapability>,
    pub proficiency_sum: u32,
    pub open_tasks: u32,
    pub reputation_score: i32,
}

/// One capability that counted toward a candidate's coverage.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MatchedCapability {
    pub capability: String,
    pub proficiency: muster_domain::model::Proficiency,
}

impl MatchedCapability {
    /// The capability `name` held at `level`.
    pub fn new(name: &str, level: muster_domain::model::Proficiency) -> Self {
        Self {
            capability: name.to_owned(),
            proficiency: level,
        }
    }
}

impl From<Candidate> for CandidateResponse {
    fn from(c: Candidate) -> Self {
        Self {
            agent_id: c.agent.id.as_uuid(),
            name: c.agent.name,
            coverage_score: c.coverage,
            handle: c.agent.handle.as_str().to_owned(),
            level: c.agent.level.get(),
            matched_capabilities: c
                .matched
                .into_iter()
                .map(|(name, level)| MatchedCapability::new(name.as_str(), level))
                .collect(),
            proficiency_sum: c.proficiency_sum,
            open_tasks: c.open_tasks,
            reputation_score: c.agent.reputation_score,
        }
    }
}

/// Body of `POST /tasks/:id/auto-assign` (may be left out).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AutoAssignRequest {
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 100))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_coverage: Option<i64>,
    #[serde(default)]
    pub exclude_agent_ids: Vec<Uuid>,
}

impl AutoAssignRequest {
    /// The checked request.
    pub fn into_request(self) -> Result<AutoAssign, ValidationError> {
        let exclude = self
            .exclude_agent_ids
            .into_iter()
            .map(AgentId::from_uuid)
            .collect();
        AutoAssign::new(self.min_coverage, exclude)
    }
}

/// Body of `POST /tasks/:id/create-template`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateTemplateRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    pub name: String,
}

impl CreateTemplateRequest {
    /// The checked name.
    pub fn name(&self) -> Result<TemplateName, ValidationError> {
        TemplateName::new(&self.name)
    }
}

/// Body of `POST /tasks/templates/:id/instantiate` (may be left out).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InstantiateRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<Uuid>,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due_at: Option<String>,
}

impl InstantiateRequest {
    /// The checked overrides.
    pub fn into_overrides(self) -> Result<TemplateOverrides, ValidationError> {
        Ok(TemplateOverrides {
            title: self.title.map(|t| Title::new(&t)).transpose()?,
            assignee_id: self.assignee_id.map(AgentId::from_uuid),
            parent_task_id: self.parent_task_id.map(TaskId::from_uuid),
            due_at: self
                .due_at
                .map(|v| parse("dueAt", &v, DayEdge::Start))
                .transpose()?,
        })
    }
}

/// A template on the wire (decision D-38).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TemplateResponse {
    pub id: Uuid,
    pub name: String,
    pub title: String,
    pub description: Option<String>,
    pub priority: TaskPriority,
    pub tags: Vec<String>,
    pub approval_required: bool,
    pub metadata: Value,
    pub created_from_task_id: Option<Uuid>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<TaskTemplate> for TemplateResponse {
    fn from(t: TaskTemplate) -> Self {
        Self {
            id: t.id.as_uuid(),
            name: t.name.as_str().to_owned(),
            title: t.title.as_str().to_owned(),
            description: t.description.map(|d| d.as_str().to_owned()),
            priority: t.priority,
            tags: t.tags.as_slice().to_vec(),
            approval_required: t.approval_required,
            metadata: t.metadata.to_value(),
            created_from_task_id: t.created_from_task_id.map(TaskId::as_uuid),
            created_at: t.created_at,
        }
    }
}
