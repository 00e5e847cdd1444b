//! Task templates (`task_templates`): the row and its queries.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel_async::RunQueryDsl;
use muster_domain::model::{
    Description, Metadata, OrgId, Tags, TaskId, TaskPriority, TaskTemplate, TemplateId,
    TemplateName, Title,
};
use muster_domain::ports::RepositoryError;

use crate::conn::{Conn, on_conn};
use crate::error::corrupt;
use crate::reuse::Reuse;
use crate::schema::task_templates;
use crate::types::{DbJson, DbTime, DbUuid, db_uuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = task_templates, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct TemplateRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub name: String,
    pub name_key: String,
    pub title: String,
    pub description: Option<String>,
    pub priority: String,
    pub tags: DbJson,
    pub approval_required: bool,
    pub metadata: DbJson,
    pub created_from_task_id: Option<DbUuid>,
    pub created_at: DbTime,
}

impl From<&TaskTemplate> for TemplateRow {
    fn from(t: &TaskTemplate) -> Self {
        Self {
            id: DbUuid(t.id.as_uuid()),
            org_id: DbUuid(t.org_id.as_uuid()),
            name: t.name.as_str().to_owned(),
            name_key: t.name.key(),
            title: t.title.as_str().to_owned(),
            description: t.description.as_ref().map(|d| d.as_str().to_owned()),
            priority: t.priority.as_str().to_owned(),
            tags: DbJson(serde_json::Value::from(t.tags.as_slice().to_vec())),
            approval_required: t.approval_required,
            metadata: DbJson(t.metadata.to_value()),
            created_from_task_id: t.created_from_task_id.map(|id| DbUuid(id.as_uuid())),
            created_at: DbTime(t.created_at),
        }
    }
}

impl TryFrom<TemplateRow> for TaskTemplate {
    type Error = RepositoryError;

    fn try_from(row: TemplateRow) -> Result<Self, Self::Error> {
        let tags: Vec<String> =
            serde_json::from_value(row.tags.0).map_err(|e| corrupt("template tags", e))?;
        Ok(Self {
            id: TemplateId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            name: TemplateName::new(&row.name).map_err(|e| corrupt("template name", e))?,
            title: Title::stored(&row.title).map_err(|e| corrupt("template title", e))?,
            description: row
                .description
                .map(Description::new)
                .transpose()
                .map_err(|e| corrupt("template description", e))?,
            priority: TaskPriority::parse(&row.priority)
                .ok_or_else(|| corrupt("template priority", &row.priority))?,
            tags: Tags::new(tags).map_err(|e| corrupt("template tags", e))?,
            approval_required: row.approval_required,
            metadata: Metadata::new(row.metadata.0).map_err(|e| corrupt("template metadata", e))?,
            created_from_task_id: row.created_from_task_id.map(|id| TaskId::from_uuid(id.0)),
            created_at: row.created_at.0,
        })
    }
}

/// Stores a new template.
pub(crate) async fn insert(conn: &mut Conn<'_>, row: &TemplateRow) -> QueryResult<()> {
    let query = diesel::insert_into(task_templates::table)
        .values(row)
        .reused();
    on_conn!(conn, c => query.execute(c).await)?;
    Ok(())
}

/// The template `id` of `org`.
pub(crate) async fn find(
    conn: &mut Conn<'_>,
    org: OrgId,
    id: TemplateId,
) -> QueryResult<Option<TemplateRow>> {
    on_conn!(conn, c => {
        task_templates::table
            .filter(task_templates::org_id.eq(db_uuid(org)))
            .filter(task_templates::id.eq(db_uuid(id)))
            .select(TemplateRow::as_select())
            .get_result(c)
            .await
            .optional()
    })
}

/// Templates of `org`, newest first, before `before`.
pub(crate) async fn list(
    conn: &mut Conn<'_>,
    org: OrgId,
    before: Option<TemplateId>,
    limit: u32,
) -> QueryResult<Vec<TemplateRow>> {
    on_conn!(conn, c, Db => {
        let mut query = task_templates::table
            .filter(task_templates::org_id.eq(db_uuid(org)))
            .select(TemplateRow::as_select())
            .into_boxed::<Db>();
        if let Some(before) = before {
            query = query.filter(task_templates::id.lt(db_uuid(before)));
        }
        query
            .order(task_templates::id.desc())
            .limit(i64::from(limit))
            .load(c)
            .await
    })
}
