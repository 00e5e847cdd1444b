use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use muster_domain::model::{Event, OrgId, Task, TaskId};
use muster_domain::ports::{RepositoryError, TaskFilter, TaskRepository};

use crate::Database;
use crate::db::detached;
use crate::error::from_diesel;
use crate::macros::{transaction, with_conn};
use crate::rows::{EventRow, TaskRow, db_uuid};
use crate::schema::{events, tasks};

#[async_trait]
impl TaskRepository for Database {
    async fn insert(&self, task: &Task, events: &[Event]) -> Result<(), RepositoryError> {
        let db = self.clone();
        let row = TaskRow::from(task);
        let event_rows: Vec<EventRow> = events.iter().map(EventRow::from).collect();
        detached(async move {
            transaction!(db, conn => {
                diesel::insert_into(tasks::table).values(&row).execute(conn).await?;
                for event in &event_rows {
                    diesel::insert_into(events::table).values(event).execute(conn).await?;
                }
                Ok(())
            })
        })
        .await
    }

    async fn get(&self, org: OrgId, id: TaskId) -> Result<Option<Task>, RepositoryError> {
        let row: Option<TaskRow> = with_conn!(self, conn, _Db => {
            tasks::table
                .filter(tasks::org_id.eq(db_uuid(org.as_uuid())))
                .filter(tasks::id.eq(db_uuid(id.as_uuid())))
                .select(TaskRow::as_select())
                .first(conn)
                .await
                .optional()
                .map_err(from_diesel)?
        });
        row.map(Task::try_from).transpose()
    }

    async fn list(
        &self,
        org: OrgId,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError> {
        let rows: Vec<TaskRow> = with_conn!(self, conn, Db => {
            let mut query = tasks::table
                .filter(tasks::org_id.eq(db_uuid(org.as_uuid())))
                .select(TaskRow::as_select())
                .into_boxed::<Db>();
            if let Some(status) = filter.status {
                query = query.filter(tasks::status.eq(status.as_str()));
            }
            if let Some(assignee) = filter.assignee_id {
                query = query.filter(tasks::assignee_id.eq(db_uuid(assignee.as_uuid())));
            }
            if let Some(creator) = filter.creator_id {
                query = query.filter(tasks::creator_id.eq(db_uuid(creator.as_uuid())));
            }
            if let Some(parent) = filter.parent_task_id {
                query = query.filter(tasks::parent_task_id.eq(db_uuid(parent.as_uuid())));
            }
            if let Some(cursor) = before {
                query = query.filter(tasks::id.lt(db_uuid(cursor.as_uuid())));
            }
            query
                .order(tasks::id.desc())
                .limit(i64::from(limit))
                .load(conn)
                .await
                .map_err(from_diesel)?
        });
        rows.into_iter().map(Task::try_from).collect()
    }

    async fn update(
        &self,
        task: &Task,
        expected_version: i64,
        events: &[Event],
    ) -> Result<bool, RepositoryError> {
        let db = self.clone();
        let row = TaskRow::from(task);
        let event_rows: Vec<EventRow> = events.iter().map(EventRow::from).collect();
        detached(async move {
            transaction!(db, conn => {
                let changed = diesel::update(
                    tasks::table
                        .filter(tasks::org_id.eq(row.org_id))
                        .filter(tasks::id.eq(row.id))
                        .filter(tasks::version.eq(expected_version)),
                )
                .set(&row)
                .execute(conn)
                .await?;
                if changed == 0 {
                    return Ok(false);
                }
                for event in &event_rows {
                    diesel::insert_into(events::table).values(event).execute(conn).await?;
                }
                Ok(true)
            })
        })
        .await
    }
}
