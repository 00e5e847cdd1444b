use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};

use crate::error::{ApiError, ErrorBody, codes};
use crate::schemas::StatusBody;
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
                codes::UNAVAILABLE,
                "database is not reachable",
            ))
        }
    }
}

/// `GET /metrics`: Prometheus metrics, for a scraper that presents the metrics token,
/// in the format its `Accept` asks for; 404 while metrics are off.
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "service",
    summary = "Prometheus metrics (OpenMetrics or the Prometheus text format)",
    description = "OpenMetrics 1.0.0 when `Accept` asks for `application/openmetrics-text` (as Prometheus does), the Prometheus text format 0.0.4 otherwise.",
    responses(
        (status = 200, description = "The metrics, in the format `Accept` asks for", content((String = "text/plain; version=0.0.4; charset=utf-8"), (String = "application/openmetrics-text; version=1.0.0; charset=utf-8"))),
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
        return Err(crate::fallback::no_route(&req));
    };
    match crate::extract::presented(&req) {
        Ok(crate::extract::Presented::Bearer(token))
            if muster_domain::rules::constant_time::eq(
                token.as_bytes(),
                access.token.as_bytes(),
            ) => {}
        _ => {
            return Err(ApiError::unauthorized(
                codes::INVALID_METRICS_TOKEN,
                "GET /metrics needs the metrics token as a bearer token",
            ));
        }
    }
    access.metrics.refresh_census().await;
    let accept = req
        .headers()
        .get(actix_web::http::header::ACCEPT)
        .and_then(|value| value.to_str().ok());
    let format = crate::metrics::Exposition::negotiate(accept);
    Ok(HttpResponse::Ok()
        .content_type(format.content_type())
        // The answer depends on `Accept`: a cache must not give one format for the other.
        .insert_header((actix_web::http::header::VARY, "Accept"))
        .body(access.metrics.render(format)))
}
