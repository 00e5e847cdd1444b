use actix_web::HttpResponse;
use actix_web::web::Data;
use serde_json::json;

use crate::ApiError;
use crate::state::AppState;

/// `GET /health`: the process is up.
pub(super) async fn health() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

/// `GET /ready`: 200 when the database answers, 503 when it does not.
pub(super) async fn ready(state: Data<AppState>) -> Result<HttpResponse, ApiError> {
    match state.readiness.check().await {
        Ok(()) => Ok(HttpResponse::Ok().json(json!({ "status": "ready" }))),
        Err(reason) => {
            tracing::warn!(%reason, "not ready");
            Err(ApiError::new(
                actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
                "database is not reachable",
            ))
        }
    }
}
