//! Answers without a DTO of their own (health, the two shapes of a login) and the shape
//! of one event of a stream, with the schemas the handlers' OpenAPI annotations name.

use serde::Serialize;

use crate::dto::auth::{TokensResponse, TwoFactorRequired};

/// `{status}` of `/health` and `/ready`.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct StatusBody {
    /// `ok` (`/health`) or `ready` (`/ready`).
    pub(crate) status: &'static str,
}

/// What `POST /auth/login` answers: tokens, or a request for the second factor.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub(crate) enum LoginAnswer {
    /// Signed in.
    Tokens(TokensResponse),
    /// The account has TOTP on: send the same body again with `totpCode`.
    TwoFactor(TwoFactorRequired),
}

/// One Server-Sent Event of `GET /events/stream`: `data` is an audit event as JSON (or,
/// with `event: dropped`, `{reason}`); comments (`: heartbeat`) carry no fields.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct StreamEvent {
    /// The event's id: send it back as `Last-Event-ID` to resume after it.
    id: Option<String>,
    /// `dropped` when the server ends the stream; absent for an audit event.
    event: Option<String>,
    /// The JSON text of the event.
    data: Option<String>,
    /// Milliseconds a client waits before it reconnects.
    retry: Option<u64>,
}

/// One Server-Sent Event of `GET /runs/{id}/log/stream`: `data` is a log line as JSON
/// (`id:` its number); with `event: end`, the run as `GET /runs/{id}` shows it (the
/// stream ends after it); with `event: dropped`, `{reason}`. Comments (`: heartbeat`)
/// carry no fields.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct RunLogStreamEvent {
    /// The line's number: send it back as `Last-Event-ID` to resume after it.
    id: Option<String>,
    /// `end` when the run ended and its whole log was sent, `dropped` when the server
    /// ends the stream; absent for a line.
    event: Option<String>,
    /// The JSON text of the line (or of the run, or of `{reason}`).
    data: Option<String>,
    /// Milliseconds a client waits before it reconnects.
    retry: Option<u64>,
}
