//! `/routines` shapes (issue 66, decision D-108).

use muster_domain::ValidationError;
use muster_domain::model::{
    AgentId, CatchUp, Description, Metadata, ProjectId, Routine, RoutineName, RoutineTask,
    RoutineWork, Tags, TaskPriority, TemplateId, Title,
};
use muster_domain::rules::reward::reward_amount;
use muster_domain::rules::schedule::Schedule;
use muster_domain::service::{NewRoutine, PageRequest, RoutinePatch};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::nullable::Patch;

/// The task a routine creates: the fields of `POST /tasks` a routine may set.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RoutineTaskBody {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    pub title: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 100_000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<TaskPriority>,
    #[cfg_attr(feature = "openapi", schema(max_items = 50, inline))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee_id: Option<Uuid>,
    /// Credits escrowed from the organization's treasury for each task; left out, the
    /// organization's default reward when the treasury can fund it.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1_000_000_000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_required: Option<bool>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// The project each task joins (an active one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Uuid>,
}

impl RoutineTaskBody {
    /// Validates every field into the domain's task shape.
    pub fn into_task(self) -> Result<RoutineTask, ValidationError> {
        Ok(RoutineTask {
            description: self.description.map(Description::new).transpose()?,
            priority: self.priority.unwrap_or_default(),
            tags: Tags::new(self.tags.unwrap_or_default())?,
            assignee_id: self.assignee_id.map(AgentId::from_uuid),
            reward: self.reward.map(reward_amount).transpose()?,
            approval_required: self.approval_required.unwrap_or(false),
            metadata: self
                .metadata
                .map_or_else(|| Ok(Metadata::default()), Metadata::new)?,
            project_id: self.project_id.map(ProjectId::from_uuid),
            ..RoutineTask::new(Title::new(&self.title)?)
        })
    }
}

impl From<&RoutineTask> for RoutineTaskBody {
    fn from(task: &RoutineTask) -> Self {
        Self {
            title: task.title.as_str().to_owned(),
            description: task.description.as_ref().map(|d| d.as_str().to_owned()),
            priority: Some(task.priority),
            tags: Some(task.tags.as_slice().to_vec()),
            assignee_id: task.assignee_id.map(AgentId::as_uuid),
            reward: task.reward,
            approval_required: Some(task.approval_required),
            metadata: Some(task.metadata.to_value()),
            project_id: task.project_id.map(ProjectId::as_uuid),
        }
    }
}

/// The work of a create or a patch: a task shape or a template, not both.
fn work_of(
    task: Option<RoutineTaskBody>,
    template: Option<Uuid>,
) -> Result<Option<RoutineWork>, ValidationError> {
    match (task, template) {
        (Some(_), Some(_)) => Err(ValidationError::new(
            "give either task or templateId, not both",
        )),
        (Some(task), None) => Ok(Some(RoutineWork::Task(Box::new(task.into_task()?)))),
        (None, Some(id)) => Ok(Some(RoutineWork::Template(TemplateId::from_uuid(id)))),
        (None, None) => Ok(None),
    }
}

/// Body of `POST /routines`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateRoutineRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
    pub name: String,
    /// A cron expression: five fields (minute hour day-of-month month day-of-week) or six
    /// (seconds first), such as `0 9 * * MON-FRI`.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 9, max_length = 200, example = "0 9 * * MON-FRI")
    )]
    pub schedule: String,
    /// An IANA time zone name (default `UTC`), such as `Europe/Berlin`.
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 64, example = "Europe/Berlin")
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// The task each firing creates (or give `templateId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<RoutineTaskBody>,
    /// A template of the organization each firing makes its task from (or give `task`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_id: Option<Uuid>,
    /// Whether it fires (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// What to do with the due times missed while the service was down (default `one`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catch_up: Option<CatchUp>,
}

impl CreateRoutineRequest {
    /// Validates every field into the domain's types.
    pub fn into_new_routine(self) -> Result<NewRoutine, ValidationError> {
        let work = work_of(self.task, self.template_id)?
            .ok_or_else(|| ValidationError::new("give either task or templateId"))?;
        Ok(NewRoutine {
            name: RoutineName::new(&self.name)?,
            schedule: Schedule::new(
                &self.schedule,
                self.timezone.as_deref().unwrap_or(Schedule::UTC),
            )?,
            work,
            enabled: self.enabled.unwrap_or(true),
            catch_up: self.catch_up.unwrap_or_default(),
        })
    }
}

/// Body of `PATCH /routines/:id`: every field optional, none nullable.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchRoutineRequest {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = String, min_length = 1, max_length = 255))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub name: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = String, min_length = 9, max_length = 200))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub schedule: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = String, max_length = 64))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub timezone: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = RoutineTaskBody))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub task: Patch<RoutineTaskBody>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = uuid::Uuid))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub template_id: Patch<Uuid>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = bool))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub enabled: Patch<bool>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = CatchUp))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub catch_up: Patch<CatchUp>,
}

impl PatchRoutineRequest {
    /// Validates every given field into the domain's patch.
    pub fn into_patch(self) -> Result<RoutinePatch, ValidationError> {
        Ok(RoutinePatch {
            name: self
                .name
                .required("name")?
                .map(|n| RoutineName::new(&n))
                .transpose()?,
            schedule: self.schedule.required("schedule")?,
            timezone: self.timezone.required("timezone")?,
            work: work_of(
                self.task.required("task")?,
                self.template_id.required("templateId")?,
            )?,
            enabled: self.enabled.required("enabled")?,
            catch_up: self.catch_up.required("catchUp")?,
        })
    }
}

/// Query of `GET /routines`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListRoutinesQuery {
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `meta.nextCursor` of the previous page.
    #[cfg_attr(feature = "openapi", param(value_type = Option<uuid::Uuid>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl ListRoutinesQuery {
    /// The page asked for (the use case checks the range of `limit`).
    pub fn page(&self) -> Result<PageRequest<muster_domain::model::RoutineId>, ValidationError> {
        super::paging::page_request(self.limit, self.cursor.as_deref())
    }
}

/// A routine on the wire.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RoutineResponse {
    pub id: Uuid,
    pub org_id: Uuid,
    pub name: String,
    pub schedule: String,
    pub timezone: String,
    /// The task each firing creates; `null` for a template routine.
    pub task: Option<RoutineTaskBody>,
    /// The template each firing makes its task from; `null` for a task routine.
    pub template_id: Option<Uuid>,
    pub enabled: bool,
    pub catch_up: CatchUp,
    /// The agent or user whose permissions its tasks are created with.
    pub owner_id: Uuid,
    /// When it fires next; `null` while it is off.
    #[serde(with = "super::time::option")]
    pub next_run_at: Option<OffsetDateTime>,
    /// The due time it last fired for.
    #[serde(with = "super::time::option")]
    pub last_run_at: Option<OffsetDateTime>,
    /// The task it last created.
    pub last_task_id: Option<Uuid>,
    /// Why its last firing created no task.
    pub last_error: Option<String>,
    /// Why the service switched it off (its owner may no longer create tasks); cleared
    /// when it is switched on again.
    pub paused_reason: Option<String>,
    #[serde(with = "super::time::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "super::time::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl From<Routine> for RoutineResponse {
    fn from(routine: Routine) -> Self {
        let (task, template_id) = match &routine.work {
            RoutineWork::Task(task) => (Some(RoutineTaskBody::from(task.as_ref())), None),
            RoutineWork::Template(id) => (None, Some(id.as_uuid())),
        };
        Self {
            id: routine.id.as_uuid(),
            org_id: routine.org_id.as_uuid(),
            name: routine.name.as_str().to_owned(),
            schedule: routine.schedule.expression().to_owned(),
            timezone: routine.schedule.timezone().to_owned(),
            task,
            template_id,
            enabled: routine.enabled,
            catch_up: routine.catch_up,
            owner_id: routine.owner.as_uuid(),
            next_run_at: routine.next_run_at,
            last_run_at: routine.last_run_at,
            last_task_id: routine
                .last_task_id
                .map(muster_domain::model::TaskId::as_uuid),
            last_error: routine.last_error,
            paused_reason: routine.paused_reason,
            created_at: routine.created_at,
            updated_at: routine.updated_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CreateRoutineRequest, PatchRoutineRequest};

    fn create(json: &str) -> Result<(), String> {
        let body: CreateRoutineRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
        body.into_new_routine()
            .map(|_| ())
            .map_err(|e| e.message().to_owned())
    }

    #[test]
    fn a_routine_needs_a_schedule_and_one_kind_of_work() {
        let task = r#""task": {"title": "Triage"}"#;
        assert_eq!(
            create(&format!(
                r#"{{"name": "T", "schedule": "0 9 * * *", {task}}}"#
            )),
            Ok(())
        );
        let both = format!(
            r#"{{"name": "T", "schedule": "0 9 * * *", {task}, "templateId": "{}"}}"#,
            uuid::Uuid::nil()
        );
        assert_eq!(
            create(&both),
            Err("give either task or templateId, not both".into())
        );
        assert_eq!(
            create(r#"{"name": "T", "schedule": "0 9 * * *"}"#),
            Err("give either task or templateId".into())
        );
        assert!(create(&format!(r#"{{"name": "T", "schedule": "9 * *", {task}}}"#)).is_err());
        assert!(
            create(&format!(
                r#"{{"name": "T", "schedule": "0 9 * * *", "timezone": "Nowhere", {task}}}"#
            ))
            .is_err()
        );
        assert!(
            create(r#"{"name": "T", "schedule": "0 9 * * *", "task": {"title": "x", "owner": 1}}"#)
                .is_err()
        );
    }

    #[test]
    fn a_patch_refuses_null() {
        let patch: PatchRoutineRequest = serde_json::from_str(r#"{"enabled": null}"#).unwrap();
        assert_eq!(
            patch
                .into_patch()
                .map(|_| ())
                .map_err(|e| e.message().to_owned()),
            Err("enabled must not be null".to_owned())
        );
    }
}
