use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::EventId;

use crate::ApiError;
use crate::body::parse_query;
use crate::dto::events::{EventListMeta, EventResponse, ListEventsQuery};
use crate::dto::{self, Paged};
use crate::extract::Authenticated;
use crate::state::AppState;

/// `GET /events`.
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
    Ok(Json(Paged {
        data: found.events.into_iter().map(EventResponse::from).collect(),
        meta: EventListMeta {
            total: found.total,
            page: page.page,
            limit: page.limit,
        },
    }))
}

/// `GET /events/:id`.
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Result<Json<dto::Data<EventResponse>>, ApiError> {
    let id = dto::parse_uuid("id", &path).map(EventId::from_uuid)?;
    let event = state.events.get(&auth.actor, id).await?;
    Ok(Json(dto::Data { data: event.into() }))
}
