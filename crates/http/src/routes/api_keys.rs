//! `/api-keys`: the signed-in user's keys (decision D-17).

use actix_web::web::{Data, Json, Path};
use muster_domain::model::ApiKeyId;
use muster_domain::service::NewApiKey;

use crate::ApiError;
use crate::body::parse_json;
use crate::dto::auth::{ApiKeyResponse, CreateApiKeyBody, MessageResponse};
use crate::dto::{self, Data as Envelope};
use crate::extract::SignedInUser;
use crate::state::AppState;

fn key_id(path: &str) -> Result<ApiKeyId, ApiError> {
    dto::parse_uuid("id", path).map(ApiKeyId::from_uuid)
}

/// `POST /api-keys`.
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
pub(super) async fn list(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<Json<Envelope<Vec<ApiKeyResponse>>>, ApiError> {
    let keys = state.api_keys.list(&user.actor).await?;
    Ok(Json(Envelope {
        data: keys.iter().map(|k| ApiKeyResponse::new(k, None)).collect(),
    }))
}

/// `GET /api-keys/:id`.
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<ApiKeyResponse>, ApiError> {
    let key = state.api_keys.get(&user.actor, key_id(&path)?).await?;
    Ok(Json(ApiKeyResponse::new(&key, None)))
}

/// `DELETE /api-keys/:id`.
pub(super) async fn delete(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<MessageResponse>, ApiError> {
    state.api_keys.delete(&user.actor, key_id(&path)?).await?;
    Ok(Json(MessageResponse {
        message: "API key revoked",
    }))
}
