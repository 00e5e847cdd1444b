//! Route table: thin handlers that parse, call one use case and map the result.

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
mod fallback;
mod health;
mod inbound_webhooks;
mod integrations;
mod oauth;
mod routing;
mod task_links;
mod tasks;
mod webhooks;

use actix_web::{HttpRequest, web};

/// Registers every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    tasks(cfg);
    agent_routes(cfg);
    // Before the outbound hooks: `/api/v1/webhooks/inbound/...` and
    // `/api/v1/webhooks/chat` must not be read as hook ids.
    inbound_webhook_routes(cfg);
    cfg.service(post("/api/v1/webhooks/chat", integrations::chat));
    codehost_routes(cfg);
    webhook_routes(cfg);
    cfg.service(
        web::resource("/events")
            .route(web::get().to(events::list))
            .default_service(only("GET")),
    )
    .service(
        // Before `/events/{id}`, which would take "stream" for an id.
        web::resource("/events/stream")
            .route(web::get().to(events::stream))
            .default_service(only("GET")),
    )
    .service(
        web::resource("/events/{id}")
            .route(web::get().to(events::get))
            .default_service(only("GET")),
    )
    .service(
        web::resource("/health")
            .route(web::get().to(health::health))
            .default_service(only("GET")),
    )
    .service(
        web::resource("/ready")
            .route(web::get().to(health::ready))
            .default_service(only("GET")),
    )
    .service(
        web::resource("/metrics")
            .route(web::get().to(health::metrics))
            .default_service(only("GET")),
    )
    .service(post("/auth/login", auth::login))
    .service(post("/auth/refresh", auth::refresh))
    .service(post("/auth/logout", auth::logout))
    .service(post("/auth/logout-all", auth::logout_all))
    .service(
        web::resource("/auth/me")
            .route(web::get().to(auth::me))
            .default_service(only("GET")),
    )
    .service(
        web::resource("/auth/google")
            .route(web::get().to(oauth::begin))
            .default_service(only("GET")),
    )
    .service(
        web::resource("/auth/google/callback")
            .route(web::get().to(oauth::callback))
            .default_service(only("GET")),
    )
    .service(post("/auth/profile", auth::profile))
    .service(post("/auth/password", auth::password))
    .service(post("/auth/register", auth::register))
    .service(post("/auth/totp/setup", auth::totp_setup))
    .service(post("/auth/totp/verify", auth::totp_verify))
    .service(post("/auth/totp/disable", auth::totp_disable))
    .service(
        web::resource("/api-keys")
            .route(web::post().to(api_keys::create))
            .route(web::get().to(api_keys::list))
            .default_service(only("GET, POST")),
    )
    .service(
        web::resource("/api-keys/{id}")
            .route(web::get().to(api_keys::get))
            .route(web::delete().to(api_keys::delete))
            .default_service(only("DELETE, GET")),
    )
    .default_service(web::to(fallback::not_found));
}

/// The `/tasks` family.
fn tasks(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/tasks")
            .route(web::post().to(tasks::create))
            .route(web::get().to(tasks::list))
            .default_service(only("GET, POST")),
    )
    // Before `/tasks/{id}`, which would take "templates" or "claim" for an id.
    .service(post("/tasks/claim", claims::claim))
    .service(
        web::resource("/tasks/templates")
            .route(web::get().to(routing::templates))
            .default_service(only("GET")),
    )
    .service(post(
        "/tasks/templates/{id}/instantiate",
        routing::instantiate,
    ))
    .service(
        web::resource("/tasks/{id}")
            .route(web::get().to(tasks::get))
            .route(web::patch().to(tasks::update))
            .default_service(only("GET, PATCH")),
    )
    .service(post("/tasks/{id}/transition", tasks::transition))
    .service(post("/tasks/{id}/heartbeat", claims::heartbeat))
    .service(post("/tasks/{id}/approve", tasks::approve))
    .service(post("/tasks/{id}/assign", tasks::assign))
    .service(
        web::resource("/tasks/{id}/dependencies")
            .route(web::post().to(task_links::add_dependency))
            .route(web::get().to(task_links::dependencies))
            .default_service(only("GET, POST")),
    )
    .service(
        web::resource("/tasks/{id}/dependencies/{dep_id}")
            .route(web::delete().to(task_links::remove_dependency))
            .default_service(only("DELETE")),
    )
    .service(
        web::resource("/tasks/{id}/comments")
            .route(web::post().to(task_links::comment))
            .route(web::get().to(task_links::comments))
            .default_service(only("GET, POST")),
    )
    .service(post("/tasks/{id}/escalate", task_links::escalate))
    .service(
        web::resource("/tasks/{id}/escalations")
            .route(web::get().to(task_links::escalations))
            .default_service(only("GET")),
    )
    .service(post(
        "/tasks/{id}/create-template",
        routing::create_template,
    ))
    .service(
        web::resource("/tasks/{id}/candidates")
            .route(web::get().to(routing::candidates))
            .default_service(only("GET")),
    )
    .service(post("/tasks/{id}/auto-assign", routing::auto_assign));
}

/// The `/agents` family. Fixed paths (`/agents/capacity`, `/agents/capabilities/match`,
/// ...) come before the `{id}` patterns that would take their segments for ids.
fn agent_routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/agents")
            .route(web::get().to(agents::list))
            .default_service(only("GET")),
    )
    .service(post("/agents/register", agents::register))
    .service(post("/agents/spawn", agent_spawning::spawn))
    .service(get("/agents/capacity", agent_spawning::capacity))
    .service(get("/agents/pending", agent_spawning::pending))
    .service(get("/agents/budget/alerts", agent_money::alerts))
    .service(post("/agents/credits/transfer", agent_money::transfer))
    .service(post("/agents/credits/spend", agent_money::spend))
    .service(get(
        "/agents/leaderboard/trust",
        agent_reputation::leaderboard,
    ))
    .service(get("/agents/capabilities", agent_capabilities::names))
    .service(get(
        "/agents/capabilities/match",
        agent_capabilities::matching,
    ))
    .service(get(
        "/agents/capabilities/best-match",
        agent_capabilities::best_match,
    ))
    .service(
        web::resource("/agents/capabilities/{capability_id}")
            .route(web::patch().to(agent_capabilities::update))
            .route(web::delete().to(agent_capabilities::remove))
            .default_service(only("DELETE, PATCH")),
    )
    .service(
        web::resource("/agents/{id}")
            .route(web::get().to(agents::get))
            .route(web::patch().to(agents::update))
            .default_service(only("GET, PATCH")),
    )
    .service(post("/agents/{id}/revoke", agents::revoke))
    .service(post("/agents/{id}/suspend", agents::suspend))
    .service(post("/agents/{id}/unsuspend", agents::unsuspend))
    .service(post("/agents/{id}/demote", agents::demote))
    .service(post("/agents/{id}/activate", agent_spawning::activate))
    .service(
        web::resource("/agents/{id}/reject")
            .route(web::delete().to(agent_spawning::reject))
            .default_service(only("DELETE")),
    )
    .service(get("/agents/{id}/hierarchy", agent_spawning::hierarchy))
    .service(
        web::resource("/agents/{id}/budget")
            .route(web::get().to(agent_money::budget))
            .route(web::patch().to(agent_money::set_budget))
            .default_service(only("GET, PATCH")),
    )
    .service(get("/agents/{id}/budget/can-spend", agent_money::can_spend))
    .service(get("/agents/{id}/credits/balance", agent_money::balance))
    .service(post("/agents/{id}/credits/grant", agent_money::grant))
    .service(get("/agents/{id}/credits/history", agent_money::history))
    .service(
        web::resource("/agents/{id}/capabilities")
            .route(web::get().to(agent_capabilities::of_agent))
            .route(web::post().to(agent_capabilities::add))
            .default_service(only("GET, POST")),
    )
    .service(get("/agents/{id}/reputation", agent_reputation::summary))
    .service(get(
        "/agents/{id}/reputation/history",
        agent_reputation::history,
    ))
    .service(post(
        "/agents/{id}/reputation/bonus",
        agent_reputation::bonus,
    ))
    .service(post(
        "/agents/{id}/reputation/penalty",
        agent_reputation::penalty,
    ));
}

/// A resource answering only `GET` with `handler`.
fn get<F, Args>(path: &str, handler: F) -> actix_web::Resource
where
    F: actix_web::Handler<Args>,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    web::resource(path)
        .route(web::get().to(handler))
        .default_service(only("GET"))
}

/// The fallback of a resource: 405 naming the methods it has.
fn only(allowed: &'static str) -> actix_web::Route {
    web::to(move |req: HttpRequest| async move { fallback::method_not_allowed(&req, allowed) })
}

/// Inbound webhook keys and the task creation they allow (decision D-80).
fn inbound_webhook_routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/api/v1/inbound-webhooks")
            .route(web::post().to(inbound_webhooks::create))
            .route(web::get().to(inbound_webhooks::list))
            .default_service(only("GET, POST")),
    )
    .service(
        web::resource("/api/v1/inbound-webhooks/{id}")
            .route(web::get().to(inbound_webhooks::get))
            .route(web::patch().to(inbound_webhooks::update))
            .route(web::delete().to(inbound_webhooks::delete))
            .default_service(only("DELETE, GET, PATCH")),
    )
    .service(post(
        "/api/v1/inbound-webhooks/{id}/rotate",
        inbound_webhooks::rotate,
    ))
    .service(post(
        "/api/v1/webhooks/inbound/{key}",
        inbound_webhooks::ingest,
    ))
    .service(post(
        "/api/v1/webhooks/inbound/{key}/batch",
        inbound_webhooks::ingest_batch,
    ));
}

/// The code-host integration: connections (admin users) and the events endpoint
/// (decision D-87).
fn codehost_routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/api/v1/integrations/codehost/connections")
            .route(web::post().to(codehost::create))
            .route(web::get().to(codehost::list))
            .default_service(only("GET, POST")),
    )
    .service(
        web::resource("/api/v1/integrations/codehost/connections/{id}")
            .route(web::get().to(codehost::get))
            .route(web::patch().to(codehost::update))
            .route(web::delete().to(codehost::delete))
            .default_service(only("DELETE, GET, PATCH")),
    )
    .service(post(
        "/api/v1/integrations/codehost/webhook",
        codehost::webhook,
    ));
}

/// `/api/v1/webhooks`: outbound webhook management (decisions D-81 to D-85).
fn webhook_routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/api/v1/webhooks")
            .route(web::post().to(webhooks::create))
            .route(web::get().to(webhooks::list))
            .default_service(only("GET, POST")),
    )
    .service(
        web::resource("/api/v1/webhooks/{id}")
            .route(web::get().to(webhooks::get))
            .route(web::patch().to(webhooks::update))
            .route(web::delete().to(webhooks::delete))
            .default_service(only("DELETE, GET, PATCH")),
    )
    .service(
        web::resource("/api/v1/webhooks/{id}/deliveries")
            .route(web::get().to(webhooks::deliveries))
            .default_service(only("GET")),
    )
    .service(post("/api/v1/webhooks/{id}/test", webhooks::test));
}

/// A resource answering only `POST` with `handler`.
fn post<F, Args>(path: &str, handler: F) -> actix_web::Resource
where
    F: actix_web::Handler<Args>,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    web::resource(path)
        .route(web::post().to(handler))
        .default_service(only("POST"))
}
