//! The queries of claims with leases: the claimable tasks of an organization in claim
//! order, and the tasks whose lease ran out.

use std::sync::LazyLock;

use diesel::PgExpressionMethods as _;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel::sql_types::{Array, Bool, Integer, Text};
use diesel::sqlite::Sqlite;
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, ProjectId, TaskId};
use muster_domain::rules::claimable::{CLAIM_ORDER, CLAIMABLE, LEASED, priority_rank};
use time::OffsetDateTime;

use crate::conn::{Conn, on_conn};
use crate::fixed::fixed;
use crate::schema::tasks;
use crate::types::{DbTime, DbUuid, PortableUuid, db_uuid};

use super::rows::TaskRow;

/// The claim order's rank of a task's priority ([`CLAIM_ORDER`]): word for word the
/// expression of the `tasks_claimable` index, as [`CLAIMABLE_SQL`] is its predicate:
/// with literals, not bound parameters, so that both engines' planners see the index
/// applies.
static PRIORITY_RANK: LazyLock<String> = LazyLock::new(|| {
    let Some((last, ranked)) = CLAIM_ORDER.split_last() else {
        return "0".to_owned();
    };
    let whens: Vec<String> = ranked
        .iter()
        .map(|p| format!("WHEN '{}' THEN {}", p.as_str(), priority_rank(*p)))
        .collect();
    format!(
        "(CASE priority {} ELSE {} END)",
        whens.join(" "),
        priority_rank(*last)
    )
});

/// The rule's open and unassigned tasks ([`CLAIMABLE`]): the predicate of the
/// `tasks_claimable` index.
static CLAIMABLE_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "status = '{}' AND assignee_id IS NULL",
        CLAIMABLE.status.as_str()
    )
});

/// No blocking dependency of the task is in another status than the rule's
/// [`ClaimFilter::blockers_in`](muster_domain::rules::claimable::ClaimFilter::blockers_in) (decision D-31); one that is gone does not block.
static DEPENDENCIES_DONE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "NOT EXISTS (SELECT 1 FROM task_dependencies d \
         JOIN tasks b ON b.id = d.depends_on_id \
         WHERE d.task_id = tasks.id AND d.blocking AND b.status <> '{}')",
        CLAIMABLE.blockers_in.as_str()
    )
});

/// The claimable tasks of `$org` in claim order, `$limit` from `$offset`: [`CLAIMABLE`]
/// and [`CLAIM_ORDER`] in SQL.
macro_rules! candidates_query {
    ($org:expr, $offset:expr, $limit:expr) => {
        tasks::table
            .filter(tasks::org_id.eq(db_uuid($org)))
            .filter(fixed::<Bool>(CLAIMABLE_SQL.as_str()))
            .filter(fixed::<Bool>(DEPENDENCIES_DONE.as_str()))
            .order((
                fixed::<Integer>(PRIORITY_RANK.as_str()).asc(),
                tasks::created_at.asc(),
                tasks::id.asc(),
            ))
            .offset(i64::from($offset))
            .limit(i64::from($limit))
            .select(TaskRow::as_select())
    };
}

/// The tasks the claim rule admits ([`CLAIMABLE`]: `todo`, unassigned, with every
/// blocking dependency done) of `org`, in claim order (urgent first, then oldest);
/// `limit` of them from `offset`. The rule is applied here, in the query, and not on
/// loaded rows: a claim pages through the candidates, and only the `tasks_claimable`
/// index makes a page a walk rather than a sort of every task.
///
/// With `project`, only that project's tasks: the same walk, with the project compared
/// on each candidate (a statement of its own, so that the common claim's stays as it is).
pub(crate) async fn candidates(
    conn: &mut Conn<'_>,
    org: OrgId,
    project: Option<ProjectId>,
    offset: u32,
    limit: u32,
) -> QueryResult<Vec<TaskRow>> {
    match project {
        None => on_conn!(conn, c => candidates_query!(org, offset, limit).load(c).await),
        Some(project) => on_conn!(conn, c => candidates_query!(org, offset, limit)
            .filter(tasks::project_id.eq(db_uuid(project)))
            .load(c)
            .await),
    }
}

/// The query of [`expired`] on backend `$db`, with `$status` and `$org_id` standing for
/// the two columns and `$is` for their comparison: what keeps them out of the choice of
/// index on each engine (see [`expired`]).
macro_rules! expired_query {
    ($db:ty, $is:ident, $status:expr, $org_id:expr, $org:expr, $now:expr, $limit:expr) => {{
        let mut query = tasks::table
            .select((tasks::org_id, tasks::id))
            .filter(tasks::lease_expires_at.le(DbTime($now)))
            .filter($status.$is(LEASED.as_str()))
            .into_boxed::<$db>();
        if let Some(org) = $org {
            query = query.filter($org_id.$is(db_uuid(org)));
        }
        query
            .order((tasks::lease_expires_at.asc(), tasks::id.asc()))
            .limit(i64::from($limit))
    }};
}

/// Tasks whose claim lease ran out at `now` ([`lease_expired`](muster_domain::rules::claimable::lease_expired): [`LEASED`], leased
/// until `now` at the latest), of `org` or of all, soonest
/// expired first.
///
/// Every claim sweeps its organization first, so the plan must read `tasks_lease_expiry`
/// from the oldest lease and stop at the first one still running. Offered equalities on
/// the organization and the status, both engines' planners read every task in progress
/// of the organization instead (`tasks_org_status`) and sorted them: PostgreSQL's
/// generic plan took 12 ms a claim with 4,000 tasks in progress, 0.11 ms through the
/// lease index. On PostgreSQL the two columns are compared with `IS NOT DISTINCT FROM`,
/// which no index serves (both are non-null, so it means `=`); on SQLite they carry a
/// unary `+` (see `expired_on_sqlite`).
pub(crate) async fn expired(
    conn: &mut Conn<'_>,
    org: Option<OrgId>,
    now: OffsetDateTime,
    limit: u32,
) -> QueryResult<Vec<(DbUuid, DbUuid)>> {
    match conn {
        Conn::Pg(c) => {
            expired_query!(
                Pg,
                is_not_distinct_from,
                tasks::status,
                tasks::org_id,
                org,
                now,
                limit
            )
            .load(*c)
            .await
        }
        Conn::Sqlite(c) => expired_on_sqlite(org, now, limit).load(*c).await,
    }
}

/// [`expired`] for SQLite's planner, which has no statistics: offered equalities on the
/// organization and the status, it read every task in progress of the organization
/// (`tasks_org_status`) and sorted them, on every claim (each claim sweeps its
/// organization's leases first): 470 page reads a claim with 8,000 tasks claimed. A
/// unary `+` keeps those two columns out of the choice of index, so the plan reads
/// `tasks_lease_expiry` from the oldest lease and stops at the first one still running:
/// only the leases that ran out (a lease is cleared when its task leaves `in_progress`).
fn expired_on_sqlite(
    org: Option<OrgId>,
    now: OffsetDateTime,
    limit: u32,
) -> tasks::BoxedQuery<'static, Sqlite, (PortableUuid, PortableUuid)> {
    expired_query!(
        Sqlite,
        eq,
        fixed::<Text>("+tasks.status"),
        fixed::<PortableUuid>("+tasks.org_id"),
        org,
        now,
        limit
    )
}

diesel::define_sql_function! {
    /// PostgreSQL's `array_position(array, element)`: where `element` is in `array`
    /// (1-based), null when it is not.
    fn array_position(array: Array<PortableUuid>, element: PortableUuid) -> Nullable<Integer>;
}

/// `$query` narrowed to the tasks of `$org` still open to a claim
/// ([`ClaimFilter::open`](muster_domain::rules::claimable::ClaimFilter::open): the rule's status, unassigned), with `$is` comparing the
/// organization and the status (see [`try_lock_first`]).
macro_rules! still_claimable {
    ($query:expr, $is:ident, $org:expr) => {
        $query
            .filter(tasks::org_id.$is(db_uuid($org)))
            .filter(tasks::status.$is(CLAIMABLE.status.as_str()))
            .filter(tasks::assignee_id.is_null())
    };
}

/// Locks the first task of `ids` (in their order) that is still claimable in `org` and
/// that no other transaction holds: its id. On PostgreSQL one statement, whose rows
/// another claimer holds are skipped at once (`SKIP LOCKED`) instead of waited for: a
/// claimer that would otherwise pass over the rows the others are taking one by one,
/// a round trip each, asks once. On SQLite the one writer holds everything: the first
/// still claimable.
pub(crate) async fn try_lock_first(
    conn: &mut Conn<'_>,
    org: OrgId,
    ids: &[TaskId],
) -> QueryResult<Option<TaskId>> {
    if ids.is_empty() {
        return Ok(None);
    }
    let ids: Vec<DbUuid> = ids.iter().map(|&id| db_uuid(id)).collect();
    let found: Option<DbUuid> = match conn {
        // Only the ids may choose the index: the organization and the status are
        // compared with `IS NOT DISTINCT FROM`, which no index serves (both are non-null
        // columns, so it means `=`). Offered `org_id = $1 AND status = $2` with a
        // generic plan, PostgreSQL read every `todo` task of the organization from
        // `tasks_org_status` to find the 25 asked (14 ms with 8,000 of them, against
        // 0.1 ms through the primary key).
        Conn::Pg(c) => still_claimable!(
            tasks::table.filter(tasks::id.eq_any(ids.clone())),
            is_not_distinct_from,
            org
        )
        .select(tasks::id)
        .order(array_position(ids, tasks::id))
        .limit(1)
        .for_update()
        .skip_locked()
        .get_result(*c)
        .await
        .optional()?,
        Conn::Sqlite(c) => {
            let mut first = None;
            for id in ids {
                let query = still_claimable!(tasks::table.filter(tasks::id.eq(id)), eq, org)
                    .select(tasks::id);
                if let Some(found) = query.get_result(*c).await.optional()? {
                    first = Some(found);
                    break;
                }
            }
            first
        }
    };
    Ok(found.map(|id| TaskId::from_uuid(id.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::sqlite_plan;

    /// The index the claim walks, as each engine's migration creates it.
    const CLAIMABLE_INDEXES: [&str; 2] = [
        include_str!("../../../../migrations/postgres/2026-11-28-000001_task_leases/up.sql"),
        include_str!("../../../../migrations/sqlite/2026-11-28-000001_task_leases/up.sql"),
    ];

    /// The rule's filter and order, translated, are word for word the predicate and the
    /// expression of `tasks_claimable` on both engines: otherwise the planners would no
    /// longer see that the index applies.
    #[test]
    fn the_claim_rule_translates_to_the_claimable_index() {
        assert_eq!(
            PRIORITY_RANK.as_str(),
            "(CASE priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 \
             WHEN 'normal' THEN 2 ELSE 3 END)"
        );
        assert_eq!(
            CLAIMABLE_SQL.as_str(),
            "status = 'todo' AND assignee_id IS NULL"
        );
        assert_eq!(
            DEPENDENCIES_DONE.as_str(),
            "NOT EXISTS (SELECT 1 FROM task_dependencies d \
             JOIN tasks b ON b.id = d.depends_on_id \
             WHERE d.task_id = tasks.id AND d.blocking AND b.status <> 'done')"
        );
        for migration in CLAIMABLE_INDEXES {
            assert!(migration.contains(PRIORITY_RANK.as_str()), "{migration}");
            let predicate = format!("WHERE {};", CLAIMABLE_SQL.as_str());
            assert!(migration.contains(&predicate), "{migration}");
        }
    }

    /// A page of candidates walks `tasks_claimable` in claim order on SQLite: no sort.
    #[test]
    fn a_page_of_candidates_walks_the_claimable_index_on_sqlite() {
        let org = OrgId::from_uuid(uuid::Uuid::nil());
        let query = candidates_query!(org, 25_u32, 25_u32);
        let (sql, plan) = sqlite_plan(&query);
        assert!(
            crate::plan::reads_in_order(&plan, "tasks_claimable"),
            "{sql}: {plan:?}"
        );
    }

    /// Each claim first sweeps its organization's expired leases: on SQLite that sweep,
    /// for one organization or for all, reads the lease index from the oldest lease,
    /// not every task in progress (`tasks_org_status`, `tasks_status_changed`).
    #[test]
    fn the_lease_sweep_reads_the_lease_index_on_sqlite() {
        let now = OffsetDateTime::UNIX_EPOCH;
        for org in [Some(OrgId::from_uuid(uuid::Uuid::nil())), None] {
            let (sql, plan) = sqlite_plan(&expired_on_sqlite(org, now, 25));
            assert!(
                plan.iter()
                    .any(|step| step.contains("INDEX tasks_lease_expiry (lease_expires_at<?)")),
                "{sql}: {plan:?}"
            );
        }
    }
}
