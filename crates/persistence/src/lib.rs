//! Muster's storage: every repository port of `muster-domain`, on PostgreSQL or on an
//! embedded SQLite file, through one schema and one set of queries.
//!
//! [`Database::connect`] picks the engine from the URL ([`DatabaseUrl`]);
//! [`run_migrations`] applies the embedded migrations of that engine. Every change runs
//! through the domain's `UnitOfWork` port as one transaction, with its audit events.
//!
//! One folder per aggregate of the domain holds, for each of its tables:
//! - the row struct, shared by both engines (`check_for_backend(Pg, Sqlite)`), and its
//!   conversions to and from the domain model (`rows.rs`, or beside the queries in a file
//!   named after the table);
//! - the query pieces: plain async functions over a `Conn` (`queries.rs`, or the table's
//!   file). The same function serves a read on a pooled connection and a step
//!   of a unit of work; errors stay Diesel's until the port boundary maps them;
//!
//! and the domain's ports on them: `repo.rs`, the reads on [`Database`]; `tx.rs`, the
//! aggregate's part of a unit of work's transaction. The folders use the shared pieces at
//! the top (connections, pool, unit of work, column types, errors), which never use them;
//! a folder uses another's only where the domain's ports cross, and never the other way
//! round: `tasks` reads the roster of `agents`, `agents` the `ledger`, `webhooks` appends
//! `events`, `keys` joins the `users` of `organizations`, and `sessions` (which holds
//! `UserRepository`) reads users and API keys.

// The aggregates.
mod agents;
mod events;
mod guard;
mod idempotency;
mod integrations;
mod keys;
mod ledger;
mod nonces;
mod organizations;
mod projects;
mod routines;
mod runs;
mod sessions;
mod tasks;
mod webhooks;

// Shared infrastructure.
mod census;
mod checkpointer;
mod conn;
mod db;
mod error;
mod event_counts;
mod fixed;
mod group_commit;
mod migrate;
mod pg_tls;
#[cfg(test)]
mod plan;
mod purge;
mod reuse;
mod schema;
mod transaction;
mod types;
mod unit_of_work;
mod url;
mod writer_thread;

#[cfg(feature = "test-support")]
pub mod testing;

pub use census::{Census, CensusRow};
pub use db::{ConnectError, Database, Engine, PoolOptions, PoolStatus};
pub use migrate::{MigrateError, run_migrations};
pub use nonces::NonceBatcher;
pub use url::{DatabaseUrl, UrlError};
