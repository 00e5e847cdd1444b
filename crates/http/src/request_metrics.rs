//! The middleware that counts every answered request in the metrics, by route template,
//! method and status, with its latency.

use std::sync::Arc;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web::Data;

use crate::state::AppState;

/// Middleware: counts every answered request by its route template (`/tasks/{id}`,
/// never the id; `unmatched` for unknown paths), when metrics are on.
pub(crate) async fn count(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let metrics = req
        .app_data::<Data<AppState>>()
        .and_then(|state| state.metrics.as_ref())
        .map(|access| Arc::clone(&access.metrics));
    let Some(metrics) = metrics else {
        return next.call(req).await;
    };
    let started = Instant::now();
    let res = next.call(req).await?;
    let request = res.request();
    let route = request.match_pattern();
    metrics.request(
        request.method().as_str(),
        route.as_deref().unwrap_or("unmatched"),
        res.status().as_u16(),
        started.elapsed(),
        // Inside the request's span (the tracing middleware wraps this one).
        muster_telemetry::sampled_trace_id(&tracing::Span::current()),
    );
    Ok(res)
}
