//! Runs (decision D-106): an agent's attempt at its task, with its live log, its usage
//! reports paid from its credits, and the stop it learns from every answer.

use crate::request_span::current_trace_id;
use actix_web::web::{Data, Json, Path};
use actix_web::{HttpRequest, HttpResponse};
use muster_domain::model::RunId;
use muster_domain::service::runs_of_task;

use super::tasks::{Answer, task_id};
use crate::body::{parse_json, parse_optional_json, parse_query};
use crate::dto;
use crate::dto::claims::HeartbeatBody;
use crate::dto::paging::{PageQuery, PageResponse};
use crate::dto::runs::{
    FinishRunBody, ListRunsQuery, LogBody, LogPageResponse, LogQuery, LogStreamQuery, RunResponse,
    StartRunBody, StopRunBody, UsageAnswerResponse, UsageBody,
};
use crate::error::{ApiError, ErrorBody, codes};
use crate::extract::Authenticated;
use crate::run_log_stream;
use crate::schemas::RunLogStreamEvent;
use crate::state::AppState;

fn run_id(path: &str) -> Result<RunId, ApiError> {
    crate::body::parse_uuid("id", path).map(RunId::from_uuid)
}

/// `{data: run}`.
fn one(run: muster_domain::model::Run) -> Json<dto::Data<RunResponse>> {
    Json(dto::Data { data: run.into() })
}

/// `POST /tasks/:id/runs`: 201 with the run.
#[utoipa::path(
    post,
    path = "/tasks/{id}/runs",
    operation_id = "startRun",
    tag = "runs",
    summary = "Start a run of a task",
    description = "The task's assignee starts its attempt at a task `in_progress`: 409 \
        `not_task_assignee` for anyone else, `task_not_in_progress` before or after, \
        `run_already_open` while the task has a `running` run, and `budget_exhausted` \
        when the agent's credits ran out or cannot hold `reserveCredits`. The \
        reservation is drawn first by the run's usage and released when it ends. \
        Event `run.started`.",
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    request_body = Option<StartRunBody>,
    responses((status = 201, description = "The run, `running`", body = dto::Data<RunResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn start(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    let task = task_id(&path)?;
    let start = parse_optional_json::<StartRunBody>(&auth.body)?.into_start(current_trace_id())?;
    let run = state.runs.start(&auth.actor, task, start).await?;
    Ok(HttpResponse::Created().json(dto::Data {
        data: RunResponse::from(run),
    }))
}

/// `GET /tasks/:id/runs`.
#[utoipa::path(
    get,
    path = "/tasks/{id}/runs",
    operation_id = "listTaskRuns",
    tag = "runs",
    summary = "List a task's runs, newest first",
    description = "By pages (`limit`, `cursor`; `meta.nextCursor` when more remain). 404 \
        when the task is not there.",
    params(("id" = uuid::Uuid, Path, description = "Task id"), PageQuery),
    responses((status = 200, description = "OK", body = PageResponse<RunResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn of_task(
    state: Data<AppState>,
    path: Path<String>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<RunResponse>> {
    let task = task_id(&path)?;
    let page = crate::body::parse_page(req.query_string())?;
    // The task must be there (and the caller's): an empty list would not say so.
    state.tasks.get(&auth.actor, task).await?;
    let runs = state
        .runs
        .list(&auth.actor, &runs_of_task(task), page)
        .await?;
    Ok(Json(PageResponse::of(runs, RunResponse::from)))
}

/// `GET /runs`.
#[utoipa::path(
    get,
    path = "/runs",
    operation_id = "listRuns",
    tag = "runs",
    summary = "List the organization's runs, newest first",
    description = "Filtered by agent, task, status and when they started; by pages \
        (`limit`, `cursor`; `meta.nextCursor` when more remain).",
    params(ListRunsQuery),
    responses((status = 200, description = "OK", body = PageResponse<RunResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn list(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<PageResponse<RunResponse>> {
    let query: ListRunsQuery = parse_query(req.query_string())?;
    let runs = state
        .runs
        .list(&auth.actor, &query.filter()?, query.page()?)
        .await?;
    Ok(Json(PageResponse::of(runs, RunResponse::from)))
}

/// `GET /runs/:id`.
#[utoipa::path(
    get,
    path = "/runs/{id}",
    operation_id = "getRun",
    tag = "runs",
    summary = "Read a run",
    description = "Its status, its usage (totals and by model), its log's size and \
        whether it was asked to stop. 404 `run_not_found` for another organization's.",
    params(("id" = uuid::Uuid, Path, description = "Run id")),
    responses((status = 200, description = "OK", body = dto::Data<RunResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<RunResponse>> {
    let run = state.runs.get(&auth.actor, run_id(&path)?).await?;
    Ok(one(run))
}

/// `POST /runs/:id/log`.
#[utoipa::path(
    post,
    path = "/runs/{id}/log",
    operation_id = "appendRunLog",
    tag = "runs",
    summary = "Append lines to a run's log",
    description = "The run's agent, while it runs. At most 10,000 lines and 1 MiB a \
        call (413 beyond). A log keeps 10 MiB of text: the first line past it is \
        replaced by one `system` marker line and later lines are not kept (the call \
        still answers the run, so its agent learns of a stop).",
    params(("id" = uuid::Uuid, Path, description = "Run id")),
    request_body = LogBody,
    responses((status = 200, description = "The run", body = dto::Data<RunResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn append_log(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<RunResponse>> {
    let id = run_id(&path)?;
    let lines = parse_json::<LogBody>(&auth.body)?.into_lines()?;
    let run = state.runs.append_log(&auth.actor, id, lines).await?;
    Ok(one(run))
}

/// `GET /runs/:id/log`.
#[utoipa::path(
    get,
    path = "/runs/{id}/log",
    operation_id = "getRunLog",
    tag = "runs",
    summary = "Read a run's log",
    description = "Up to `limit` lines numbered after `after`, in order; pass `last` as \
        the next `after` to follow the log.",
    params(("id" = uuid::Uuid, Path, description = "Run id"), LogQuery),
    responses((status = 200, description = "OK", body = LogPageResponse)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn log(
    state: Data<AppState>,
    path: Path<String>,
    req: HttpRequest,
    auth: Authenticated,
) -> Answer<LogPageResponse> {
    let id = run_id(&path)?;
    let query: LogQuery = parse_query(req.query_string())?;
    let page = state
        .runs
        .log(&auth.actor, id, query.after(), query.limit())
        .await?;
    Ok(Json(LogPageResponse {
        data: page.lines.into_iter().map(Into::into).collect(),
        last: page.last,
        truncated: page.truncated,
    }))
}

/// `GET /runs/:id/log/stream`: the run's log as Server-Sent Events, after `after` or
/// `Last-Event-ID`, until the run ended and every line was sent.
#[utoipa::path(
    get,
    path = "/runs/{id}/log/stream",
    operation_id = "streamRunLog",
    tag = "runs",
    summary = "Follow a run's log live (Server-Sent Events)",
    description = "Each line is one event: `id` is its number (the `after` of `GET \
        /runs/{id}/log`), `data` the line as that route shows it. Starts after `after` \
        (default 0: the whole log), or after `Last-Event-ID` when sent (browsers send it \
        when they reconnect). When the run is no longer running and every line was \
        sent, a last `event: end` carries the run and the stream ends. `: heartbeat` \
        comments keep an idle stream open. Shares the bounds of `GET /events/stream`.",
    params(
        ("id" = uuid::Uuid, Path, description = "Run id"),
        LogStreamQuery,
        ("Last-Event-ID" = Option<i64>, Header, minimum = 0, description = "Resume after this line (the `id` of the last event received)")
    ),
    responses(
        (status = 200, description = "A Server-Sent Events stream: `retry`, then one `id`/`data` pair per line, then `event: end` with the run", content_type = "text/event-stream", body = RunLogStreamEvent),
        (status = 503, description = "Too many streams are open on this instance, or for the caller's organization (its share of the instance's)", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait")))
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn stream_log(
    state: Data<AppState>,
    path: Path<String>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    let id = run_id(&path)?;
    let query: LogStreamQuery = parse_query(req.query_string())?;
    let after = match req.headers().get("last-event-id") {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse::<i64>().ok())
            .filter(|after| *after >= 0)
            .ok_or_else(|| {
                ApiError::bad_request(
                    "Last-Event-ID must be the number (0 or more) of a line of the run's log",
                )
            })?,
        None => match query.after {
            Some(after) if after < 0 => {
                return Err(ApiError::bad_request("after must be 0 or more"));
            }
            after => after.unwrap_or(0),
        },
    };
    // Another organization's run is not found, before any place is taken.
    state.runs.get(&auth.actor, id).await?;
    let slot = state.streams.reserve(auth.actor.org_id).map_err(|full| {
        ApiError::busy(codes::TOO_MANY_STREAMS, format!("{full}; retry later"), 5)
    })?;
    let body = run_log_stream::open(
        &state.streams,
        state.runs.clone(),
        auth.actor,
        id,
        after,
        slot,
    );
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-cache"))
        // Proxies that buffer responses (nginx) would hold lines back.
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body))
}

/// `POST /runs/:id/usage`: 201 with the report, 200 with `report: null` for a repeated
/// `reportId`.
#[utoipa::path(
    post,
    path = "/runs/{id}/usage",
    operation_id = "reportRunUsage",
    tag = "runs",
    summary = "Report the tokens a run used, and pay for them",
    description = "The run's agent, while it runs. The cost is the one reported, else \
        the operator's price table's, else unknown (no credits). Credits (at the \
        deployment's rate per US dollar) are drawn from the run's reservation, then \
        from what the agent may still spend; what exceeds that is recorded as unfunded, \
        the run is asked to stop (`stopReason` `budget`) and the agent may not claim \
        tasks or start runs until it has credits again (409 `budget_exhausted`). A \
        repeated `reportId` counts once.",
    params(("id" = uuid::Uuid, Path, description = "Run id")),
    request_body = UsageBody,
    responses(
        (status = 201, description = "The report, recorded and paid", body = UsageAnswerResponse),
        (status = 200, description = "The `reportId` was already counted: `report` is null", body = UsageAnswerResponse)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn report_usage(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    let id = run_id(&path)?;
    let usage = parse_json::<UsageBody>(&auth.body)?.into_usage()?;
    let answer = state.runs.report_usage(&auth.actor, id, usage).await?;
    let mut reply = if answer.report.is_some() {
        HttpResponse::Created()
    } else {
        HttpResponse::Ok()
    };
    Ok(reply.json(UsageAnswerResponse {
        data: answer.run.into(),
        report: answer.report.map(Into::into),
    }))
}

/// `POST /runs/:id/heartbeat`.
#[utoipa::path(
    post,
    path = "/runs/{id}/heartbeat",
    operation_id = "heartbeatRun",
    tag = "runs",
    summary = "Keep a run's task leased",
    description = "The run's agent, while it runs: extends the lease of the run's task \
        as `POST /tasks/{id}/heartbeat` does, and answers the run (`stopRequested`).",
    params(("id" = uuid::Uuid, Path, description = "Run id")),
    request_body = Option<HeartbeatBody>,
    responses((status = 200, description = "The run", body = dto::Data<RunResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn heartbeat(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<RunResponse>> {
    let id = run_id(&path)?;
    let lease = parse_optional_json::<HeartbeatBody>(&auth.body)?.lease()?;
    let run = state.runs.heartbeat(&auth.actor, id, lease).await?;
    Ok(one(run))
}

/// `POST /runs/:id/finish`.
#[utoipa::path(
    post,
    path = "/runs/{id}/finish",
    operation_id = "finishRun",
    tag = "runs",
    summary = "Finish a run",
    description = "The run's agent ends it `succeeded`, `failed`, `cancelled` or \
        `stopped`, with its exit code and a summary; the rest of its reservation is \
        released. 409 `run_closed` when it already ended. Event `run.finished`.",
    params(("id" = uuid::Uuid, Path, description = "Run id")),
    request_body = FinishRunBody,
    responses((status = 200, description = "The finished run", body = dto::Data<RunResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn finish(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<RunResponse>> {
    let id = run_id(&path)?;
    let finish = parse_json::<FinishRunBody>(&auth.body)?.into_finish()?;
    let run = state.runs.finish(&auth.actor, id, finish).await?;
    Ok(one(run))
}

/// `POST /runs/:id/stop`.
#[utoipa::path(
    post,
    path = "/runs/{id}/stop",
    operation_id = "stopRun",
    tag = "runs",
    summary = "Ask a run to stop",
    description = "Whoever oversees the run's agent (itself, its parent, a level-10, \
        admin or founder agent, a person) sets `stopRequested` with `stopReason` \
        `requested`; its agent learns it from its next answer. Asking again, or of a \
        finished run, changes nothing. The body is optional; its `reason` (free text, \
        at most 500 characters, trimmed) goes into the event as `note`. Event \
        `run.stop_requested`.",
    params(("id" = uuid::Uuid, Path, description = "Run id")),
    request_body = Option<StopRunBody>,
    responses((status = 200, description = "The run", body = dto::Data<RunResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn stop(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<RunResponse>> {
    let id = run_id(&path)?;
    let reason = parse_optional_json::<StopRunBody>(&auth.body)?.reason;
    let run = state.runs.stop_with_reason(&auth.actor, id, reason).await?;
    Ok(one(run))
}
