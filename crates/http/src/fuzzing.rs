//! Entry points for the cargo-fuzz targets in `fuzz/`: the readers of what callers send
//! that are private otherwise. Not an API: hidden from the docs, changed at will.

use muster_a2a::mapping;
use muster_a2a::types::{CancelTaskRequest, SendMessageRequest, TaskPushNotificationConfig};

/// An A2A JSON-RPC request as `POST /a2a/jsonrpc` reads it, before any method runs;
/// `Err` holds the refusal's JSON-RPC code.
pub fn a2a_jsonrpc_request(body: &[u8]) -> Result<(), i64> {
    crate::a2a::jsonrpc::read(body)
        .map(drop)
        .map_err(|(_, error)| error.kind.code())
}

/// An MCP message as `POST /mcp` reads it; `Err` holds the refusal's JSON-RPC code.
pub fn mcp_message(body: &[u8]) -> Result<(), i32> {
    crate::mcp::read_message(body)
        .map(drop)
        .map_err(|refused| refused.error.code.0)
}

/// A `SendMessage` body of the HTTP+JSON binding, read and checked as far as it goes
/// without a database: the body, its push config, and the task its message would
/// create. `Err` holds the refusal's HTTP status.
pub fn a2a_send_message(body: &[u8]) -> Result<(), u16> {
    let request: SendMessageRequest = crate::a2a::rest::body(body).map_err(status)?;
    if let Some(config) = request
        .configuration
        .as_ref()
        .and_then(|c| c.task_push_notification_config.as_ref())
    {
        crate::a2a::push::new_push(config).map_err(status)?;
    }
    mapping::new_task(&request.message).map_err(status)?;
    Ok(())
}

/// A `CancelTask` body of the HTTP+JSON binding; `Err` holds the refusal's HTTP status.
pub fn a2a_cancel(body: &[u8]) -> Result<(), u16> {
    crate::a2a::rest::body::<CancelTaskRequest>(body)
        .map(drop)
        .map_err(status)
}

/// A push notification config body, read and checked; `Err` holds the refusal's HTTP
/// status.
pub fn a2a_push_config(body: &[u8]) -> Result<(), u16> {
    let config: TaskPushNotificationConfig = crate::a2a::rest::body(body).map_err(status)?;
    crate::a2a::push::new_push(&config)
        .map(drop)
        .map_err(status)
}

#[allow(clippy::needless_pass_by_value)]
fn status(error: muster_a2a::A2aError) -> u16 {
    error.kind.http_status()
}
