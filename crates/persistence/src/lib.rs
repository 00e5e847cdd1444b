//! Muster's storage: every repository port of `muster-domain`, on PostgreSQL or on an
//! embedded SQLite file, through one schema and one set of queries.
//!
//! [`Database::connect`] picks the engine from the URL ([`DatabaseUrl`]);
//! [`run_migrations`] applies the embedded migrations of that engine. Each state change
//! and its audit events are written in one transaction.

mod macros;

mod db;
mod error;
mod migrate;
mod repos;
mod rows;
mod schema;
mod types;
mod url;

#[cfg(feature = "test-support")]
pub mod testing;

pub use db::{ConnectError, Database, Engine, PoolOptions};
pub use migrate::{MigrateError, run_migrations};
pub use url::{DatabaseUrl, UrlError};
