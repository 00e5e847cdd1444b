use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, ResponseError};

use crate::ApiError;

pub(super) async fn not_found(req: HttpRequest) -> HttpResponse {
    ApiError::not_found(format!("Cannot {} {}", req.method(), req.path())).error_response()
}

pub(super) async fn method_not_allowed(req: HttpRequest) -> HttpResponse {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("Method {} is not allowed on {}", req.method(), req.path()),
    )
    .error_response()
}
