use serde::{Deserialize, Serialize};

/// What a push receiver is told in `Authorization`.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// An HTTP authentication scheme (`Bearer`, `Basic`, ...).
    #[serde(default)]
    pub scheme: String,
    /// The credentials sent with it; never sent back by this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

impl std::fmt::Debug for AuthenticationInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthenticationInfo")
            .field("scheme", &self.scheme)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// A push notification config of a task (`CreateTaskPushNotificationConfig`'s params
/// and every answer about configs). The token and credentials are write-only: answers
/// leave them out.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// A tenant (Muster has none: refused when set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The config's id within its task (the server picks one when left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The task (empty when the config comes with `SendMessage`).
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// Where the task's updates are sent (a `POST` each).
    #[serde(default)]
    pub url: String,
    /// Sent back in `X-A2A-Notification-Token` with every push.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Sent in `Authorization` with every push.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

impl std::fmt::Debug for TaskPushNotificationConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskPushNotificationConfig")
            .field("id", &self.id)
            .field("task_id", &self.task_id)
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("authentication", &self.authentication)
            .finish_non_exhaustive()
    }
}

/// `GetTaskPushNotificationConfig` and `DeleteTaskPushNotificationConfig`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushConfigRequest {
    /// A tenant (refused when set).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The task.
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// The config.
    #[serde(default)]
    pub id: String,
}

/// `ListTaskPushNotificationConfigs`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPushConfigsRequest {
    /// A tenant (refused when set).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The task.
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// Configs per page (a task has at most 10: one page holds them all).
    #[serde(default, alias = "page_size")]
    pub page_size: Option<i32>,
    /// The `nextPageToken` of the previous page (always empty here).
    #[serde(default, alias = "page_token")]
    pub page_token: Option<String>,
}

/// The answer to `ListTaskPushNotificationConfigs`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPushConfigsResponse {
    /// The task's configs, oldest first.
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Always empty: every config is on the one page.
    pub next_page_token: String,
}
