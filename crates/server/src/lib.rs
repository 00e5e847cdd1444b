//! The `muster` binary's library: configuration, wiring, commands. Thin by design: no
//! business rule lives here.

pub mod adapters;
pub mod app;
pub mod auth_settings;
pub mod bootstrap;
pub mod cli;
pub mod commands;
pub mod edge_settings;
pub mod job_span;
pub mod key;
pub mod logging;
pub mod memory;
pub mod metrics_settings;
pub mod run_settings;
pub mod serve_lock;
pub mod sign;
pub mod stream_settings;
pub mod task_settings;
pub mod telemetry_settings;
pub mod webhook_settings;
