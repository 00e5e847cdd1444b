//! The `tasks` row and its conversions to and from the domain model.

use diesel::prelude::*;
use muster_domain::model::{
    AgentId, Author, Description, Metadata, OrgId, ProjectId, RewardPayer, Tags, Task, TaskId,
    TaskOutcome, TaskPriority, TaskResult, TaskStatus, Title, UserId,
};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::schema::tasks;
use crate::types::{DbJson, DbTime, DbUuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = tasks, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_null = true)]
pub(crate) struct TaskRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub title: String,
    pub description: Option<String>,
    pub status: String,
    pub priority: String,
    pub assignee_id: Option<DbUuid>,
    pub creator_id: Option<DbUuid>,
    pub parent_task_id: Option<DbUuid>,
    pub approval_required: bool,
    pub due_at: Option<DbTime>,
    pub tags: DbJson,
    pub metadata: DbJson,
    pub created_at: DbTime,
    pub updated_at: DbTime,
    pub version: i64,
    pub creator_user_id: Option<DbUuid>,
    pub approved_by: Option<DbUuid>,
    pub approved_at: Option<DbTime>,
    pub status_changed_at: Option<DbTime>,
    pub last_activity_at: Option<DbTime>,
    pub lease_expires_at: Option<DbTime>,
    pub result: Option<String>,
    pub outcome: Option<String>,
    pub reward: i64,
    /// The agent whose balance escrowed the reward; NULL: the treasury (decision D-101).
    pub reward_payer_agent_id: Option<DbUuid>,
    /// The project it belongs to (issue 66).
    pub project_id: Option<DbUuid>,
}

impl From<&Task> for TaskRow {
    fn from(task: &Task) -> Self {
        Self {
            id: DbUuid(task.id.as_uuid()),
            org_id: DbUuid(task.org_id.as_uuid()),
            title: task.title.as_str().to_owned(),
            description: task.description.as_ref().map(|d| d.as_str().to_owned()),
            status: task.status.as_str().to_owned(),
            priority: task.priority.as_str().to_owned(),
            assignee_id: task.assignee_id.map(|id| DbUuid(id.as_uuid())),
            creator_id: task
                .creator
                .and_then(Author::agent)
                .map(|id| DbUuid(id.as_uuid())),
            parent_task_id: task.parent_task_id.map(|id| DbUuid(id.as_uuid())),
            approval_required: task.approval_required,
            due_at: task.due_at.map(DbTime),
            tags: DbJson(serde_json::Value::from(task.tags.as_slice().to_vec())),
            metadata: DbJson(task.metadata.to_value()),
            created_at: DbTime(task.created_at),
            updated_at: DbTime(task.updated_at),
            version: task.version,
            creator_user_id: task
                .creator
                .and_then(Author::user)
                .map(|id| DbUuid(id.as_uuid())),
            approved_by: task.approved_by.map(DbUuid),
            approved_at: task.approved_at.map(DbTime),
            status_changed_at: Some(DbTime(task.status_changed_at)),
            last_activity_at: Some(DbTime(task.last_activity_at)),
            lease_expires_at: task.lease_expires_at.map(DbTime),
            result: task.result.as_ref().map(|r| r.as_str().to_owned()),
            outcome: task.outcome.map(|o| o.as_str().to_owned()),
            reward: task.reward,
            reward_payer_agent_id: task.reward_payer.agent().map(|id| DbUuid(id.as_uuid())),
            project_id: task.project_id.map(|id| DbUuid(id.as_uuid())),
        }
    }
}

impl TryFrom<TaskRow> for Task {
    type Error = RepositoryError;

    fn try_from(row: TaskRow) -> Result<Self, Self::Error> {
        let tags: Vec<String> =
            serde_json::from_value(row.tags.0).map_err(|e| corrupt("task tags", e))?;
        Ok(Self {
            id: TaskId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            title: Title::stored(&row.title).map_err(|e| corrupt("task title", e))?,
            description: row
                .description
                .map(Description::new)
                .transpose()
                .map_err(|e| corrupt("task description", e))?,
            status: TaskStatus::parse(&row.status)
                .ok_or_else(|| corrupt("task status", &row.status))?,
            priority: TaskPriority::parse(&row.priority)
                .ok_or_else(|| corrupt("task priority", &row.priority))?,
            assignee_id: row.assignee_id.map(|id| AgentId::from_uuid(id.0)),
            creator: match (row.creator_id, row.creator_user_id) {
                (Some(agent), _) => Some(Author::Agent(AgentId::from_uuid(agent.0))),
                (None, Some(user)) => Some(Author::User(UserId::from_uuid(user.0))),
                (None, None) => None,
            },
            parent_task_id: row.parent_task_id.map(|id| TaskId::from_uuid(id.0)),
            project_id: row.project_id.map(|id| ProjectId::from_uuid(id.0)),
            approval_required: row.approval_required,
            due_at: row.due_at.map(|t| t.0),
            tags: Tags::new(tags).map_err(|e| corrupt("task tags", e))?,
            metadata: Metadata::new(row.metadata.0).map_err(|e| corrupt("task metadata", e))?,
            approved_by: row.approved_by.map(|id| id.0),
            approved_at: row.approved_at.map(|t| t.0),
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
            // Rows written before these stamps existed count from their last change.
            status_changed_at: row.status_changed_at.map_or(row.updated_at.0, |t| t.0),
            last_activity_at: row.last_activity_at.map_or(row.updated_at.0, |t| t.0),
            lease_expires_at: row.lease_expires_at.map(|t| t.0),
            version: row.version,
            result: row
                .result
                .map(TaskResult::new)
                .transpose()
                .map_err(|e| corrupt("task result", e))?,
            outcome: row
                .outcome
                .map(|o| TaskOutcome::parse(&o).ok_or_else(|| corrupt("task outcome", o)))
                .transpose()?,
            reward: row.reward,
            reward_payer: row
                .reward_payer_agent_id
                .map_or(RewardPayer::Treasury, |id| {
                    RewardPayer::Agent(AgentId::from_uuid(id.0))
                }),
        })
    }
}
