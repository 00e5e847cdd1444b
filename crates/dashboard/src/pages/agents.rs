//! The agents: their hierarchy with status, mode, level and reputation; the spawns
//! waiting for activation; and registering a new agent, for those allowed.

use std::collections::HashSet;

use actix_web::HttpResponse;
use actix_web::web::Data;
use maud::{Markup, html};
use muster_domain::model::{Agent, AgentId, AgentMode, AgentRole, Proficiency};
use muster_domain::policy;
use muster_http::AppState;
use muster_http::dto::agents::{CapabilityInput, RegisterRequest};
use serde::Deserialize;

use super::agents_of;
use crate::csrf::Posted;
use crate::layout::{Section, csrf_field, item_button, page, respond_page};
use crate::refusal::Refusal;
use crate::session::Viewer;

/// One line of the tree.
pub(crate) fn agent_line(agent: &Agent) -> Markup {
    html! {
        a href={"/ui/agents/" (agent.id)} { (agent.name) }
        " " code { (agent.handle.as_str()) }
        " · " span class={"status-" (agent.status.as_str())} { (agent.status.as_str()) }
        " · " (agent.mode.as_str()) " · level " (agent.level.get())
        " · reputation " (agent.reputation_score)
    }
}

fn subtree(agents: &[Agent], parent: AgentId, seen: &mut HashSet<AgentId>) -> Markup {
    let children: Vec<&Agent> = agents
        .iter()
        .filter(|a| a.parent_id == Some(parent) && seen.insert(a.id))
        .collect();
    html! {
        @if !children.is_empty() {
            ul {
                @for child in children {
                    li { (agent_line(child)) (subtree(agents, child.id, seen)) }
                }
            }
        }
    }
}

/// The hierarchy: agents without a parent (or whose parent is gone) at the root.
fn tree(agents: &[Agent]) -> Markup {
    let ids: HashSet<AgentId> = agents.iter().map(|a| a.id).collect();
    let mut seen = HashSet::new();
    let mut roots: Vec<&Agent> = agents
        .iter()
        .filter(|a| a.parent_id.is_none_or(|p| !ids.contains(&p)))
        .collect();
    roots.sort_by_key(|a| a.created_at);
    for root in &roots {
        seen.insert(root.id);
    }
    html! {
        ul.tree aria-label="Agent hierarchy" {
            @for root in roots {
                li { (agent_line(root)) (subtree(agents, root.id, &mut seen)) }
            }
        }
    }
}

/// The register form; after a refusal, open and filled with what was typed.
fn register_form(viewer: &Viewer, draft: Option<&Register>) -> Markup {
    let typed = |f: fn(&Register) -> &str| draft.map_or("", f);
    let level = draft.map_or("1", |d| d.level.as_str());
    html! {
        details.panel open[draft.is_some()] {
            summary { "Register an agent" }
            form method="post" action="/ui/agents" {
                (csrf_field(viewer))
                label for="reg-handle" { "Agent id" }
                input #reg-handle type="text" name="agentId" required maxlength="100" placeholder="planner-1" value=(typed(|d| &d.agent_id));
                label for="reg-name" { "Name" }
                input #reg-name type="text" name="name" required maxlength="255" value=(typed(|d| &d.name));
                label for="reg-level" { "Level (1-10)" }
                input #reg-level type="number" name="level" min="1" max="10" value=(level);
                label for="reg-mode" { "Mode" }
                select #reg-mode name="mode" {
                    @for mode in ["worker", "orchestrator", "observer"] {
                        option value=(mode) selected[typed(|d| &d.mode) == mode] { (mode) }
                    }
                }
                label for="reg-role" { "Role" }
                select #reg-role name="role" {
                    @for role in ["worker", "hr", "founder", "admin"] {
                        option value=(role) selected[typed(|d| &d.role) == role] { (role) }
                    }
                }
                label for="reg-caps" { "Capabilities (comma-separated, name:proficiency)" }
                input #reg-caps type="text" name="capabilities" placeholder="rust:expert, sql" value=(typed(|d| &d.capabilities));
                button type="submit" { "Register" }
            }
        }
    }
}

async fn agents_page(
    state: &AppState,
    viewer: &Viewer,
    notice: Option<&Refusal>,
    registered: Option<(&Agent, &str)>,
    draft: Option<&Register>,
) -> HttpResponse {
    let loaded = async {
        let agents = agents_of(state, &viewer.actor).await?;
        let pending = state.agents.pending(&viewer.actor).await?;
        Ok::<_, Refusal>((agents, pending))
    };
    let (agents, pending, notice) = match loaded.await {
        Ok((agents, pending)) => (agents, pending, notice.cloned()),
        Err(refusal) => (Vec::new(), Vec::new(), Some(refusal)),
    };
    let writable = policy::may_write(&viewer.actor).is_ok();
    let content = html! {
        @if let Some((agent, secret)) = registered {
            div.panel.registered role="status" {
                p.notice.ok { "Registered " (agent.name) " (" (agent.handle.as_str()) "). Its secret is shown only now: give it to the agent." }
                p.secret { (secret) }
            }
        }
        @if policy::may_administer_agents(&viewer.actor).is_ok() { (register_form(viewer, draft)) }
        section aria-labelledby="pending-h" {
            h2 #pending-h { "Waiting for activation (" (pending.len()) ")" }
            @if pending.is_empty() { p { "No spawn is waiting." } }
            ul {
                @for agent in &pending {
                    li.pending {
                        (agent_line(agent))
                        @if writable {
                            " " (item_button(viewer, &format!("/ui/agents/{}/activate", agent.id), "Activate", &agent.name))
                            " " (item_button(viewer, &format!("/ui/agents/{}/reject", agent.id), "Reject", &agent.name))
                        }
                    }
                }
            }
        }
        section aria-labelledby="tree-h" {
            h2 #tree-h { "Hierarchy (" (agents.len()) " agents)" }
            (tree(&agents))
        }
    };
    respond_page(
        notice.as_ref(),
        page(
            Some(viewer),
            "Agents",
            Section::Agents,
            notice.as_ref(),
            &content,
        ),
    )
}

/// `GET /ui/agents`.
pub(crate) async fn show(state: Data<AppState>, viewer: Viewer) -> HttpResponse {
    agents_page(&state, &viewer, None, None, None).await
}

/// The register form.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Register {
    #[serde(default)]
    agent_id: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    level: String,
    #[serde(default)]
    mode: String,
    #[serde(default)]
    role: String,
    #[serde(default)]
    capabilities: String,
}

fn capabilities_of(typed: &str) -> Result<Vec<CapabilityInput>, Refusal> {
    typed
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|entry| {
            let (name, level) = entry.split_once(':').unwrap_or((entry, ""));
            let proficiency = match level.trim() {
                "" => None,
                level => Some(Proficiency::parse(level).ok_or_else(|| {
                    Refusal::bad_request(format!(
                        "proficiency `{level}` must be one of basic, standard, expert"
                    ))
                })?),
            };
            Ok(CapabilityInput {
                capability: name.trim().to_owned(),
                proficiency,
            })
        })
        .collect()
}

/// A choice of the API's (`worker`, `observer`, ...) from a form, by its domain parser.
fn choice<T>(field: &str, typed: &str, parse: fn(&str) -> Option<T>) -> Result<T, Refusal> {
    parse(typed.trim()).ok_or_else(|| {
        Refusal::bad_request(format!(
            "{field} `{}` is not one of the choices",
            typed.trim()
        ))
    })
}

fn request_of(form: &Register) -> Result<RegisterRequest, Refusal> {
    let level = match form.level.trim() {
        "" => None,
        typed => Some(
            typed
                .parse::<i64>()
                .map_err(|_| Refusal::bad_request("level must be a whole number from 1 to 10"))?,
        ),
    };
    Ok(RegisterRequest {
        agent_id: form.agent_id.trim().to_owned(),
        name: form.name.trim().to_owned(),
        level,
        role: Some(choice("role", &form.role, AgentRole::parse)?),
        mode: Some(choice("mode", &form.mode, AgentMode::parse)?),
        capabilities: Some(capabilities_of(&form.capabilities)?),
        ..RegisterRequest::default()
    })
}

/// `POST /ui/agents`: registers an agent and shows its secret once.
pub(crate) async fn register(
    state: Data<AppState>,
    viewer: Viewer,
    Posted(form): Posted<Register>,
) -> HttpResponse {
    let registered = async {
        let new = request_of(&form)?.into_new_agent()?;
        Ok::<_, Refusal>(state.agents.register(&viewer.actor, new).await?)
    };
    match registered.await {
        // The page carries the secret; like every dashboard page it is sent `no-store`.
        Ok(done) => {
            let shown = Some((&done.view.agent, done.secret.expose()));
            agents_page(&state, &viewer, None, shown, None).await
        }
        Err(refusal) => agents_page(&state, &viewer, Some(&refusal), None, Some(&form)).await,
    }
}
