use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Message, Task, TaskPushNotificationConfig};

/// How the sender wants a message handled.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client accepts in answers.
    #[serde(default, alias = "accepted_output_modes")]
    pub accepted_output_modes: Vec<String>,
    /// The most messages of history to send back.
    #[serde(default, alias = "history_length")]
    pub history_length: Option<i32>,
    /// Answer at once rather than when the task stops. Muster always answers at once:
    /// its tasks are worked on by agents and people over minutes or days.
    #[serde(default, alias = "return_immediately")]
    pub return_immediately: Option<bool>,
    /// A push notification config for the task the message creates (its `taskId`
    /// left empty). v1.0.0 called it `pushNotificationConfig`.
    #[serde(
        default,
        alias = "task_push_notification_config",
        alias = "pushNotificationConfig",
        alias = "push_notification_config"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
}

/// `SendMessage` and `SendStreamingMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// A tenant (Muster has none: refused when set).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The message.
    pub message: Message,
    /// How to handle it.
    #[serde(default)]
    pub configuration: Option<SendMessageConfiguration>,
    /// Extra information.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// `GetTask`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// A tenant (refused when set).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The task.
    #[serde(default)]
    pub id: String,
    /// The most messages of history to send.
    #[serde(default, alias = "history_length")]
    pub history_length: Option<i32>,
}

/// `CancelTask`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// A tenant (refused when set).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The task.
    #[serde(default)]
    pub id: String,
    /// Extra information.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// `SubscribeToTask`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// A tenant (refused when set).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The task.
    #[serde(default)]
    pub id: String,
}

/// `ListTasks`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// A tenant (refused when set).
    #[serde(default)]
    pub tenant: Option<String>,
    /// Only the tasks of this conversation (that task and its sub-tasks).
    #[serde(default, alias = "context_id")]
    pub context_id: Option<String>,
    /// Only tasks in this state.
    #[serde(default)]
    pub status: Option<String>,
    /// Tasks per page, 1 to 100 (50 when left out).
    #[serde(default, alias = "page_size")]
    pub page_size: Option<i32>,
    /// The `nextPageToken` of the previous page.
    #[serde(default, alias = "page_token")]
    pub page_token: Option<String>,
    /// The most messages of history per task (none when left out).
    #[serde(default, alias = "history_length")]
    pub history_length: Option<i32>,
    /// Only tasks whose status changed at or after this instant (RFC 3339).
    #[serde(default, alias = "status_timestamp_after")]
    pub status_timestamp_after: Option<String>,
    /// Whether to send each task's artifacts.
    #[serde(default, alias = "include_artifacts")]
    pub include_artifacts: Option<bool>,
}

/// The answer to `ListTasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// This page, most recently changed first.
    pub tasks: Vec<Task>,
    /// The token of the next page; empty on the last.
    pub next_page_token: String,
    /// The page size used.
    pub page_size: i32,
    /// How many tasks match in all.
    pub total_size: i32,
}
