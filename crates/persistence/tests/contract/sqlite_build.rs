//! The bundled SQLite is built as `.cargo/config.toml` asks (`LIBSQLITE3_FLAGS`): in
//! multi-thread mode, without memory statistics, with stable query plans. Any of these
//! lost quietly (the variable renamed, a build outside the workspace's configuration)
//! costs a list request several percent of its CPU (in mutexes, or in preparing its
//! statement anew) and changes no behaviour, so only this notices. (The plans that
//! stable planning must keep are checked beside their queries, on the statements the
//! code builds: `src/tasks/queries.rs`, `src/events/queries.rs`.)

use diesel::Connection as _;
use diesel::sql_types::Integer;

#[derive(diesel::QueryableByName)]
struct Used {
    #[diesel(sql_type = Integer)]
    used: i32,
}

fn compiled_with(option: &str) -> bool {
    let mut conn = diesel::SqliteConnection::establish(":memory:").unwrap();
    let row: Used = diesel::RunQueryDsl::get_result(
        diesel::sql_query("SELECT sqlite_compileoption_used(?) AS used")
            .bind::<diesel::sql_types::Text, _>(option),
        &mut conn,
    )
    .unwrap();
    row.used == 1
}

#[test]
fn sqlite_is_built_multi_thread_without_memory_statistics_with_stable_plans() {
    assert!(compiled_with("THREADSAFE=2"), "multi-thread mode");
    assert!(!compiled_with("THREADSAFE=1"));
    assert!(compiled_with("DEFAULT_MEMSTATUS=0"), "no memory statistics");
    assert!(
        compiled_with("ENABLE_QPSG"),
        "query planner stability guarantee"
    );
}
