//! The tools about agents: an agent's balance, budget and reputation (its own when no
//! `id` is given), and spawning a child.

use muster_domain::model::{Actor, AgentId};
use muster_domain::policy;
use serde_json::{Map, Value};

use super::calls::{answer, data, no_more, read};
use crate::dto::agent_money::{BalanceResponse, BudgetResponse};
use crate::dto::agent_skills::SummaryResponse;
use crate::dto::agents::{SpawnRequest, WithSecret};
use crate::error::ApiError;
use crate::state::AppState;

/// Runs the agent tool `name` as `actor`: the JSON the matching route answers.
pub(super) async fn call(
    state: &AppState,
    actor: &Actor,
    name: &str,
    mut args: Map<String, Value>,
) -> Result<Value, ApiError> {
    let agents = &state.agents;
    match name {
        "get_balance" => {
            let id = agent_or_self(actor, &mut args)?;
            no_more(&args)?;
            let agent = agents.balance(actor, id).await?;
            data(BalanceResponse::from(&agent))
        }
        "get_budget" => {
            let id = agent_or_self(actor, &mut args)?;
            no_more(&args)?;
            data(BudgetResponse::from(agents.budget(actor, id).await?))
        }
        "get_reputation" => {
            let id = agent_or_self(actor, &mut args)?;
            no_more(&args)?;
            data(SummaryResponse::from(agents.reputation(actor, id).await?))
        }
        "spawn_agent" => {
            let new = read::<SpawnRequest>(args)?.into_new_child()?;
            let spawned = agents.spawn(actor, new).await?;
            answer(&WithSecret::spawned(spawned))
        }
        _ => super::run_calls::call(state, actor, name, args).await,
    }
}

/// The `id` argument (an agent's UUID), or the calling agent when it is left out.
fn agent_or_self(actor: &Actor, args: &mut Map<String, Value>) -> Result<AgentId, ApiError> {
    match args.remove("id") {
        Some(Value::String(id)) => crate::body::parse_uuid("id", &id).map(AgentId::from_uuid),
        Some(Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_)) => {
            Err(ApiError::bad_request("id must be a UUID"))
        }
        Some(Value::Null) | None => policy::acting_agent(actor)
            .map_err(|_| ApiError::bad_request("id is required (only an agent may leave it out)")),
    }
}
