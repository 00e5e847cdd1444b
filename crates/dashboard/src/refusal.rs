//! What a refused request shows: the API's status and sentence, so a person sees the
//! same reason an agent would get, and its stable code (decision D-102) kept on the
//! notice as `data-code`.

use actix_web::http::StatusCode;
use muster_domain::service::ServiceError;
use muster_http::ApiError;

/// A refusal to show on the page it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub status: StatusCode,
    /// The API's code; `None` for a notice of the dashboard's own that no API answer
    /// stands for.
    pub code: Option<&'static str>,
    pub message: String,
}

impl Refusal {
    /// A refusal with a message of the dashboard's own (a form field it could not read).
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code: Some(muster_http::error_codes::VALIDATION_FAILED),
            message: message.into(),
        }
    }
}

impl Refusal {
    /// The refusal as a script sees it: its status, and its sentence as plain text.
    pub fn into_text(self) -> actix_web::HttpResponse {
        actix_web::HttpResponse::build(self.status)
            .content_type("text/plain; charset=utf-8")
            .body(self.message)
    }
}

impl From<ServiceError> for Refusal {
    fn from(err: ServiceError) -> Self {
        ApiError::from(err).into()
    }
}

impl From<ApiError> for Refusal {
    fn from(err: ApiError) -> Self {
        Self {
            status: actix_web::ResponseError::status_code(&err),
            code: Some(err.code()),
            message: err.message().to_owned(),
        }
    }
}

impl From<muster_domain::ValidationError> for Refusal {
    fn from(err: muster_domain::ValidationError) -> Self {
        ApiError::from(err).into()
    }
}
