//! The protocol's errors: a JSON-RPC code, an HTTP status and a `google.rpc.ErrorInfo`
//! reason for each, and the two bodies that carry them.

use serde_json::{Value, json};

/// The domain of the reasons A2A defines.
const A2A_DOMAIN: &str = "a2a-protocol.org";
/// The domain of Muster's own reasons (refusals A2A leaves to the server).
const OWN_DOMAIN: &str = "muster";

/// Which error it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The body is not JSON.
    Parse,
    /// Not a JSON-RPC request.
    InvalidRequest,
    /// A method this server does not have.
    MethodNotFound,
    /// Parameters that do not fit the method or break a limit.
    InvalidParams,
    /// The server failed.
    Internal,
    /// No such task visible to the caller.
    TaskNotFound,
    /// The task is closed already.
    TaskNotCancelable,
    /// Push notification configs.
    PushNotificationNotSupported,
    /// Something this server does not do, or not to a task in this state.
    UnsupportedOperation,
    /// A part whose content this server cannot keep.
    ContentTypeNotSupported,
    /// A missing or unsupported `A2A-Version`.
    VersionNotSupported,
    /// The credentials do not allow it (Muster's reason).
    PermissionDenied,
    /// The change raced another one or breaks a rule of the task's state (Muster's).
    Conflict,
    /// A limit on requests or spending was reached (Muster's).
    ResourceExhausted,
}

impl ErrorKind {
    /// The JSON-RPC error code. Muster's own reasons use codes of the range JSON-RPC
    /// leaves to servers that A2A does not use.
    pub const fn code(self) -> i64 {
        match self {
            Self::Parse => -32700,
            Self::InvalidRequest => -32600,
            Self::MethodNotFound => -32601,
            Self::InvalidParams => -32602,
            Self::Internal => -32603,
            Self::TaskNotFound => -32001,
            Self::TaskNotCancelable => -32002,
            Self::PushNotificationNotSupported => -32003,
            Self::UnsupportedOperation => -32004,
            Self::ContentTypeNotSupported => -32005,
            Self::VersionNotSupported => -32009,
            Self::PermissionDenied => -32040,
            Self::Conflict => -32041,
            Self::ResourceExhausted => -32042,
        }
    }

    /// The HTTP status of the HTTP+JSON binding.
    pub const fn http_status(self) -> u16 {
        match self {
            Self::MethodNotFound | Self::TaskNotFound => 404,
            Self::Internal => 500,
            Self::PermissionDenied => 403,
            Self::Conflict => 409,
            Self::ResourceExhausted => 429,
            Self::Parse
            | Self::InvalidRequest
            | Self::InvalidParams
            | Self::TaskNotCancelable
            | Self::PushNotificationNotSupported
            | Self::UnsupportedOperation
            | Self::ContentTypeNotSupported
            | Self::VersionNotSupported => 400,
        }
    }

    /// The gRPC status name that goes with the HTTP status.
    pub const fn status_name(self) -> &'static str {
        match self {
            Self::MethodNotFound | Self::TaskNotFound => "NOT_FOUND",
            Self::Internal => "INTERNAL",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::Conflict => "ABORTED",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::Parse
            | Self::InvalidRequest
            | Self::InvalidParams
            | Self::ContentTypeNotSupported => "INVALID_ARGUMENT",
            Self::TaskNotCancelable
            | Self::PushNotificationNotSupported
            | Self::UnsupportedOperation
            | Self::VersionNotSupported => "FAILED_PRECONDITION",
        }
    }

    /// The `ErrorInfo` reason.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::Parse | Self::InvalidRequest => "INVALID_REQUEST",
            Self::MethodNotFound => "METHOD_NOT_FOUND",
            Self::InvalidParams => "INVALID_PARAMS",
            Self::Internal => "INTERNAL_ERROR",
            Self::TaskNotFound => "TASK_NOT_FOUND",
            Self::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            Self::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            Self::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            Self::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            Self::VersionNotSupported => "VERSION_NOT_SUPPORTED",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::Conflict => "CONFLICT",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
        }
    }

    const fn domain(self) -> &'static str {
        match self {
            Self::PermissionDenied | Self::Conflict | Self::ResourceExhausted => OWN_DOMAIN,
            _ => A2A_DOMAIN,
        }
    }
}

/// An error to answer, with a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct A2aError {
    /// Which error.
    pub kind: ErrorKind,
    /// What went wrong.
    pub message: String,
    /// Muster's stable code of a refusal (`insufficient_balance`, decision D-102), sent
    /// as the `code` of the `ErrorInfo`'s `metadata`; `None` for the protocol's own
    /// errors, which its `reason` names.
    pub code: Option<&'static str>,
}

impl A2aError {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            code: None,
        }
    }

    /// The same error carrying Muster's `code`.
    #[must_use]
    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    /// Parameters that do not fit.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParams, message)
    }

    /// No such task.
    pub fn task_not_found(id: &str) -> Self {
        Self::new(ErrorKind::TaskNotFound, format!("task {id} not found"))
    }

    fn details(&self) -> Value {
        let metadata = match self.code {
            Some(code) => json!({"code": code}),
            None => json!({}),
        };
        json!([{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": self.kind.reason(),
            "domain": self.kind.domain(),
            "metadata": metadata,
        }])
    }

    /// The `error` member of a JSON-RPC response.
    pub fn json_rpc(&self) -> Value {
        json!({
            "code": self.kind.code(),
            "message": self.message,
            "data": self.details(),
        })
    }

    /// The body of an HTTP+JSON error answer (a `google.rpc.Status`).
    pub fn rest_body(&self) -> Value {
        json!({"error": {
            "code": self.kind.http_status(),
            "status": self.kind.status_name(),
            "message": self.message,
            "details": self.details(),
        }})
    }
}

impl std::fmt::Display for A2aError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for A2aError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a2a_errors_carry_their_code_status_and_reason() {
        let error = A2aError::task_not_found("t1");
        assert_eq!(
            error.json_rpc(),
            json!({"code": -32001, "message": "task t1 not found", "data": [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org", "metadata": {}}]})
        );
        assert_eq!(
            error.rest_body()["error"],
            json!({"code": 404, "status": "NOT_FOUND", "message": "task t1 not found",
                   "details": error.json_rpc()["data"]})
        );
        let refused = A2aError::new(ErrorKind::PermissionDenied, "no");
        assert_eq!(
            refused.rest_body()["error"]["details"][0]["domain"],
            "muster"
        );
        assert_eq!(refused.rest_body()["error"]["code"], 403);
    }

    #[test]
    fn a_refusal_carries_musters_code_in_the_error_infos_metadata() {
        let refused = A2aError::new(ErrorKind::Conflict, "Insufficient balance")
            .with_code("insufficient_balance");
        let metadata = json!({"code": "insufficient_balance"});
        assert_eq!(refused.json_rpc()["data"][0]["metadata"], metadata);
        assert_eq!(
            refused.rest_body()["error"]["details"][0]["metadata"],
            metadata
        );
        assert_eq!(
            refused.json_rpc()["code"],
            -32041,
            "the JSON-RPC code stays"
        );
    }

    #[test]
    fn the_protocols_codes_are_its_own() {
        let codes = [
            (
                ErrorKind::TaskNotCancelable,
                -32002,
                400,
                "TASK_NOT_CANCELABLE",
            ),
            (
                ErrorKind::PushNotificationNotSupported,
                -32003,
                400,
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
            ),
            (
                ErrorKind::UnsupportedOperation,
                -32004,
                400,
                "UNSUPPORTED_OPERATION",
            ),
            (
                ErrorKind::ContentTypeNotSupported,
                -32005,
                400,
                "CONTENT_TYPE_NOT_SUPPORTED",
            ),
            (
                ErrorKind::VersionNotSupported,
                -32009,
                400,
                "VERSION_NOT_SUPPORTED",
            ),
            (ErrorKind::InvalidParams, -32602, 400, "INVALID_PARAMS"),
            (ErrorKind::MethodNotFound, -32601, 404, "METHOD_NOT_FOUND"),
            (ErrorKind::Internal, -32603, 500, "INTERNAL_ERROR"),
            (ErrorKind::Conflict, -32041, 409, "CONFLICT"),
            (
                ErrorKind::ResourceExhausted,
                -32042,
                429,
                "RESOURCE_EXHAUSTED",
            ),
        ];
        for (kind, code, status, reason) in codes {
            assert_eq!(
                (kind.code(), kind.http_status(), kind.reason()),
                (code, status, reason)
            );
        }
    }
}
