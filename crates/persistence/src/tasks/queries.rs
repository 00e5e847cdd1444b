//! The queries of `tasks` (the claim queries are in `claims`), with plan tests of a page
//! and of the past-due sweep.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel::sql_types::Bool;
use diesel_async::RunQueryDsl;
use muster_domain::model::{AgentStatus, OrgId, TaskId, TaskStatus};
use muster_domain::ports::{Lock, OutcomeFilter, Overdue, TaskFilter};
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, load_rows, on_conn};
use crate::fixed::fixed;
use crate::reuse::Reuse;
use crate::schema::{agents, escalations, tasks};
use crate::types::{DbTime, DbUuid, db_uuid};

use super::rows::TaskRow;

/// The statuses no transition leaves.
const CLOSED: [&str; 2] = [TaskStatus::Done.as_str(), TaskStatus::Cancelled.as_str()];

/// The task `id` of `org`; with `lock`, the row stays locked until the transaction ends
/// (PostgreSQL; SQLite's write transactions already run one at a time).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: TaskId,
    lock: Option<Lock>,
) -> QueryResult<Option<TaskRow>> {
    first_locked!(
        conn,
        lock,
        tasks::table
            .filter(tasks::org_id.eq(db_uuid(org)))
            .filter(tasks::id.eq(db_uuid(id)))
            .select(TaskRow::as_select())
    )
}

/// How each engine asks whether a task's tags (a JSON array of strings) hold one, ASCII
/// case ignored: the fragment is followed by the lowercased tag and `)`.
trait TagSql {
    const HAS_TAG: &'static str;
}

impl TagSql for diesel::pg::Pg {
    const HAS_TAG: &'static str = "EXISTS (SELECT 1 FROM jsonb_array_elements_text(tasks.tags) \
         AS tag(value) WHERE lower(tag.value) = ";
}

impl TagSql for diesel::sqlite::Sqlite {
    const HAS_TAG: &'static str =
        "EXISTS (SELECT 1 FROM json_each(tasks.tags) WHERE lower(json_each.value) = ";
}

/// The order of the overdue sweep's batches: oldest task first. On SQLite the key is
/// written `+tasks.id`, an expression no index provides: SQLite, which plans without
/// the bound `LIMIT`'s value (it is built with stable plans, see `.cargo/config.toml`),
/// would otherwise walk the whole table in key order to avoid sorting, rather than read
/// the few matching rows from the sweep's own index (`tasks_due`, say) and sort those.
trait OverdueOrder {
    const OLDEST_FIRST: &'static str;
}

impl OverdueOrder for diesel::pg::Pg {
    const OLDEST_FIRST: &'static str = "tasks.id";
}

impl OverdueOrder for diesel::sqlite::Sqlite {
    const OLDEST_FIRST: &'static str = "+tasks.id";
}

/// A `LIKE` pattern (escape character `\`) finding `text` anywhere, lowercased.
fn containing(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.to_ascii_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// The boxed query of `org`'s tasks matching `filter`, for backend `$db`.
macro_rules! filtered {
    ($db:ty, $org:expr, $filter:expr) => {{
        let filter: &TaskFilter = $filter;
        let mut query = tasks::table
            .filter(tasks::org_id.eq(db_uuid($org)))
            .into_boxed::<$db>();
        if let Some(status) = filter.status {
            query = query.filter(tasks::status.eq(status.as_str()));
        }
        if !filter.any_status.is_empty() {
            let names: Vec<&str> = filter.any_status.iter().map(|s| s.as_str()).collect();
            query = query.filter(tasks::status.eq_any(names));
        }
        if let Some(assignee) = filter.assignee_id {
            query = query.filter(tasks::assignee_id.eq(db_uuid(assignee)));
        }
        if let Some(creator) = filter.creator_id {
            query = query.filter(
                tasks::creator_id
                    .eq(db_uuid(creator))
                    .or(tasks::creator_user_id.eq(db_uuid(creator))),
            );
        }
        if let Some(parent) = filter.parent_task_id {
            query = query.filter(tasks::parent_task_id.eq(db_uuid(parent)));
        }
        if let Some(project) = filter.project_id {
            query = query.filter(tasks::project_id.eq(db_uuid(project)));
        }
        let awaiting = tasks::status
            .eq(TaskStatus::Review.as_str())
            .and(tasks::approval_required.eq(true));
        match filter.awaiting_approval {
            Some(true) => query = query.filter(awaiting),
            Some(false) => query = query.filter(diesel::dsl::not(awaiting)),
            None => {}
        }
        match filter.outcome {
            Some(OutcomeFilter::Without) => query = query.filter(tasks::outcome.is_null()),
            Some(OutcomeFilter::Is(outcome)) => {
                query = query.filter(tasks::outcome.eq(outcome.as_str()));
            }
            None => {}
        }
        if let Some(context) = filter.context_id {
            let context = db_uuid(context);
            query = query.filter(
                tasks::parent_task_id
                    .eq(context)
                    .or(tasks::id.eq(context).and(tasks::parent_task_id.is_null())),
            );
        }
        if let Some(priority) = filter.priority {
            query = query.filter(tasks::priority.eq(priority.as_str()));
        }
        // No stored text holds a NUL, and PostgreSQL cannot bind one: such a filter
        // matches nothing, without asking the database.
        let holds_nul = |value: &Option<String>| value.as_deref().is_some_and(|v| v.contains('\0'));
        let (tag, text) = if holds_nul(&filter.tag) || holds_nul(&filter.text) {
            query = query.filter(diesel::dsl::sql::<Bool>("1 = 0"));
            (None, None)
        } else {
            (filter.tag.as_ref(), filter.text.as_ref())
        };
        if let Some(tag) = tag {
            query = query.filter(
                diesel::dsl::sql::<Bool>(<$db as TagSql>::HAS_TAG)
                    .bind::<diesel::sql_types::Text, _>(tag.to_ascii_lowercase())
                    .sql(")"),
            );
        }
        if let Some(text) = text {
            let pattern = containing(text);
            query = query.filter(
                diesel::dsl::sql::<Bool>("(lower(tasks.title) LIKE ")
                    .bind::<diesel::sql_types::Text, _>(pattern.clone())
                    .sql(" ESCAPE '\\' OR lower(coalesce(tasks.description, '')) LIKE ")
                    .bind::<diesel::sql_types::Text, _>(pattern)
                    .sql(" ESCAPE '\\')"),
            );
        }
        if let Some(since) = filter.status_changed_since {
            // Rows from before the column was filled changed status when last updated.
            query = query.filter(
                tasks::status_changed_at
                    .ge(DbTime(since))
                    .or(tasks::status_changed_at
                        .is_null()
                        .and(tasks::updated_at.ge(DbTime(since)))),
            );
        }
        query
    }};
}

/// The query of [`list`] for the backend `$db` (also built by the plan test below).
macro_rules! page_query {
    ($db:ty, $org:expr, $filter:expr, $before:expr, $limit:expr) => {{
        let before: Option<TaskId> = $before;
        let mut query = filtered!($db, $org, $filter).select(TaskRow::as_select());
        if let Some(cursor) = before {
            query = query.filter(tasks::id.lt(db_uuid(cursor)));
        }
        query.order(tasks::id.desc()).limit(i64::from($limit))
    }};
}

/// Tasks of `org` matching `filter`, newest first, strictly older than `before`.
pub(crate) async fn list(
    conn: &mut Conn<'_>,
    org: OrgId,
    filter: &TaskFilter,
    before: Option<TaskId>,
    limit: u32,
) -> QueryResult<Vec<TaskRow>> {
    let filter = filter.clone();
    load_rows!(conn, Db => page_query!(Db, org, &filter, before, limit))
}

/// How many tasks of `org` match `filter`.
pub(crate) async fn count(
    conn: &mut Conn<'_>,
    org: OrgId,
    filter: &TaskFilter,
) -> QueryResult<i64> {
    on_conn!(conn, c, Db => {
        filtered!(Db, org, filter).count().get_result(c).await
    })
}

/// Stores a new task.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &TaskRow) -> QueryResult<()> {
    let query = diesel::insert_into(tasks::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Replaces the task if its stored version is `expected_version`; whether it did.
pub(crate) async fn update(
    conn: &mut Conn<'_>,
    row: &TaskRow,
    expected_version: i64,
) -> QueryResult<bool> {
    let query = diesel::update(
        tasks::table
            .filter(tasks::org_id.eq(row.org_id))
            .filter(tasks::id.eq(row.id))
            .filter(tasks::version.eq(expected_version)),
    )
    .set(row)
    .reused();
    let changed = on_conn!(conn, c => query.execute(c).await)?;
    Ok(changed == 1)
}

/// Stamps activity on the task `id` of `org` without changing it otherwise.
pub(crate) async fn touch(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: TaskId,
    at: OffsetDateTime,
) -> QueryResult<()> {
    let query = diesel::update(
        tasks::table
            .filter(tasks::org_id.eq(db_uuid(org)))
            .filter(tasks::id.eq(db_uuid(id))),
    )
    .set(tasks::last_activity_at.eq(Some(DbTime(at))))
    .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// The query of [`overdue`] for the backend `$db` (also built by the plan test below).
macro_rules! overdue_query {
    ($db:ty, $query:expr, $limit:expr) => {{
        let query: Overdue = $query;
        let escalated = escalations::table
            .filter(escalations::task_id.eq(tasks::id))
            .filter(escalations::automatic.eq(true))
            .filter(escalations::reason.eq(query.reason().as_str()));
        let rows = tasks::table
            .filter(diesel::dsl::not(diesel::dsl::exists(escalated)))
            .select((tasks::org_id, tasks::id))
            .into_boxed::<$db>();
        let rows = match query {
            Overdue::BlockedSince { priority, since } => rows
                .filter(tasks::status.eq(TaskStatus::Blocked.as_str()))
                .filter(tasks::priority.eq(priority.as_str()))
                .filter(tasks::status_changed_at.lt(DbTime(since))),
            Overdue::IdleSince { since } => rows
                .filter(tasks::status.eq(TaskStatus::InProgress.as_str()))
                .filter(tasks::last_activity_at.lt(DbTime(since))),
            Overdue::PastDue { now } => rows
                .filter(tasks::status.ne_all(CLOSED))
                .filter(tasks::due_at.lt(DbTime(now))),
            Overdue::AssigneeInactive => rows.filter(tasks::status.ne_all(CLOSED)).filter(
                tasks::assignee_id.eq_any(
                    agents::table
                        .filter(agents::status.eq_any([
                            AgentStatus::Suspended.as_str(),
                            AgentStatus::Revoked.as_str(),
                        ]))
                        .select(agents::id.nullable()),
                ),
            ),
        };
        rows.order(fixed::<diesel::sql_types::Text>(<$db as OverdueOrder>::OLDEST_FIRST).asc())
            .limit(i64::from($limit))
    }};
}

/// Tasks across organizations that `query` finds and that were not escalated
/// automatically for its reason yet, oldest first.
pub(crate) async fn overdue(
    conn: &mut Conn<'_>,
    query: Overdue,
    limit: u32,
) -> QueryResult<Vec<(DbUuid, DbUuid)>> {
    on_conn!(conn, c, Db => overdue_query!(Db, query, limit).load(c).await)
}

/// The ids and titles of `org`'s open tasks, newest first, at most `limit`.
pub(crate) async fn open_titles(
    conn: &mut Conn<'_>,
    org: OrgId,
    limit: u32,
) -> QueryResult<Vec<(DbUuid, String)>> {
    on_conn!(conn, c => {
        tasks::table
            .filter(tasks::org_id.eq(db_uuid(org)))
            .filter(tasks::status.ne_all(["done", "cancelled"]))
            .select((tasks::id, tasks::title))
            .order(tasks::id.desc())
            .limit(i64::from(limit))
            .load(c)
            .await
    })
}

#[cfg(test)]
mod tests {
    use diesel::sqlite::Sqlite;

    use super::*;
    use crate::plan::{reads_in_order, sqlite_plan};

    /// SQLite plans without the bound `LIMIT`'s value (stable plans): the past-due
    /// sweep, as [`overdue`] writes it, must still read the past-due rows from
    /// `tasks_due` rather than walk the whole table in key order.
    #[test]
    fn the_past_due_sweep_reads_its_index_on_sqlite() {
        let now = OffsetDateTime::UNIX_EPOCH;
        let (sql, plan) = sqlite_plan(&overdue_query!(Sqlite, Overdue::PastDue { now }, 200_u32));
        assert!(
            plan.iter().any(|step| step.contains("INDEX tasks_due")),
            "{sql}: {plan:?}"
        );
    }

    /// A page of tasks in one status, as [`list`] writes it, is read from
    /// `tasks_org_status` newest first, without sorting.
    #[test]
    fn a_page_of_tasks_reads_its_index_in_order_on_sqlite() {
        let filter = TaskFilter {
            status: Some(TaskStatus::Todo),
            ..TaskFilter::default()
        };
        let org = OrgId::from_uuid(uuid::Uuid::nil());
        for before in [None, Some(TaskId::from_uuid(uuid::Uuid::max()))] {
            let (sql, plan) = sqlite_plan(&page_query!(Sqlite, org, &filter, before, 50_u32));
            assert!(
                reads_in_order(&plan, "INDEX tasks_org_status"),
                "{sql}: {plan:?}"
            );
        }
    }
}
