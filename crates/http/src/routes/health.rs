use crate::openapi::{ErrorBody, StatusBody};
use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};

use crate::ApiError;
use crate::state::AppState;

/// `GET /health`: the process is up.
#[utoipa::path(
    get,
    path = "/health",
    operation_id = "health",
    tag = "service",
    summary = "Liveness: the process is up",
    responses((status = 200, description = "`{status: \"ok\"}`", body = StatusBody)),
    security(())
)]
pub(super) async fn health() -> HttpResponse {
    HttpResponse::Ok().json(StatusBody { status: "ok" })
}

/// `GET /ready`: 200 when the database answers, 503 when it does not.
#[utoipa::path(
    get,
    path = "/ready",
    operation_id = "ready",
    tag = "service",
    summary = "Readiness: the database answers",
    responses(
        (status = 200, description = "`{status: \"ready\"}`", body = StatusBody),
        (status = 503, description = "The database does not answer", body = ErrorBody)
    ),
    security(())
)]
pub(super) async fn ready(state: Data<AppState>) -> Result<HttpResponse, ApiError> {
    match state.readiness.check().await {
        Ok(()) => Ok(HttpResponse::Ok().json(StatusBody { status: "ready" })),
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
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "service",
    summary = "Prometheus metrics (OpenMetrics text)",
    responses(
        (status = 200, description = "The metrics in the OpenMetrics text format", content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8", body = String),
        (status = 401, description = "The metrics token is missing or wrong", body = ErrorBody),
        (status = 404, description = "Metrics are off (no `MUSTER_METRICS_TOKEN`)", body = ErrorBody)
    ),
    security(("metricsToken" = []))
)]
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
