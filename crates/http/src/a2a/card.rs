//! The Agent Card: what this server is to an A2A client, where its two bindings listen
//! and how to authenticate. The public card (`/.well-known/agent-card.json`) names no
//! organization; the extended card, for an authenticated caller, lists a skill for each
//! capability its organization's agents declare.

use std::collections::BTreeMap;

use actix_web::HttpRequest;
use muster_a2a::A2aError;
use muster_a2a::PROTOCOL_VERSION;
use muster_a2a::types::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill,
    HttpAuthSecurityScheme, SecurityRequirement, SecurityScheme,
};
use muster_domain::model::Actor;
use serde_json::Map;

use crate::state::AppState;

/// Where the JSON-RPC binding listens.
pub(crate) const JSON_RPC_PATH: &str = "/a2a/jsonrpc";
/// Where the HTTP+JSON binding's paths start.
pub(crate) const REST_PATH: &str = "/a2a/rest";
/// The extension a Muster agent uses to sign A2A requests as it signs the API's.
pub(crate) const SIGNATURE_EXTENSION: &str = "urn:muster:a2a:agent-signature:v1";

const MEDIA: [&str; 2] = ["text/plain", "application/json"];

/// The skill every organization has: hand over a piece of work.
fn intake() -> AgentSkill {
    AgentSkill {
        id: "task-intake".to_owned(),
        name: "Hand over work".to_owned(),
        description: "Send a message to create a Muster task (title from its first line, \
                      description from its text); send one with the task's id to comment \
                      on it. The organization's agents and people claim, work, review and \
                      finish it; follow it with GetTask, ListTasks or a stream."
            .to_owned(),
        tags: vec!["tasks".to_owned(), "coordination".to_owned()],
        examples: vec!["Fix the flaky login test\nIt fails one run in ten on CI.".to_owned()],
    }
}

/// The public card.
pub(crate) fn public(state: &AppState, req: &HttpRequest) -> AgentCard {
    card(state, req, vec![intake()])
}

/// `GetExtendedAgentCard`: the card with a skill per capability of the caller's
/// organization.
pub(crate) async fn extended(
    state: &AppState,
    actor: &Actor,
    req: &HttpRequest,
) -> Result<AgentCard, A2aError> {
    let names = state
        .agents
        .capability_names(actor)
        .await
        .map_err(super::ops::refusal)?;
    let mut skills = vec![intake()];
    skills.extend(names.into_iter().map(|name| AgentSkill {
        id: format!("capability:{}", name.as_str()),
        name: name.as_str().to_owned(),
        description: format!(
            "Work that needs the capability {}: agents of this organization declare it.",
            name.as_str()
        ),
        tags: vec!["capability".to_owned(), name.as_str().to_owned()],
        examples: Vec::new(),
    }));
    Ok(card(state, req, skills))
}

/// Its addresses are the configured public URL's (else the listening address), never a
/// request's `Host` or forwarding headers: caches on the way keep the public card.
fn card(state: &AppState, req: &HttpRequest, skills: Vec<AgentSkill>) -> AgentCard {
    let base = state.edge.base(req);
    let interface = |path: &str, binding: &str| AgentInterface {
        url: format!("{base}{path}"),
        protocol_binding: binding.to_owned(),
        protocol_version: PROTOCOL_VERSION.to_owned(),
    };
    let bearer = SecurityScheme {
        http_auth_security_scheme: HttpAuthSecurityScheme {
            description: "A user's access token (POST /auth/login) or an API key (POST \
                          /api-keys), as Authorization: Bearer <token>."
                .to_owned(),
            scheme: "Bearer".to_owned(),
        },
    };
    AgentCard {
        name: "Muster".to_owned(),
        description: "A durable task store and coordination service for AI agents and \
                      people: messages become tasks that the organization's agents claim, \
                      work on and finish, with approvals, budgets and an audit log."
            .to_owned(),
        supported_interfaces: vec![
            interface(JSON_RPC_PATH, "JSONRPC"),
            interface(REST_PATH, "HTTP+JSON"),
        ],
        provider: None,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        documentation_url: Some(format!("{base}/docs")),
        capabilities: AgentCapabilities {
            streaming: true,
            push_notifications: true,
            extended_agent_card: true,
            extensions: vec![AgentExtension {
                uri: SIGNATURE_EXTENSION.to_owned(),
                description: "Muster agents may sign A2A requests as they sign the API's (the \
                              X-Agent-ID, X-Timestamp, X-Nonce and X-Signature headers, \
                              exactly as on every route) instead of sending a bearer token."
                    .to_owned(),
                required: false,
                params: None,
            }],
        },
        security_schemes: BTreeMap::from([("bearer".to_owned(), bearer)]),
        security_requirements: vec![SecurityRequirement {
            schemes: BTreeMap::from([("bearer".to_owned(), Map::new())]),
        }],
        default_input_modes: MEDIA.iter().map(|m| (*m).to_owned()).collect(),
        default_output_modes: MEDIA.iter().map(|m| (*m).to_owned()).collect(),
        skills,
    }
}
