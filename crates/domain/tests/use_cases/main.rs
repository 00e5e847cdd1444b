//! The domain's tests through its public surface: each use case against mocked ports,
//! and property tests of the rules. One test binary (one link per build, which keeps
//! `cargo xtask mutants` and CI fast); a module per use case.
// Helpers outside `#[test]` functions are not covered by clippy.toml's allow-*-in-tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod account_login;
mod account_login_second_factor;
mod account_oauth;
mod account_owner;
mod account_profile;
mod account_sessions;
mod account_totp;
mod agent_changes;
mod agent_edits;
mod agent_family;
mod agent_money;
mod agent_service;
mod api_key_service;
mod bootstrap_service;
mod chat_messages;
mod codehost_events;
mod config_caches;
mod conflict_messages;
mod economy_escrow;
mod economy_properties;
mod economy_settlement;
mod economy_treasury;
mod event_service;
mod inbound_keys;
mod ledger_properties;
mod no_io_dependencies;
mod projects;
mod properties;
mod push_configs;
mod remote_agents;
mod routines;
mod runaway_guard;
mod runs_claim_reservations;
mod runs_lifecycle;
mod runs_log;
mod runs_observed;
mod runs_start;
mod runs_usage;
mod runs_worked_example;
mod service_debug;
mod sweep_and_guard;
mod task_claims;
mod task_edits;
mod task_release;
mod task_routing;
mod task_service;
mod task_transition;
mod task_workflow;
mod webhook_delivery;
mod webhook_gate;
mod webhook_gate_reruns;
