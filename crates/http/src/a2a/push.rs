//! The push notification config operations, once for both bindings. A config is an
//! outbound webhook scoped to its task (the webhooks' policy, target rules, signing and
//! retries); its token and credentials are write-only.

use muster_a2a::types::{
    AuthenticationInfo, ListPushConfigsRequest, ListPushConfigsResponse, PushConfigRequest,
    TaskPushNotificationConfig,
};
use muster_a2a::{A2aError, ErrorKind};
use muster_domain::model::{Actor, HookUrl, PushAuth, PushConfigId, TaskId, Webhook};
use muster_domain::service::NewPush;

use super::ops::{find, no_tenant, refusal};
use crate::state::AppState;

/// The config to set, checked field by field.
pub(crate) fn new_push(config: &TaskPushNotificationConfig) -> Result<NewPush, A2aError> {
    no_tenant(config.tenant.as_ref())?;
    let invalid =
        |field: &str, e: &dyn std::fmt::Display| A2aError::invalid_params(format!("{field}: {e}"));
    let config_id = config
        .id
        .as_deref()
        .filter(|id| !id.is_empty())
        .map(PushConfigId::new)
        .transpose()
        .map_err(|e| invalid("id", &e))?;
    let url = HookUrl::new(&config.url).map_err(|e| invalid("url", &e))?;
    let auth = config
        .authentication
        .as_ref()
        .map(|auth| PushAuth::new(&auth.scheme, auth.credentials.as_deref()))
        .transpose()
        .map_err(|e| A2aError::invalid_params(e.to_string()))?;
    Ok(NewPush {
        config_id,
        url,
        token: config.token.clone().filter(|token| !token.is_empty()),
        auth,
    })
}

/// `CreateTaskPushNotificationConfig`: sets the config on its task (replacing the one
/// with its id, if any).
pub(super) async fn create(
    state: &AppState,
    actor: &Actor,
    config: &TaskPushNotificationConfig,
) -> Result<TaskPushNotificationConfig, A2aError> {
    let new = new_push(config)?;
    let task = find(state, actor, &config.task_id).await?;
    set(state, actor, task.id, new).await
}

/// Sets `new` on `task` and answers it.
pub(super) async fn set(
    state: &AppState,
    actor: &Actor,
    task: TaskId,
    new: NewPush,
) -> Result<TaskPushNotificationConfig, A2aError> {
    let hook = state
        .webhooks
        .set_push(actor, task, new)
        .await
        .map_err(refusal)?;
    view(state, &hook)
}

/// `GetTaskPushNotificationConfig`.
pub(super) async fn get(
    state: &AppState,
    actor: &Actor,
    request: &PushConfigRequest,
) -> Result<TaskPushNotificationConfig, A2aError> {
    no_tenant(request.tenant.as_ref())?;
    let task = find(state, actor, &request.task_id).await?;
    let missing = || {
        A2aError::new(
            ErrorKind::TaskNotFound,
            format!(
                "task {} has no push notification config {}",
                request.task_id, request.id
            ),
        )
    };
    let Ok(id) = PushConfigId::new(&request.id) else {
        return Err(missing());
    };
    let hook = state
        .webhooks
        .push_config(actor, task.id, &id)
        .await
        .map_err(refusal)?
        .ok_or_else(missing)?;
    view(state, &hook)
}

/// `ListTaskPushNotificationConfigs`: every config of the task, on one page.
pub(super) async fn list(
    state: &AppState,
    actor: &Actor,
    request: &ListPushConfigsRequest,
) -> Result<ListPushConfigsResponse, A2aError> {
    no_tenant(request.tenant.as_ref())?;
    if request.page_size.is_some_and(|size| size < 0) {
        return Err(A2aError::invalid_params("pageSize must not be negative"));
    }
    if request.page_token.as_deref().is_some_and(|t| !t.is_empty()) {
        return Err(A2aError::invalid_params(
            "pageToken is not one this server gave: every config is on the first page",
        ));
    }
    let task = find(state, actor, &request.task_id).await?;
    let hooks = state
        .webhooks
        .push_configs(actor, task.id)
        .await
        .map_err(refusal)?;
    Ok(ListPushConfigsResponse {
        configs: hooks
            .iter()
            .map(|hook| view(state, hook))
            .collect::<Result<_, _>>()?,
        next_page_token: String::new(),
    })
}

/// `DeleteTaskPushNotificationConfig`: idempotent, an unknown config is already gone.
pub(super) async fn delete(
    state: &AppState,
    actor: &Actor,
    request: &PushConfigRequest,
) -> Result<(), A2aError> {
    no_tenant(request.tenant.as_ref())?;
    let task = find(state, actor, &request.task_id).await?;
    let Ok(id) = PushConfigId::new(&request.id) else {
        return Ok(());
    };
    state
        .webhooks
        .delete_push(actor, task.id, id)
        .await
        .map_err(refusal)
}

/// A config as answered: its token and credentials left out.
fn view(state: &AppState, hook: &Webhook) -> Result<TaskPushNotificationConfig, A2aError> {
    let Some(push) = &hook.push else {
        return Err(A2aError::new(
            ErrorKind::Internal,
            "a webhook was read as a push config",
        ));
    };
    let scheme = state.webhooks.push_scheme(hook).map_err(refusal)?;
    Ok(TaskPushNotificationConfig {
        tenant: None,
        id: Some(push.config_id.as_str().to_owned()),
        task_id: push.task_id.to_string(),
        url: hook.url.as_str().to_owned(),
        token: None,
        authentication: scheme.map(|scheme| AuthenticationInfo {
            scheme,
            credentials: None,
        }),
    })
}
