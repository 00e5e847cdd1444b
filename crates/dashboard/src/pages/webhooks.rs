//! Webhooks: the outbound hooks with their health, each with its delivery log and a
//! test button; and the inbound keys that turn other systems' calls into tasks.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use maud::{Markup, html};
use muster_domain::model::{DeliveryAttempt, Webhook, WebhookId};
use muster_domain::policy;
use muster_http::AppState;

use super::uuid_of;
use crate::csrf::{Nothing, Posted};
use crate::layout::{Section, action_button, not_shown, page, respond_page, when};
use crate::refusal::Refusal;
use crate::session::Viewer;

/// Log lines shown on a hook's page.
const LOG_SHOWN: u32 = 50;

fn health(hook: &Webhook) -> Markup {
    html! {
        @if !hook.enabled { span.status-suspended { "switched off" } }
        @else if hook.consecutive_failures > 0 {
            span.status-pending { (hook.consecutive_failures) " failures in a row" }
        } @else { span.status-active { "healthy" } }
    }
}

/// `GET /ui/webhooks`.
pub(crate) async fn show(state: Data<AppState>, viewer: Viewer) -> HttpResponse {
    let loaded = async {
        let hooks = state.webhooks.list(&viewer.actor).await?;
        let keys = state.inbound.list(&viewer.actor).await?;
        Ok::<_, Refusal>((hooks, keys))
    };
    let (content, notice) = match loaded.await {
        Ok((hooks, keys)) => {
            let hooks: Vec<_> = hooks.into_iter().filter(Webhook::is_own).collect();
            let content = html! {
                section aria-labelledby="out-h" {
                    h2 #out-h { "Outbound webhooks (" (hooks.len()) ")" }
                    @if hooks.is_empty() { p { "None registered (POST /webhooks)." } }
                    @else {
                        div.table-wrap { table {
                            thead { tr { th { "Name" } th { "URL" } th { "Type" } th { "Events" } th { "Health" } } }
                            tbody {
                                @for hook in &hooks {
                                    tr {
                                        td { a href={"/ui/webhooks/" (hook.id)} { (hook.name.as_str()) } }
                                        td { code { (hook.url.as_str()) } }
                                        td { (hook.hook_type.as_str()) }
                                        td { (hook.events.as_slice().join(", ")) }
                                        td { (health(hook)) }
                                    }
                                }
                            }
                        } }
                    }
                }
                section aria-labelledby="in-h" {
                    h2 #in-h { "Inbound keys (" (keys.len()) ")" }
                    @if keys.is_empty() { p { "None (POST /inbound-webhooks)." } }
                    @else {
                        div.table-wrap { table {
                            thead { tr { th { "Name" } th { "Key" } th { "Default priority" } th { "Enabled" } th { "Last used" } } }
                            tbody {
                                @for key in &keys {
                                    tr {
                                        td { (key.name.as_str()) }
                                        td { code { (key.key) } }
                                        td { (key.default_priority.as_str()) }
                                        td { @if key.enabled { "yes" } @else { "no" } }
                                        td { @match key.last_used_at { Some(at) => (when(at)), None => "never" } }
                                    }
                                }
                            }
                        } }
                    }
                }
            };
            (content, None)
        }
        Err(refusal) => (html! {}, Some(refusal)),
    };
    respond_page(
        notice.as_ref(),
        page(
            Some(&viewer),
            "Webhooks",
            Section::Webhooks,
            notice.as_ref(),
            &content,
        ),
    )
}

fn log(attempts: &[DeliveryAttempt], total: u64) -> Markup {
    html! {
        p { (total) " calls recorded; the newest " (attempts.len()) " shown." }
        div.table-wrap { table.log {
            thead { tr { th { "When" } th { "Event" } th { "Attempt" } th { "Status" } th { "Time" } th { "Error" } } }
            tbody {
                @for a in attempts {
                    tr {
                        td { (when(a.created_at)) }
                        td { code { (a.event_type) } }
                        td { (a.attempt) }
                        td { @match a.status_code { Some(s) => (s), None => "—" } }
                        td { (a.duration_ms) " ms" }
                        td { @if let Some(e) = &a.error { (e) } }
                    }
                }
            }
        } }
    }
}

async fn hook_page(
    state: &AppState,
    viewer: &Viewer,
    id: WebhookId,
    notice: Option<&Refusal>,
    tested: Option<&str>,
) -> HttpResponse {
    let loaded = async {
        let hook = state.webhooks.get(&viewer.actor, id).await?;
        let (attempts, total) = state
            .webhooks
            .attempts(&viewer.actor, id, Some(LOG_SHOWN), 0)
            .await?;
        Ok::<_, Refusal>((hook, attempts, total))
    };
    let (hook, attempts, total) = match loaded.await {
        Ok(loaded) => loaded,
        // The action's refusal, when there was one, says more than the reload's.
        Err(refusal) => return missing(viewer, notice.unwrap_or(&refusal)),
    };
    let content = html! {
        p { a href="/ui/webhooks" { "← Webhooks" } }
        @if let Some(tested) = tested { p.notice.ok role="status" { (tested) } }
        dl.fields {
            dt { "URL" } dd { code { (hook.url.as_str()) } }
            dt { "Type" } dd { (hook.hook_type.as_str()) }
            dt { "Events" } dd { (hook.events.as_slice().join(", ")) }
            dt { "Health" } dd { (health(&hook)) }
            @if let Some(error) = &hook.last_error { dt { "Last error" } dd { (error) } }
            dt { "Registered" } dd { (when(hook.created_at)) }
        }
        @if policy::may_manage_webhooks(&viewer.actor).is_ok() {
            (action_button(viewer, &format!("/ui/webhooks/{}/test", hook.id), "Send a test delivery"))
        }
        h2 { "Delivery log" }
        (log(&attempts, total))
    };
    respond_page(
        notice,
        page(
            Some(viewer),
            hook.name.as_str(),
            Section::Webhooks,
            notice,
            &content,
        ),
    )
}

/// The page for a hook that cannot be shown (a malformed id, or none of the org's).
fn missing(viewer: &Viewer, refusal: &Refusal) -> HttpResponse {
    let back = ("/ui/webhooks", "Back to the webhooks");
    not_shown(viewer, "Webhook", Section::Webhooks, back, refusal)
}

fn hook_id(raw: &str) -> Result<WebhookId, Refusal> {
    uuid_of("webhook id", raw).map(WebhookId::from_uuid)
}

/// `GET /ui/webhooks/{id}`.
pub(crate) async fn hook(state: Data<AppState>, viewer: Viewer, raw: Path<String>) -> HttpResponse {
    match hook_id(&raw) {
        Ok(id) => hook_page(&state, &viewer, id, None, None).await,
        Err(refusal) => missing(&viewer, &refusal),
    }
}

/// `POST /ui/webhooks/{id}/test`: one signed test call, its outcome shown on the page.
pub(crate) async fn test(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    _: Posted<Nothing>,
) -> HttpResponse {
    let id = match hook_id(&raw) {
        Ok(id) => id,
        Err(refusal) => return missing(&viewer, &refusal),
    };
    match state.webhooks.test(&viewer.actor, id).await {
        Ok(outcome) if outcome.delivered => {
            let said = format!(
                "Test delivered: HTTP {} in {} ms.",
                outcome.status_code.unwrap_or_default(),
                outcome.duration_ms
            );
            hook_page(&state, &viewer, id, None, Some(&said)).await
        }
        Ok(outcome) => {
            let refusal = Refusal {
                status: StatusCode::OK,
                code: None,
                message: format!(
                    "Test not delivered: {}",
                    outcome.error.unwrap_or_else(|| match outcome.status_code {
                        Some(code) => format!("HTTP {code}"),
                        None => "no answer".to_owned(),
                    })
                ),
            };
            hook_page(&state, &viewer, id, Some(&refusal), None).await
        }
        Err(err) => hook_page(&state, &viewer, id, Some(&Refusal::from(err)), None).await,
    }
}
