//! The outbox of post-hook deliveries (decision D-83): rows written with the events, and
//! the lease a worker takes on a hook before delivering to it.

use std::collections::{BTreeMap, HashMap, HashSet};

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{
    AgentId, Event, EventId, HookEvents, HookType, OrgId, TaskId, WebhookId, hands_over,
};
use muster_domain::rules::hearing;
use muster_domain::rules::hearing::{Ear, Listener};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::conn::{Conn, insert_all, on_conn};
use crate::events::rows::EventRow;
use crate::reuse::{KEPT_LIST, Reuse};
use crate::schema::{events, tasks, webhook_deliveries, webhook_subscriptions, webhooks};
use crate::types::{DbTime, DbUuid, PortableTimestamp, PortableUuid, db_uuid};

use super::rows::DeliveryRow;

/// Queues the deliveries of `events` (just appended) that the hearing rule answers
/// ([`hearing::deliveries`]), loading only the hooks that may hear them: the enabled
/// post-hooks of their organizations subscribed to their types (or to `*`), the push
/// configs of the tasks they move, the hand-over channels of the remote agents the
/// tasks they hand over are assigned to. One read of the subscriptions (push configs
/// and channels have none), one of the push configs when an event is a move, one of the
/// channels when an event hands a task over, one insert.
pub(crate) async fn enqueue(conn: &mut Conn<'_>, events: &[Event]) -> QueryResult<()> {
    let mut listeners = subscribers(conn, events).await?;
    listeners.extend(push_configs(conn, events).await?);
    let (channels, assignees) = remote_channels(conn, events).await?;
    listeners.extend(channels);
    let heard = hearing::deliveries(events, &listeners, |task| assignees.get(&task).copied());
    // The calls continue the trace of the change that queued them (when traces are on).
    let trace = if heard.is_empty() {
        None
    } else {
        muster_telemetry::Propagated::current()
    };
    let deliveries: Vec<DeliveryRow> = heard
        .into_iter()
        .map(|delivery| DeliveryRow {
            webhook_id: db_uuid(delivery.hook),
            event_id: db_uuid(delivery.event),
            event_at: DbTime(delivery.at),
            attempts: 0,
            next_attempt_at: DbTime(delivery.at),
            trace_parent: trace.as_ref().map(|t| t.traceparent.clone()),
            trace_state: trace.as_ref().and_then(|t| t.tracestate.clone()),
        })
        .collect();
    insert_all!(conn, webhook_deliveries::table, &deliveries)
}

/// A hook as read for the hearing rule: organization, id, enabled, type.
type HookHead = (DbUuid, DbUuid, bool, String);

/// The listener of a hook read as `head`, hearing by `ear`.
fn listener((org, hook, enabled, hook_type): HookHead, ear: Ear) -> QueryResult<Listener> {
    let hook_type = HookType::parse(&hook_type).ok_or_else(|| {
        diesel::result::Error::DeserializationError(
            format!("webhooks.hook_type is not a hook type: {hook_type}").into(),
        )
    })?;
    Ok(Listener {
        hook: WebhookId::from_uuid(hook.0),
        org: OrgId::from_uuid(org.0),
        enabled,
        hook_type,
        ear,
    })
}

/// The organizations' own hooks that may hear `events`: enabled post-hooks subscribed
/// to one of their types or to `*`, one listener per hook.
async fn subscribers(conn: &mut Conn<'_>, events: &[Event]) -> QueryResult<Vec<Listener>> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let mut orgs: Vec<DbUuid> = events.iter().map(|e| db_uuid(e.org_id)).collect();
    orgs.sort_unstable_by_key(|org| org.0);
    orgs.dedup();
    let mut types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    types.push(HookEvents::ALL);
    types.sort_unstable();
    types.dedup();
    // Kept prepared for a short list (the usual one org and two types).
    let keep = orgs.len().max(types.len()) <= KEPT_LIST;
    let rows: Vec<(HookHead, String)> = on_conn!(conn, c => {
        webhook_subscriptions::table
            .inner_join(webhooks::table)
            .filter(webhook_subscriptions::org_id.eq_any(&orgs))
            .filter(webhook_subscriptions::event_type.eq_any(&types))
            .filter(webhooks::enabled.eq(true))
            .filter(webhooks::hook_type.eq(HookType::Post.as_str()))
            .select((
                (
                    webhook_subscriptions::org_id,
                    webhook_subscriptions::webhook_id,
                    webhooks::enabled,
                    webhooks::hook_type,
                ),
                webhook_subscriptions::event_type,
            ))
            .reused_if(keep)
            .load(c)
            .await
    })?;
    let mut by_hook: BTreeMap<Uuid, (HookHead, Vec<String>)> = BTreeMap::new();
    for (head, event_type) in rows {
        by_hook
            .entry(head.1.0)
            .or_insert_with(|| (head, Vec::new()))
            .1
            .push(event_type);
    }
    by_hook
        .into_values()
        .map(|(head, types)| listener(head, Ear::Subscribed(types)))
        .collect()
}

/// The enabled push configs of the tasks that `events` move: a seek on
/// `webhooks (task_id, ...)`, only when an event is a move.
async fn push_configs(conn: &mut Conn<'_>, events: &[Event]) -> QueryResult<Vec<Listener>> {
    let mut moved: Vec<DbUuid> = events
        .iter()
        .filter(|e| hearing::moves_task(&e.event_type))
        .map(|e| DbUuid(e.entity_id))
        .collect();
    if moved.is_empty() {
        return Ok(Vec::new());
    }
    moved.sort_unstable_by_key(|task| task.0);
    moved.dedup();
    let keep = moved.len() <= KEPT_LIST;
    let found: Vec<(HookHead, Option<DbUuid>)> = on_conn!(conn, c => {
        webhooks::table
            .filter(webhooks::task_id.eq_any(&moved))
            .filter(webhooks::enabled.eq(true))
            .select((
                (webhooks::org_id, webhooks::id, webhooks::enabled, webhooks::hook_type),
                webhooks::task_id,
            ))
            .reused_if(keep)
            .load(c)
            .await
    })?;
    found
        .into_iter()
        .filter_map(|(head, task)| {
            task.map(|task| listener(head, Ear::Push(TaskId::from_uuid(task.0))))
        })
        .collect()
}

/// The enabled hand-over channels of the remote agents that the tasks `events` hand
/// over ([`hands_over`]) are now assigned to, and those tasks' assignees: a seek on
/// `webhooks (remote_agent_id)` joined to the tasks, only when an event hands one over.
async fn remote_channels(
    conn: &mut Conn<'_>,
    events: &[Event],
) -> QueryResult<(Vec<Listener>, HashMap<Uuid, AgentId>)> {
    let mut handed: Vec<DbUuid> = events
        .iter()
        .filter(|e| hands_over(&e.event_type, &e.payload))
        .map(|e| DbUuid(e.entity_id))
        .collect();
    if handed.is_empty() {
        return Ok((Vec::new(), HashMap::new()));
    }
    handed.sort_unstable_by_key(|task| task.0);
    handed.dedup();
    let keep = handed.len() <= KEPT_LIST;
    let found: Vec<(HookHead, Option<DbUuid>, DbUuid, Option<DbUuid>)> = on_conn!(conn, c => {
        tasks::table
            .inner_join(
                webhooks::table.on(webhooks::remote_agent_id.eq(tasks::assignee_id)),
            )
            .filter(tasks::id.eq_any(&handed))
            .filter(tasks::assignee_id.is_not_null())
            .filter(webhooks::enabled.eq(true))
            .select((
                (webhooks::org_id, webhooks::id, webhooks::enabled, webhooks::hook_type),
                webhooks::remote_agent_id,
                tasks::id,
                tasks::assignee_id,
            ))
            .reused_if(keep)
            .load(c)
            .await
    })?;
    let mut seen = HashSet::new();
    let mut channels = Vec::new();
    let mut assignees = HashMap::new();
    for (head, agent, task, assignee) in found {
        if let Some(assignee) = assignee {
            assignees.insert(task.0, AgentId::from_uuid(assignee.0));
        }
        if let Some(agent) = agent
            && seen.insert(head.1.0)
        {
            channels.push(listener(head, Ear::Remote(AgentId::from_uuid(agent.0)))?);
        }
    }
    Ok((channels, assignees))
}

/// `hook`'s deliveries due at `now`, oldest event first, with their events.
pub(crate) async fn due(
    conn: &mut Conn<'_>,
    hook: WebhookId,
    now: OffsetDateTime,
    limit: u32,
) -> QueryResult<Vec<DueRow>> {
    on_conn!(conn, c => {
        webhook_deliveries::table
            .inner_join(events::table)
            .filter(webhook_deliveries::webhook_id.eq(db_uuid(hook)))
            .filter(webhook_deliveries::next_attempt_at.le(DbTime(now)))
            .order((webhook_deliveries::event_at, webhook_deliveries::event_id))
            .limit(i64::from(limit))
            .select((
                EventRow::as_select(),
                webhook_deliveries::attempts,
                webhook_deliveries::trace_parent,
                webhook_deliveries::trace_state,
            ))
            .load(c)
            .await
    })
}

/// A due delivery: its event, the attempts made, the trace context it was queued in.
pub(crate) type DueRow = (EventRow, i32, Option<String>, Option<String>);

/// After a failed attempt: `attempts` made, the next at `next_at`.
pub(crate) async fn reschedule(
    conn: &mut Conn<'_>,
    hook: WebhookId,
    event: EventId,
    attempts: i32,
    next_at: OffsetDateTime,
) -> QueryResult<()> {
    let target = webhook_deliveries::table
        .filter(webhook_deliveries::webhook_id.eq(db_uuid(hook)))
        .filter(webhook_deliveries::event_id.eq(db_uuid(event)));
    let changes = (
        webhook_deliveries::attempts.eq(attempts),
        webhook_deliveries::next_attempt_at.eq(DbTime(next_at)),
    );
    on_conn!(conn, c => diesel::update(target).set(changes).reused().execute(c).await)?;
    Ok(())
}

/// Takes deliveries of `hook` out of the outbox, in one statement.
pub(crate) async fn finish(
    conn: &mut Conn<'_>,
    hook: WebhookId,
    events: &[EventId],
) -> QueryResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let ids: Vec<DbUuid> = events.iter().map(|e| db_uuid(*e)).collect();
    let target = webhook_deliveries::table
        .filter(webhook_deliveries::webhook_id.eq(db_uuid(hook)))
        .filter(webhook_deliveries::event_id.eq_any(ids));
    on_conn!(conn, c => diesel::delete(target).execute(c).await)?;
    Ok(())
}

/// Whether any delivery is due at `now`: a read, so that an idle worker's poll never
/// takes SQLite's write lock.
pub(crate) async fn any_due(conn: &mut Conn<'_>, now: OffsetDateTime) -> QueryResult<bool> {
    let query = diesel::select(diesel::dsl::exists(
        webhook_deliveries::table.filter(webhook_deliveries::next_attempt_at.le(DbTime(now))),
    ));
    on_conn!(conn, c => query.get_result(c).await)
}

#[derive(QueryableByName)]
struct Leased {
    #[diesel(sql_type = PortableUuid)]
    org_id: DbUuid,
    #[diesel(sql_type = PortableUuid)]
    id: DbUuid,
}

/// The lease statement, `LOCKING` standing for PostgreSQL's row locks. The candidates
/// are the hooks with any delivery queued, found by stepping along the deliveries'
/// primary key from one hook to the next (a seek per hook with a queue), not by reading
/// every hook: A2A push configs are hooks too, one or more per task, and almost all of
/// them have nothing queued. Each candidate is then kept when it is enabled, its lease is
/// free, and a delivery of its queue is due. (`CROSS JOIN` keeps the queues as SQLite's
/// outer loop: left to choose, its planner reads every hook in id order to spare a sort.)
const LEASE: &str = "UPDATE webhooks SET lease_holder = $1, lease_until = $2 \
    WHERE id IN (WITH RECURSIVE queued(id) AS ( \
            SELECT (SELECT webhook_id FROM webhook_deliveries ORDER BY webhook_id LIMIT 1) \
            UNION ALL \
            SELECT (SELECT d.webhook_id FROM webhook_deliveries d WHERE d.webhook_id > q.id \
                ORDER BY d.webhook_id LIMIT 1) \
            FROM queued q WHERE q.id IS NOT NULL) \
        SELECT w.id FROM queued q CROSS JOIN webhooks w \
        WHERE w.id = q.id AND w.enabled = TRUE AND (w.lease_until IS NULL OR w.lease_until < $3) \
        AND EXISTS (SELECT 1 FROM webhook_deliveries d \
            WHERE d.webhook_id = w.id AND d.next_attempt_at <= $3) \
        ORDER BY w.id LIMIT $4 LOCKING) \
    AND (lease_until IS NULL OR lease_until < $3) \
    RETURNING org_id, id";

/// [`LEASE`] as each engine takes it.
trait LeaseSql {
    fn lease() -> String;
}

impl LeaseSql for diesel::pg::Pg {
    /// Instances leasing at the same moment skip each other's candidates.
    fn lease() -> String {
        LEASE.replace("LOCKING", "FOR UPDATE OF w SKIP LOCKED")
    }
}

impl LeaseSql for diesel::sqlite::Sqlite {
    /// One writer at a time: no row locks to take.
    fn lease() -> String {
        LEASE.replace("LOCKING", "").replace('$', "?")
    }
}

/// Leases to `holder`, until `until`, at most `max` enabled hooks with a delivery due at
/// `now` and no live lease. On PostgreSQL the candidates are locked `FOR UPDATE SKIP
/// LOCKED`, so instances leasing at the same moment take different hooks and never wait
/// on each other; the lease condition is checked again by the update itself.
pub(crate) async fn lease_due(
    conn: &mut Conn<'_>,
    now: OffsetDateTime,
    until: OffsetDateTime,
    holder: Uuid,
    max: u32,
) -> QueryResult<Vec<(OrgId, WebhookId)>> {
    let max = i64::from(max);
    let leased: Vec<Leased> = on_conn!(conn, c, Db => {
        diesel::sql_query(<Db as LeaseSql>::lease())
            .bind::<PortableUuid, _>(DbUuid(holder))
            .bind::<PortableTimestamp, _>(DbTime(until))
            .bind::<PortableTimestamp, _>(DbTime(now))
            .bind::<diesel::sql_types::BigInt, _>(max)
            .load(c)
            .await
    })?;
    Ok(leased
        .into_iter()
        .map(|row| {
            (
                OrgId::from_uuid(row.org_id.0),
                WebhookId::from_uuid(row.id.0),
            )
        })
        .collect())
}

/// Extends `holder`'s lease of `hook`; `false` when another holds it now.
pub(crate) async fn extend_lease(
    conn: &mut Conn<'_>,
    hook: WebhookId,
    holder: Uuid,
    until: OffsetDateTime,
) -> QueryResult<bool> {
    let target = webhooks::table
        .filter(webhooks::id.eq(db_uuid(hook)))
        .filter(webhooks::lease_holder.eq(DbUuid(holder)));
    let changed = on_conn!(conn, c => {
        diesel::update(target)
            .set(webhooks::lease_until.eq(DbTime(until)))
            .reused()
            .execute(c)
            .await
    })?;
    Ok(changed > 0)
}

/// Gives up `holder`'s lease of `hook`.
pub(crate) async fn release(conn: &mut Conn<'_>, hook: WebhookId, holder: Uuid) -> QueryResult<()> {
    let target = webhooks::table
        .filter(webhooks::id.eq(db_uuid(hook)))
        .filter(webhooks::lease_holder.eq(DbUuid(holder)));
    on_conn!(conn, c => {
        diesel::update(target)
            .set((
                webhooks::lease_holder.eq(None::<DbUuid>),
                webhooks::lease_until.eq(None::<DbTime>),
            ))
            .reused()
            .execute(c)
            .await
    })?;
    Ok(())
}

/// Gives up every lease of `holder`; how many there were.
pub(crate) async fn release_all(conn: &mut Conn<'_>, holder: Uuid) -> QueryResult<u64> {
    let target = webhooks::table.filter(webhooks::lease_holder.eq(DbUuid(holder)));
    let released = on_conn!(conn, c => {
        diesel::update(target)
            .set((
                webhooks::lease_holder.eq(None::<DbUuid>),
                webhooks::lease_until.eq(None::<DbTime>),
            ))
            .reused()
            .execute(c)
            .await
    })?;
    Ok(u64::try_from(released).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use diesel::sqlite::Sqlite;

    use super::LeaseSql;
    use crate::plan::sqlite_plan;

    /// The lease runs on SQLite's writer at every poll while anything is due: it must
    /// reach the hooks through their queues (a seek per hook with one), never by reading
    /// every hook, nor every queued delivery.
    #[test]
    fn a_lease_reads_only_the_hooks_with_a_queue_on_sqlite() {
        let (sql, plan) = sqlite_plan(&diesel::sql_query(<Sqlite as LeaseSql>::lease()));
        // The first queue is found by reading the deliveries' key in order (`LIMIT 1`);
        // every other step seeks.
        let reads_all = |step: &&String| {
            let mut words = step.split_whitespace();
            words.next() == Some("SCAN")
                && words
                    .next()
                    .is_some_and(|table| ["w", "webhooks", "d"].contains(&table))
        };
        assert!(!plan.iter().any(|step| reads_all(&step)), "{sql}: {plan:?}");
        for seek in [
            "SEARCH d USING COVERING INDEX sqlite_autoindex_webhook_deliveries_1 (webhook_id>?)",
            "SEARCH w USING INDEX sqlite_autoindex_webhooks_1 (id=?)",
        ] {
            assert!(plan.iter().any(|step| step == seek), "{sql}: {plan:?}");
        }
    }
}
