//! The tools of projects (issue 66): create, list, read with progress, edit and archive
//! a project. Each answers the JSON of its route.

use muster_domain::model::{Actor, ProjectId};
use serde_json::{Map, Value};

use super::calls::{answer, data, id, no_more, read, read_optional};
use crate::dto::paging::PageResponse;
use crate::dto::projects::{
    CreateProjectRequest, ListProjectsQuery, PatchProjectRequest, ProjectResponse,
};
use crate::dto::task_links::EmptyRequest;
use crate::error::ApiError;
use crate::state::AppState;

/// Runs the project tool `name` as `actor`: the JSON the matching route answers.
pub(super) async fn call(
    state: &AppState,
    actor: &Actor,
    name: &str,
    mut args: Map<String, Value>,
) -> Result<Value, ApiError> {
    let projects = &state.projects;
    match name {
        "create_project" => {
            let new = read::<CreateProjectRequest>(args)?.into_new_project()?;
            data(ProjectResponse::from(projects.create(actor, new).await?))
        }
        "list_projects" => {
            let query: ListProjectsQuery = read(args)?;
            let page = projects.list(actor, query.status, query.page()?).await?;
            answer(&PageResponse::of(page, ProjectResponse::from))
        }
        "get_project" => {
            let id = id::<ProjectId>(&mut args)?;
            no_more(&args)?;
            data(ProjectResponse::from(projects.view(actor, id).await?))
        }
        "update_project" => {
            let id = id::<ProjectId>(&mut args)?;
            let patch = read::<PatchProjectRequest>(args)?.into_patch()?;
            data(ProjectResponse::from(
                projects.update(actor, id, patch).await?,
            ))
        }
        "archive_project" => {
            let id = id::<ProjectId>(&mut args)?;
            read_optional::<EmptyRequest>(args)?;
            data(ProjectResponse::from(projects.archive(actor, id).await?))
        }
        _ => super::routine_calls::call(state, actor, name, args).await,
    }
}
