//! `/api/v1/integrations/codehost/connections` (admin users, decision D-87) and
//! `POST /api/v1/integrations/codehost/webhook` (the code host's signed events).

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::CodeHostConnectionId;
use muster_domain::service::HostDelivery;

use crate::ApiError;
use crate::body::parse_json;
use crate::dto::auth::MessageResponse;
use crate::dto::integrations::{
    ConnectionResponse, CreateConnectionBody, IntegrationAnswerResponse, UpdateConnectionBody,
};
use crate::dto::{self, Data as Envelope};
use crate::extract::{RawBody, SignedInUser};
use crate::state::AppState;

const SIGNATURE_HEADER: &str = "x-host-signature-256";
const EVENT_HEADER: &str = "x-host-event";
const DELIVERY_HEADER: &str = "x-host-delivery";

fn connection_id(path: &str) -> Result<CodeHostConnectionId, ApiError> {
    dto::parse_uuid("id", path).map(CodeHostConnectionId::from_uuid)
}

/// `POST /api/v1/integrations/codehost/connections`: answered with the webhook secret,
/// once.
pub(super) async fn create(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<Json<ConnectionResponse>, ApiError> {
    let body: CreateConnectionBody = parse_json(&user.body)?;
    let issued = state.codehost.create(&user.actor, body.into_new()?).await?;
    Ok(Json(ConnectionResponse::new(
        &issued.connection,
        Some(issued.webhook_secret),
    )))
}

/// `GET /api/v1/integrations/codehost/connections`.
pub(super) async fn list(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<Json<Envelope<Vec<ConnectionResponse>>>, ApiError> {
    let connections = state.codehost.list(&user.actor).await?;
    Ok(Json(Envelope {
        data: connections
            .iter()
            .map(|c| ConnectionResponse::new(c, None))
            .collect(),
    }))
}

/// `GET /api/v1/integrations/codehost/connections/:id`.
pub(super) async fn get(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<ConnectionResponse>, ApiError> {
    let connection = state
        .codehost
        .get(&user.actor, connection_id(&path)?)
        .await?;
    Ok(Json(ConnectionResponse::new(&connection, None)))
}

/// `PATCH /api/v1/integrations/codehost/connections/:id`: `{enabled}`.
pub(super) async fn update(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<ConnectionResponse>, ApiError> {
    let id = connection_id(&path)?;
    let body: UpdateConnectionBody = parse_json(&user.body)?;
    let connection = state
        .codehost
        .set_enabled(&user.actor, id, body.enabled)
        .await?;
    Ok(Json(ConnectionResponse::new(&connection, None)))
}

/// `DELETE /api/v1/integrations/codehost/connections/:id`.
pub(super) async fn delete(
    state: Data<AppState>,
    path: Path<String>,
    user: SignedInUser,
) -> Result<Json<MessageResponse>, ApiError> {
    state
        .codehost
        .delete(&user.actor, connection_id(&path)?)
        .await?;
    Ok(Json(MessageResponse {
        message: "Code-host connection deleted",
    }))
}

/// `POST /api/v1/integrations/codehost/webhook`: both the signature and the event
/// header are required (400); then the service checks installation, signature and
/// payload.
pub(super) async fn webhook(
    state: Data<AppState>,
    req: HttpRequest,
    body: RawBody,
) -> Result<Json<Envelope<IntegrationAnswerResponse>>, ApiError> {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let signature = header(SIGNATURE_HEADER)
        .ok_or_else(|| ApiError::bad_request("X-Host-Signature-256 header is required"))?;
    let event = header(EVENT_HEADER)
        .ok_or_else(|| ApiError::bad_request("X-Host-Event header is required"))?;
    let delivery = HostDelivery {
        event,
        delivery: header(DELIVERY_HEADER),
        signature,
        body: body.0.to_vec(),
    };
    let answer = state.codehost.receive(&delivery).await?;
    Ok(Json(Envelope {
        data: answer.into(),
    }))
}
