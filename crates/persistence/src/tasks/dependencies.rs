//! Task dependencies (`task_dependencies`): the row and its queries, with the walk of the
//! dependency graph and its lock.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel::sql_types::Integer;
use diesel_async::RunQueryDsl;
use muster_domain::model::{DependencyId, OrgId, TaskDependency, TaskId, TaskStatus};

use crate::conn::{Conn, on_conn};
use crate::reuse::Reuse;
use crate::schema::{task_dependencies, tasks};
use crate::types::{DbTime, DbUuid, PortableUuid, db_uuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = task_dependencies, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct DependencyRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub task_id: DbUuid,
    pub depends_on_id: DbUuid,
    pub blocking: bool,
    pub created_at: DbTime,
}

impl From<&TaskDependency> for DependencyRow {
    fn from(d: &TaskDependency) -> Self {
        Self {
            id: DbUuid(d.id.as_uuid()),
            org_id: DbUuid(d.org_id.as_uuid()),
            task_id: DbUuid(d.task_id.as_uuid()),
            depends_on_id: DbUuid(d.depends_on_id.as_uuid()),
            blocking: d.blocking,
            created_at: DbTime(d.created_at),
        }
    }
}

impl From<DependencyRow> for TaskDependency {
    fn from(row: DependencyRow) -> Self {
        Self {
            id: DependencyId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            task_id: TaskId::from_uuid(row.task_id.0),
            depends_on_id: TaskId::from_uuid(row.depends_on_id.0),
            blocking: row.blocking,
            created_at: row.created_at.0,
        }
    }
}

/// Stores a new dependency.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &DependencyRow) -> QueryResult<()> {
    let query = diesel::insert_into(task_dependencies::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Deletes the dependency `id` of `task`; the deleted row. (Read, then deleted: SQLite
/// builds here lack `RETURNING`; inside a unit of work the two are one change.)
pub(crate) async fn delete(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
    id: DependencyId,
) -> QueryResult<Option<DependencyRow>> {
    let mine = task_dependencies::table
        .filter(task_dependencies::org_id.eq(db_uuid(org)))
        .filter(task_dependencies::task_id.eq(db_uuid(task)))
        .filter(task_dependencies::id.eq(db_uuid(id)));
    let found = on_conn!(conn, c => {
        mine.select(DependencyRow::as_select()).get_result(c).await.optional()
    })?;
    if found.is_some() {
        on_conn!(conn, c => diesel::delete(mine).execute(c).await)?;
    }
    Ok(found)
}

/// The dependencies of `task`, oldest first.
pub(crate) async fn of_task(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
) -> QueryResult<Vec<DependencyRow>> {
    on_conn!(conn, c => {
        task_dependencies::table
            .filter(task_dependencies::org_id.eq(db_uuid(org)))
            .filter(task_dependencies::task_id.eq(db_uuid(task)))
            .order(task_dependencies::id.asc())
            .select(DependencyRow::as_select())
            .load(c)
            .await
    })
}

/// The tasks `task` waits for through blocking dependencies that are not done.
pub(crate) async fn open_blocking(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
) -> QueryResult<Vec<crate::types::DbUuid>> {
    on_conn!(conn, c => {
        task_dependencies::table
            .inner_join(tasks::table.on(tasks::id.eq(task_dependencies::depends_on_id)))
            .filter(task_dependencies::org_id.eq(db_uuid(org)))
            .filter(task_dependencies::task_id.eq(db_uuid(task)))
            .filter(task_dependencies::blocking.eq(true))
            .filter(tasks::status.ne(TaskStatus::Done.as_str()))
            .order(task_dependencies::id.asc())
            .select(task_dependencies::depends_on_id)
            .load(c)
            .await
    })
}

#[derive(QueryableByName)]
struct Found {
    #[diesel(sql_type = Integer)]
    #[allow(dead_code)] // only its presence matters
    found: i32,
}

/// Whether `to` is reachable from `from` along "depends on" edges of `org`: one
/// recursive query, whatever the length of the chain (`UNION` drops rows already seen,
/// so it ends on any graph).
pub(crate) async fn reaches(
    conn: &mut Conn<'_>,
    org: OrgId,
    from: TaskId,
    to: TaskId,
) -> QueryResult<bool> {
    // PostgreSQL numbers its parameters `$n`, SQLite `?n`: one text for both.
    const REACH: &str = "WITH RECURSIVE reach(id) AS ( \
        SELECT depends_on_id FROM task_dependencies WHERE org_id = $1 AND task_id = $2 \
        UNION SELECT d.depends_on_id FROM task_dependencies d JOIN reach r ON d.task_id = r.id \
        WHERE d.org_id = $1) \
        SELECT 1 AS found FROM reach WHERE id = $3 LIMIT 1";
    let found: Vec<Found> = match conn {
        Conn::Pg(c) => {
            diesel::sql_query(REACH)
                .bind::<PortableUuid, _>(db_uuid(org))
                .bind::<PortableUuid, _>(db_uuid(from))
                .bind::<PortableUuid, _>(db_uuid(to))
                .load(*c)
                .await?
        }
        Conn::Sqlite(c) => {
            diesel::sql_query(REACH.replace('$', "?"))
                .bind::<PortableUuid, _>(db_uuid(org))
                .bind::<PortableUuid, _>(db_uuid(from))
                .bind::<PortableUuid, _>(db_uuid(to))
                .load(*c)
                .await?
        }
    };
    Ok(!found.is_empty())
}

/// Takes the transaction-scoped lock on `org`'s dependency graph. PostgreSQL: an
/// advisory lock keyed by the organization (released at commit or rollback). SQLite:
/// nothing to do, its write transactions already run one at a time.
pub(crate) async fn lock_graph(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<()> {
    /// First half of the advisory key: "dependency graph" locks, apart from the
    /// migration lock and anything else that takes advisory locks.
    const GRAPH_LOCK_SPACE: i32 = 0x6d64_6570; // "mdep"
    if let Conn::Pg(c) = conn {
        let bytes = org.as_uuid().into_bytes();
        let folded = bytes.chunks(4).fold(0_u32, |acc, chunk| {
            acc ^ u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])
        });
        diesel::sql_query("SELECT pg_advisory_xact_lock($1, $2)")
            .bind::<Integer, _>(GRAPH_LOCK_SPACE)
            .bind::<Integer, _>(i32::from_ne_bytes(folded.to_ne_bytes()))
            .execute(*c)
            .await?;
    }
    Ok(())
}
