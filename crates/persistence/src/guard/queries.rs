//! The runaway guard's queries: the counting windows of each agent (columns of `agents`)
//! and each organization's own thresholds (columns of `organizations`).

use diesel::dsl::case_when;
use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel::sql_types::{BigInt, Integer};
use diesel_async::RunQueryDsl;
use muster_domain::model::{AgentId, OrgId, TallyAdd};

use crate::conn::{Conn, on_conn};
use crate::reuse::Reuse;
use crate::schema::{agents, organizations};
use crate::types::{DbTime, DbUuid, db_uuid};

/// The runaway-guard windows as `RETURNING` gives them back.
type TallyColumns = (
    agents::guard_actions,
    agents::guard_actions_since,
    agents::guard_credits,
    agents::guard_credits_since,
);

/// The windows as stored: writes, their start, credits, their start.
pub(crate) type TallyRow = (i32, Option<DbTime>, i64, Option<DbTime>);

const TALLY: TallyColumns = (
    agents::guard_actions,
    agents::guard_actions_since,
    agents::guard_credits,
    agents::guard_credits_since,
);

/// Counts `add` on the runaway-guard windows of the agent `actor` of `org`, as
/// `muster_domain::rules::guard::count` does, in one `UPDATE ... RETURNING` (which on
/// PostgreSQL also locks the row until the commit); `None` when no such agent exists.
pub(crate) async fn tally(
    conn: &mut Conn<'_>,
    org: OrgId,
    actor: uuid::Uuid,
    add: &TallyAdd,
) -> QueryResult<Option<TallyRow>> {
    let actions = i32::try_from(add.actions).unwrap_or(i32::MAX);
    let actions_ended = agents::guard_actions_since
        .is_null()
        .or(agents::guard_actions_since.le(DbTime(add.actions_expired_at)));
    let target = agents::table
        .filter(agents::org_id.eq(db_uuid(org)))
        .filter(agents::id.eq(DbUuid(actor)));
    let count_actions = (
        agents::guard_actions.eq(case_when(actions_ended, actions.into_sql::<Integer>())
            .otherwise(agents::guard_actions + actions)),
        agents::guard_actions_since
            .eq(case_when(actions_ended, Some(DbTime(add.at)))
                .otherwise(agents::guard_actions_since)),
    );
    if add.credits == 0 {
        let query = diesel::update(target)
            .set(count_actions)
            .returning(TALLY)
            .reused();
        return on_conn!(conn, c => query.get_result(c).await.optional());
    }
    let credits_ended = agents::guard_credits_since
        .is_null()
        .or(agents::guard_credits_since.le(DbTime(add.credits_expired_at)));
    let count_credits = (
        agents::guard_credits.eq(case_when(credits_ended, add.credits.into_sql::<BigInt>())
            .otherwise(agents::guard_credits + add.credits)),
        agents::guard_credits_since
            .eq(case_when(credits_ended, Some(DbTime(add.at)))
                .otherwise(agents::guard_credits_since)),
    );
    let query = diesel::update(target)
        .set((count_actions, count_credits))
        .returning(TALLY)
        .reused();
    on_conn!(conn, c => query.get_result(c).await.optional())
}

/// Empties both runaway-guard windows of the agent `id`.
pub(crate) async fn reset_tally(conn: &mut Conn<'_>, org: OrgId, id: AgentId) -> QueryResult<()> {
    let query = diesel::update(
        agents::table
            .filter(agents::org_id.eq(db_uuid(org)))
            .filter(agents::id.eq(db_uuid(id))),
    )
    .set((
        agents::guard_actions.eq(0),
        agents::guard_actions_since.eq(None::<DbTime>),
        agents::guard_credits.eq(0_i64),
        agents::guard_credits_since.eq(None::<DbTime>),
    ))
    .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// The organization's own runaway-guard thresholds: writes per minute, credits per hour
/// (`None`: the deployment's default). `None` when there is no such organization.
pub(crate) async fn guard_settings(
    conn: &mut Conn<'_>,
    id: OrgId,
) -> QueryResult<Option<(Option<i32>, Option<i64>)>> {
    on_conn!(conn, c => {
        organizations::table
            .filter(organizations::id.eq(db_uuid(id)))
            .select((
                organizations::guard_actions_per_minute,
                organizations::guard_credits_per_hour,
            ))
            .get_result(c)
            .await
            .optional()
    })
}

/// Replaces the organization's own runaway-guard thresholds.
pub(crate) async fn set_guard_settings(
    conn: &mut Conn<'_>,
    id: OrgId,
    actions_per_minute: Option<i32>,
    credits_per_hour: Option<i64>,
) -> QueryResult<()> {
    let query = diesel::update(organizations::table.filter(organizations::id.eq(db_uuid(id))))
        .set((
            organizations::guard_actions_per_minute.eq(actions_per_minute),
            organizations::guard_credits_per_hour.eq(credits_per_hour),
        ))
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}
