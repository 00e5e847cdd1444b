//! The dashboard's pages, one module each, and the routes that reach them.

mod account;
mod agent;
mod agents;
mod audit;
mod board;
pub(crate) mod home;
mod login;
mod projects;
mod run;
mod run_list;
mod spend;
mod task;
mod task_actions;
mod webhooks;

use actix_web::web::{self, ServiceConfig};
use muster_domain::model::{Actor, Agent, AgentId};
use muster_domain::ports::AgentFilter;
use muster_domain::service::PageRequest;
use muster_http::AppState;

use crate::refusal::Refusal;

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    cfg.route("/login", web::get().to(login::show))
        .route("/login", web::post().to(login::sign_in))
        .route("/logout", web::post().to(login::sign_out))
        .route("/board", web::get().to(board::show))
        .route("/board/columns", web::get().to(board::columns))
        .route("/tasks", web::post().to(board::create))
        .route("/tasks/{id}/move", web::post().to(board::move_task))
        .route("/tasks/{id}", web::get().to(task::show))
        .route("/tasks/{id}/approve", web::post().to(task_actions::approve))
        .route("/tasks/{id}/assign", web::post().to(task_actions::assign))
        .route(
            "/tasks/{id}/auto-assign",
            web::post().to(task_actions::auto_assign),
        )
        .route("/tasks/{id}/edit", web::post().to(task_actions::edit))
        .route(
            "/tasks/{id}/comments",
            web::post().to(task_actions::comment),
        )
        .route(
            "/tasks/{id}/dependencies",
            web::post().to(task_actions::add_dependency),
        )
        .route(
            "/tasks/{id}/dependencies/{dependency}/remove",
            web::post().to(task_actions::remove_dependency),
        )
        .route(
            "/tasks/{id}/escalate",
            web::post().to(task_actions::escalate),
        )
        .route("/runs/{id}", web::get().to(run::show))
        .route("/runs/{id}/log", web::get().to(run::follow))
        .route("/runs/{id}/stop", web::post().to(run::stop))
        .route("/projects", web::get().to(projects::show_list))
        .route("/projects", web::post().to(projects::create))
        .route("/projects/{id}", web::get().to(projects::show))
        .route("/projects/{id}/archive", web::post().to(projects::archive))
        .route("/spend", web::get().to(spend::show))
        .route("/audit", web::get().to(audit::show))
        .route("/agents", web::get().to(agents::show))
        .route("/agents", web::post().to(agents::register))
        .route("/agents/{id}", web::get().to(agent::show))
        .route("/agents/{id}/suspend", web::post().to(agent::suspend))
        .route("/agents/{id}/unsuspend", web::post().to(agent::unsuspend))
        .route("/agents/{id}/revoke", web::post().to(agent::revoke))
        .route("/agents/{id}/activate", web::post().to(agent::activate))
        .route("/agents/{id}/reject", web::post().to(agent::reject))
        .route("/webhooks", web::get().to(webhooks::show))
        .route("/webhooks/{id}", web::get().to(webhooks::hook))
        .route("/webhooks/{id}/test", web::post().to(webhooks::test))
        .route("/account", web::get().to(account::show))
        .route("/account/api-keys", web::post().to(account::create_key))
        .route(
            "/account/api-keys/{id}/delete",
            web::post().to(account::delete_key),
        )
        .route("/account/totp/setup", web::post().to(account::totp_setup))
        .route("/account/totp/verify", web::post().to(account::totp_verify))
        .route(
            "/account/totp/disable",
            web::post().to(account::totp_disable),
        );
}

/// Agents shown at once (names for assignees, the hierarchy).
const AGENTS_SHOWN: u32 = 500;

/// The organization's agents, newest first, up to [`AGENTS_SHOWN`].
pub(crate) async fn agents_of(state: &AppState, actor: &Actor) -> Result<Vec<Agent>, Refusal> {
    let page = PageRequest {
        cursor: None,
        limit: AGENTS_SHOWN,
    };
    Ok(state
        .agents
        .list(actor, &AgentFilter::default(), page)
        .await?
        .items)
}

/// The name to show for an agent.
pub(crate) fn agent_name(agents: &[Agent], id: AgentId) -> String {
    agents
        .iter()
        .find(|a| a.id == id)
        .map_or_else(|| id.to_string(), |a| a.name.clone())
}

/// A UUID from a path or form, as the API words the refusal.
pub(crate) fn uuid_of(field: &str, value: &str) -> Result<uuid::Uuid, Refusal> {
    muster_http::parse_uuid(field, value.trim()).map_err(Refusal::from)
}
