//! The queries of code-host connections, deliveries and links.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{CodeHostConnectionId, CodeHostLink, IntegrationAnswer, ItemRef, OrgId};
use muster_domain::ports::Lock;
use time::OffsetDateTime;

use crate::conn::{Conn, first_locked, on_conn};
use crate::reuse::Reuse;
use crate::schema::{codehost_connections as connections, codehost_deliveries, codehost_links};
use crate::types::{DbTime, db_uuid};

use super::rows::{ConnectionRow, HostDeliveryRow, LinkRow};

/// Stores a new connection.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &ConnectionRow) -> QueryResult<()> {
    let query = diesel::insert_into(connections::table).values(row).reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// Stores every field of a connection; `false` when it is gone.
pub(crate) async fn update(conn: &mut Conn<'_>, row: &ConnectionRow) -> QueryResult<bool> {
    let target = connections::table
        .filter(connections::org_id.eq(row.org_id))
        .filter(connections::id.eq(row.id));
    let updated = on_conn!(conn, c => diesel::update(target).set(row).reused().execute(c).await)?;
    Ok(updated > 0)
}

/// Deletes a connection with its links and deliveries; `false` when it is gone.
pub(crate) async fn delete(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: CodeHostConnectionId,
) -> QueryResult<bool> {
    let links = codehost_links::table.filter(codehost_links::connection_id.eq(db_uuid(id)));
    let deliveries =
        codehost_deliveries::table.filter(codehost_deliveries::connection_id.eq(db_uuid(id)));
    let target = connections::table
        .filter(connections::org_id.eq(db_uuid(org)))
        .filter(connections::id.eq(db_uuid(id)));
    let deleted = on_conn!(conn, c => {
        diesel::delete(links).execute(c).await?;
        diesel::delete(deliveries).execute(c).await?;
        diesel::delete(target).execute(c).await
    })?;
    Ok(deleted > 0)
}

/// The connection `id` of `org`, locked as asked (PostgreSQL).
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: CodeHostConnectionId,
    lock: Option<Lock>,
) -> QueryResult<Option<ConnectionRow>> {
    first_locked!(
        conn,
        lock,
        connections::table
            .filter(connections::org_id.eq(db_uuid(org)))
            .filter(connections::id.eq(db_uuid(id)))
            .select(ConnectionRow::as_select())
    )
}

/// The connections of an installation in every organization, oldest first.
pub(crate) async fn find_by_installation(
    conn: &mut Conn<'_>,
    installation: i64,
) -> QueryResult<Vec<ConnectionRow>> {
    on_conn!(conn, c => {
        connections::table
            .filter(connections::installation_id.eq(installation))
            .select(ConnectionRow::as_select())
            .order((connections::created_at.asc(), connections::id.asc()))
            .load(c)
            .await
    })
}

/// The connections of `org`, newest first.
pub(crate) async fn list(conn: &mut Conn<'_>, org: OrgId) -> QueryResult<Vec<ConnectionRow>> {
    on_conn!(conn, c => {
        connections::table
            .filter(connections::org_id.eq(db_uuid(org)))
            .select(ConnectionRow::as_select())
            .order((connections::created_at.desc(), connections::id.desc()))
            .load(c)
            .await
    })
}

/// Claims a delivery: `true` when this inserted it. On PostgreSQL a concurrent
/// transaction's uncommitted claim of the same id makes this wait for its end.
pub(crate) async fn claim_delivery(
    conn: &mut Conn<'_>,
    connection: CodeHostConnectionId,
    delivery: &str,
    at: OffsetDateTime,
) -> QueryResult<bool> {
    let row = HostDeliveryRow {
        connection_id: db_uuid(connection),
        delivery_id: delivery.to_owned(),
        received_at: DbTime(at),
        action: None,
        task_id: None,
        reason: None,
    };
    let query = diesel::insert_into(codehost_deliveries::table)
        .values(row)
        .on_conflict_do_nothing()
        .reused();
    let written = on_conn!(conn, c => query.execute(c).await)?;
    Ok(written == 1)
}

/// The stored delivery.
pub(crate) async fn find_delivery(
    conn: &mut Conn<'_>,
    connection: CodeHostConnectionId,
    delivery: &str,
) -> QueryResult<Option<HostDeliveryRow>> {
    on_conn!(conn, c => {
        codehost_deliveries::table
            .filter(codehost_deliveries::connection_id.eq(db_uuid(connection)))
            .filter(codehost_deliveries::delivery_id.eq(delivery))
            .select(HostDeliveryRow::as_select())
            .get_result(c)
            .await
            .optional()
    })
}

/// Records a claimed delivery's answer.
pub(crate) async fn record_answer(
    conn: &mut Conn<'_>,
    connection: CodeHostConnectionId,
    delivery: &str,
    answer: &IntegrationAnswer,
) -> QueryResult<()> {
    let target = codehost_deliveries::table
        .filter(codehost_deliveries::connection_id.eq(db_uuid(connection)))
        .filter(codehost_deliveries::delivery_id.eq(delivery));
    let values = (
        codehost_deliveries::action.eq(Some(answer.action.as_str())),
        codehost_deliveries::task_id.eq(answer.task_id.map(db_uuid)),
        codehost_deliveries::reason.eq(answer.reason.as_deref()),
    );
    on_conn!(conn, c => diesel::update(target).set(values).reused().execute(c).await)?;
    Ok(())
}

/// The link of an item, locked for update (PostgreSQL).
pub(crate) async fn find_link(
    conn: &mut Conn<'_>,
    connection: CodeHostConnectionId,
    item: &ItemRef,
) -> QueryResult<Option<LinkRow>> {
    let (repository, kind, number) = (item.repository.clone(), item.kind.as_str(), item.number);
    first_locked!(
        conn,
        Some(Lock::Update),
        codehost_links::table
            .filter(codehost_links::connection_id.eq(db_uuid(connection)))
            .filter(codehost_links::repository.eq(&repository))
            .filter(codehost_links::kind.eq(kind))
            .filter(codehost_links::number.eq(number))
            .select(LinkRow::as_select())
    )
}

/// Links an item to a task, replacing its earlier link.
pub(crate) async fn upsert_link(
    conn: &mut Conn<'_>,
    link: &CodeHostLink,
    at: OffsetDateTime,
) -> QueryResult<()> {
    let row = LinkRow {
        connection_id: db_uuid(link.connection_id),
        repository: link.item.repository.clone(),
        kind: link.item.kind.as_str().to_owned(),
        number: link.item.number,
        task_id: db_uuid(link.task_id),
        linked_at: DbTime(at),
    };
    let query = diesel::insert_into(codehost_links::table)
        .values(row.clone())
        .on_conflict((
            codehost_links::connection_id,
            codehost_links::repository,
            codehost_links::kind,
            codehost_links::number,
        ))
        .do_update()
        .set((
            codehost_links::task_id.eq(row.task_id),
            codehost_links::linked_at.eq(row.linked_at),
        ))
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}
