//! Muster's storage: every repository port of `muster-domain`, on PostgreSQL or on an
//! embedded SQLite file, through one schema and one set of queries.
//!
//! [`Database::connect`] picks the engine from the URL ([`DatabaseUrl`]);
//! [`run_migrations`] applies the embedded migrations of that engine. Every change runs
//! through the domain's `UnitOfWork` port as one transaction, with its audit events.

mod census;
mod checkpointer;
mod conn;
mod db;
mod error;
mod event_counts;
mod group_commit;
mod migrate;
mod nonce_batch;
mod pg_tls;
mod purge;
mod queries;
mod repos;
mod reuse;
mod rows;
mod schema;
mod types;
mod unit_of_work;
mod url;
mod writer_thread;

#[cfg(feature = "test-support")]
pub mod testing;

pub use census::{Census, CensusRow};
pub use db::{ConnectError, Database, Engine, PoolOptions, PoolStatus};
pub use migrate::{MigrateError, run_migrations};
pub use nonce_batch::NonceBatcher;
pub use url::{DatabaseUrl, UrlError};
