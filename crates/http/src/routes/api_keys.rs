//! `/api-keys`: the signed-in user's keys (decision D-17).

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::ApiKeyId;
use muster_domain::service::{NewApiKey, Page};

use crate::body::{parse_json, parse_page};
use crate::dto::auth::{ApiKeyResponse, CreateApiKeyBody, MessageResponse};
use crate::dto::paging::{PageQuery, PageResponse};
use crate::error::ApiError;
use crate::extract::SignedInUser;
use crate::state::AppState;

fn key_id(path: &str) -> Result<ApiKeyId, ApiError> {
    crate::body::parse_uuid("id", path).map(ApiKeyId::from_uuid)
}

/// `POST /api-keys`.
#[utoipa::path(
    post,
    path = "/api-keys",
    operation_id = "createApiKey",
    tag = "API keys",
    summary = "Create an API key; the key is answered once",
    request_body = CreateApiKeyBody,
    responses((status = 200, description = "OK", body = ApiKeyResponse)),
    security(("userToken" = []))
)]
pub(super) async fn create(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<Json<ApiKeyResponse>, ApiError> {
    let body: CreateApiKeyBody = parse_json(&user.body)?;
    let (key, secret) = state
        .api_keys
        .create(
            &user.actor,
            NewApiKey {
                name: body.name,
                scopes: body.scopes,
                expires_in_days: body.expires_in_days,
            },
        )
        .await?;
    Ok(Json(ApiKeyResponse::new(&key, Some(&secret))))
}

/// `GET /api-keys`.
#[utoipa::path(
    get,
    path = "/api-keys",
    operation_id = "listApiKeys",
    tag = "API keys",
    summary = "List the caller's API keys",
    description = "Newest first, by pages (`limit`, `cursor`; `meta.nextCursor` when more remain).",
    params(PageQuery),
    responses((status = 200, description = "OK", body = PageResponse<ApiKeyResponse>)),
    security(("userToken" = []))
)]
pub(super) async fn list(
    state: Data<AppState>,
    req: HttpRequest,
    user: SignedInUser,
) -> Result<Json<PageResponse<ApiKeyResponse>>, ApiError> {
    let request = parse_page(req.query_string())?;
    let keys = state.api_keys.list(&user.actor).await?;
    let page = Page::of_newest_first(keys, &request, |k| k.id)?;
    Ok(Json(PageResponse::of(page, |k| {
        ApiKeyResponse::new(&k, None)
    })))
}

/// `GET /api-keys/:id`.
#[utoipa::path(
    get,
    path = "/api-keys/{id}",
    operation_id = "getApiKey",
    tag = "API keys",
    summary = "Read an API key (never the key itself)",
    params(("id" = uuid::Uuid, Path, description = "API key id")),
    responses((status = 200, description = "OK", body = ApiKeyResponse)),
    security(("userToken" = []))
)]
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<ApiKeyResponse>, ApiError> {
    let key = state.api_keys.get(&user.actor, key_id(&path)?).await?;
    Ok(Json(ApiKeyResponse::new(&key, None)))
}

/// `DELETE /api-keys/:id`.
#[utoipa::path(
    delete,
    path = "/api-keys/{id}",
    operation_id = "revokeApiKey",
    tag = "API keys",
    summary = "Revoke an API key",
    params(("id" = uuid::Uuid, Path, description = "API key id")),
    responses((status = 200, description = "OK", body = MessageResponse)),
    security(("userToken" = []))
)]
pub(super) async fn delete(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<MessageResponse>, ApiError> {
    state.api_keys.delete(&user.actor, key_id(&path)?).await?;
    Ok(Json(MessageResponse {
        message: "API key revoked".into(),
    }))
}
