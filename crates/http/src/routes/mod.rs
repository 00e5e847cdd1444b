//! The REST API: thin handlers that parse, call one use case and map the result, and
//! the paths they serve. The crate's root registers MCP's, A2A's and the reference's
//! beside these: this module imports none of those, nor the document's assembler.

mod agent_capabilities;
mod agent_money;
mod agent_reputation;
mod agent_spawning;
mod agents;
mod api_keys;
mod auth;
mod claims;
mod codehost;
mod events;
mod guard;
mod health;
mod inbound_webhooks;
mod integrations;
mod oauth;
mod projects;
mod remote_agents;
mod routines;
mod routing;
mod runs;
mod task_links;
mod tasks;
mod treasury;
mod usage;
mod webhooks;

mod document;

pub(crate) use document::paths;

use crate::route_table::{Table, at};

/// Adds the REST API's routes to `table`.
pub(crate) fn register(table: &mut Table<'_>) {
    tasks(table);
    agent_routes(table);
    run_routes(table);
    table
        .add(at("/projects").post(projects::create).get(projects::list))
        .add(
            at("/projects/{id}")
                .get(projects::get)
                .patch(projects::update),
        )
        .post("/projects/{id}/archive", projects::archive)
        .add(at("/routines").post(routines::create).get(routines::list))
        .add(
            at("/routines/{id}")
                .get(routines::get)
                .patch(routines::update)
                .delete(routines::delete),
        )
        .post("/routines/{id}/run", routines::run);
    table
        .add(at("/org/treasury").get(treasury::get))
        .get("/org/treasury/history", treasury::history)
        .post("/org/treasury/grant", treasury::grant);
    // Before the outbound hooks: `/api/v1/webhooks/inbound/...` and
    // `/api/v1/webhooks/chat` must not be read as hook ids.
    inbound_webhook_routes(table);
    table.post("/api/v1/webhooks/chat", integrations::chat);
    codehost_routes(table);
    webhook_routes(table);
    table
        .add(at("/events").get(events::list))
        // Before `/events/{id}`, which would take "stream" for an id.
        .add(at("/events/stream").get(events::stream))
        .add(at("/events/{id}").get(events::get))
        .add(at("/health").get(health::health))
        .add(at("/ready").get(health::ready))
        .add(at("/metrics").get(health::metrics))
        .post("/auth/login", auth::login)
        .post("/auth/refresh", auth::refresh)
        .post("/auth/logout", auth::logout)
        .post("/auth/logout-all", auth::logout_all)
        .add(at("/auth/me").get(auth::me))
        .add(at("/auth/google").get(oauth::begin))
        .add(at("/auth/google/callback").get(oauth::callback))
        .post("/auth/profile", auth::profile)
        .post("/auth/password", auth::password)
        .post("/auth/register", auth::register)
        .post("/auth/totp/setup", auth::totp_setup)
        .post("/auth/totp/verify", auth::totp_verify)
        .post("/auth/totp/disable", auth::totp_disable)
        .add(at("/api-keys").post(api_keys::create).get(api_keys::list))
        .add(
            at("/api-keys/{id}")
                .get(api_keys::get)
                .delete(api_keys::delete),
        );
}

/// The `/tasks` family.
fn tasks(table: &mut Table<'_>) {
    table
        .add(at("/tasks").post(tasks::create).get(tasks::list))
        // Before `/tasks/{id}`, which would take "templates" or "claim" for an id.
        .post("/tasks/claim", claims::claim)
        .add(at("/tasks/templates").get(routing::templates))
        .post("/tasks/templates/{id}/instantiate", routing::instantiate)
        .add(at("/tasks/{id}").get(tasks::get).patch(tasks::update))
        .post("/tasks/{id}/transition", tasks::transition)
        .post("/tasks/{id}/heartbeat", claims::heartbeat)
        .post("/tasks/{id}/release", claims::release)
        .post("/tasks/{id}/approve", tasks::approve)
        .post("/tasks/{id}/assign", tasks::assign)
        .add(
            at("/tasks/{id}/dependencies")
                .post(task_links::add_dependency)
                .get(task_links::dependencies),
        )
        .add(at("/tasks/{id}/dependencies/{depId}").delete(task_links::remove_dependency))
        .add(
            at("/tasks/{id}/comments")
                .post(task_links::comment)
                .get(task_links::comments),
        )
        .post("/tasks/{id}/escalate", task_links::escalate)
        .add(at("/tasks/{id}/escalations").get(task_links::escalations))
        .post("/tasks/{id}/create-template", routing::create_template)
        .add(at("/tasks/{id}/candidates").get(routing::candidates))
        .post("/tasks/{id}/auto-assign", routing::auto_assign)
        .add(at("/tasks/{id}/runs").post(runs::start).get(runs::of_task));
}

/// Runs and their usage (decision D-106).
fn run_routes(table: &mut Table<'_>) {
    table
        .add(at("/runs").get(runs::list))
        .add(at("/runs/{id}").get(runs::get))
        .add(at("/runs/{id}/log").post(runs::append_log).get(runs::log))
        .add(at("/runs/{id}/log/stream").get(runs::stream_log))
        .post("/runs/{id}/usage", runs::report_usage)
        .post("/runs/{id}/heartbeat", runs::heartbeat)
        .post("/runs/{id}/finish", runs::finish)
        .post("/runs/{id}/stop", runs::stop)
        .add(at("/usage").get(usage::summary));
}

/// The `/agents` family. Fixed paths (`/agents/capacity`, `/agents/capabilities/match`,
/// ...) come before the `{id}` patterns that would take their segments for ids.
fn agent_routes(table: &mut Table<'_>) {
    table
        .add(at("/agents").get(agents::list))
        .post("/agents/register", agents::register)
        .post("/agents/remote", remote_agents::register)
        .post("/agents/spawn", agent_spawning::spawn)
        .get("/agents/capacity", agent_spawning::capacity)
        .get("/agents/pending", agent_spawning::pending)
        .get("/agents/budget/alerts", agent_money::alerts)
        .add(at("/agents/guard").get(guard::get).patch(guard::update))
        .post("/agents/credits/transfer", agent_money::transfer)
        .post("/agents/credits/spend", agent_money::spend)
        .get("/agents/leaderboard/trust", agent_reputation::leaderboard)
        .get("/agents/capabilities", agent_capabilities::names)
        .get("/agents/capabilities/match", agent_capabilities::matching)
        .get(
            "/agents/capabilities/best-match",
            agent_capabilities::best_match,
        )
        .add(
            at("/agents/capabilities/{capability_id}")
                .patch(agent_capabilities::update)
                .delete(agent_capabilities::remove),
        )
        .add(at("/agents/{id}").get(agents::get).patch(agents::update))
        .post("/agents/{id}/revoke", agents::revoke)
        .post("/agents/{id}/suspend", agents::suspend)
        .post("/agents/{id}/unsuspend", agents::unsuspend)
        .post("/agents/{id}/demote", agents::demote)
        .post("/agents/{id}/activate", agent_spawning::activate)
        .add(at("/agents/{id}/reject").delete(agent_spawning::reject))
        .get("/agents/{id}/hierarchy", agent_spawning::hierarchy)
        .add(
            at("/agents/{id}/budget")
                .get(agent_money::budget)
                .patch(agent_money::set_budget),
        )
        .get("/agents/{id}/budget/can-spend", agent_money::can_spend)
        .get("/agents/{id}/credits/balance", agent_money::balance)
        .post("/agents/{id}/credits/grant", agent_money::grant)
        .get("/agents/{id}/credits/history", agent_money::history)
        .add(
            at("/agents/{id}/capabilities")
                .get(agent_capabilities::of_agent)
                .post(agent_capabilities::add),
        )
        .get("/agents/{id}/usage", usage::of_agent)
        .get("/agents/{id}/reputation", agent_reputation::summary)
        .get("/agents/{id}/reputation/history", agent_reputation::history)
        .post("/agents/{id}/reputation/bonus", agent_reputation::bonus)
        .post("/agents/{id}/reputation/penalty", agent_reputation::penalty);
}

/// Inbound webhook keys and the task creation they allow (decision D-80).
fn inbound_webhook_routes(table: &mut Table<'_>) {
    table
        .add(
            at("/api/v1/inbound-webhooks")
                .post(inbound_webhooks::create)
                .get(inbound_webhooks::list),
        )
        .add(
            at("/api/v1/inbound-webhooks/{id}")
                .get(inbound_webhooks::get)
                .patch(inbound_webhooks::update)
                .delete(inbound_webhooks::delete),
        )
        .post(
            "/api/v1/inbound-webhooks/{id}/rotate",
            inbound_webhooks::rotate,
        )
        .post("/api/v1/webhooks/inbound/{key}", inbound_webhooks::ingest)
        .post(
            "/api/v1/webhooks/inbound/{key}/batch",
            inbound_webhooks::ingest_batch,
        );
}

/// The code-host integration: connections (admin users) and the events endpoint
/// (decision D-87).
fn codehost_routes(table: &mut Table<'_>) {
    table
        .add(
            at("/api/v1/integrations/codehost/connections")
                .post(codehost::create)
                .get(codehost::list),
        )
        .add(
            at("/api/v1/integrations/codehost/connections/{id}")
                .get(codehost::get)
                .patch(codehost::update)
                .delete(codehost::delete),
        )
        .post("/api/v1/integrations/codehost/webhook", codehost::webhook);
}

/// `/api/v1/webhooks`: outbound webhook management (decisions D-81 to D-85).
fn webhook_routes(table: &mut Table<'_>) {
    table
        .add(
            at("/api/v1/webhooks")
                .post(webhooks::create)
                .get(webhooks::list),
        )
        .add(
            at("/api/v1/webhooks/{id}")
                .get(webhooks::get)
                .patch(webhooks::update)
                .delete(webhooks::delete),
        )
        .add(at("/api/v1/webhooks/{id}/deliveries").get(webhooks::deliveries))
        .post("/api/v1/webhooks/{id}/test", webhooks::test);
}
