//! Every URL works with and without its trailing slash: a path that ends in one `/`, that
//! no route serves but whose form without it is served, is answered as that form
//! (`/ui/` as `/ui`, `/tasks/` as `/tasks`, `/health/` as `/health`).
//!
//! The request is served, not redirected: a client that follows a redirect sends its
//! agent signature again, made over the path it first asked for, and is refused. The
//! signature is checked over the target exactly as sent, kept here as a [`SentTarget`].

use actix_web::Error;
use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse, Url};
use actix_web::http::Uri;
use actix_web::http::uri::PathAndQuery;
use actix_web::middleware::Next;

/// The request target (path and `?query`) as the client sent it, when it was answered
/// under another path.
#[derive(Debug, Clone)]
pub(crate) struct SentTarget(pub(crate) String);

/// Serves a path with a trailing slash as the route without it (see the module's doc).
pub(crate) async fn trim(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    if let Some(uri) = without_trailing_slash(&req) {
        let sent = req
            .uri()
            .path_and_query()
            .map_or_else(|| req.path().to_owned(), |pq| pq.as_str().to_owned());
        req.extensions_mut().insert(SentTarget(sent));
        req.match_info_mut().set(Url::new(uri.clone()));
        req.head_mut().uri = uri;
    }
    next.call(req).await
}

/// The request's URI without the trailing slash of its path, when that form is served
/// and the path as sent is not.
fn without_trailing_slash(req: &ServiceRequest) -> Option<Uri> {
    let path = req.path();
    let trimmed = path.strip_suffix('/')?;
    // `/` itself, and `//`-endings, which no documented URL has.
    if trimmed.is_empty() || trimmed.ends_with('/') {
        return None;
    }
    let routes = req.resource_map();
    if routes.has_resource(path) || !routes.has_resource(trimmed) {
        return None;
    }
    let target = match req.uri().query() {
        Some(query) => format!("{trimmed}?{query}"),
        None => trimmed.to_owned(),
    };
    let mut parts = req.uri().clone().into_parts();
    parts.path_and_query = Some(PathAndQuery::try_from(target).ok()?);
    Uri::from_parts(parts).ok()
}
