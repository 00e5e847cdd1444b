//! The queries of webhooks, their subscriptions and their delivery attempts.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{AgentId, OrgId, TaskId, WebhookId};
use muster_domain::ports::Lock;

use crate::conn::{Conn, first_locked, insert_all, on_conn};
use crate::reuse::Reuse;
use crate::schema::{webhook_attempts, webhook_subscriptions, webhooks};
use crate::types::db_uuid;

use super::rows::{AttemptRow, SubscriptionRow, WebhookRow};

/// Stores a new hook with its subscription rows.
pub(crate) async fn insert(
    conn: &mut Conn<'_>,
    row: &WebhookRow,
    subscriptions: &[SubscriptionRow],
) -> QueryResult<()> {
    let query = diesel::insert_into(webhooks::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    insert_all!(conn, webhook_subscriptions::table, subscriptions)
}

/// Stores every field of a hook (not its lease) and replaces its subscription rows;
/// `false` when the hook is gone.
pub(crate) async fn update(
    conn: &mut Conn<'_>,
    row: &WebhookRow,
    subscriptions: &[SubscriptionRow],
) -> QueryResult<bool> {
    let target = webhooks::table
        .filter(webhooks::org_id.eq(row.org_id))
        .filter(webhooks::id.eq(row.id));
    let changed = on_conn!(conn, c => diesel::update(target).set(row).reused().execute(c).await)?;
    if changed == 0 {
        return Ok(false);
    }
    let old = webhook_subscriptions::table.filter(webhook_subscriptions::webhook_id.eq(row.id));
    on_conn!(conn, c => diesel::delete(old).execute(c).await)?;
    insert_all!(conn, webhook_subscriptions::table, subscriptions)?;
    Ok(true)
}

/// Stores what deliveries change on a hook: enabled, failures, last error.
pub(crate) async fn update_health(conn: &mut Conn<'_>, row: &WebhookRow) -> QueryResult<bool> {
    let target = webhooks::table
        .filter(webhooks::org_id.eq(row.org_id))
        .filter(webhooks::id.eq(row.id));
    let changes = (
        webhooks::enabled.eq(row.enabled),
        webhooks::consecutive_failures.eq(row.consecutive_failures),
        webhooks::last_error.eq(row.last_error.clone()),
        webhooks::updated_at.eq(row.updated_at),
    );
    let updated =
        on_conn!(conn, c => diesel::update(target).set(changes).reused().execute(c).await)?;
    Ok(updated > 0)
}

/// Deletes a hook; its subscriptions, pending deliveries and log go with it (foreign
/// keys `ON DELETE CASCADE`). `false` when it is gone.
pub(crate) async fn delete(conn: &mut Conn<'_>, org: OrgId, id: WebhookId) -> QueryResult<bool> {
    let target = webhooks::table
        .filter(webhooks::org_id.eq(db_uuid(org)))
        .filter(webhooks::id.eq(db_uuid(id)));
    let deleted = on_conn!(conn, c => diesel::delete(target).execute(c).await)?;
    Ok(deleted > 0)
}

/// The hook `id` of `org`, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: WebhookId,
    lock: Option<Lock>,
) -> QueryResult<Option<WebhookRow>> {
    first_locked!(
        conn,
        lock,
        webhooks::table
            .filter(webhooks::org_id.eq(db_uuid(org)))
            .filter(webhooks::id.eq(db_uuid(id)))
            .select(WebhookRow::as_select())
    )
}

/// The hooks of `org` (not its tasks' A2A push configs nor its remote agents'
/// channels), newest first; only its enabled
/// pre-hooks with `pre_only`.
pub(crate) async fn list(
    conn: &mut Conn<'_>,
    org: OrgId,
    pre_only: bool,
) -> QueryResult<Vec<WebhookRow>> {
    on_conn!(conn, c, B => {
        let mut query = webhooks::table
            .filter(webhooks::org_id.eq(db_uuid(org)))
            .filter(webhooks::task_id.is_null())
            .filter(webhooks::remote_agent_id.is_null())
            .into_boxed::<B>();
        if pre_only {
            query = query
                .filter(webhooks::enabled.eq(true))
                .filter(webhooks::hook_type.eq("pre"));
        }
        query
            .select(WebhookRow::as_select())
            .order((webhooks::created_at.desc(), webhooks::id.desc()))
            .load(c)
            .await
    })
}

/// The A2A push configs of `task` in `org`, oldest first.
pub(crate) async fn push_configs(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
) -> QueryResult<Vec<WebhookRow>> {
    on_conn!(conn, c => {
        webhooks::table
            .filter(webhooks::task_id.eq(db_uuid(task)))
            .filter(webhooks::org_id.eq(db_uuid(org)))
            .select(WebhookRow::as_select())
            .order((webhooks::created_at.asc(), webhooks::id.asc()))
            .load(c)
            .await
    })
}

/// The hand-over channel of the remote agent `agent`, in any organization.
pub(crate) async fn remote_channel(
    conn: &mut Conn<'_>,
    agent: AgentId,
) -> QueryResult<Option<WebhookRow>> {
    on_conn!(conn, c => {
        webhooks::table
            .filter(webhooks::remote_agent_id.eq(db_uuid(agent)))
            .select(WebhookRow::as_select())
            .first(c)
            .await
            .optional()
    })
}

/// Records calls of hooks (one statement on PostgreSQL).
pub(crate) async fn insert_attempts(conn: &mut Conn<'_>, rows: &[AttemptRow]) -> QueryResult<()> {
    insert_all!(conn, webhook_attempts::table, rows)
}

/// One page of `hook`'s log, newest first, and how many calls it holds.
pub(crate) async fn attempts(
    conn: &mut Conn<'_>,
    org: OrgId,
    hook: WebhookId,
    limit: u32,
    offset: u64,
) -> QueryResult<(Vec<AttemptRow>, u64)> {
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    let of_hook = webhook_attempts::org_id
        .eq(db_uuid(org))
        .and(webhook_attempts::webhook_id.eq(db_uuid(hook)));
    let rows = on_conn!(conn, c => {
        webhook_attempts::table
            .filter(of_hook)
            .select(AttemptRow::as_select())
            .order((webhook_attempts::created_at.desc(), webhook_attempts::id.desc()))
            .limit(i64::from(limit))
            .offset(offset)
            .load(c)
            .await
    })?;
    let total: i64 = on_conn!(conn, c => {
        webhook_attempts::table
            .filter(of_hook)
            .count()
            .get_result(c)
            .await
    })?;
    Ok((rows, u64::try_from(total).unwrap_or(0)))
}
