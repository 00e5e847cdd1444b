//! What a call can fail with.

use serde::Deserialize;

/// A failed call.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server answered with an error: its status and its sentence.
    #[error("{message} ({status})")]
    Api {
        /// The HTTP status (400, 401, 403, 404, 409, 422, 429, 5xx…).
        status: u16,
        /// The server's message, e.g. `title must be at most 255 characters`.
        message: String,
    },
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
            Self::Api { status, .. } | Self::Unexpected { status, .. } => Some(*status),
            Self::TwoFactorRequired | Self::Transport(_) | Self::Request(_) => None,
        }
    }
}

/// `{statusCode, message, error}`, the body of every error answer.
#[derive(Deserialize)]
struct ErrorBody {
    message: String,
}

/// The error a non-2xx answer stands for.
pub(crate) fn from_answer(status: u16, body: &[u8]) -> Error {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(err) => Error::Api {
            status,
            message: err.message,
        },
        Err(_) => Error::Api {
            status,
            message: String::from_utf8_lossy(body).chars().take(500).collect(),
        },
    }
}
