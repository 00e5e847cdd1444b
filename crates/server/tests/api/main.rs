//! The HTTP API, end to end: a real server on a free port over a fresh database, driven
//! with signed requests exactly as a client sends them.
//!
//! Each behaviour is an `async fn name(app: &TestApp)`; `api_tests!` turns the listed
//! names into `sqlite::name` and `postgres::name` tests, each with its own server and
//! database (two organizations, each with an HR agent). The PostgreSQL tests return early
//! when the server is unreachable outside CI (with `CI` set they fail instead).
//!
//! Run: `cargo test -p muster-server --test api`.

// The behaviours and helpers are plain async fns called from the generated `#[tokio::test]`
// fns, so clippy's allow-*-in-tests settings do not reach them; in a test binary a failed
// unwrap or a panic is a failed test with its location, which is what we want.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// Expands each listed behaviour into one test per engine, in modules `sqlite` and
/// `postgres` next to the behaviours; `with <settings>;` first starts the app with other
/// user-authentication settings.
macro_rules! api_tests {
    (with $settings:expr; $($name:ident),+ $(,)?) => {
        api_tests!(@engine sqlite, Sqlite, $settings, $($name),+);
        api_tests!(@engine postgres, Postgres, $settings, $($name),+);
    };
    ($($name:ident),+ $(,)?) => {
        // `AppSettings::default()`: passwords hash at argon2's minimum cost, as for
        // `spawn_app` (the service's cost made a fifth of this binary's CPU).
        api_tests!(with crate::helpers::AppSettings::default(); $($name),+);
    };
    (@engine $module:ident, $engine:ident, $settings:expr, $($name:ident),+) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let engine = ::muster_persistence::Engine::$engine;
                    let Some(app) = crate::helpers::spawn_app_with(engine, $settings).await else {
                        return;
                    };
                    super::$name(&app).await;
                    app.stop().await;
                }
            )+
        }
    };
}

mod a2a;
mod a2a_lists;
mod a2a_push;
mod a2a_refusals;
mod a2a_remote;
mod a2a_rest;
mod a2a_streams;
mod agent_auth;
mod agent_signing;
mod agent_support;
mod agents_budgets;
mod agents_capabilities;
mod agents_credits;
mod agents_lifecycle;
mod agents_money_race;
mod agents_reputation;
mod agents_smoke;
mod agents_spawning;
mod api_keys;
mod auth_account;
mod auth_login;
mod auth_modes;
mod auth_throttle;
mod auth_tokens;
mod auth_totp;
mod chat_integration;
mod client;
mod client_runs;
mod codehost_connections;
mod codehost_events;
mod codehost_support;
mod dashboard_hostile;
mod dashboard_pages;
mod dashboard_projects;
mod dashboard_runs;
mod dashboard_security;
mod dashboard_session;
mod dashboard_support;
mod decisions;
mod dns_rebinding;
mod economy_conservation;
mod economy_escrow;
mod economy_guard;
mod economy_payout;
mod economy_race;
mod economy_reprice;
mod economy_reputation;
mod economy_self_dealing;
mod economy_support;
mod economy_treasury;
mod error_codes;
mod errors;
mod events;
mod events_read;
mod events_stream;
mod faults;
mod forwarded_headers;
mod health;
mod helpers;
mod hook_receiver;
mod hostile_input;
mod idempotency;
mod inbound_ingest;
mod inbound_keys;
mod lists_paged;
mod lookalikes;
mod mcp;
mod mcp_projects;
mod mcp_routines;
mod mcp_runs;
mod media_types;
mod metrics;
mod metrics_runs;
mod oauth;
mod openapi;
mod openapi_browser;
mod projects;
mod routines;
mod runaway_guard;
mod runs_lifecycle;
mod runs_log;
mod runs_prices;
mod runs_race;
mod runs_refusals;
mod runs_reservations;
mod runs_stops;
mod runs_stream;
mod runs_support;
mod runs_usage;
mod scale_out;
mod stored;
mod streams_fair_share;
mod task_support;
mod task_tools;
mod tasks_approval;
mod tasks_assign;
mod tasks_claims;
mod tasks_comments;
mod tasks_create;
mod tasks_dependencies;
mod tasks_escalation;
mod tasks_isolation;
mod tasks_permissions;
mod tasks_read;
mod tasks_release;
mod tasks_rewards;
mod tasks_routing;
mod tasks_sweep;
mod tasks_templates;
mod tasks_transition;
mod tasks_update;
mod tasks_workflow_table;
mod trailing_slashes;
mod webhook_support;
mod webhooks_delivery;
mod webhooks_manage;
mod webhooks_prehooks;
mod webhooks_targets;
mod worker_adapters;
mod worker_runs;
mod worker_stops;
mod worker_support;
