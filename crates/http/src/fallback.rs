//! The answers of a request no route serves: a path nothing serves (404) and a method
//! its path does not take (405).

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, ResponseError};

use crate::error::{ApiError, codes};

/// The default service: [`no_route`]'s answer.
pub(crate) async fn not_found(req: HttpRequest) -> HttpResponse {
    no_route(&req).error_response()
}

/// The 404 of a path that serves nothing (here, or not configured).
pub(crate) fn no_route(req: &HttpRequest) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        codes::ROUTE_NOT_FOUND,
        format!("Cannot {} {}", req.method(), req.path()),
    )
}

/// 405 with the `Allow` header HTTP requires.
pub(crate) fn method_not_allowed(req: &HttpRequest, allowed: &str) -> HttpResponse {
    let mut response = ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        codes::METHOD_NOT_ALLOWED,
        format!("Method {} is not allowed on {}", req.method(), req.path()),
    )
    .error_response();
    response.headers_mut().insert(
        header::ALLOW,
        HeaderValue::from_str(allowed).unwrap_or(HeaderValue::from_static("")),
    );
    response
}
