//! `Idempotency-Key` on every POST that carries a credential: the credential extractors
//! claim the key once the caller is verified ([`begin`]); the middleware ([`keep`])
//! stores the response for the retries, or lets the key go when the request failed on
//! our side.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::CONTENT_TYPE;
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::web::Data;
use actix_web::{HttpMessage, HttpRequest};
use muster_domain::model::{Actor, ActorKind, Begun, IdempotencyKey, StoredResponse};
use muster_domain::service::ServiceError;
use time::OffsetDateTime;

use crate::error::{ApiError, codes};
use crate::state::AppState;

/// The request header.
pub const HEADER: &str = "idempotency-key";

/// The key a request claimed, for [`keep`] to store its response under.
#[derive(Debug, Clone)]
struct Claimed(IdempotencyKey);

/// Set by a handler whose answer is not a 5xx but stands for one (an MCP tool that
/// failed inside): [`keep`] then lets the key go as after a 5xx.
#[derive(Debug, Clone, Copy)]
struct LetGo;

/// Marks `req`'s answer as a failure of the server's own: its `Idempotency-Key`, if it
/// claimed one, is let go rather than kept, so a retry does the request afresh.
pub(crate) fn let_key_go(req: &actix_web::HttpRequest) {
    req.extensions_mut().insert(LetGo);
}

/// The credential a key is scoped to.
fn scope(actor: &Actor) -> String {
    match &actor.kind {
        ActorKind::Agent { id, .. } => format!("agent:{id}"),
        ActorKind::User { key: Some(key), .. } => format!("api_key:{}", key.id),
        ActorKind::User { id, key: None, .. } => format!("user:{id}"),
        ActorKind::System => format!("owner:{}", actor.org_id),
    }
}

/// For a POST with an `Idempotency-Key`, once `actor` is verified: claims the key for
/// this request, or answers instead of it: the kept response of the same request (as
/// it was), 409 while another request with the key is being handled, 422 when the key
/// came with another body.
pub(crate) async fn begin(
    req: &HttpRequest,
    state: &AppState,
    actor: &Actor,
    body: &[u8],
) -> Result<(), ApiError> {
    if req.method() != Method::POST {
        return Ok(());
    }
    let Some(value) = req.headers().get(HEADER) else {
        return Ok(());
    };
    let value = value.to_str().map_err(|_| {
        ApiError::bad_request("Idempotency-Key must be 1 to 255 printable ASCII characters")
    })?;
    let key = IdempotencyKey::new(&scope(actor), Method::POST.as_str(), req.path(), value)?;
    let fingerprint = muster_auth::signing::fingerprint(body);
    let begun = state
        .idempotency
        .begin(&key, &fingerprint, OffsetDateTime::now_utc())
        .await
        .map_err(ServiceError::from)?;
    match begun {
        Begun::Claimed => {
            req.extensions_mut().insert(Claimed(key));
            Ok(())
        }
        Begun::Replay(stored) => Err(ApiError::replay(stored)),
        Begun::InProgress => Err(ApiError::new(
            StatusCode::CONFLICT,
            codes::IDEMPOTENCY_KEY_IN_PROGRESS,
            "A request with this Idempotency-Key is still being handled; retry later",
        )),
        Begun::Mismatch => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            codes::IDEMPOTENCY_KEY_MISMATCH,
            "This Idempotency-Key was used with a different request body",
        )),
    }
}

/// Middleware: after a request that claimed a key, keeps its response (any status
/// below 500) for the key's retries; after a 5xx (or an answer marked with
/// [`let_key_go`]) lets the key go, so that a retry does the request afresh.
pub async fn keep(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let state = req.app_data::<Data<AppState>>().cloned();
    let res = next.call(req).await?;
    let claimed = res.request().extensions().get::<Claimed>().cloned();
    let (Some(Claimed(key)), Some(state)) = (claimed, state) else {
        return Ok(res.map_into_boxed_body());
    };
    // A stream cannot be kept for a retry: its key is let go once it opens.
    let streaming = res
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if res.status().is_server_error() || streaming || res.request().extensions().contains::<LetGo>()
    {
        // On its own task: done even if the client goes away meanwhile.
        let store = state.idempotency.clone();
        let abandoned = actix_web::rt::spawn(async move { store.abandon(&key).await });
        if !matches!(abandoned.await, Ok(Ok(()))) {
            tracing::warn!("could not let an Idempotency-Key go; retries get 409 until it expires");
        }
        return Ok(res.map_into_boxed_body());
    }
    let status = res.status().as_u16();
    let content_type = res
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let (req, res) = res.into_parts();
    let (head, body) = res.into_parts();
    let body = actix_web::body::to_bytes(body)
        .await
        .map_err(|_| actix_web::error::ErrorInternalServerError("cannot read the response"))?;
    let stored = StoredResponse {
        status,
        content_type,
        body: body.to_vec(),
    };
    // On its own task: kept even if the client goes away meanwhile (its retry is
    // exactly what needs the answer).
    let store = state.idempotency.clone();
    let kept = actix_web::rt::spawn(async move {
        if let Err(err) = store.finish(&key, &stored).await {
            tracing::warn!(%err, "could not keep a response for its Idempotency-Key");
            if let Err(err) = store.abandon(&key).await {
                tracing::warn!(%err, "could not let the Idempotency-Key go either");
            }
        }
    });
    if kept.await.is_err() {
        tracing::warn!("keeping a response for its Idempotency-Key failed");
    }
    let res = head.set_body(body).map_into_boxed_body();
    Ok(ServiceResponse::new(req, res))
}
