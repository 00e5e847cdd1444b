use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
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

/// `GET /metrics`: Prometheus metrics, for a scraper that presents the metrics token;
/// 404 while metrics are off.
pub(super) async fn metrics(
    state: Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let Some(access) = &state.metrics else {
        return Err(super::fallback::no_route(&req));
    };
    match crate::extract::presented(&req) {
        Ok(crate::extract::Presented::Bearer(token))
            if muster_domain::rules::constant_time::eq(
                token.as_bytes(),
                access.token.as_bytes(),
            ) => {}
        _ => {
            return Err(ApiError::unauthorized(
                "GET /metrics needs the metrics token as a bearer token",
            ));
        }
    }
    access.metrics.refresh_census().await;
    Ok(HttpResponse::Ok()
        .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
        .body(access.metrics.render()))
}
