//! Every JSON request body, as the handlers read it: `parse_json` into the body's type,
//! then its validation into the domain's types; and the A2A HTTP+JSON bodies through
//! the binding's own reader and checks. Arbitrary bytes must never panic, and every
//! refusal must be a client error (4xx), never a server error.
#![no_main]

use actix_web::ResponseError;
use libfuzzer_sys::fuzz_target;
use muster_http::dto::{
    agent_money, agent_skills, agents, auth, chat, claims, guard, inbound_webhooks,
    integrations, remote_agents, routing, task_links, tasks, webhooks,
};
use muster_http::{ApiError, fuzzing, parse_json};

fn client_error(err: &ApiError) {
    assert!(
        err.status_code().is_client_error(),
        "{} for {err:?}",
        err.status_code()
    );
}

/// Parses `body` as `T`, then validates it with `convert`; both may refuse, as 4xx.
fn check<T, U, E>(body: &[u8], convert: impl FnOnce(T) -> Result<U, E>)
where
    T: serde::de::DeserializeOwned,
    E: Into<ApiError>,
{
    match parse_json::<T>(body) {
        Ok(value) => {
            if let Err(err) = convert(value) {
                client_error(&err.into());
            }
        }
        Err(err) => client_error(&err),
    }
}

/// Parses `body` as `T`, whose checks are the route's own.
fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) {
    check(body, |_: T| Ok::<_, ApiError>(()));
}

/// An A2A refusal's HTTP status must be a client error's.
fn a2a(result: Result<(), u16>) {
    if let Err(status) = result {
        assert!((400..500).contains(&status), "A2A refusal with {status}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    match which % 32 {
        0 => check(body, tasks::CreateTaskRequest::into_new_task),
        1 => check(body, tasks::PatchTaskRequest::into_patch),
        2 => check(body, tasks::TransitionRequest::into_move),
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
        23 => check(body, |r: remote_agents::RegisterRemoteRequest| {
            r.into_new("https://muster.example".to_owned())
        }),
        24 => check(body, inbound_webhooks::InboundTaskBody::into_task),
        25 => check(body, |b: claims::HeartbeatBody| b.lease()),
        26 => check(body, |r: routing::CreateTemplateRequest| r.name()),
        27 => a2a(fuzzing::a2a_send_message(body)),
        28 => a2a(fuzzing::a2a_push_config(body)),
        29 => a2a(fuzzing::a2a_cancel(body)),
        30 => {
            check(body, webhooks::CreateWebhookBody::into_new);
            check(body, webhooks::UpdateWebhookBody::into_patch);
        }
        _ => {
            parse::<auth::LoginBody>(body);
            parse::<auth::RegisterBody>(body);
            parse::<auth::RefreshBody>(body);
            parse::<auth::ProfileBody>(body);
            parse::<auth::PasswordBody>(body);
            parse::<auth::TotpSetupBody>(body);
            parse::<auth::TotpCodeBody>(body);
            parse::<auth::TotpDisableBody>(body);
            parse::<auth::CreateApiKeyBody>(body);
            parse::<agent_skills::ProficiencyRequest>(body);
            parse::<integrations::UpdateConnectionBody>(body);
            parse::<task_links::AssignRequest>(body);
            parse::<task_links::DependencyRequest>(body);
            parse::<chat::ChatMessageBody>(body);
        }
    }
});
