//! The document's operations: the REST API's, MCP's, A2A's and this reference's, each
//! listed beside its handlers, and the tags that group them.

use utoipa::OpenApi;

/// The tags, in the order a reader meets them.
#[derive(OpenApi)]
#[openapi(
    tags(
        (name = "tasks", description = "Create, find, move, claim, comment on and link tasks"),
        (name = "runs", description = "Agents' runs of their tasks: live logs, usage and its cost, stops"),
        (name = "projects", description = "Tasks grouped under a goal, with their progress"),
        (name = "routines", description = "Work that recurs on a cron schedule"),
        (name = "routing", description = "Candidates, auto-assignment and task templates"),
        (name = "agents", description = "Register, spawn, manage and describe agents"),
        (name = "credits and budgets", description = "Balances, grants, spending, transfers, budgets and the organization's treasury"),
        (name = "reputation", description = "Reputation scores, history and the trust leaderboard"),
        (name = "events", description = "The organization's audit log, paged or live"),
        (name = "users", description = "Sign-in, tokens, profile and the second factor"),
        (name = "API keys", description = "Keys for scripts and CI, limited to scopes"),
        (name = "webhooks", description = "Outbound webhooks and their deliveries"),
        (name = "inbound webhooks", description = "Keys that let other systems create tasks"),
        (name = "integrations", description = "Chat and code-host integrations"),
        (name = "a2a", description = "Agent-to-Agent (A2A v1.0): the Agent Card and the JSON-RPC and HTTP+JSON bindings, with the same credentials"),
        (name = "mcp", description = "The Model Context Protocol: the task tools for MCP clients, with the same credentials"),
        (name = "service", description = "Health, readiness, metrics and this reference")
    )
)]
struct Tags;

/// `GET /openapi.json` and the pages of `/docs`.
#[derive(OpenApi)]
#[openapi(paths(
    super::reference::openapi,
    super::reference::docs_root,
    super::reference::docs_file
))]
struct Reference;

/// Every operation, with its schemas, and the tags.
pub(super) fn all() -> utoipa::openapi::OpenApi {
    let mut doc = Tags::openapi();
    for part in [
        crate::routes::paths(),
        crate::mcp::paths(),
        crate::a2a::paths(),
        Reference::openapi(),
    ] {
        doc.merge(part);
    }
    doc
}
