use actix_web::web::{Data, Json, Path};
use actix_web::{HttpRequest, HttpResponse};
use muster_domain::model::EventId;

use crate::answers;
use crate::body::parse_query;
use crate::dto::events::{EventListMeta, EventResponse, ListEventsQuery};
use crate::dto::{self, Paged};
use crate::error::{ApiError, ErrorBody, codes};
use crate::extract::Authenticated;
use crate::schemas::StreamEvent;
use crate::state::AppState;
use muster_domain::model::EventSeverity;

/// `GET /events`.
#[utoipa::path(
    get,
    path = "/events",
    operation_id = "listEvents",
    tag = "events",
    summary = "List the organization's audit events",
    params(ListEventsQuery),
    responses((status = 200, description = "OK", body = Paged<EventResponse, EventListMeta>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn list(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<Json<Paged<EventResponse, EventListMeta>>, ApiError> {
    let query: ListEventsQuery = parse_query(req.query_string())?;
    let page = query.page();
    let found = state
        .events
        .list(&auth.actor, &query.filter()?, page)
        .await?;
    Ok(Json(answers::events(found, page)))
}

/// `GET /events/:id`.
#[utoipa::path(
    get,
    path = "/events/{id}",
    operation_id = "getEvent",
    tag = "events",
    summary = "Read an audit event",
    params(("id" = uuid::Uuid, Path, description = "Event id")),
    responses((status = 200, description = "OK", body = dto::Data<EventResponse>)),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Result<Json<dto::Data<EventResponse>>, ApiError> {
    let id = crate::body::parse_uuid("id", &path).map(EventId::from_uuid)?;
    let event = state.events.get(&auth.actor, id).await?;
    Ok(Json(dto::Data { data: event.into() }))
}

/// `GET /events/stream`: the organization's events as Server-Sent Events, from now on or
/// after `Last-Event-ID`.
#[utoipa::path(
    get,
    path = "/events/stream",
    operation_id = "streamEvents",
    tag = "events",
    summary = "Follow the organization's audit events live (Server-Sent Events)",
    params(
        ("type" = Option<String>, Query, description = "Only events of this type"),
        ("actorId" = Option<uuid::Uuid>, Query, description = "Only events by this actor"),
        ("entityType" = Option<String>, Query, description = "Only events about this kind of entity"),
        ("entityId" = Option<uuid::Uuid>, Query, description = "Only events about this entity"),
        ("severity" = Option<EventSeverity>, Query, description = "Only events of this severity"),
        ("startDate" = Option<String>, Query, format = DateTime, description = "Only events at or after this time (a date means its start)"),
        ("endDate" = Option<String>, Query, format = DateTime, description = "Only events at or before this time (a date means its end)"),
        ("Last-Event-ID" = Option<uuid::Uuid>, Header, description = "Resume after this event (browsers send it when they reconnect)")
    ),
    responses(
        (status = 200, description = "A Server-Sent Events stream: `retry`, then one `id`/`data` pair per event (the JSON of `GET /events/{id}`'s `data`), with `: heartbeat` comments in between", content_type = "text/event-stream", body = StreamEvent),
        (status = 503, description = "Too many streams are open on this instance, or for the caller's organization (its share of the instance's)", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait")))
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn stream(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    let query: ListEventsQuery = parse_query(req.query_string())?;
    if query.pages() {
        return Err(ApiError::bad_request(
            "page and limit do not apply to a stream; use GET /events for pages",
        ));
    }
    let filter = query.filter()?;
    let last_seen = match req.headers().get("last-event-id") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| uuid::Uuid::parse_str(v.trim()).ok())
                .map(EventId::from_uuid)
                .ok_or_else(|| {
                    ApiError::bad_request("Last-Event-ID must be the id (a UUID) of an event")
                })?,
        ),
    };
    let slot = state.streams.reserve(auth.actor.org_id).map_err(|full| {
        ApiError::busy(codes::TOO_MANY_STREAMS, format!("{full}; retry later"), 5)
    })?;
    let from = state
        .events
        .stream_from(&auth.actor, &filter, last_seen)
        .await?;
    let body = state
        .streams
        .open(state.events.clone(), auth.actor, filter, from, slot);
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-cache"))
        // Proxies that buffer responses (nginx) would hold events back.
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body))
}
