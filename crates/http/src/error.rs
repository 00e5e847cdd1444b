//! The one mapping from failures to the contract's error body
//! `{statusCode, message, error}` (decision D-2), with its stable `code` (decision D-102).

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use muster_auth::agent::AgentAuthError;
use muster_auth::bearer::BearerAuthError;
use muster_domain::model::StoredResponse;
use muster_domain::ports::RepositoryError;
use muster_domain::rules::transition::TransitionError;
use muster_domain::service::ServiceError;
use serde::Serialize;

pub mod codes;

/// A failed request: a status, a stable code and one human sentence. Internal causes are
/// logged when the error is built and never sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {message}")]
pub struct ApiError {
    status: StatusCode,
    /// The stable identifier of the refusal (decision D-102).
    code: &'static str,
    message: String,
    /// Seconds for a `Retry-After` header (429).
    retry_after: Option<u64>,
    /// A kept response to answer again instead (a retried `Idempotency-Key`).
    replay: Option<Box<StoredResponse>>,
}

/// The body of every error: `{statusCode, code, message, error}`.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"statusCode": 400, "code": "validation_failed", "message": "title must be at most 255 characters", "error": "Bad Request"}))]
pub(crate) struct ErrorBody<'a> {
    /// The HTTP status, again.
    status_code: u16,
    /// A stable `snake_case` identifier of the kind of refusal (`insufficient_balance`,
    /// `changed_concurrently`, `validation_failed`...), for programs; the list is in
    /// docs/api.md. Unlike `message`, it never changes wording.
    #[schema(example = "validation_failed", pattern = "^[a-z][a-z0-9_]*$")]
    code: &'a str,
    /// One sentence naming the field or rule at fault.
    message: &'a str,
    /// The status's reason phrase.
    error: &'a str,
}

impl ApiError {
    /// An error with an explicit status and code (one of [`codes`], or a domain code).
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_after: None,
            replay: None,
        }
    }

    /// The kept response of an earlier request with the same `Idempotency-Key`, answered
    /// again as it was, marked `Idempotent-Replayed: true`.
    pub fn replay(stored: StoredResponse) -> Self {
        let status =
            StatusCode::from_u16(stored.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        Self {
            status,
            code: codes::REPLAYED,
            message: "replayed".to_owned(),
            retry_after: None,
            replay: Some(Box::new(stored)),
        }
    }

    /// 400 `validation_failed`: a field, parameter or header is missing or breaks a
    /// rule; the message names it.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, codes::VALIDATION_FAILED, message)
    }

    /// 401: missing or invalid credentials, with the code saying which.
    pub fn unauthorized(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, code, message)
    }

    /// 500 `internal`, logging `cause` with its chain of sources; the caller sees no
    /// detail.
    pub fn internal(cause: &(dyn std::error::Error + 'static)) -> Self {
        tracing::error!(error = %Chain(cause), "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            codes::INTERNAL,
            "Internal server error",
        )
    }

    /// 503 `unavailable`, logging `cause` with its chain of sources.
    pub fn unavailable(cause: &(dyn std::error::Error + 'static)) -> Self {
        tracing::warn!(error = %Chain(cause), "dependency unavailable");
        Self::busy(
            codes::UNAVAILABLE,
            "Service temporarily unavailable; retry later",
            1,
        )
    }

    /// 503 with `Retry-After`: the service is at a configured bound; retry later.
    pub fn busy(code: &'static str, message: impl Into<String>, retry_after_secs: u64) -> Self {
        let mut busy = Self::new(StatusCode::SERVICE_UNAVAILABLE, code, message);
        busy.retry_after = Some(retry_after_secs);
        busy
    }

    /// 429 with `Retry-After`: the caller is going faster than this route allows.
    pub fn too_many(code: &'static str, message: impl Into<String>, retry_after_secs: u64) -> Self {
        let mut throttled = Self::new(StatusCode::TOO_MANY_REQUESTS, code, message);
        throttled.retry_after = Some(retry_after_secs);
        throttled
    }

    /// The sentence shown to the caller.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The stable code of the refusal (decision D-102).
    pub fn code(&self) -> &'static str {
        self.code
    }
}

/// An error and its sources, `: `-separated, for one log field.
struct Chain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status);
        if let Some(stored) = &self.replay {
            response.insert_header(("Idempotent-Replayed", "true"));
            if let Some(content_type) = &stored.content_type {
                response
                    .insert_header((actix_web::http::header::CONTENT_TYPE, content_type.as_str()));
            }
            return response.body(stored.body.clone());
        }
        if let Some(secs) = self.retry_after {
            response.insert_header((actix_web::http::header::RETRY_AFTER, secs.to_string()));
        }
        response.json(ErrorBody {
            status_code: self.status.as_u16(),
            code: self.code,
            message: &self.message,
            error: self.status.canonical_reason().unwrap_or("Error"),
        })
    }
}

impl From<muster_domain::ValidationError> for ApiError {
    fn from(err: muster_domain::ValidationError) -> Self {
        Self::new(StatusCode::BAD_REQUEST, err.code(), err.message())
    }
}

impl From<ServiceError> for ApiError {
    fn from(err: ServiceError) -> Self {
        let code = err.code();
        let status = match &err {
            ServiceError::Invalid(_) => StatusCode::BAD_REQUEST,
            ServiceError::NotFound(_)
            | ServiceError::NoMatchingAgent
            | ServiceError::InboundKeyNotFound
            | ServiceError::UnknownInstallation(_) => StatusCode::NOT_FOUND,
            ServiceError::Forbidden(_)
            | ServiceError::Transition(TransitionError::ApprovalRequired) => StatusCode::FORBIDDEN,
            ServiceError::Transition(TransitionError::NotAllowed { .. })
            | ServiceError::Conflict(_) => StatusCode::CONFLICT,
            ServiceError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ServiceError::Throttled { retry_after_secs } => {
                return Self::too_many(code, err.to_string(), *retry_after_secs);
            }
            ServiceError::Runaway(_) => StatusCode::TOO_MANY_REQUESTS,
            ServiceError::Unavailable(_) => return Self::unavailable(&err),
            ServiceError::Internal(_) => return Self::internal(&err),
        };
        Self::new(status, code, err.to_string())
    }
}

impl From<AgentAuthError> for ApiError {
    fn from(err: AgentAuthError) -> Self {
        if err.is_client_error() {
            Self::unauthorized(err.code(), err.to_string())
        } else if matches!(
            err,
            AgentAuthError::Storage(RepositoryError::Unavailable(_))
        ) {
            Self::unavailable(&err)
        } else {
            Self::internal(&err)
        }
    }
}

impl From<BearerAuthError> for ApiError {
    fn from(err: BearerAuthError) -> Self {
        match &err {
            BearerAuthError::Storage(RepositoryError::Unavailable(_)) => Self::unavailable(&err),
            BearerAuthError::Storage(_) => Self::internal(&err),
            _ => Self::unauthorized(err.code(), err.to_string()),
        }
    }
}

#[cfg(test)]
mod tests;
