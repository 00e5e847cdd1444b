//! The bundled SQLite is built as `.cargo/config.toml` asks (`LIBSQLITE3_FLAGS`): in
//! multi-thread mode, without memory statistics, with stable query plans. Any of these
//! lost quietly (the variable renamed, a build outside the workspace's configuration)
//! costs a list request several percent of its CPU (in mutexes, or in preparing its
//! statement anew) and changes no behaviour, so only this notices.

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

#[derive(diesel::QueryableByName, Debug)]
struct PlanRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    detail: String,
}

/// The query plans SQLite's planner picks for `sqls` on the migrated schema.
async fn plans(sqls: &[&str]) -> Vec<Vec<String>> {
    use muster_persistence::testing::TestDatabase;
    use muster_persistence::{DatabaseUrl, Engine};
    let test = TestDatabase::new(Engine::Sqlite).await.unwrap();
    let DatabaseUrl::Sqlite(path) = test.url.clone() else {
        unreachable!()
    };
    let sqls: Vec<String> = sqls.iter().map(|s| (*s).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let mut conn = diesel::SqliteConnection::establish(&path.to_string_lossy()).unwrap();
        sqls.iter()
            .map(|sql| {
                let rows: Vec<PlanRow> = diesel::RunQueryDsl::load(
                    diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}")),
                    &mut conn,
                )
                .unwrap();
                rows.into_iter().map(|r| r.detail).collect()
            })
            .collect()
    })
    .await
    .unwrap()
}

/// With stable plans the planner does not know a bound `LIMIT`: the pages of tasks
/// and events must still be read from their indexes, in order. (The statements' shapes
/// are written out here; the past-due sweep's own statement is checked in
/// `queries/tasks.rs`.)
#[tokio::test]
async fn sqlite_plans_use_the_indexes_without_the_limit_value() {
    let sqls = [
        // A page of tasks with a status, newest first.
        "SELECT id FROM tasks WHERE org_id = ? AND status = ? ORDER BY id DESC LIMIT ?",
        // A page of events, newest first.
        "SELECT id FROM events WHERE org_id = ? \
         ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
    ];
    let found = plans(&sqls).await;
    let uses = |plan: &[String], index: &str| plan.iter().any(|step| step.contains(index));
    let sorts = |plan: &[String]| plan.iter().any(|step| step.contains("TEMP B-TREE"));
    assert!(
        uses(&found[0], "INDEX tasks_org_status") && !sorts(&found[0]),
        "{:?}",
        found[0]
    );
    assert!(
        uses(&found[1], "INDEX events_org_newest") && !sorts(&found[1]),
        "{:?}",
        found[1]
    );
}
