//! The middleware in front of every route: refuses a foreign `Host` or `Origin` where
//! decision D-105 says (403 with the usual error body, before any credential is read or
//! anything changes), and marks every answer `X-Content-Type-Options: nosniff`.

use actix_web::ResponseError;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{HOST, HeaderValue, ORIGIN, X_CONTENT_TYPE_OPTIONS};
use actix_web::middleware::Next;
use actix_web::web::Data;

use crate::edge::{Edge, SiteUrl, host_of};
use crate::error::{ApiError, codes};
use crate::state::{AppState, AuthMode};

/// Checks the request's `Host` and `Origin`, then answers it.
pub(crate) async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let mut res = if let Some(refused) = refusal(&req) {
        req.into_response(refused.error_response())
            .map_into_right_body()
    } else {
        // An error from within is answered further out, without the header: keeping a
        // clone of the request to answer it here would break routing, which needs the
        // request unshared. Handlers' refusals are answers, and get it.
        next.call(req).await?.map_into_left_body()
    };
    // No answer is to be read as anything but its declared type (a JSON error echoing
    // input must never be sniffed into a page).
    res.headers_mut()
        .insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    Ok(res)
}

/// Which checks a request's route and the auth mode call for.
struct Checks {
    host: bool,
    origin: bool,
}

fn checks(req: &ServiceRequest, state: Option<&AppState>) -> Checks {
    // The path the router matches (percent-decoded where it decodes), segments only, so
    // that `//mcp/` is `/mcp` here as it may be to a normalizing layer.
    let mut segments = req
        .match_info()
        .as_str()
        .split('/')
        .filter(|s| !s.is_empty());
    let first = segments.next();
    let alone = segments.next().is_none();
    // Load balancers probe by address or an internal name; the probes change nothing
    // and tell nothing but "up" and "ready".
    if alone && matches!(first, Some("health" | "ready")) {
        return Checks {
            host: false,
            origin: false,
        };
    }
    // Without a state (never in the server) nothing says credentials are needed.
    let open = state.is_none_or(|state| !matches!(state.auth_mode, AuthMode::Full));
    let mcp = first == Some("mcp");
    let dashboard = first.is_none_or(|first| first == "ui");
    Checks {
        host: open || mcp || dashboard,
        // The dashboard's own forms refuse other sites' posts (with its CSRF token).
        origin: open || mcp,
    }
}

fn refusal(req: &ServiceRequest) -> Option<ApiError> {
    let state = req.app_data::<Data<AppState>>().map(Data::get_ref);
    let checks = checks(req, state);
    if !checks.host {
        return None;
    }
    let fallback = Edge::default();
    let edge = state.map_or(&fallback, |state| &state.edge);
    let Some(host) = host_of(req.request()) else {
        let message = if req.headers().contains_key(HOST) {
            "the request's Host is not a plain host[:port]"
        } else {
            "the request names no Host"
        };
        return Some(ApiError::new(
            StatusCode::FORBIDDEN,
            codes::HOST_NOT_ALLOWED,
            message,
        ));
    };
    if !edge.allows_host(&host, req.app_config().local_addr()) {
        let named = match host.port {
            Some(port) => format!("{}:{port}", host.host),
            None => host.host,
        };
        return Some(ApiError::new(
            StatusCode::FORBIDDEN,
            codes::HOST_NOT_ALLOWED,
            format!(
                "Host {named} is not a name this server answers to (see MUSTER_PUBLIC_URL \
                 and MUSTER_ALLOWED_HOSTS)"
            ),
        ));
    }
    if checks.origin {
        for origin in req.headers().get_all(ORIGIN) {
            let parsed = origin.to_str().ok().and_then(SiteUrl::parse_origin);
            match parsed {
                Some(origin) if edge.allows_origin(&origin, &host) => {}
                Some(origin) => {
                    return Some(ApiError::new(
                        StatusCode::FORBIDDEN,
                        codes::ORIGIN_NOT_ALLOWED,
                        format!(
                            "Origin {} is not this server's: a page of another site may not \
                             call it",
                            origin.base()
                        ),
                    ));
                }
                None => {
                    return Some(ApiError::new(
                        StatusCode::FORBIDDEN,
                        codes::ORIGIN_NOT_ALLOWED,
                        "Origin is not this server's: a page of another site may not call it",
                    ));
                }
            }
        }
    }
    None
}
