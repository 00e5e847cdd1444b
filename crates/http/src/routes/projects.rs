//! Projects (issue 66): tasks grouped under a goal, with their progress.

use actix_web::web::{Data, Json, Path};
use actix_web::{HttpRequest, HttpResponse};
use muster_domain::model::ProjectId;

use super::tasks::Answer;
use crate::body::{parse_json, parse_optional_json, parse_query};
use crate::dto;
use crate::dto::paging::PageResponse;
use crate::dto::projects::{
    CreateProjectRequest, ListProjectsQuery, PatchProjectRequest, ProjectResponse,
};
use crate::dto::task_links::EmptyRequest;
use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

fn project_id(path: &str) -> Result<ProjectId, ApiError> {
    crate::body::parse_uuid("id", path).map(ProjectId::from_uuid)
}

/// `{data: project}`.
fn one(project: impl Into<ProjectResponse>) -> Json<dto::Data<ProjectResponse>> {
    Json(dto::Data {
        data: project.into(),
    })
}

/// `POST /projects`: 201 with the project.
#[utoipa::path(
    post,
    path = "/projects",
    operation_id = "createProject",
    tag = "projects",
    summary = "Create a project",
    description = "An active project named `name` (names need not be unique), with an \
        optional goal, description and due date. Tasks join it with `projectId`. Event \
        `project.created`.",
    request_body = CreateProjectRequest,
    responses((status = 201, description = "The project, `active`", body = dto::Data<ProjectResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn create(
    state: Data<AppState>,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    let new = parse_json::<CreateProjectRequest>(&auth.body)?.into_new_project()?;
    let project = state.projects.create(&auth.actor, new).await?;
    Ok(HttpResponse::Created().json(dto::Data {
        data: ProjectResponse::from(project),
    }))
}

/// `GET /projects`.
#[utoipa::path(
    get,
    path = "/projects",
    operation_id = "listProjects",
    tag = "projects",
    summary = "List the organization's projects, newest first",
    description = "Only those in `status` when given; by pages (`limit`, `cursor`; \
        `meta.nextCursor` when more remain). Without their progress: read a project for it.",
    params(ListProjectsQuery),
    responses((status = 200, description = "OK", body = PageResponse<ProjectResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn list(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<ProjectResponse>> {
    let query: ListProjectsQuery = parse_query(req.query_string())?;
    let page = state
        .projects
        .list(&auth.actor, query.status, query.page()?)
        .await?;
    Ok(Json(PageResponse::of(page, ProjectResponse::from)))
}

/// `GET /projects/:id`.
#[utoipa::path(
    get,
    path = "/projects/{id}",
    operation_id = "getProject",
    tag = "projects",
    summary = "Read a project with its progress",
    description = "Its tasks by status, the share done (of the tasks not cancelled), the \
        open tasks past due and the blocked ones (the first ten of each), and what its \
        tasks' runs cost. 404 `project_not_found` for another organization's.",
    params(("id" = uuid::Uuid, Path, description = "Project id")),
    responses((status = 200, description = "OK", body = dto::Data<ProjectResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<ProjectResponse>> {
    let id = project_id(&path)?;
    Ok(one(state.projects.view(&auth.actor, id).await?))
}

/// `PATCH /projects/:id`.
#[utoipa::path(
    patch,
    path = "/projects/{id}",
    operation_id = "updateProject",
    tag = "projects",
    summary = "Change a project's fields",
    description = "Name, goal, description, due date (`null` clears the last three). 409 \
        `project_archived` once archived. Event `project.updated` naming the fields that \
        changed.",
    params(("id" = uuid::Uuid, Path, description = "Project id")),
    request_body = PatchProjectRequest,
    responses((status = 200, description = "OK", body = dto::Data<ProjectResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn update(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<ProjectResponse>> {
    let id = project_id(&path)?;
    let changes = parse_json::<PatchProjectRequest>(&auth.body)?.into_patch()?;
    Ok(one(state.projects.update(&auth.actor, id, changes).await?))
}

/// `POST /projects/:id/archive`.
#[utoipa::path(
    post,
    path = "/projects/{id}/archive",
    operation_id = "archiveProject",
    tag = "projects",
    summary = "Archive a project",
    description = "Its tasks stay in it; no task joins it any more (409 \
        `project_archived`) and it takes no edits. Archiving an archived project changes \
        nothing. Event `project.archived`.",
    params(("id" = uuid::Uuid, Path, description = "Project id")),
    request_body = Option<EmptyRequest>,
    responses((status = 200, description = "OK", body = dto::Data<ProjectResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn archive(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<ProjectResponse>> {
    let id = project_id(&path)?;
    parse_optional_json::<EmptyRequest>(&auth.body)?;
    Ok(one(state.projects.archive(&auth.actor, id).await?))
}
