//! The usage summary: `usage_reports` added up per agent, model, task or UTC day, in one
//! grouped query.

use diesel::QueryableByName;
use diesel::result::QueryResult;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel_async::RunQueryDsl;
use muster_domain::model::{OrgId, UsageTotals};
use muster_domain::ports::{UsageGroup, UsageGroupBy, UsageQuery};

use crate::conn::Conn;
use crate::types::{DbTime, DbUuid, PortableTimestamp, PortableUuid, db_uuid};

/// One group of the summary as the query answers it.
#[derive(Debug, Clone, QueryableByName)]
pub(crate) struct GroupRow {
    #[diesel(sql_type = Text)]
    group_key: String,
    #[diesel(sql_type = BigInt)]
    input_tokens: i64,
    #[diesel(sql_type = BigInt)]
    output_tokens: i64,
    #[diesel(sql_type = BigInt)]
    cache_read_tokens: i64,
    #[diesel(sql_type = BigInt)]
    cache_write_tokens: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    cost_microusd: Option<i64>,
    #[diesel(sql_type = BigInt)]
    unpriced_tokens: i64,
    #[diesel(sql_type = BigInt)]
    credits: i64,
    #[diesel(sql_type = BigInt)]
    unfunded_credits: i64,
    #[diesel(sql_type = BigInt)]
    reports: i64,
    #[diesel(sql_type = BigInt)]
    runs: i64,
}

impl From<GroupRow> for UsageGroup {
    fn from(row: GroupRow) -> Self {
        Self {
            key: row.group_key,
            totals: UsageTotals {
                input_tokens: row.input_tokens,
                output_tokens: row.output_tokens,
                cache_read_tokens: row.cache_read_tokens,
                cache_write_tokens: row.cache_write_tokens,
                cost_microusd: row.cost_microusd,
                unpriced_tokens: row.unpriced_tokens,
                credits: row.credits,
                unfunded_credits: row.unfunded_credits,
                reports: row.reports,
            },
            runs: row.runs,
        }
    }
}

/// The group key of `group_by`, as text on both engines (a UUID hyphenated, lower case).
const fn key_of(group_by: UsageGroupBy) -> &'static str {
    match group_by {
        UsageGroupBy::Agent => "CAST(agent_id AS TEXT)",
        UsageGroupBy::Model => "model",
        UsageGroupBy::Task => "CAST(task_id AS TEXT)",
        UsageGroupBy::Day => "day",
    }
}

/// The sums of a group. SUM of a `bigint` is `numeric` on PostgreSQL: cast back. The
/// cost is NULL when no report of the group was priced; the tokens of the reports that
/// were not are the unpriced tokens.
const SUMS: &str = "CAST(SUM(input_tokens) AS BIGINT) AS input_tokens, \
    CAST(SUM(output_tokens) AS BIGINT) AS output_tokens, \
    CAST(SUM(cache_read_tokens) AS BIGINT) AS cache_read_tokens, \
    CAST(SUM(cache_write_tokens) AS BIGINT) AS cache_write_tokens, \
    CAST(SUM(cost_microusd) AS BIGINT) AS cost_microusd, \
    CAST(SUM(CASE WHEN cost_microusd IS NULL \
        THEN input_tokens + output_tokens + cache_read_tokens + cache_write_tokens \
        ELSE 0 END) AS BIGINT) AS unpriced_tokens, \
    CAST(SUM(credits) AS BIGINT) AS credits, \
    CAST(SUM(unfunded_credits) AS BIGINT) AS unfunded_credits, \
    COUNT(*) AS reports, \
    COUNT(DISTINCT run_id) AS runs";

/// One value bound to the statement, in the order of its parameters.
enum Bind {
    Uuid(DbUuid),
    Time(DbTime),
}

/// The statement of [`usage`] with PostgreSQL's parameters (`$1`, `$2`...), and the
/// values to bind to them. Its text is one of a few forms: the grouping and which
/// filters are given.
fn statement(org: OrgId, query: &UsageQuery, pg: bool) -> (String, Vec<Bind>) {
    let key = key_of(query.group_by);
    let mut binds = vec![Bind::Uuid(db_uuid(org))];
    let mut sql = format!("SELECT {key} AS group_key, {SUMS} FROM usage_reports WHERE org_id = $1");
    let mut filter = |column: &str, op: &str, value: Bind| {
        binds.push(value);
        for part in [" AND ", column, " ", op, " $", &binds.len().to_string()] {
            sql.push_str(part);
        }
    };
    if let Some(agent) = query.agent {
        filter("agent_id", "=", Bind::Uuid(db_uuid(agent)));
    }
    if let Some(task) = query.task {
        filter("task_id", "=", Bind::Uuid(db_uuid(task)));
    }
    if let Some(from) = query.from {
        filter("created_at", ">=", Bind::Time(DbTime(from)));
    }
    if let Some(to) = query.to {
        filter("created_at", "<", Bind::Time(DbTime(to)));
    }
    // Keys in byte order on both engines (PostgreSQL's default collation may not be).
    let collate = if pg { " COLLATE \"C\"" } else { "" };
    for part in [" GROUP BY ", key, " ORDER BY ", key, collate] {
        sql.push_str(part);
    }
    (sql, binds)
}

/// The usage reports of `org` matching `query`, added up per group, ordered by key.
pub(crate) async fn usage(
    conn: &mut Conn<'_>,
    org: OrgId,
    query: &UsageQuery,
) -> QueryResult<Vec<UsageGroup>> {
    let rows: Vec<GroupRow> = match conn {
        Conn::Pg(c) => {
            let (sql, binds) = statement(org, query, true);
            let mut statement = diesel::sql_query(sql).into_boxed::<diesel::pg::Pg>();
            for bind in binds {
                statement = match bind {
                    Bind::Uuid(v) => statement.bind::<PortableUuid, _>(v),
                    Bind::Time(v) => statement.bind::<PortableTimestamp, _>(v),
                };
            }
            statement.load(*c).await?
        }
        Conn::Sqlite(c) => {
            // SQLite numbers its parameters `?n`.
            let (sql, binds) = statement(org, query, false);
            let mut statement =
                diesel::sql_query(sql.replace('$', "?")).into_boxed::<diesel::sqlite::Sqlite>();
            for bind in binds {
                statement = match bind {
                    Bind::Uuid(v) => statement.bind::<PortableUuid, _>(v),
                    Bind::Time(v) => statement.bind::<PortableTimestamp, _>(v),
                };
            }
            statement.load(*c).await?
        }
    };
    Ok(rows.into_iter().map(UsageGroup::from).collect())
}
