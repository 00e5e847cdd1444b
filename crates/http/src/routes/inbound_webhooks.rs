//! `/api/v1/inbound-webhooks` (key management, signed-in users only) and
//! `/api/v1/webhooks/inbound/:key` (task creation by other systems; the key in the path
//! is the credential), decision D-80.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::InboundKeyId;
use muster_domain::service::{InboundService, IssuedKey, Page, ServiceError};

use crate::body::{parse_json, parse_page};
use crate::dto::auth::MessageResponse;
use crate::dto::inbound_webhooks::{
    CreateInboundKeyBody, InboundBatchBody, InboundKeyResponse, InboundTaskBody,
    UpdateInboundKeyBody,
};
use crate::dto::paging::{PageQuery, PageResponse};
use crate::dto::tasks::TaskResponse;
use crate::dto::{self, Data as Envelope};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{RawBody, SignedInUser};
use crate::state::AppState;

/// The optional body signature of an inbound request.
const SIGNATURE_HEADER: &str = "x-service-signature";

fn key_id(path: &str) -> Result<InboundKeyId, ApiError> {
    crate::body::parse_uuid("id", path).map(InboundKeyId::from_uuid)
}

fn issued(issued: IssuedKey) -> Json<InboundKeyResponse> {
    Json(InboundKeyResponse::new(&issued.key, Some(issued.secret)))
}

/// `POST /api/v1/inbound-webhooks`.
#[utoipa::path(
    post,
    path = "/api/v1/inbound-webhooks",
    operation_id = "createInboundKey",
    tag = "inbound webhooks",
    summary = "Create an inbound webhook key; the key is answered once",
    request_body = CreateInboundKeyBody,
    responses((status = 200, description = "OK", body = InboundKeyResponse)),
    security(("userToken" = []))
)]
pub(super) async fn create(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<Json<InboundKeyResponse>, ApiError> {
    let body: CreateInboundKeyBody = parse_json(&user.body)?;
    Ok(issued(
        state.inbound.create(&user.actor, body.into_new()?).await?,
    ))
}

/// `GET /api/v1/inbound-webhooks`.
#[utoipa::path(
    get,
    path = "/api/v1/inbound-webhooks",
    operation_id = "listInboundKeys",
    tag = "inbound webhooks",
    summary = "List inbound webhook keys",
    description = "Newest first, by pages (`limit`, `cursor`; `meta.nextCursor` when more remain).",
    params(PageQuery),
    responses((status = 200, description = "OK", body = PageResponse<InboundKeyResponse>)),
    security(("userToken" = []))
)]
pub(super) async fn list(
    state: Data<AppState>,
    req: HttpRequest,
    user: SignedInUser,
) -> Result<Json<PageResponse<InboundKeyResponse>>, ApiError> {
    let request = parse_page(req.query_string())?;
    let keys = state.inbound.list(&user.actor).await?;
    let page = Page::of_newest_first(keys, &request, |k| k.id)?;
    Ok(Json(PageResponse::of(page, |k| {
        InboundKeyResponse::new(&k, None)
    })))
}

/// `GET /api/v1/inbound-webhooks/:id`.
#[utoipa::path(
    get,
    path = "/api/v1/inbound-webhooks/{id}",
    operation_id = "getInboundKey",
    tag = "inbound webhooks",
    summary = "Read an inbound webhook key",
    params(("id" = uuid::Uuid, Path, description = "Inbound webhook key id")),
    responses((status = 200, description = "OK", body = InboundKeyResponse)),
    security(("userToken" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<InboundKeyResponse>, ApiError> {
    let key = state.inbound.get(&user.actor, key_id(&path)?).await?;
    Ok(Json(InboundKeyResponse::new(&key, None)))
}

/// `PATCH /api/v1/inbound-webhooks/:id`.
#[utoipa::path(
    patch,
    path = "/api/v1/inbound-webhooks/{id}",
    operation_id = "updateInboundKey",
    tag = "inbound webhooks",
    summary = "Change an inbound webhook key's defaults",
    params(("id" = uuid::Uuid, Path, description = "Inbound webhook key id")),
    request_body = UpdateInboundKeyBody,
    responses((status = 200, description = "OK", body = InboundKeyResponse)),
    security(("userToken" = []))
)]
pub(super) async fn update(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<InboundKeyResponse>, ApiError> {
    let id = key_id(&path)?;
    let body: UpdateInboundKeyBody = parse_json(&user.body)?;
    let key = state
        .inbound
        .update(&user.actor, id, body.into_patch()?)
        .await?;
    Ok(Json(InboundKeyResponse::new(&key, None)))
}

/// `POST /api/v1/inbound-webhooks/:id/rotate`.
#[utoipa::path(
    post,
    path = "/api/v1/inbound-webhooks/{id}/rotate",
    operation_id = "rotateInboundKey",
    tag = "inbound webhooks",
    summary = "Replace an inbound webhook key; the new key is answered once",
    params(("id" = uuid::Uuid, Path, description = "Inbound webhook key id")),
    responses((status = 200, description = "OK", body = InboundKeyResponse)),
    security(("userToken" = []))
)]
pub(super) async fn rotate(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<InboundKeyResponse>, ApiError> {
    Ok(issued(
        state.inbound.rotate(&user.actor, key_id(&path)?).await?,
    ))
}

/// `DELETE /api/v1/inbound-webhooks/:id`.
#[utoipa::path(
    delete,
    path = "/api/v1/inbound-webhooks/{id}",
    operation_id = "deleteInboundKey",
    tag = "inbound webhooks",
    summary = "Delete an inbound webhook key",
    params(("id" = uuid::Uuid, Path, description = "Inbound webhook key id")),
    responses((status = 200, description = "OK", body = MessageResponse)),
    security(("userToken" = []))
)]
pub(super) async fn delete(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<MessageResponse>, ApiError> {
    state.inbound.delete(&user.actor, key_id(&path)?).await?;
    Ok(Json(MessageResponse {
        message: "Inbound webhook key deleted".into(),
    }))
}

/// The key record of the request, its signature checked, before the body is read.
async fn authenticated(
    inbound: &InboundService,
    req: &HttpRequest,
    key: &str,
    body: &[u8],
) -> Result<muster_domain::model::InboundKey, ApiError> {
    // A header that is not text cannot match a hex signature: compare it as given.
    let signature = req
        .headers()
        .get(SIGNATURE_HEADER)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let signature = signature.as_deref();
    Ok(inbound.authenticate(key, signature, body).await?)
}

/// `POST /api/v1/webhooks/inbound/:key`: one task.
#[utoipa::path(
    post,
    path = "/api/v1/webhooks/inbound/{key}",
    operation_id = "ingestTask",
    tag = "inbound webhooks",
    summary = "Create one task through an inbound webhook key",
    params(("key" = String, Path, description = "The inbound webhook key, as issued (it is the credential)"),
        ("x-service-signature" = Option<String>, Header, description = "Optional: the lowercase hex HMAC-SHA256 of the raw body, keyed with the key's `secret`; when present it must match")),
    request_body = InboundTaskBody,
    responses(
        (status = 200, description = "The created task", body = dto::Data<TaskResponse>),
        (status = 401, description = "`x-service-signature` does not match", body = ErrorBody),
        (status = 404, description = "Unknown, rotated, deleted or disabled key", body = ErrorBody)
    ),
    security(())
)]
pub(super) async fn ingest(
    state: Data<AppState>,
    req: HttpRequest,
    path: Path<String>,
    body: RawBody,
) -> Result<Json<Envelope<TaskResponse>>, ApiError> {
    let key = authenticated(&state.inbound, &req, &path, &body.0).await?;
    let item: InboundTaskBody = parse_json(&body.0)?;
    let mut tasks = state
        .inbound
        .ingest(&key, vec![item.into_task()?], false)
        .await?;
    let task = tasks
        .pop()
        .ok_or_else(|| ApiError::from(ServiceError::internal("ingestion created no task")))?;
    Ok(Json(Envelope { data: task.into() }))
}

/// `POST /api/v1/webhooks/inbound/:key/batch`: up to 100 tasks, all or none.
#[utoipa::path(
    post,
    path = "/api/v1/webhooks/inbound/{key}/batch",
    operation_id = "ingestTasks",
    tag = "inbound webhooks",
    summary = "Create up to 100 tasks through an inbound webhook key, all or none",
    params(("key" = String, Path, description = "The inbound webhook key, as issued (it is the credential)"),
        ("x-service-signature" = Option<String>, Header, description = "Optional: the lowercase hex HMAC-SHA256 of the raw body, keyed with the key's `secret`; when present it must match")),
    request_body = InboundBatchBody,
    responses(
        (status = 200, description = "The created tasks, in order", body = dto::Data<Vec<TaskResponse>>),
        (status = 401, description = "`x-service-signature` does not match", body = ErrorBody),
        (status = 404, description = "Unknown, rotated, deleted or disabled key", body = ErrorBody)
    ),
    security(())
)]
pub(super) async fn ingest_batch(
    state: Data<AppState>,
    req: HttpRequest,
    path: Path<String>,
    body: RawBody,
) -> Result<Json<Envelope<Vec<TaskResponse>>>, ApiError> {
    let key = authenticated(&state.inbound, &req, &path, &body.0).await?;
    let batch: InboundBatchBody = parse_json(&body.0)?;
    let items = batch.into_tasks()?;
    let tasks = state.inbound.ingest(&key, items, true).await?;
    Ok(Json(Envelope {
        data: tasks.into_iter().map(TaskResponse::from).collect(),
    }))
}
