//! The `projects` row and its conversions to and from the domain model.

use diesel::prelude::*;
use muster_domain::model::{
    AgentId, Author, Description, OrgId, Project, ProjectGoal, ProjectId, ProjectName,
    ProjectStatus, UserId,
};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::schema::projects;
use crate::types::{DbTime, DbUuid, db_uuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = projects, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_null = true)]
pub(crate) struct ProjectRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub name: String,
    pub goal: Option<String>,
    pub description: Option<String>,
    pub due_at: Option<DbTime>,
    pub status: String,
    pub creator_agent_id: Option<DbUuid>,
    pub creator_user_id: Option<DbUuid>,
    pub created_at: DbTime,
    pub updated_at: DbTime,
    pub archived_at: Option<DbTime>,
    pub version: i64,
}

impl From<&Project> for ProjectRow {
    fn from(project: &Project) -> Self {
        Self {
            id: db_uuid(project.id),
            org_id: db_uuid(project.org_id),
            name: project.name.as_str().to_owned(),
            goal: project.goal.as_ref().map(|g| g.as_str().to_owned()),
            description: project.description.as_ref().map(|d| d.as_str().to_owned()),
            due_at: project.due_at.map(DbTime),
            status: project.status.as_str().to_owned(),
            creator_agent_id: project
                .creator
                .and_then(Author::agent)
                .map(|id| DbUuid(id.as_uuid())),
            creator_user_id: project
                .creator
                .and_then(Author::user)
                .map(|id| DbUuid(id.as_uuid())),
            created_at: DbTime(project.created_at),
            updated_at: DbTime(project.updated_at),
            archived_at: project.archived_at.map(DbTime),
            version: project.version,
        }
    }
}

impl TryFrom<ProjectRow> for Project {
    type Error = RepositoryError;

    fn try_from(row: ProjectRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: ProjectId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            name: ProjectName::stored(row.name),
            goal: row.goal.map(ProjectGoal::stored),
            description: row
                .description
                .map(Description::new)
                .transpose()
                .map_err(|e| corrupt("project description", e))?,
            due_at: row.due_at.map(|t| t.0),
            status: ProjectStatus::parse(&row.status)
                .ok_or_else(|| corrupt("project status", &row.status))?,
            creator: match (row.creator_agent_id, row.creator_user_id) {
                (Some(agent), _) => Some(Author::Agent(AgentId::from_uuid(agent.0))),
                (None, Some(user)) => Some(Author::User(UserId::from_uuid(user.0))),
                (None, None) => None,
            },
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
            archived_at: row.archived_at.map(|t| t.0),
            version: row.version,
        })
    }
}
