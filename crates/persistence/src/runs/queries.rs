//! The queries of `runs`, `run_log_lines` and `usage_reports` (the usage summary is in
//! `summary`).

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, RunId, RunStatus, TaskId};
use muster_domain::ports::{Lock, RunFilter};

use crate::conn::{Conn, first_locked, insert_all, load_rows, on_conn};
use crate::reuse::Reuse;
use crate::schema::{run_log_lines, runs, usage_reports};
use crate::types::{DbTime, db_uuid};

use super::rows::{LogLineRow, RunRow, UsageReportRow};

/// The run `id` of `org`, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: RunId,
    lock: Option<Lock>,
) -> QueryResult<Option<RunRow>> {
    first_locked!(
        conn,
        lock,
        runs::table
            .filter(runs::org_id.eq(db_uuid(org)))
            .filter(runs::id.eq(db_uuid(id)))
            .select(RunRow::as_select())
    )
}

/// The open (`running`) run of `task` in `org`, locked as asked (PostgreSQL). The
/// status is written as a literal, so that the planner sees the partial index
/// `runs_one_open_per_task` applies.
pub(crate) async fn find_open(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
    lock: Option<Lock>,
) -> QueryResult<Option<RunRow>> {
    first_locked!(
        conn,
        lock,
        runs::table
            .filter(runs::task_id.eq(db_uuid(task)))
            .filter(crate::fixed::fixed::<diesel::sql_types::Bool>(OPEN))
            .filter(runs::org_id.eq(db_uuid(org)))
            .select(RunRow::as_select())
    )
}

/// The predicate of the `runs_one_open_per_task` index, word for word.
const OPEN: &str = "runs.status = 'running'";

/// Stores a new run.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &RunRow) -> QueryResult<()> {
    let query = diesel::insert_into(runs::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Replaces the run (by its organization and id); whether it exists.
pub(crate) async fn update(conn: &mut Conn<'_>, row: &RunRow) -> QueryResult<bool> {
    let query = diesel::update(
        runs::table
            .filter(runs::org_id.eq(row.org_id))
            .filter(runs::id.eq(row.id)),
    )
    .set(row)
    .reused();
    let changed = on_conn!(conn, c => query.execute(c).await)?;
    Ok(changed == 1)
}

/// Up to `limit` runs of `org` matching `filter`, newest first, older than `before`.
pub(crate) async fn list(
    conn: &mut Conn<'_>,
    org: OrgId,
    filter: &RunFilter,
    before: Option<RunId>,
    limit: u32,
) -> QueryResult<Vec<RunRow>> {
    let filter = filter.clone();
    load_rows!(conn, Db => {
        let mut query = runs::table
            .filter(runs::org_id.eq(db_uuid(org)))
            .select(RunRow::as_select())
            .into_boxed::<Db>();
        if let Some(agent) = filter.agent {
            query = query.filter(runs::agent_id.eq(db_uuid(agent)));
        }
        if let Some(task) = filter.task {
            query = query.filter(runs::task_id.eq(db_uuid(task)));
        }
        if let Some(status) = filter.status {
            query = query.filter(runs::status.eq(RunStatus::as_str(status)));
        }
        if let Some(from) = filter.from {
            query = query.filter(runs::started_at.ge(DbTime(from)));
        }
        if let Some(to) = filter.to {
            query = query.filter(runs::started_at.lt(DbTime(to)));
        }
        if let Some(cursor) = before {
            query = query.filter(runs::id.lt(db_uuid(cursor)));
        }
        query.order(runs::id.desc()).limit(i64::from(limit))
    })
}

/// Appends lines to a run's log, in order (see [`insert_all`]).
pub(crate) async fn insert_lines(conn: &mut Conn<'_>, rows: &[LogLineRow]) -> QueryResult<()> {
    insert_all!(conn, run_log_lines::table, rows)
}

/// Up to `limit` lines of the log of `run` in `org` numbered after `after`, in order.
pub(crate) async fn lines(
    conn: &mut Conn<'_>,
    org: OrgId,
    run: RunId,
    after: i64,
    limit: u32,
) -> QueryResult<Vec<LogLineRow>> {
    load_rows!(conn, Db => {
        run_log_lines::table
            .filter(run_log_lines::run_id.eq(db_uuid(run)))
            .filter(run_log_lines::seq.gt(after))
            .filter(run_log_lines::org_id.eq(db_uuid(org)))
            .select(LogLineRow::as_select())
            .order(run_log_lines::seq.asc())
            .limit(i64::from(limit))
    })
}

/// Whether `run` of `org` has a usage report with the reporter's id `report_id`.
pub(crate) async fn report_exists(
    conn: &mut Conn<'_>,
    org: OrgId,
    run: RunId,
    report_id: &str,
) -> QueryResult<bool> {
    let query = diesel::select(diesel::dsl::exists(
        usage_reports::table
            .filter(usage_reports::run_id.eq(db_uuid(run)))
            .filter(usage_reports::report_id.eq(report_id.to_owned()))
            .filter(usage_reports::org_id.eq(db_uuid(org))),
    ));
    on_conn!(conn, c => query.get_result(c).await)
}

/// Stores a usage report.
pub(crate) async fn insert_report(conn: &mut Conn<'_>, row: &UsageReportRow) -> QueryResult<()> {
    let query = diesel::insert_into(usage_reports::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}
