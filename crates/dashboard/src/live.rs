//! `GET /ui/live`: the organization's task events as Server-Sent Events, for the
//! board's script (a browser's `EventSource` cannot send the API's Authorization
//! header; it sends the session cookie). Each event tells the board to read its
//! columns again.

use actix_web::HttpResponse;
use actix_web::web::Data;
use muster_domain::ports::EventFilter;
use muster_http::{AppState, StreamScope};

use crate::refusal::Refusal;
use crate::session::Viewer;

pub(crate) async fn stream(state: Data<AppState>, viewer: Viewer) -> HttpResponse {
    let slot = match state.streams.reserve(viewer.actor.org_id) {
        Ok(slot) => slot,
        Err(full) => {
            let whose = match full.scope {
                StreamScope::Instance => "",
                StreamScope::Organization => " for this organization",
            };
            return Refusal {
                status: actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
                code: Some(muster_http::error_codes::TOO_MANY_STREAMS),
                message: format!("too many open event streams{whose}; retry later"),
            }
            .into_text();
        }
    };
    let filter = EventFilter {
        entity_type: Some("task".to_owned()),
        ..EventFilter::default()
    };
    let from = match state.events.stream_from(&viewer.actor, &filter, None).await {
        Ok(from) => from,
        Err(err) => return Refusal::from(err).into_text(),
    };
    let body = state
        .streams
        .open(state.events.clone(), viewer.actor, filter, from, slot);
    HttpResponse::Ok()
        .content_type("text/event-stream")
        // A renewed session's cookies may ride on this answer: never kept by a cache.
        .insert_header(("cache-control", "no-store"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body)
}
