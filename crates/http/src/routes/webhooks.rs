//! `/api/v1/webhooks`: outbound webhook management, delivery logs and test deliveries
//! (decisions D-81 to D-85). Signed-in users only (decision D-17).

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::WebhookId;
use muster_domain::service::Page;

use crate::body::{parse_json, parse_page, parse_query};
use crate::dto::auth::MessageResponse;
use crate::dto::paging::{PageQuery, PageResponse};
use crate::dto::webhooks::{
    CreateWebhookBody, DeliveriesQuery, DeliveryPageMeta, DeliveryResponse, TestResponse,
    UpdateWebhookBody, WebhookResponse,
};
use crate::dto::{self, Data as Envelope};
use crate::error::ApiError;
use crate::extract::SignedInUser;
use crate::state::AppState;

fn hook_id(path: &str) -> Result<WebhookId, ApiError> {
    crate::body::parse_uuid("id", path).map(WebhookId::from_uuid)
}

/// `POST /api/v1/webhooks`.
#[utoipa::path(
    post,
    path = "/api/v1/webhooks",
    operation_id = "createWebhook",
    tag = "webhooks",
    summary = "Create an outbound webhook",
    request_body = CreateWebhookBody,
    responses((status = 200, description = "OK", body = WebhookResponse)),
    security(("userToken" = []))
)]
pub(super) async fn create(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<Json<WebhookResponse>, ApiError> {
    let body: CreateWebhookBody = parse_json(&user.body)?;
    let hook = state
        .webhooks
        .register(&user.actor, body.into_new()?)
        .await?;
    Ok(Json(WebhookResponse::from(&hook)))
}

/// `GET /api/v1/webhooks`.
#[utoipa::path(
    get,
    path = "/api/v1/webhooks",
    operation_id = "listWebhooks",
    tag = "webhooks",
    summary = "List outbound webhooks",
    description = "Newest first, by pages (`limit`, `cursor`; `meta.nextCursor` when more remain).",
    params(PageQuery),
    responses((status = 200, description = "OK", body = PageResponse<WebhookResponse>)),
    security(("userToken" = []))
)]
pub(super) async fn list(
    state: Data<AppState>,
    req: HttpRequest,
    user: SignedInUser,
) -> Result<Json<PageResponse<WebhookResponse>>, ApiError> {
    let request = parse_page(req.query_string())?;
    let hooks = state.webhooks.list(&user.actor).await?;
    let page = Page::of_newest_first(hooks, &request, |h| h.id)?;
    Ok(Json(PageResponse::of(page, |h| WebhookResponse::from(&h))))
}

/// `GET /api/v1/webhooks/:id`.
#[utoipa::path(
    get,
    path = "/api/v1/webhooks/{id}",
    operation_id = "getWebhook",
    tag = "webhooks",
    summary = "Read an outbound webhook",
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "OK", body = WebhookResponse)),
    security(("userToken" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<WebhookResponse>, ApiError> {
    let hook = state.webhooks.get(&user.actor, hook_id(&path)?).await?;
    Ok(Json(WebhookResponse::from(&hook)))
}

/// `PATCH /api/v1/webhooks/:id`.
#[utoipa::path(
    patch,
    path = "/api/v1/webhooks/{id}",
    operation_id = "updateWebhook",
    tag = "webhooks",
    summary = "Change an outbound webhook",
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    request_body = UpdateWebhookBody,
    responses((status = 200, description = "OK", body = WebhookResponse)),
    security(("userToken" = []))
)]
pub(super) async fn update(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<WebhookResponse>, ApiError> {
    let id = hook_id(&path)?;
    let body: UpdateWebhookBody = parse_json(&user.body)?;
    let hook = state
        .webhooks
        .update(&user.actor, id, body.into_patch()?)
        .await?;
    Ok(Json(WebhookResponse::from(&hook)))
}

/// `DELETE /api/v1/webhooks/:id`.
#[utoipa::path(
    delete,
    path = "/api/v1/webhooks/{id}",
    operation_id = "deleteWebhook",
    tag = "webhooks",
    summary = "Delete an outbound webhook",
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "OK", body = MessageResponse)),
    security(("userToken" = []))
)]
pub(super) async fn delete(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<MessageResponse>, ApiError> {
    state.webhooks.delete(&user.actor, hook_id(&path)?).await?;
    Ok(Json(MessageResponse {
        message: "Webhook deleted".into(),
    }))
}

/// `GET /api/v1/webhooks/:id/deliveries?limit&page`: the hook's calls, newest first,
/// with `meta: {total, page, limit}`.
#[utoipa::path(
    get,
    path = "/api/v1/webhooks/{id}/deliveries",
    operation_id = "listWebhookDeliveries",
    tag = "webhooks",
    summary = "List a webhook's delivery attempts, newest first",
    params(("id" = uuid::Uuid, Path, description = "Webhook id"), DeliveriesQuery),
    responses((status = 200, description = "OK", body = dto::Paged<DeliveryResponse, DeliveryPageMeta>)),
    security(("userToken" = []))
)]
pub(super) async fn deliveries(
    state: Data<AppState>,
    req: HttpRequest,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<dto::Paged<DeliveryResponse, DeliveryPageMeta>>, ApiError> {
    let id = hook_id(&path)?;
    let query: DeliveriesQuery = parse_query(req.query_string())?;
    let page = query.page.unwrap_or(1);
    if page == 0 {
        return Err(ApiError::bad_request("page must be at least 1"));
    }
    let limit = query
        .limit
        .unwrap_or(muster_domain::service::WebhookService::DEFAULT_LOG_LIMIT);
    let offset = u64::from(page - 1).saturating_mul(u64::from(limit));
    let (attempts, total) = state
        .webhooks
        .attempts(&user.actor, id, Some(limit), offset)
        .await?;
    let data: Vec<DeliveryResponse> = attempts.iter().map(DeliveryResponse::from).collect();
    Ok(Json(dto::Paged {
        data,
        meta: DeliveryPageMeta { total, page, limit },
    }))
}

/// `POST /api/v1/webhooks/:id/test` (decision D-85).
#[utoipa::path(
    post,
    path = "/api/v1/webhooks/{id}/test",
    operation_id = "testWebhook",
    tag = "webhooks",
    summary = "Send a test event to a webhook now",
    params(("id" = uuid::Uuid, Path, description = "Webhook id")),
    responses((status = 200, description = "OK", body = dto::Data<TestResponse>)),
    security(("userToken" = []))
)]
pub(super) async fn test(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<Envelope<TestResponse>>, ApiError> {
    let outcome = state.webhooks.test(&user.actor, hook_id(&path)?).await?;
    Ok(Json(Envelope {
        data: TestResponse::from(outcome),
    }))
}
