//! Test support: the plan SQLite's planner makes for a statement as the code builds it.
//!
//! SQLite is built with stable query plans (`.cargo/config.toml`), so a plan never sees a
//! bound value; a statement that relied on one (a `LIMIT`, a literal in a partial index)
//! quietly loses its index and reads the whole table, changing no result. The plan tests
//! beside the queries read the steps SQLite chose for the statement the code sends.

use diesel::Connection as _;
use diesel::query_builder::QueryFragment;
use diesel::sqlite::{Sqlite, SqliteConnection};
use diesel_migrations::MigrationHarness as _;

#[derive(diesel::QueryableByName)]
struct Step {
    #[diesel(sql_type = diesel::sql_types::Text)]
    detail: String,
}

/// The SQL text of `query` and the steps of SQLite's plan for it, on the migrated schema.
pub(crate) fn sqlite_plan(query: &impl QueryFragment<Sqlite>) -> (String, Vec<String>) {
    let mut conn = SqliteConnection::establish(":memory:").unwrap();
    conn.run_pending_migrations(crate::migrate::SQLITE).unwrap();
    let text = diesel::debug_query::<Sqlite, _>(query).to_string();
    let sql = text.split(" -- binds").next().unwrap().to_owned();
    let steps: Vec<Step> = diesel::RunQueryDsl::load(
        diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}")),
        &mut conn,
    )
    .unwrap();
    (sql, steps.into_iter().map(|step| step.detail).collect())
}

/// Whether a plan's steps read `index` and sort nothing in a temporary B-tree.
pub(crate) fn reads_in_order(steps: &[String], index: &str) -> bool {
    steps.iter().any(|step| step.contains(index))
        && !steps.iter().any(|step| step.contains("TEMP B-TREE"))
}
