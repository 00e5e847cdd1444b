//! Every JSON request body, as the handlers read it: `parse_json` into the body's type,
//! then its validation into the domain's types. Arbitrary bytes must never panic, and
//! every refusal must be a client error (4xx), never a server error.
#![no_main]

use actix_web::ResponseError;
use libfuzzer_sys::fuzz_target;
use muster_http::dto::{
    agent_money, agent_skills, agents, auth, claims, guard, inbound_webhooks, integrations,
    routing, task_links, tasks, webhooks,
};
use muster_http::{ApiError, parse_json};

fn client_error(err: &ApiError) {
    assert!(
        err.status_code().is_client_error(),
        "{} for {err:?}",
        err.status_code()
    );
}

/// Parses `body` as `T`, then validates it with `convert`; both may refuse, as 4xx.
fn check<T, U>(body: &[u8], convert: impl FnOnce(T) -> Result<U, ApiError>)
where
    T: serde::de::DeserializeOwned,
{
    match parse_json::<T>(body) {
        Ok(value) => {
            if let Err(err) = convert(value) {
                client_error(&err);
            }
        }
        Err(err) => client_error(&err),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    match which % 24 {
        0 => check(body, tasks::CreateTaskRequest::into_new_task),
        1 => check(body, tasks::PatchTaskRequest::into_patch),
        2 => check(body, |t: tasks::TransitionRequest| t.reason()),
        3 => check(body, agents::RegisterRequest::into_new_agent),
        4 => check(body, agents::SpawnRequest::into_new_child),
        5 => check(body, agents::PatchAgentRequest::into_patch),
        6 => check(body, agents::ReasonRequest::reason),
        7 => check(body, agent_money::BudgetRequest::into_parts),
        8 => check(body, agent_money::AmountRequest::into_parts),
        9 => check(body, agent_money::TransferRequest::into_parts),
        10 => check(body, agent_skills::AddCapabilityRequest::into_parts),
        11 => check(body, agent_skills::MatchRequest::into_query),
        12 => check(body, agent_skills::ScoreRequest::into_change),
        13 => check(body, claims::ClaimBody::into_request),
        14 => check(body, guard::GuardRequest::into_patch),
        15 => check(body, inbound_webhooks::CreateInboundKeyBody::into_new),
        16 => check(body, inbound_webhooks::UpdateInboundKeyBody::into_patch),
        17 => check(body, inbound_webhooks::InboundBatchBody::into_tasks),
        18 => check(body, integrations::CreateConnectionBody::into_new),
        19 => check(body, routing::AutoAssignRequest::into_request),
        20 => check(body, routing::InstantiateRequest::into_overrides),
        21 => check(body, task_links::CommentRequest::into_parts),
        22 => check(body, task_links::EscalateRequest::into_escalation),
        _ => {
            check(body, webhooks::CreateWebhookBody::into_new);
            check(body, webhooks::UpdateWebhookBody::into_patch);
            check(body, |b: auth::LoginBody| Ok::<_, ApiError>(b));
            check(body, |b: auth::RegisterBody| Ok::<_, ApiError>(b));
        }
    }
});
