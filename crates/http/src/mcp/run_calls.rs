//! The tools of runs (decision D-106): the task's assignee starts its run, appends its
//! log, reports its usage and finishes it; anyone of the organization reads a run. Each
//! answers the JSON of its route, and every answer carries `stopRequested`.

use crate::request_span::current_trace_id;
use muster_domain::model::{Actor, RunId};
use serde_json::{Map, Value};

use super::calls::{answer, data, id, no_more, read, read_optional, task_id};
use crate::dto::runs::{
    FinishRunBody, LogBody, RunResponse, StartRunBody, UsageAnswerResponse, UsageBody,
};
use crate::error::ApiError;
use crate::state::AppState;

/// Runs the run tool `name` as `actor`: the JSON the matching route answers.
pub(super) async fn call(
    state: &AppState,
    actor: &Actor,
    name: &str,
    mut args: Map<String, Value>,
) -> Result<Value, ApiError> {
    let runs = &state.runs;
    match name {
        "start_run" => {
            let task = task_id(&mut args)?;
            let start = read_optional::<StartRunBody>(args)?.into_start(current_trace_id())?;
            data(RunResponse::from(runs.start(actor, task, start).await?))
        }
        "append_run_log" => {
            let id = id::<RunId>(&mut args)?;
            let lines = read::<LogBody>(args)?.into_lines()?;
            data(RunResponse::from(runs.append_log(actor, id, lines).await?))
        }
        "report_usage" => {
            let id = id::<RunId>(&mut args)?;
            let usage = read::<UsageBody>(args)?.into_usage()?;
            let recorded = runs.report_usage(actor, id, usage).await?;
            answer(&UsageAnswerResponse {
                data: recorded.run.into(),
                report: recorded.report.map(Into::into),
            })
        }
        "finish_run" => {
            let id = id::<RunId>(&mut args)?;
            let finish = read::<FinishRunBody>(args)?.into_finish()?;
            data(RunResponse::from(runs.finish(actor, id, finish).await?))
        }
        "get_run" => {
            let id = id::<RunId>(&mut args)?;
            no_more(&args)?;
            data(RunResponse::from(runs.get(actor, id).await?))
        }
        _ => super::project_calls::call(state, actor, name, args).await,
    }
}
