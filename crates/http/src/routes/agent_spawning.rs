//! Agents making agents: spawn, capacity, pending, activate, reject, hierarchy.

use actix_web::HttpRequest;
use actix_web::web::{Data, Json, Path};
use muster_domain::service::agent_limits::hierarchy_depth;

use super::agents::{agent_id, status_answer, status_target};
use super::tasks::Answer;
use crate::ApiError;
use crate::body::{parse_json, parse_optional_json, parse_query};
use crate::dto;
use crate::dto::agents::{
    CapacityResponse, HierarchyQuery, HierarchyResponse, PendingResponse, ReasonRequest,
    SpawnRequest, StatusResponse, WithSecret,
};
use crate::dto::task_links::DataWithMessage;
use crate::extract::Authenticated;
use crate::state::AppState;

/// `{message}`.
#[derive(Debug, serde::Serialize)]
pub(super) struct Message {
    pub(super) message: String,
}

/// `POST /agents/spawn`.
pub(super) async fn spawn(
    state: Data<AppState>,
    auth: Authenticated,
) -> Result<Json<WithSecret>, ApiError> {
    let new = parse_json::<SpawnRequest>(&auth.body)?.into_new_child()?;
    let spawned = state.agents.spawn(&auth.actor, new).await?;
    Ok(Json(WithSecret {
        data: spawned.view.into(),
        secret: spawned.secret.expose().to_owned(),
        message: "Agent spawned and pending activation. Store the secret now: it is shown \
                  only once."
            .to_owned(),
    }))
}

/// `GET /agents/capacity`.
pub(super) async fn capacity(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<CapacityResponse>> {
    let capacity = state.agents.capacity(&auth.actor).await?;
    Ok(Json(dto::Data {
        data: capacity.into(),
    }))
}

/// `GET /agents/pending`.
pub(super) async fn pending(
    state: Data<AppState>,
    auth: Authenticated,
) -> Answer<dto::Data<Vec<PendingResponse>>> {
    let agents = state.agents.pending(&auth.actor).await?;
    Ok(Json(dto::Data {
        data: agents.into_iter().map(Into::into).collect(),
    }))
}

/// `POST /agents/:id/activate`.
pub(super) async fn activate(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<DataWithMessage<StatusResponse>> {
    let agent = state
        .agents
        .activate(&auth.actor, status_target(&path, &auth)?)
        .await?;
    Ok(status_answer(agent, "Agent activated"))
}

/// `DELETE /agents/:id/reject`.
pub(super) async fn reject(
    state: Data<AppState>,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<Message> {
    let id = agent_id(&path)?;
    let reason = parse_optional_json::<ReasonRequest>(&auth.body)?.reason()?;
    let agent = state.agents.reject(&auth.actor, id, reason).await?;
    Ok(Json(Message {
        message: format!("Agent {} rejected", agent.handle.as_str()),
    }))
}

/// `GET /agents/:id/hierarchy`.
pub(super) async fn hierarchy(
    state: Data<AppState>,
    req: HttpRequest,
    path: Path<String>,
    auth: Authenticated,
) -> Answer<dto::Data<HierarchyResponse>> {
    let id = agent_id(&path)?;
    let query: HierarchyQuery = parse_query(req.query_string())?;
    let depth = hierarchy_depth(query.depth)?;
    let tree = state.agents.hierarchy(&auth.actor, id, depth).await?;
    Ok(Json(dto::Data { data: tree.into() }))
}
