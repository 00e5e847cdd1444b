//! Task comments (`task_comments`): the row and its queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{
    AgentId, Author, Comment, CommentBody, CommentId, OrgId, TaskId, UserId,
};
use muster_domain::ports::RepositoryError;

use crate::conn::{Conn, on_conn};
use crate::error::corrupt;
use crate::reuse::Reuse;
use crate::schema::task_comments;
use crate::types::{DbTime, DbUuid, db_uuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = task_comments, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct CommentRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub task_id: DbUuid,
    pub agent_id: Option<DbUuid>,
    pub user_id: Option<DbUuid>,
    pub parent_comment_id: Option<DbUuid>,
    pub body: String,
    pub created_at: DbTime,
}

impl From<&Comment> for CommentRow {
    fn from(c: &Comment) -> Self {
        Self {
            id: DbUuid(c.id.as_uuid()),
            org_id: DbUuid(c.org_id.as_uuid()),
            task_id: DbUuid(c.task_id.as_uuid()),
            agent_id: c
                .author
                .and_then(Author::agent)
                .map(|id| DbUuid(id.as_uuid())),
            user_id: c
                .author
                .and_then(Author::user)
                .map(|id| DbUuid(id.as_uuid())),
            parent_comment_id: c.parent_comment_id.map(|id| DbUuid(id.as_uuid())),
            body: c.body.as_str().to_owned(),
            created_at: DbTime(c.created_at),
        }
    }
}

impl TryFrom<CommentRow> for Comment {
    type Error = RepositoryError;

    fn try_from(row: CommentRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: CommentId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            task_id: TaskId::from_uuid(row.task_id.0),
            author: match (row.agent_id, row.user_id) {
                (Some(agent), _) => Some(Author::Agent(AgentId::from_uuid(agent.0))),
                (None, Some(user)) => Some(Author::User(UserId::from_uuid(user.0))),
                (None, None) => None,
            },
            parent_comment_id: row.parent_comment_id.map(|id| CommentId::from_uuid(id.0)),
            body: CommentBody::new(row.body).map_err(|e| corrupt("comment body", e))?,
            created_at: row.created_at.0,
        })
    }
}

/// Stores a new comment.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &CommentRow) -> QueryResult<()> {
    let query = diesel::insert_into(task_comments::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// The comment `id` of `task`.
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
    id: CommentId,
) -> QueryResult<Option<CommentRow>> {
    on_conn!(conn, c => {
        task_comments::table
            .filter(task_comments::org_id.eq(db_uuid(org)))
            .filter(task_comments::task_id.eq(db_uuid(task)))
            .filter(task_comments::id.eq(db_uuid(id)))
            .select(CommentRow::as_select())
            .get_result(c)
            .await
            .optional()
    })
}

/// Comments of `task`, oldest first, after `after`.
pub(crate) async fn of_task(
    conn: &mut Conn<'_>,
    org: OrgId,
    task: TaskId,
    after: Option<CommentId>,
    limit: u32,
) -> QueryResult<Vec<CommentRow>> {
    on_conn!(conn, c, Db => {
        let mut query = task_comments::table
            .filter(task_comments::org_id.eq(db_uuid(org)))
            .filter(task_comments::task_id.eq(db_uuid(task)))
            .select(CommentRow::as_select())
            .into_boxed::<Db>();
        if let Some(after) = after {
            query = query.filter(task_comments::id.gt(db_uuid(after)));
        }
        query
            .order(task_comments::id.asc())
            .limit(i64::from(limit))
            .load(c)
            .await
    })
}
