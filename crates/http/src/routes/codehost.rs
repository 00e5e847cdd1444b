//! `/api/v1/integrations/codehost/connections` (admin users, decision D-87) and
//! `POST /api/v1/integrations/codehost/webhook` (the code host's signed events).

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::model::CodeHostConnectionId;
use muster_domain::service::HostDelivery;

use crate::body::parse_json;
use crate::dto::auth::MessageResponse;
use crate::dto::integrations::{
    ConnectionResponse, CreateConnectionBody, IntegrationAnswerResponse, UpdateConnectionBody,
};
use crate::dto::{self, Data as Envelope};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{RawBody, SignedInUser};
use crate::state::AppState;

const SIGNATURE_HEADER: &str = "x-host-signature-256";
const EVENT_HEADER: &str = "x-host-event";
const DELIVERY_HEADER: &str = "x-host-delivery";

fn connection_id(path: &str) -> Result<CodeHostConnectionId, ApiError> {
    crate::body::parse_uuid("id", path).map(CodeHostConnectionId::from_uuid)
}

/// `POST /api/v1/integrations/codehost/connections`: answered with the webhook secret,
/// once.
#[utoipa::path(
    post,
    path = "/api/v1/integrations/codehost/connections",
    operation_id = "createCodehostConnection",
    tag = "integrations",
    summary = "Connect a code-host installation; the webhook secret is answered once",
    request_body = CreateConnectionBody,
    responses((status = 200, description = "OK", body = ConnectionResponse)),
    security(("userToken" = []))
)]
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
#[utoipa::path(
    get,
    path = "/api/v1/integrations/codehost/connections",
    operation_id = "listCodehostConnections",
    tag = "integrations",
    summary = "List code-host connections",
    responses((status = 200, description = "OK", body = dto::Data<Vec<ConnectionResponse>>)),
    security(("userToken" = []))
)]
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
#[utoipa::path(
    get,
    path = "/api/v1/integrations/codehost/connections/{id}",
    operation_id = "getCodehostConnection",
    tag = "integrations",
    summary = "Read a code-host connection",
    params(("id" = uuid::Uuid, Path, description = "Connection id")),
    responses((status = 200, description = "OK", body = ConnectionResponse)),
    security(("userToken" = []))
)]
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
#[utoipa::path(
    patch,
    path = "/api/v1/integrations/codehost/connections/{id}",
    operation_id = "updateCodehostConnection",
    tag = "integrations",
    summary = "Enable or disable a code-host connection",
    params(("id" = uuid::Uuid, Path, description = "Connection id")),
    request_body = UpdateConnectionBody,
    responses((status = 200, description = "OK", body = ConnectionResponse)),
    security(("userToken" = []))
)]
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
#[utoipa::path(
    delete,
    path = "/api/v1/integrations/codehost/connections/{id}",
    operation_id = "deleteCodehostConnection",
    tag = "integrations",
    summary = "Delete a code-host connection",
    params(("id" = uuid::Uuid, Path, description = "Connection id")),
    responses((status = 200, description = "OK", body = MessageResponse)),
    security(("userToken" = []))
)]
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
        message: "Code-host connection deleted".into(),
    }))
}

/// `POST /api/v1/integrations/codehost/webhook`: both the signature and the event
/// header are required (400); then the service checks installation, signature and
/// payload.
#[utoipa::path(
    post,
    path = "/api/v1/integrations/codehost/webhook",
    operation_id = "receiveCodehostEvent",
    tag = "integrations",
    summary = "Receive a code-host event (issues, pull requests, comments, check suites)",
    params(
        ("X-Host-Event" = String, Header, pattern = "\\S", description = "The event name: `issues`, `pull_request`, `issue_comment`, `check_suite`, `ping`"),
        ("X-Host-Delivery" = Option<String>, Header, pattern = "^ *(?:[!-~](?:[ -~]{0,198}[!-~])?)? *$", description = "The host's delivery id: a redelivery with the same id has no second effect")
    ),
    request_body(content = Object, description = "The code-host's event payload, exactly as signed"),
    responses(
        (status = 200, description = "Handled, or `ignored` with the reason (a disabled connection, an event or repository not covered)", body = dto::Data<IntegrationAnswerResponse>),
        (status = 404, description = "No connection has the payload's installation", body = ErrorBody)
    ),
    security(("hostSignature" = []))
)]
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
