//! The `routines` and `routine_firings` rows and their conversions. A routine's task is
//! stored as the JSON of [`TaskShape`].

use diesel::prelude::*;
use muster_domain::model::{
    AgentId, Author, CatchUp, Description, Metadata, OrgId, ProjectId, Routine, RoutineFiring,
    RoutineId, RoutineName, RoutineTask, RoutineWork, Tags, TaskId, TaskPriority, TemplateId,
    Title, UserId,
};
use muster_domain::ports::RepositoryError;
use muster_domain::rules::schedule::Schedule;
use serde::{Deserialize, Serialize};

use crate::error::corrupt;
use crate::schema::{routine_firings, routines};
use crate::types::{DbTime, DbUuid, db_uuid};

/// A routine's task as stored (camelCase JSON).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskShape {
    title: String,
    description: Option<String>,
    priority: TaskPriority,
    tags: Vec<String>,
    assignee_id: Option<uuid::Uuid>,
    reward: Option<i64>,
    approval_required: bool,
    metadata: serde_json::Value,
    project_id: Option<uuid::Uuid>,
}

impl From<&RoutineTask> for TaskShape {
    fn from(task: &RoutineTask) -> Self {
        Self {
            title: task.title.as_str().to_owned(),
            description: task.description.as_ref().map(|d| d.as_str().to_owned()),
            priority: task.priority,
            tags: task.tags.as_slice().to_vec(),
            assignee_id: task.assignee_id.map(AgentId::as_uuid),
            reward: task.reward,
            approval_required: task.approval_required,
            metadata: task.metadata.to_value(),
            project_id: task.project_id.map(ProjectId::as_uuid),
        }
    }
}

impl TryFrom<TaskShape> for RoutineTask {
    type Error = RepositoryError;

    fn try_from(shape: TaskShape) -> Result<Self, Self::Error> {
        let bad = |e| corrupt("routine task", e);
        Ok(Self {
            title: Title::stored(&shape.title).map_err(bad)?,
            description: shape
                .description
                .map(Description::new)
                .transpose()
                .map_err(bad)?,
            priority: shape.priority,
            tags: Tags::new(shape.tags).map_err(bad)?,
            assignee_id: shape.assignee_id.map(AgentId::from_uuid),
            reward: shape.reward,
            approval_required: shape.approval_required,
            metadata: Metadata::new(shape.metadata).map_err(bad)?,
            project_id: shape.project_id.map(ProjectId::from_uuid),
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = routines, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_null = true)]
pub(crate) struct RoutineRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub name: String,
    pub schedule: String,
    pub timezone: String,
    pub task: Option<String>,
    pub template_id: Option<DbUuid>,
    pub enabled: bool,
    pub catch_up: String,
    pub owner_agent_id: Option<DbUuid>,
    pub owner_user_id: Option<DbUuid>,
    pub next_run_at: Option<DbTime>,
    pub last_run_at: Option<DbTime>,
    pub last_task_id: Option<DbUuid>,
    pub last_error: Option<String>,
    pub paused_reason: Option<String>,
    pub created_at: DbTime,
    pub updated_at: DbTime,
    pub version: i64,
}

impl TryFrom<&Routine> for RoutineRow {
    type Error = RepositoryError;

    fn try_from(routine: &Routine) -> Result<Self, Self::Error> {
        let (task, template_id) = match &routine.work {
            RoutineWork::Task(task) => (
                Some(
                    serde_json::to_string(&TaskShape::from(task.as_ref()))
                        .map_err(RepositoryError::internal)?,
                ),
                None,
            ),
            RoutineWork::Template(id) => (None, Some(db_uuid(*id))),
        };
        Ok(Self {
            id: db_uuid(routine.id),
            org_id: db_uuid(routine.org_id),
            name: routine.name.as_str().to_owned(),
            schedule: routine.schedule.expression().to_owned(),
            timezone: routine.schedule.timezone().to_owned(),
            task,
            template_id,
            enabled: routine.enabled,
            catch_up: routine.catch_up.as_str().to_owned(),
            owner_agent_id: routine.owner.agent().map(|id| DbUuid(id.as_uuid())),
            owner_user_id: routine.owner.user().map(|id| DbUuid(id.as_uuid())),
            next_run_at: routine.next_run_at.map(DbTime),
            last_run_at: routine.last_run_at.map(DbTime),
            last_task_id: routine.last_task_id.map(db_uuid),
            last_error: routine.last_error.clone(),
            paused_reason: routine.paused_reason.clone(),
            created_at: DbTime(routine.created_at),
            updated_at: DbTime(routine.updated_at),
            version: routine.version,
        })
    }
}

impl TryFrom<RoutineRow> for Routine {
    type Error = RepositoryError;

    fn try_from(row: RoutineRow) -> Result<Self, Self::Error> {
        let work = match (row.task, row.template_id) {
            (Some(task), _) => {
                let shape: TaskShape =
                    serde_json::from_str(&task).map_err(|e| corrupt("routine task", e))?;
                RoutineWork::Task(Box::new(RoutineTask::try_from(shape)?))
            }
            (None, Some(template)) => RoutineWork::Template(TemplateId::from_uuid(template.0)),
            (None, None) => return Err(corrupt("routine", "neither a task nor a template")),
        };
        let owner = match (row.owner_agent_id, row.owner_user_id) {
            (Some(agent), _) => Author::Agent(AgentId::from_uuid(agent.0)),
            (None, Some(user)) => Author::User(UserId::from_uuid(user.0)),
            (None, None) => return Err(corrupt("routine", "no owner")),
        };
        Ok(Self {
            id: RoutineId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            name: RoutineName::stored(row.name),
            schedule: Schedule::stored(&row.schedule, &row.timezone)
                .map_err(|e| corrupt("routine schedule", e))?,
            work,
            enabled: row.enabled,
            catch_up: CatchUp::parse(&row.catch_up)
                .ok_or_else(|| corrupt("routine catch-up", &row.catch_up))?,
            owner,
            next_run_at: row.next_run_at.map(|t| t.0),
            last_run_at: row.last_run_at.map(|t| t.0),
            last_task_id: row.last_task_id.map(|id| TaskId::from_uuid(id.0)),
            last_error: row.last_error,
            paused_reason: row.paused_reason,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
            version: row.version,
        })
    }
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = routine_firings, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct FiringRow {
    pub routine_id: DbUuid,
    pub org_id: DbUuid,
    pub due_at: DbTime,
    pub task_id: DbUuid,
    pub fired_at: DbTime,
}

impl From<&RoutineFiring> for FiringRow {
    fn from(firing: &RoutineFiring) -> Self {
        Self {
            routine_id: db_uuid(firing.routine_id),
            org_id: db_uuid(firing.org_id),
            due_at: DbTime(firing.due_at),
            task_id: db_uuid(firing.task_id),
            fired_at: DbTime(firing.fired_at),
        }
    }
}
