//! The contract of the repository ports, written once and run on both engines.
//!
//! Each behaviour is an `async fn name(db: &impl Store)` in the module of its port;
//! `contract_tests!` turns the listed names into a `sqlite::name`, a `postgres::name`
//! and a `memory::name` test: the first two each on a fresh, migrated database
//! (`TestDatabase`) that is removed afterwards, the third on a fresh
//! `muster_memory::MemoryStore`, so that the three implementations of the ports
//! cannot drift apart. Behaviours about the databases themselves (the schema, raw
//! rows, batching) take `&Database` and are listed in `engine_contract_tests!`, which
//! makes only the two engine tests (`sqlite_engine::name`, `postgres_engine::name`).
//! The PostgreSQL tests return early when the server is unreachable outside CI (with
//! `CI` set, `TestDatabase::new` fails them instead).
//!
//! Run: `cargo test -p muster-persistence --features test-support --test contract`.

/// Expands each listed behaviour into one test per engine, in modules `sqlite` and
/// `postgres` next to the behaviours.
macro_rules! contract_tests {
    ($($name:ident),+ $(,)?) => {
        contract_tests!(@engine sqlite, Sqlite, $($name),+);
        contract_tests!(@engine postgres, Postgres, $($name),+);
        mod memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(&::muster_memory::MemoryStore::new()).await;
                }
            )+
        }
    };
    (@engine $module:ident, $engine:ident, $($name:ident),+) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let engine = ::muster_persistence::Engine::$engine;
                    let Some(test_db) =
                        ::muster_persistence::testing::TestDatabase::new(engine).await
                    else {
                        return;
                    };
                    super::$name(&test_db.db).await;
                }
            )+
        }
    };
}

/// Like `contract_tests!` for behaviours of the database engines only (modules
/// `sqlite_engine` and `postgres_engine`).
macro_rules! engine_contract_tests {
    ($($name:ident),+ $(,)?) => {
        contract_tests!(@engine sqlite_engine, Sqlite, $($name),+);
        contract_tests!(@engine postgres_engine, Postgres, $($name),+);
    };
}

// `#[cfg(test)]` (always true here) lets clippy see these modules as test code, where
// the workspace's clippy.toml allows unwrap, expect and panic.
#[cfg(test)]
mod agent_records;
#[cfg(test)]
mod agents;
#[cfg(test)]
mod api_keys;
#[cfg(test)]
mod claim_reservations;
#[cfg(test)]
mod codehost;
#[cfg(test)]
mod credentials;
#[cfg(test)]
mod dependency_graph;
#[cfg(test)]
mod event_stream;
#[cfg(test)]
mod events;
#[cfg(test)]
mod guard;
#[cfg(test)]
mod idempotency;
#[cfg(test)]
mod login_throttles;
#[cfg(test)]
mod nonce_batch;
#[cfg(test)]
mod nonces;
#[cfg(test)]
mod organizations;
#[cfg(test)]
mod prepared;
#[cfg(test)]
mod projects;
#[cfg(test)]
mod routines;
#[cfg(test)]
mod runs;
#[cfg(test)]
mod schema;
#[cfg(test)]
mod sqlite_build;
#[cfg(test)]
mod sqlite_checkpoints;
#[cfg(test)]
mod support;
#[cfg(test)]
mod tasks;
#[cfg(test)]
mod treasury;
#[cfg(test)]
mod unit_of_work;
#[cfg(test)]
mod users;
#[cfg(test)]
mod webhooks;
#[cfg(test)]
mod workflow;
#[cfg(test)]
mod writes;
