//! The tools of routines (decision D-108): create, list, read, change, delete and run a
//! routine. Each answers the JSON of its route.

use muster_domain::model::{Actor, RoutineId};
use serde_json::{Map, Value};

use super::calls::{answer, data, id, no_more, read, read_optional};
use crate::dto::paging::PageResponse;
use crate::dto::routines::{
    CreateRoutineRequest, ListRoutinesQuery, PatchRoutineRequest, RoutineResponse,
};
use crate::dto::task_links::EmptyRequest;
use crate::dto::tasks::TaskResponse;
use crate::error::ApiError;
use crate::state::AppState;

/// Runs the routine tool `name` as `actor`: the JSON the matching route answers.
pub(super) async fn call(
    state: &AppState,
    actor: &Actor,
    name: &str,
    mut args: Map<String, Value>,
) -> Result<Value, ApiError> {
    let routines = &state.routines;
    match name {
        "create_routine" => {
            let new = read::<CreateRoutineRequest>(args)?.into_new_routine()?;
            data(RoutineResponse::from(routines.create(actor, new).await?))
        }
        "list_routines" => {
            let query: ListRoutinesQuery = read(args)?;
            let page = routines.list(actor, query.page()?).await?;
            answer(&PageResponse::of(page, RoutineResponse::from))
        }
        "get_routine" => {
            let id = id::<RoutineId>(&mut args)?;
            no_more(&args)?;
            data(RoutineResponse::from(routines.get(actor, id).await?))
        }
        "update_routine" => {
            let id = id::<RoutineId>(&mut args)?;
            let patch = read::<PatchRoutineRequest>(args)?.into_patch()?;
            data(RoutineResponse::from(
                routines.update(actor, id, patch).await?,
            ))
        }
        "delete_routine" => {
            let id = id::<RoutineId>(&mut args)?;
            no_more(&args)?;
            routines.delete(actor, id).await?;
            answer(&serde_json::json!({"deleted": true}))
        }
        "run_routine" => {
            let id = id::<RoutineId>(&mut args)?;
            read_optional::<EmptyRequest>(args)?;
            data(TaskResponse::from(routines.run_now(actor, id).await?))
        }
        other => Err(ApiError::bad_request(format!("unknown tool {other}"))),
    }
}
