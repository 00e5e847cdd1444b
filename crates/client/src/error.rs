//! What a call can fail with.

use serde::Deserialize;

/// A failed call.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server answered with an error: its status, code and sentence.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The account has a second factor: log in again with `totp_code`.
    #[error("this account needs a TOTP or recovery code to sign in")]
    TwoFactorRequired,
    /// The server could not be reached, or the connection broke.
    #[error("could not reach the server: {0}")]
    Transport(#[from] reqwest::Error),
    /// The server answered something this client does not understand.
    #[error("unexpected answer ({status}): {detail}")]
    Unexpected {
        /// The HTTP status.
        status: u16,
        /// What did not fit.
        detail: String,
    },
    /// The request could not be built (a base URL or a query that does not encode).
    #[error("{0}")]
    Request(String),
}

impl Error {
    /// The HTTP status the server answered with, if it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Api(err) => Some(err.status),
            Self::Unexpected { status, .. } => Some(*status),
            Self::TwoFactorRequired | Self::Transport(_) | Self::Request(_) => None,
        }
    }

    /// The server's refusal, if it refused.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Self::Api(err) => Some(err),
            _ => None,
        }
    }

    /// The stable code of the server's refusal (`insufficient_balance`), if it refused
    /// with one. The codes are listed in the server's docs/api.md.
    pub fn code(&self) -> Option<&str> {
        self.api().and_then(ApiError::code)
    }

    /// Whether sending the same call again later may succeed: a refusal that
    /// [`ApiError::is_retryable`] says so of, or a connection that could not be made
    /// (the request never left). A connection that broke after the request left is
    /// not: a POST may have taken effect (the client already retried what was safe
    /// to, under the same `Idempotency-Key`).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Api(err) => err.is_retryable(),
            Self::Transport(err) => err.is_connect(),
            Self::TwoFactorRequired | Self::Unexpected { .. } | Self::Request(_) => false,
        }
    }
}

/// The codes of refusals that a later attempt of the very same request may not get:
/// the service was busy or unreachable, or another request got in the way. The
/// refused request changed nothing, so sending it again is safe.
pub const RETRYABLE_CODES: &[&str] = &[
    // 503: the database cannot be reached; too many event streams are open.
    "unavailable",
    "too_many_streams",
    // 429: too many failed logins, or sign-ins started too fast (wait `Retry-After`).
    "rate_limited",
    // 409: another request changed the same thing meanwhile, or kept overtaking this
    // one while pre-hooks were asked; a copy with the same `Idempotency-Key` is still
    // being handled.
    "changed_concurrently",
    "overtaken_while_asking",
    "idempotency_key_in_progress",
];

/// A refusal of the server: the `{statusCode, code, message, error}` body of a non-2xx
/// answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({status})")]
pub struct ApiError {
    status: u16,
    code: Option<String>,
    message: String,
}

impl ApiError {
    /// The HTTP status (400, 401, 403, 404, 409, 422, 429, 5xx…).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The stable code of the refusal (`insufficient_balance`, `stale_timestamp`...),
    /// for programs to branch on; `None` when the answer was not Muster's (a proxy's
    /// error page).
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The server's sentence, e.g. `title must be at most 255 characters`, for people.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the same request may succeed later: a code of [`RETRYABLE_CODES`]; or,
    /// for an answer without a code (a proxy in front of the server), `429`, `502`,
    /// `503` and `504`. Every other refusal is the request's or the state's, and is
    /// answered again until something changes. `runaway_guard` (429) is not retryable:
    /// the agent is suspended until someone unsuspends it.
    pub fn is_retryable(&self) -> bool {
        match &self.code {
            Some(code) => RETRYABLE_CODES.contains(&code.as_str()),
            None => matches!(self.status, 429 | 502 | 503 | 504),
        }
    }
}

/// `{statusCode, code, message, error}`, the body of every error answer.
#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    code: Option<String>,
    message: String,
}

/// The error a non-2xx answer stands for.
pub(crate) fn from_answer(status: u16, body: &[u8]) -> Error {
    let refusal = match serde_json::from_slice::<ErrorBody>(body) {
        Ok(err) => ApiError {
            status,
            code: err.code,
            message: err.message,
        },
        Err(_) => ApiError {
            status,
            code: None,
            message: String::from_utf8_lossy(body).chars().take(500).collect(),
        },
    };
    Error::Api(refusal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(status: u16, body: &str) -> ApiError {
        match from_answer(status, body.as_bytes()) {
            Error::Api(err) => err,
            other => panic!("not a refusal: {other:?}"),
        }
    }

    #[test]
    fn a_refusal_exposes_its_status_code_and_message() {
        let err = refused(
            409,
            r#"{"statusCode":409,"code":"insufficient_balance","message":"Insufficient balance: 1 credits available, 5 needed","error":"Conflict"}"#,
        );
        assert_eq!(err.status(), 409);
        assert_eq!(err.code(), Some("insufficient_balance"));
        assert_eq!(
            err.message(),
            "Insufficient balance: 1 credits available, 5 needed"
        );
        assert!(!err.is_retryable());
        let whole = Error::Api(err);
        assert_eq!(whole.code(), Some("insufficient_balance"));
        assert_eq!(whole.status(), Some(409));
        assert_eq!(
            whole.to_string(),
            "Insufficient balance: 1 credits available, 5 needed (409)"
        );
    }

    #[test]
    fn retryable_refusals_are_the_transient_ones() {
        let with = |status, code: &str| {
            refused(
                status,
                &format!(r#"{{"statusCode":{status},"code":"{code}","message":"m","error":"e"}}"#),
            )
        };
        for (status, code) in [
            (503, "unavailable"),
            (503, "too_many_streams"),
            (429, "rate_limited"),
            (409, "changed_concurrently"),
            (409, "overtaken_while_asking"),
            (409, "idempotency_key_in_progress"),
        ] {
            assert!(with(status, code).is_retryable(), "{code}");
        }
        for (status, code) in [
            (429, "runaway_guard"),
            (409, "task_closed"),
            (409, "transition_not_allowed"),
            (400, "validation_failed"),
            (401, "stale_timestamp"),
            (404, "task_not_found"),
            (500, "internal"),
        ] {
            assert!(!with(status, code).is_retryable(), "{code}");
        }
    }

    #[test]
    fn an_answer_that_is_not_musters_is_judged_by_its_status() {
        let proxy = refused(502, "<html>Bad Gateway</html>");
        assert_eq!(proxy.code(), None);
        assert_eq!(proxy.message(), "<html>Bad Gateway</html>");
        assert!(proxy.is_retryable());
        for status in [429, 503, 504] {
            assert!(refused(status, "busy").is_retryable(), "{status}");
        }
        for status in [400, 404, 409, 500] {
            assert!(!refused(status, "no").is_retryable(), "{status}");
        }
        let older = refused(
            404,
            r#"{"statusCode":404,"message":"gone","error":"Not Found"}"#,
        );
        assert_eq!((older.code(), older.message()), (None, "gone"));
    }

    #[test]
    fn errors_without_an_answer_have_no_code() {
        assert_eq!(Error::TwoFactorRequired.code(), None);
        assert!(!Error::TwoFactorRequired.is_retryable());
        assert!(!Error::Request("bad url".to_owned()).is_retryable());
        let unexpected = Error::Unexpected {
            status: 200,
            detail: "not JSON".to_owned(),
        };
        assert_eq!(unexpected.status(), Some(200));
        assert!(unexpected.api().is_none());
    }
}
