//! Routines (issue 66, decision D-108): work that recurs on a cron schedule.

use actix_web::web::{Data, Json, Path};
use actix_web::{HttpRequest, HttpResponse};
use muster_domain::model::RoutineId;

use super::tasks::Answer;
use crate::body::{parse_json, parse_optional_json, parse_query};
use crate::dto;
use crate::dto::paging::PageResponse;
use crate::dto::routines::{
    CreateRoutineRequest, ListRoutinesQuery, PatchRoutineRequest, RoutineResponse,
};
use crate::dto::task_links::EmptyRequest;
use crate::dto::tasks::TaskResponse;
use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

fn routine_id(path: &str) -> Result<RoutineId, ApiError> {
    crate::body::parse_uuid("id", path).map(RoutineId::from_uuid)
}

/// `POST /routines`: 201 with the routine.
#[utoipa::path(
    post,
    path = "/routines",
    operation_id = "createRoutine",
    tag = "routines",
    summary = "Create a routine",
    description = "Work that recurs: a cron `schedule` (five fields, or six with seconds) \
        in `timezone` (IANA, default UTC), and either a `task` to create at each due time \
        or a `templateId` to make it from. The tasks are created as the routine's owner \
        (its creator, then whoever changes it) would create them, their reward paid by \
        the treasury. Each due time gets its task once, however many instances run. \
        `catchUp` says what the due times missed while the service was down get: `skip` \
        nothing, `one` (default) one task, `all` one each (the latest 100). Event \
        `routine.created`.",
    request_body = CreateRoutineRequest,
    responses((status = 201, description = "The routine", body = dto::Data<RoutineResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn create(
    state: Data<AppState>,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    let new = parse_json::<CreateRoutineRequest>(&auth.body)?.into_new_routine()?;
    let routine = state.routines.create(&auth.actor, new).await?;
    Ok(HttpResponse::Created().json(dto::Data {
        data: RoutineResponse::from(routine),
    }))
}

/// `GET /routines`.
#[utoipa::path(
    get,
    path = "/routines",
    operation_id = "listRoutines",
    tag = "routines",
    summary = "List the organization's routines, newest first",
    description = "By pages (`limit`, `cursor`; `meta.nextCursor` when more remain).",
    params(ListRoutinesQuery),
    responses((status = 200, description = "OK", body = PageResponse<RoutineResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn list(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<RoutineResponse>> {
    let query: ListRoutinesQuery = parse_query(req.query_string())?;
    let page = state.routines.list(&auth.actor, query.page()?).await?;
    Ok(Json(PageResponse::of(page, RoutineResponse::from)))
}

/// `GET /routines/:id`.
#[utoipa::path(
    get,
    path = "/routines/{id}",
    operation_id = "getRoutine",
    tag = "routines",
    summary = "Read a routine",
    description = "With `nextRunAt`, `lastRunAt`, `lastTaskId`, `lastError` and, when the \
        service paused it, `pausedReason`. 404 `routine_not_found` for another \
        organization's.",
    params(("id" = uuid::Uuid, Path, description = "Routine id")),
    responses((status = 200, description = "OK", body = dto::Data<RoutineResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<RoutineResponse>> {
    let id = routine_id(&path)?;
    let routine = state.routines.get(&auth.actor, id).await?;
    Ok(Json(dto::Data {
        data: routine.into(),
    }))
}

/// `PATCH /routines/:id`.
#[utoipa::path(
    patch,
    path = "/routines/{id}",
    operation_id = "updateRoutine",
    tag = "routines",
    summary = "Change a routine",
    description = "Its owner or an admin user (403 `routine_owner_required`); whoever \
        changes it becomes its owner. A new schedule, time zone or `enabled` recomputes \
        `nextRunAt` from now; switching a paused routine on clears `pausedReason`. Event \
        `routine.updated` naming the fields that changed.",
    params(("id" = uuid::Uuid, Path, description = "Routine id")),
    request_body = PatchRoutineRequest,
    responses((status = 200, description = "OK", body = dto::Data<RoutineResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn update(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<RoutineResponse>> {
    let id = routine_id(&path)?;
    let changes = parse_json::<PatchRoutineRequest>(&auth.body)?.into_patch()?;
    let routine = state.routines.update(&auth.actor, id, changes).await?;
    Ok(Json(dto::Data {
        data: routine.into(),
    }))
}

/// `DELETE /routines/:id`: 204.
#[utoipa::path(
    delete,
    path = "/routines/{id}",
    operation_id = "deleteRoutine",
    tag = "routines",
    summary = "Delete a routine",
    description = "Its owner or an admin user; the tasks it created stay. Event \
        `routine.deleted`.",
    params(("id" = uuid::Uuid, Path, description = "Routine id")),
    responses((status = 204, description = "Deleted")),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn delete(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    let id = routine_id(&path)?;
    state.routines.delete(&auth.actor, id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `POST /routines/:id/run`.
#[utoipa::path(
    post,
    path = "/routines/{id}/run",
    operation_id = "runRoutine",
    tag = "routines",
    summary = "Run a routine once, now",
    description = "Its owner or an admin user: the task it creates, as its owner would \
        create it (409 `routine_owner_inactive` when the owner no longer may). Its \
        schedule is unchanged. Event `routine.fired` with `manual: true`.",
    params(("id" = uuid::Uuid, Path, description = "Routine id")),
    request_body = Option<EmptyRequest>,
    responses((status = 200, description = "The task created", body = dto::Data<TaskResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn run(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<TaskResponse>> {
    let id = routine_id(&path)?;
    parse_optional_json::<EmptyRequest>(&auth.body)?;
    let task = state.routines.run_now(&auth.actor, id).await?;
    Ok(Json(dto::Data { data: task.into() }))
}
