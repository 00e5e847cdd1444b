//! `POST /agents/remote`: registering an outside A2A agent from its Agent Card.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json};

use crate::body::parse_json;
use crate::dto::remote_agents::{RegisterRemoteRequest, RemoteAgentResponse};
use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

/// `POST /agents/remote`.
#[utoipa::path(
    post,
    path = "/agents/remote",
    operation_id = "registerRemoteAgent",
    tag = "agents",
    summary = "Register an outside A2A agent from its Agent Card",
    description = "Reads the card (through the same address checks as webhooks), and \
        registers an active worker agent that stands for it, with a capability per skill. \
        A task assigned to that agent is sent to the remote agent's JSON-RPC endpoint as a \
        `SendMessage`, with a push config pointing back to this server; its updates move \
        the task. Admin users only.",
    request_body = RegisterRemoteRequest,
    responses((status = 200, description = "OK", body = RemoteAgentResponse)),
    security(("userToken" = []), ("apiKey" = []))
)]
pub(super) async fn register(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<Json<RemoteAgentResponse>, ApiError> {
    let new = parse_json::<RegisterRemoteRequest>(&auth.body)?.into_new(state.edge.base(&req))?;
    let registered = state.remote.register(&auth.actor, new).await?;
    Ok(Json(registered.into()))
}
