//! `/projects` shapes (issue 66).

use muster_domain::ValidationError;
use muster_domain::model::{
    Author, Description, Project, ProjectGoal, ProjectId, ProjectName, ProjectStatus, TaskBrief,
    TaskId, TaskStatus,
};
use muster_domain::rules::progress::ProjectProgress;
use muster_domain::service::{NewProject, PageRequest, ProjectPatch, ProjectView};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::nullable::Patch;
use super::time::{DayEdge, parse};

/// Body of `POST /projects`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateProjectRequest {
    /// Its name (not unique).
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    pub name: String,
    /// What it is for.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// Markdown body.
    #[cfg_attr(feature = "openapi", schema(max_length = 100_000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When it should be done (ISO 8601; a plain date is its start, UTC).
    #[cfg_attr(feature = "openapi", schema(format = DateTime, example = "2026-12-31T17:00:00.000Z"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due_at: Option<String>,
}

impl CreateProjectRequest {
    /// Validates every field into the domain's types.
    pub fn into_new_project(self) -> Result<NewProject, ValidationError> {
        Ok(NewProject {
            name: ProjectName::new(&self.name)?,
            goal: self.goal.map(ProjectGoal::new).transpose()?,
            description: self.description.map(Description::new).transpose()?,
            due_at: self
                .due_at
                .map(|v| parse("dueAt", &v, DayEdge::Start))
                .transpose()?,
        })
    }
}

/// Body of `PATCH /projects/:id`: every field optional; `null` clears `goal`,
/// `description` and `dueAt`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchProjectRequest {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = String, min_length = 1, max_length = 255))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub name: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, min_length = 1, max_length = 2000))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub goal: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, max_length = 100_000))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub description: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub due_at: Patch<String>,
}

impl PatchProjectRequest {
    /// Validates every given field into the domain's patch.
    pub fn into_patch(self) -> Result<ProjectPatch, ValidationError> {
        Ok(ProjectPatch {
            name: self
                .name
                .required("name")?
                .map(|n| ProjectName::new(&n))
                .transpose()?,
            goal: self.goal.clearable(ProjectGoal::new)?,
            description: self.description.clearable(Description::new)?,
            due_at: self
                .due_at
                .clearable(|v| parse("dueAt", &v, DayEdge::Start))?,
        })
    }
}

/// Query of `GET /projects`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListProjectsQuery {
    /// Only projects in this status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ProjectStatus>,
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `meta.nextCursor` of the previous page.
    #[cfg_attr(feature = "openapi", param(value_type = Option<uuid::Uuid>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl ListProjectsQuery {
    /// The page asked for (the use case checks the range of `limit`).
    pub fn page(&self) -> Result<PageRequest<ProjectId>, ValidationError> {
        super::paging::page_request(self.limit, self.cursor.as_deref())
    }
}

/// A project on the wire; `GET /projects/:id` adds its `progress`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProjectResponse {
    pub id: Uuid,
    pub org_id: Uuid,
    pub name: String,
    pub goal: Option<String>,
    pub description: Option<String>,
    #[serde(with = "super::time::option")]
    pub due_at: Option<OffsetDateTime>,
    pub status: ProjectStatus,
    /// The agent or user that created it.
    pub creator_id: Option<Uuid>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "super::time::rfc3339")]
    pub updated_at: OffsetDateTime,
    #[serde(with = "super::time::option")]
    pub archived_at: Option<OffsetDateTime>,
    /// Its tasks' progress; only on `GET /projects/:id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<ProgressResponse>,
}

impl From<Project> for ProjectResponse {
    fn from(project: Project) -> Self {
        Self {
            id: project.id.as_uuid(),
            org_id: project.org_id.as_uuid(),
            name: project.name.as_str().to_owned(),
            goal: project.goal.map(|g| g.as_str().to_owned()),
            description: project.description.map(|d| d.as_str().to_owned()),
            due_at: project.due_at,
            status: project.status,
            creator_id: project.creator.map(Author::as_uuid),
            created_at: project.created_at,
            updated_at: project.updated_at,
            archived_at: project.archived_at,
            progress: None,
        }
    }
}

impl From<ProjectView> for ProjectResponse {
    fn from(view: ProjectView) -> Self {
        let progress = ProgressResponse::of(&view.progress, view.tally);
        Self {
            progress: Some(progress),
            ..Self::from(view.project)
        }
    }
}

/// A project's progress: its tasks by status, what share is done, what is in the way,
/// and what its runs cost.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProgressResponse {
    /// Every task of the project.
    pub total: u64,
    /// Tasks neither done nor cancelled.
    pub open: u64,
    /// Tasks done.
    pub done: u64,
    /// Done over the tasks not cancelled, in whole percent rounded down (0 with none).
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 100))]
    pub done_pct: u8,
    /// Tasks per status (every status, 0 included).
    pub by_status: StatusCounts,
    /// Open tasks past their due date.
    pub overdue: u64,
    /// The first ten of them, soonest due first.
    pub overdue_tasks: Vec<TaskBriefResponse>,
    /// Tasks in status `blocked`: how many.
    pub blocked: u64,
    /// The first ten of them, longest blocked first.
    pub blocked_tasks: Vec<TaskBriefResponse>,
    /// Credits its tasks' runs' usage cost.
    pub spent_credits: i64,
    /// What that usage cost in US dollars, in millionths, where it was known.
    pub cost_microusd: i64,
}

impl ProgressResponse {
    fn of(progress: &ProjectProgress, tally: muster_domain::model::ProjectTally) -> Self {
        let count = |status| tally.count(status);
        Self {
            total: progress.total,
            open: progress.open,
            done: progress.done,
            done_pct: progress.done_pct,
            by_status: StatusCounts {
                backlog: count(TaskStatus::Backlog),
                todo: count(TaskStatus::Todo),
                in_progress: count(TaskStatus::InProgress),
                review: count(TaskStatus::Review),
                done: count(TaskStatus::Done),
                blocked: count(TaskStatus::Blocked),
                cancelled: count(TaskStatus::Cancelled),
            },
            overdue: tally.overdue,
            blocked: count(TaskStatus::Blocked),
            overdue_tasks: tally.overdue_tasks.into_iter().map(Into::into).collect(),
            blocked_tasks: tally.blocked_tasks.into_iter().map(Into::into).collect(),
            spent_credits: tally.spent_credits,
            cost_microusd: tally.cost_microusd,
        }
    }
}

/// Tasks per status.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub struct StatusCounts {
    pub backlog: u64,
    pub todo: u64,
    pub in_progress: u64,
    pub review: u64,
    pub done: u64,
    pub blocked: u64,
    pub cancelled: u64,
}

/// A task named in a progress report.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskBriefResponse {
    pub id: Uuid,
    pub title: String,
    pub status: TaskStatus,
    #[serde(with = "super::time::option")]
    pub due_at: Option<OffsetDateTime>,
    /// When it entered its status.
    #[serde(with = "super::time::rfc3339")]
    pub status_changed_at: OffsetDateTime,
}

impl From<TaskBrief> for TaskBriefResponse {
    fn from(task: TaskBrief) -> Self {
        Self {
            id: TaskId::as_uuid(task.id),
            title: task.title,
            status: task.status,
            due_at: task.due_at,
            status_changed_at: task.status_changed_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CreateProjectRequest, PatchProjectRequest};

    fn create(json: &str) -> Result<(), String> {
        let body: CreateProjectRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
        body.into_new_project()
            .map(|_| ())
            .map_err(|e| e.message().to_owned())
    }

    fn patch(json: &str) -> Result<(), String> {
        let body: PatchProjectRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
        body.into_patch()
            .map(|_| ())
            .map_err(|e| e.message().to_owned())
    }

    #[test]
    fn a_new_project_needs_a_name_and_checks_its_fields() {
        assert_eq!(create(r#"{"name":"Launch"}"#), Ok(()));
        assert_eq!(
            create(r#"{"name":"  "}"#),
            Err("name must not be empty".into())
        );
        assert!(create(r#"{"name":"L","goal":""}"#).is_err());
        assert!(create(r#"{"name":"L","dueAt":"tomorrow"}"#).is_err());
        assert!(create(r#"{"name":"L","owner":"me"}"#).is_err());
    }

    #[test]
    fn a_patch_may_clear_the_goal_but_not_the_name() {
        assert_eq!(patch(r#"{"goal":null}"#), Ok(()));
        assert_eq!(
            patch(r#"{"name":null}"#),
            Err("name must not be null".into())
        );
    }
}
