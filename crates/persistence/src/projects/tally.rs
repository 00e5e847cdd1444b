//! The counts behind a project's progress: its tasks by status, the overdue and blocked
//! ones, and what its tasks' runs' usage cost. A few small queries over the project's
//! tasks (`tasks_org_project`), none reading a task's text beyond its title.

use diesel::QueryableByName;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, ProjectId, ProjectTally, TaskBrief, TaskId, TaskStatus};
use muster_domain::ports::RepositoryError;
use time::OffsetDateTime;

use crate::conn::{Conn, load_rows, on_conn};
use crate::error::{corrupt, from_diesel};
use crate::schema::tasks;
use crate::types::{DbTime, DbUuid, PortableUuid, db_uuid};

/// A task as a progress report names it: id, title, status, due date, and when it
/// entered its status (or, in rows older than that stamp, last changed).
type BriefRow = (
    DbUuid,
    String,
    String,
    Option<DbTime>,
    Option<DbTime>,
    DbTime,
);

fn brief(row: BriefRow) -> Result<TaskBrief, RepositoryError> {
    let (id, title, status, due_at, status_changed_at, updated_at) = row;
    Ok(TaskBrief {
        id: TaskId::from_uuid(id.0),
        title,
        status: TaskStatus::parse(&status).ok_or_else(|| corrupt("task status", &status))?,
        due_at: due_at.map(|t| t.0),
        status_changed_at: status_changed_at.map_or(updated_at.0, |t| t.0),
    })
}

/// The statuses no move leaves.
const CLOSED: [&str; 2] = [TaskStatus::Done.as_str(), TaskStatus::Cancelled.as_str()];

/// What project `id`'s runs cost. SUM of a `bigint` is `numeric` on PostgreSQL: cast.
const SPEND_SQL: &str = "SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) AS credits, \
    CAST(SUM(cost_microusd) AS BIGINT) AS cost_microusd FROM usage_reports \
    WHERE org_id = $1 AND task_id IN \
    (SELECT id FROM tasks WHERE org_id = $1 AND project_id = $2)";

#[derive(Debug, QueryableByName)]
struct SpendRow {
    #[diesel(sql_type = BigInt)]
    credits: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    cost_microusd: Option<i64>,
}

/// The counts of project `id` of `org` at `now`.
pub(crate) async fn tally(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: ProjectId,
    now: OffsetDateTime,
) -> Result<ProjectTally, RepositoryError> {
    let (org_key, project) = (db_uuid(org), db_uuid(id));
    let mut tally = ProjectTally::default();
    let counts: Vec<(String, i64)> = load_rows!(conn, Db => {
        tasks::table
            .filter(tasks::org_id.eq(org_key))
            .filter(tasks::project_id.eq(project))
            .group_by(tasks::status)
            .select((tasks::status, diesel::dsl::count_star()))
            .into_boxed::<Db>()
    })
    .map_err(from_diesel)?;
    for (status, n) in counts {
        let status = TaskStatus::parse(&status).ok_or_else(|| corrupt("task status", &status))?;
        tally.add(status, u64::try_from(n).unwrap_or(0));
    }
    let overdue_count = tasks::table
        .filter(tasks::org_id.eq(org_key))
        .filter(tasks::project_id.eq(project))
        .filter(tasks::status.ne_all(CLOSED))
        .filter(tasks::due_at.lt(DbTime(now)))
        .count();
    let overdue: i64 =
        on_conn!(conn, c => overdue_count.get_result(c).await).map_err(from_diesel)?;
    tally.overdue = u64::try_from(overdue).unwrap_or(0);
    let listed = i64::try_from(ProjectTally::LISTED).unwrap_or(10);
    let overdue_rows: Vec<BriefRow> = load_rows!(conn, Db => {
        tasks::table
            .filter(tasks::org_id.eq(org_key))
            .filter(tasks::project_id.eq(project))
            .filter(tasks::status.ne_all(CLOSED))
            .filter(tasks::due_at.lt(DbTime(now)))
            .select((tasks::id, tasks::title, tasks::status, tasks::due_at,
                tasks::status_changed_at, tasks::updated_at))
            .order((tasks::due_at.asc(), tasks::id.asc()))
            .limit(listed)
            .into_boxed::<Db>()
    })
    .map_err(from_diesel)?;
    tally.overdue_tasks = overdue_rows
        .into_iter()
        .map(brief)
        .collect::<Result<_, _>>()?;
    let blocked_rows: Vec<BriefRow> = load_rows!(conn, Db => {
        tasks::table
            .filter(tasks::org_id.eq(org_key))
            .filter(tasks::project_id.eq(project))
            .filter(tasks::status.eq(TaskStatus::Blocked.as_str()))
            .select((tasks::id, tasks::title, tasks::status, tasks::due_at,
                tasks::status_changed_at, tasks::updated_at))
            .order((tasks::status_changed_at.asc(), tasks::id.asc()))
            .limit(listed)
            .into_boxed::<Db>()
    })
    .map_err(from_diesel)?;
    tally.blocked_tasks = blocked_rows
        .into_iter()
        .map(brief)
        .collect::<Result<_, _>>()?;
    let spend: SpendRow = match conn {
        Conn::Pg(c) => {
            diesel::sql_query(SPEND_SQL)
                .bind::<PortableUuid, _>(org_key)
                .bind::<PortableUuid, _>(project)
                .get_result(*c)
                .await
        }
        Conn::Sqlite(c) => {
            diesel::sql_query(SPEND_SQL.replace('$', "?"))
                .bind::<PortableUuid, _>(org_key)
                .bind::<PortableUuid, _>(project)
                .get_result(*c)
                .await
        }
    }
    .map_err(from_diesel)?;
    tally.spent_credits = spend.credits;
    tally.cost_microusd = spend.cost_microusd.unwrap_or(0);
    Ok(tally)
}
