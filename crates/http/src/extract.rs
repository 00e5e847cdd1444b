//! The `Authenticated` extractor: reads the body once, verifies the caller's credentials
//! over it, and hands both to the handler.

use actix_web::dev::Payload;
use actix_web::web::{Bytes, Data};
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use muster_auth::agent::{
    AGENT_ID_HEADER, NONCE_HEADER, SIGNATURE_HEADER, SignedRequest, TIMESTAMP_HEADER,
};
use muster_domain::model::Actor;

use crate::body::read_body;
use crate::error::ApiError;
use crate::state::AppState;

/// A request whose caller proved who it is, with the raw body that was verified.
#[derive(Debug)]
pub struct Authenticated {
    /// The caller, bound to its organization.
    pub actor: Actor,
    /// The raw body, exactly as signed.
    pub body: Bytes,
}

/// The server was built without its [`AppState`]: a wiring bug.
#[derive(Debug, thiserror::Error)]
#[error("application state is not configured")]
struct MissingState;

impl FromRequest for Authenticated {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let payload = payload.take();
        Box::pin(async move {
            let body = read_body(&req, payload).await?;
            let state = req
                .app_data::<Data<AppState>>()
                .ok_or_else(|| ApiError::internal(&MissingState))?;
            let header = |name: &'static str| -> Result<Option<&str>, ApiError> {
                req.headers()
                    .get(name)
                    .map(|v| {
                        v.to_str()
                            .map_err(|_| ApiError::unauthorized(format!("invalid {name} header")))
                    })
                    .transpose()
            };
            // The request target exactly as sent: path plus `?query`, undecoded.
            let target = req
                .uri()
                .path_and_query()
                .map_or_else(|| req.path(), |pq| pq.as_str());
            let signed = SignedRequest {
                agent_id: header(AGENT_ID_HEADER)?,
                timestamp: header(TIMESTAMP_HEADER)?,
                nonce: header(NONCE_HEADER)?,
                signature: header(SIGNATURE_HEADER)?,
                method: req.method().as_str(),
                path_and_query: target,
                body: &body,
            };
            let actor = state.agent_auth.authenticate(&signed).await?;
            Ok(Self { actor, body })
        })
    }
}
