//! Muster's HTTP API on actix-web: routes, request and response shapes, the
//! `Authenticated` extractor and the one error mapping.
//!
//! [`serve`] starts the server on a bound listener with an [`AppState`]; the binary and
//! the HTTP tests both start it this way.
//!
//! The root wires the app: `routes` (the REST API), `mcp` and `a2a` serve requests and
//! import neither one another nor `openapi`, which assembles the document from their
//! operations and serves it. What they share (extractors, body parsing, errors, answers,
//! the route table) lives in modules that import none of those four, and no import
//! leads back to where it started; `tests/module_direction.rs` holds this.

mod a2a;
mod answers;
mod body;
mod edge;
mod edge_guard;
mod error;
mod extract;
mod fallback;
#[doc(hidden)]
pub mod fuzzing;
mod idempotency;
mod mcp;
mod media_type;
mod metrics;
pub mod openapi;
mod request_metrics;
mod request_span;
mod route_table;
mod routes;
mod rpc_id;
mod run_log_stream;
mod schemas;
mod sign_in_starts;
mod state;
mod stream_slots;
mod streams;
mod trailing_slash;

use std::net::TcpListener;
use std::sync::OnceLock;
use std::time::Duration;

use actix_web::dev::{Server, Service};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::web::{self, Data};
use actix_web::{App, HttpMessage, HttpServer};
use tracing_actix_web::{RequestId, TracingLogger};

use route_table::Table;

pub use body::{MAX_BODY_BYTES, parse_json, parse_query, parse_uuid};
pub use edge::{Edge, EdgeError};
pub use error::ApiError;
/// The codes the HTTP adapter answers of its own (decision D-102).
pub use error::codes as error_codes;
pub use extract::{Authenticated, RawBody, SignedInUser};
pub use metrics::{CensusProbe, Exposition, JobOutcome, Metrics, PoolProbe};
/// The request and response shapes, shared with the client (the `muster-wire` crate).
pub use muster_wire as dto;
pub use route_table::Operation;
pub use sign_in_starts::SignInStarts;
pub use state::{AppState, AuthMode, MetricsAccess, OAuthSettings, Readiness};
pub use streams::{EventStreams, StreamOptions, StreamScope, StreamSlot, TooManyStreams};

/// How the server runs.
#[derive(Debug, Clone, Copy)]
pub struct ServerOptions {
    /// Worker threads; `None` for one per core.
    pub workers: Option<usize>,
    /// How long in-flight requests may take to finish after a shutdown signal.
    pub shutdown_timeout: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            workers: None,
            shutdown_timeout: Duration::from_secs(30),
        }
    }
}

/// Starts serving on `listener`. The returned [`Server`] runs until it is stopped or the
/// process gets SIGINT/SIGTERM, then finishes in-flight requests and resolves.
pub fn serve(
    listener: TcpListener,
    state: AppState,
    options: ServerOptions,
) -> std::io::Result<Server> {
    serve_with(listener, state, options, |_| {})
}

/// [`serve`], with more routes mounted beside the API's (the dashboard's): `mount` is
/// called once per worker, before the API's routes.
pub fn serve_with(
    listener: TcpListener,
    state: AppState,
    options: ServerOptions,
    mount: impl Fn(&mut actix_web::web::ServiceConfig) + Clone + Send + 'static,
) -> std::io::Result<Server> {
    let state = Data::new(state);
    let tool_schemas = tool_schemas();
    let request_id_header = HeaderName::from_static("x-request-id");
    let mut server = HttpServer::new(move || {
        let request_id_header = request_id_header.clone();
        let mount = mount.clone();
        App::new()
            .app_data(state.clone())
            .app_data(tool_schemas.clone())
            // Innermost: sees the response of the handler, before the request id.
            .wrap(actix_web::middleware::from_fn(idempotency::keep))
            // Before any credential is read: a foreign Host or Origin changes nothing.
            .wrap(actix_web::middleware::from_fn(edge_guard::guard))
            .wrap(actix_web::middleware::from_fn(request_metrics::count))
            .wrap_fn(move |req, srv| {
                // Echo the request id that TracingLogger put in every log line.
                let id = req.extensions().get::<RequestId>().map(ToString::to_string);
                let header = request_id_header.clone();
                let fut = srv.call(req);
                async move {
                    let mut res = fut.await?;
                    if let Some(value) = id.and_then(|id| HeaderValue::from_str(&id).ok()) {
                        res.headers_mut().insert(header, value);
                    }
                    Ok(res)
                }
            })
            .wrap(TracingLogger::<request_span::RequestSpan>::new())
            // Outermost: every layer within sees the path a trailing slash is served as.
            .wrap(actix_web::middleware::from_fn(trailing_slash::trim))
            .configure(mount)
            .configure(|cfg| register(cfg, &mut Vec::new()))
    })
    .shutdown_timeout(options.shutdown_timeout.as_secs())
    .listen(listener)?;
    if let Some(workers) = options.workers {
        server = server.workers(workers);
    }
    Ok(server.run())
}

/// Every (method, path template) the server answers, in registration order.
#[must_use]
pub fn operations() -> Vec<Operation> {
    let mut seen = Vec::new();
    drop(App::new().configure(|cfg| register(cfg, &mut seen)));
    seen
}

/// Registers every route (the REST API's, MCP's, A2A's and the reference's) and the 404
/// of a path none serves, recording each operation in `seen`. Each family's paths start
/// with segments no other family's do, so the order of the families changes no answer.
fn register(cfg: &mut web::ServiceConfig, seen: &mut Vec<Operation>) {
    let mut table = Table::new(cfg, seen);
    routes::register(&mut table);
    mcp::register(&mut table);
    a2a::register(&mut table);
    openapi::register(&mut table);
    table.finish(fallback::not_found);
}

/// The MCP tools' input schemas, built from the OpenAPI document once, on first use.
fn tool_schemas() -> Data<mcp::ToolSchemas> {
    static SCHEMAS: OnceLock<Data<mcp::ToolSchemas>> = OnceLock::new();
    SCHEMAS
        .get_or_init(|| Data::new(mcp::ToolSchemas::new(openapi::document)))
        .clone()
}

#[cfg(test)]
mod tests;
