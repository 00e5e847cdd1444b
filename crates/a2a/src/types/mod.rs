//! The protocol's JSON shapes. Requests accept the proto's snake-case field names as
//! well as camel-case ones (as proto3 JSON parsers do) and ignore fields they do not know;
//! answers leave out empty optional fields.

mod card;
mod message;
mod push;
mod requests;
mod task;

pub use card::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentProvider, AgentSkill,
    HttpAuthSecurityScheme, SecurityRequirement, SecurityScheme,
};
pub use message::{Message, Part, Role};
pub use push::{
    AuthenticationInfo, ListPushConfigsRequest, ListPushConfigsResponse, PushConfigRequest,
    TaskPushNotificationConfig,
};
pub use requests::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    SendMessageConfiguration, SendMessageRequest, SubscribeToTaskRequest,
};
pub use task::{
    Artifact, SendMessageResponse, StreamResponse, Task, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
