//! The credential dispatcher: reads the body once, finds which credential scheme the
//! request carries (agent HMAC headers, a user access token, an API key, or none),
//! verifies it over the body, and hands the caller's [`Actor`] and the body to the
//! handler. Two schemes on one request, or a malformed `Authorization`, is a 401.

use actix_web::dev::Payload;
use actix_web::http::header::AUTHORIZATION;
use actix_web::web::{Bytes, Data};
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use futures_util::future::LocalBoxFuture;
use muster_auth::agent::{
    AGENT_ID_HEADER, NONCE_HEADER, SIGNATURE_HEADER, SignedRequest, TIMESTAMP_HEADER,
};
use muster_auth::bearer::BearerAuthenticator;
use muster_domain::model::Actor;

use crate::body::read_body;
use crate::error::{ApiError, codes};
use crate::state::{AppState, AuthMode};
use crate::trailing_slash::SentTarget;

const SIGNING_HEADERS: [&str; 4] = [
    AGENT_ID_HEADER,
    TIMESTAMP_HEADER,
    NONCE_HEADER,
    SIGNATURE_HEADER,
];

/// A request whose caller proved who it is with any scheme (or, in auth mode `none`,
/// the synthetic owner), with the raw body that was verified.
#[derive(Debug)]
pub struct Authenticated {
    /// The caller, bound to its organization.
    pub actor: Actor,
    /// The raw body, exactly as signed.
    pub body: Bytes,
}

/// A request of a signed-in user: an access token, never an agent signature or an API
/// key (the `/auth` and `/api-keys` routes, decision D-17). In auth mode `none` a
/// request without credentials is the synthetic owner.
#[derive(Debug)]
pub struct SignedInUser {
    /// The user, bound to their organization.
    pub actor: Actor,
    /// The raw body.
    pub body: Bytes,
}

/// The raw body of a public route (no credentials read), within the size limit.
#[derive(Debug)]
pub struct RawBody(pub Bytes);

impl FromRequest for RawBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let payload = payload.take();
        Box::pin(async move { Ok(Self(read_body(&req, payload).await?)) })
    }
}

/// The credential a request carries.
pub(crate) enum Presented<'a> {
    Signature,
    Bearer(&'a str),
    Nothing,
}

/// The server was built without its [`AppState`]: a wiring bug.
#[derive(Debug, thiserror::Error)]
#[error("application state is not configured")]
struct MissingState;

fn state(req: &HttpRequest) -> Result<&Data<AppState>, ApiError> {
    req.app_data::<Data<AppState>>()
        .ok_or_else(|| ApiError::internal(&MissingState))
}

pub(crate) fn presented(req: &HttpRequest) -> Result<Presented<'_>, ApiError> {
    let signed = SIGNING_HEADERS
        .iter()
        .any(|name| req.headers().contains_key(*name));
    let Some(authorization) = req.headers().get(AUTHORIZATION) else {
        return Ok(if signed {
            Presented::Signature
        } else {
            Presented::Nothing
        });
    };
    if signed {
        return Err(ApiError::unauthorized(
            codes::MIXED_CREDENTIALS,
            "use one credential scheme per request: agent signature headers or Authorization",
        ));
    }
    let malformed = || {
        ApiError::unauthorized(
            codes::MALFORMED_AUTHORIZATION,
            "Authorization must be `Bearer <token>`",
        )
    };
    let value = authorization.to_str().map_err(|_| malformed())?;
    let (scheme, token) = value.split_once(' ').ok_or_else(malformed)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() || token.contains(' ') {
        return Err(malformed());
    }
    Ok(Presented::Bearer(token))
}

fn missing_credentials() -> ApiError {
    ApiError::unauthorized(
        codes::MISSING_CREDENTIALS,
        "missing credentials: sign the request as an agent or send Authorization: Bearer <token>",
    )
}

/// The synthetic owner, when the deployment runs in auth mode `none`.
fn anonymous_actor(state: &AppState) -> Option<Actor> {
    match &state.auth_mode {
        AuthMode::None { owner } => Some(owner.clone()),
        AuthMode::Local { .. } | AuthMode::Full => None,
    }
}

/// Finds the caller of a request whose body has been read.
type Identify = for<'a> fn(
    &'a HttpRequest,
    &'a AppState,
    &'a Bytes,
) -> LocalBoxFuture<'a, Result<Actor, ApiError>>;

/// Reads the body once, then finds the caller with `identify` over it.
fn authenticate(
    req: &HttpRequest,
    payload: &mut Payload,
    identify: Identify,
) -> LocalBoxFuture<'static, Result<(Actor, Bytes), ApiError>> {
    let req = req.clone();
    let payload = payload.take();
    Box::pin(async move {
        let body = read_body(&req, payload).await?;
        let state = state(&req)?;
        let actor = match identify(&req, state, &body).await {
            Ok(actor) => actor,
            Err(refused) => {
                if actix_web::ResponseError::status_code(&refused)
                    == actix_web::http::StatusCode::UNAUTHORIZED
                    && let Some(access) = &state.metrics
                {
                    access.metrics.auth_failure(refused.message());
                }
                return Err(refused);
            }
        };
        crate::idempotency::begin(&req, state, &actor, &body).await?;
        Ok((actor, body))
    })
}

/// Any scheme; the owner in auth mode `none`.
fn any_scheme<'a>(
    req: &'a HttpRequest,
    state: &'a AppState,
    body: &'a Bytes,
) -> LocalBoxFuture<'a, Result<Actor, ApiError>> {
    Box::pin(async move {
        match presented(req)? {
            Presented::Signature => verify_signature(req, state, body).await,
            Presented::Bearer(key) if BearerAuthenticator::is_api_key(key) => {
                Ok(state.bearer_auth.api_key(key).await?)
            }
            Presented::Bearer(token) => Ok(state.bearer_auth.access_token(token)?),
            Presented::Nothing => anonymous_actor(state).ok_or_else(missing_credentials),
        }
    })
}

/// A user access token only; the owner in auth mode `none`.
fn access_token_only<'a>(
    req: &'a HttpRequest,
    state: &'a AppState,
    _body: &'a Bytes,
) -> LocalBoxFuture<'a, Result<Actor, ApiError>> {
    Box::pin(async move {
        let needs_token = || {
            ApiError::unauthorized(
                codes::ACCESS_TOKEN_REQUIRED,
                "this route needs a user access token",
            )
        };
        match presented(req)? {
            Presented::Bearer(token) if !BearerAuthenticator::is_api_key(token) => {
                Ok(state.bearer_auth.access_token(token)?)
            }
            Presented::Bearer(_) | Presented::Signature => Err(needs_token()),
            Presented::Nothing => anonymous_actor(state).ok_or_else(needs_token),
        }
    })
}

impl FromRequest for Authenticated {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let authenticated = authenticate(req, payload, any_scheme);
        Box::pin(async move {
            let (actor, body) = authenticated.await?;
            Ok(Self { actor, body })
        })
    }
}

impl FromRequest for SignedInUser {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let authenticated = authenticate(req, payload, access_token_only);
        Box::pin(async move {
            let (actor, body) = authenticated.await?;
            Ok(Self { actor, body })
        })
    }
}

async fn verify_signature(
    req: &HttpRequest,
    state: &AppState,
    body: &Bytes,
) -> Result<Actor, ApiError> {
    let header = |name: &'static str| -> Result<Option<&str>, ApiError> {
        req.headers()
            .get(name)
            .map(|v| {
                v.to_str().map_err(|_| {
                    ApiError::unauthorized(
                        codes::INVALID_SIGNING_HEADER,
                        format!("invalid {name} header"),
                    )
                })
            })
            .transpose()
    };
    // The request target exactly as sent: path plus `?query`, undecoded (also when a
    // trailing slash was served as the route without it).
    let sent = req
        .extensions()
        .get::<SentTarget>()
        .map(|target| target.0.clone());
    let target = sent.as_deref().unwrap_or_else(|| {
        req.uri()
            .path_and_query()
            .map_or_else(|| req.path(), |pq| pq.as_str())
    });
    let signed = SignedRequest {
        agent_id: header(AGENT_ID_HEADER)?,
        timestamp: header(TIMESTAMP_HEADER)?,
        nonce: header(NONCE_HEADER)?,
        signature: header(SIGNATURE_HEADER)?,
        method: req.method().as_str(),
        path_and_query: target,
        body,
    };
    Ok(state.agent_auth.authenticate(&signed).await?)
}
