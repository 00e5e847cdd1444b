//! `POST /mcp`: the Model Context Protocol over Streamable HTTP, stateless, answering
//! each JSON-RPC request with one JSON object.
//!
//! An MCP client authenticates exactly as on the API (an agent signs the POST, a user
//! or an API key sends a bearer token), sees the tools its credentials may use, and each
//! tool runs the use case of the route it stands for, answering that route's JSON; a
//! refusal is a tool error carrying the API's message. Messages are rmcp's model types
//! (the official Rust SDK); the transport is this route, so it shares the service's
//! port, credentials, limits and logs.

mod agent_calls;
mod calls;
mod catalog;
mod schema;

use actix_web::http::StatusCode;
use actix_web::http::header::{HOST, ORIGIN};
use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use muster_domain::model::Actor;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientJsonRpcMessage, ClientNotification, ClientRequest,
    ErrorCode, ErrorData, Implementation, InitializeResult, JsonRpcMessage, ListToolsResult,
    ProtocolVersion, ServerCapabilities, ServerJsonRpcMessage, ServerResult,
};
use serde_json::json;

use crate::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

/// The protocol revisions this endpoint speaks (all answer the same way).
const VERSIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
];

const INSTRUCTIONS: &str = "Muster coordinates work between agents and people. Claim the \
next task with claim_task, keep its lease with heartbeat_task, report with comment_on_task \
and finish with transition_task (status done, or review when it needs approval). Results \
are the JSON of Muster's HTTP API.";

/// One JSON-RPC 2.0 message, as the document describes it (the protocol defines each
/// method's `params`).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // documentation only: the body is read as rmcp's message types
pub(crate) struct RpcMessage {
    /// Always `2.0`.
    #[schema(pattern = "^2\\.0$")]
    jsonrpc: String,
    /// The request's id, an integer or a string; left out on a notification.
    #[schema(schema_with = rpc_id)]
    id: Option<i64>,
    /// The method: `initialize`, `ping`, `tools/list`, `tools/call`, or a notification's.
    #[schema(min_length = 1, max_length = 100)]
    method: String,
    /// Its parameters.
    #[schema(value_type = Option<Object>)]
    params: Option<serde_json::Value>,
}

/// A JSON-RPC id: an integer (64-bit) or a string (null, or left out, on a notification).
fn rpc_id() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{
        KnownFormat, ObjectBuilder, OneOfBuilder, Schema, SchemaFormat, Type,
    };
    let one_of = OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64))),
        )
        .item(ObjectBuilder::new().schema_type(Type::String))
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .description(Some(
            "The request's id, an integer or a string; null or left out on a notification",
        ))
        .build();
    Schema::OneOf(one_of)
}

/// The longest method name a message may carry.
const METHOD_MAX: usize = 100;

/// `POST /mcp`.
#[utoipa::path(
    post,
    path = "/mcp",
    operation_id = "mcp",
    tag = "mcp",
    summary = "Model Context Protocol (Streamable HTTP, stateless, JSON answers)",
    description = "One JSON-RPC 2.0 message per POST: `initialize`, `ping`, `tools/list` and \
        `tools/call` are answered with a JSON-RPC response; notifications and responses with \
        202. The tools listed are those the caller's credentials may use; each answers the \
        JSON of the API route it stands for. GET is 405: this server pushes nothing.",
    request_body(content = RpcMessage, description = "A JSON-RPC 2.0 message"),
    responses(
        (status = 200, description = "The JSON-RPC response", body = Object),
        (status = 202, description = "A notification or a response was received"),
        (status = 400, description = "Not a JSON-RPC message, or an unsupported MCP-Protocol-Version", body = Object),
        (status = 403, description = "An Origin that is not this server's", body = crate::error::ErrorBody<'static>)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn post(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    same_origin(&req)?;
    if let Some(version) = req.headers().get("MCP-Protocol-Version") {
        let known = version
            .to_str()
            .is_ok_and(|v| VERSIONS.iter().any(|known| known.as_str() == v));
        if !known {
            return Ok(rpc_error(
                StatusCode::BAD_REQUEST,
                ErrorData::invalid_request("unsupported MCP-Protocol-Version", None),
            ));
        }
    }
    let message: ClientJsonRpcMessage = match serde_json::from_slice(&auth.body) {
        Ok(message) => message,
        Err(err) => {
            return Ok(rpc_error(
                StatusCode::BAD_REQUEST,
                ErrorData::parse_error(format!("not a JSON-RPC 2.0 message: {err}"), None),
            ));
        }
    };
    if method_name(&message).is_some_and(|m| m.is_empty() || m.chars().count() > METHOD_MAX) {
        return Ok(rpc_error(
            StatusCode::BAD_REQUEST,
            ErrorData::invalid_request(
                format!("method must be 1 to {METHOD_MAX} characters"),
                None,
            ),
        ));
    }
    if matches!(message, JsonRpcMessage::Notification(_)) && carries_id(&auth.body) {
        // An id rmcp cannot read (a fraction, beyond 64 bits) would otherwise make a
        // request pass for a notification and go unanswered.
        return Ok(rpc_error(
            StatusCode::BAD_REQUEST,
            ErrorData::invalid_request("id must be a 64-bit integer or a string", None),
        ));
    }
    let ClientJsonRpcMessage::Request(request) = message else {
        // Notifications (`notifications/initialized`, cancellations) and responses need
        // no answer.
        return Ok(HttpResponse::Accepted().finish());
    };
    let answer = match answer(&state, &auth.actor, request.request).await {
        Ok(mut result) => {
            result.strip_result_type_for_legacy_peer();
            ServerJsonRpcMessage::response(result, request.id)
        }
        Err(error) => ServerJsonRpcMessage::error(error, Some(request.id)),
    };
    Ok(HttpResponse::Ok().json(answer))
}

async fn answer(
    state: &AppState,
    actor: &Actor,
    request: ClientRequest,
) -> Result<ServerResult, ErrorData> {
    match request {
        ClientRequest::InitializeRequest(init) => {
            let asked = init.params.protocol_version;
            let version = VERSIONS
                .iter()
                .find(|v| **v == asked)
                .cloned()
                .unwrap_or(ProtocolVersion::LATEST);
            let capabilities = ServerCapabilities::builder().enable_tools().build();
            Ok(ServerResult::InitializeResult(
                InitializeResult::new(capabilities)
                    .with_server_info(Implementation::new("muster", env!("CARGO_PKG_VERSION")))
                    .with_protocol_version(version)
                    .with_instructions(INSTRUCTIONS),
            ))
        }
        ClientRequest::PingRequest(_) => Ok(ServerResult::empty(())),
        ClientRequest::ListToolsRequest(_) => Ok(ServerResult::ListToolsResult(
            ListToolsResult::with_all_items(catalog::visible_to(actor)),
        )),
        ClientRequest::CallToolRequest(call) => Ok(ServerResult::CallToolResult(
            call_tool(state, actor, call.params).await?,
        )),
        other => Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method {} is not supported", other.method()),
            None,
        )),
    }
}

async fn call_tool(
    state: &AppState,
    actor: &Actor,
    params: CallToolRequestParams,
) -> Result<CallToolResult, ErrorData> {
    if !catalog::exists(&params.name) {
        return Err(ErrorData::invalid_params(
            format!("unknown tool {}", params.name),
            None,
        ));
    }
    let args = params.arguments.unwrap_or_default();
    // A tool the caller was not shown still runs its use case, which refuses it with the
    // API's 403 and message.
    Ok(match calls::call(state, actor, &params.name, args).await {
        Ok(value) => CallToolResult::structured(value),
        Err(err) => {
            let status = actix_web::ResponseError::status_code(&err);
            CallToolResult::structured_error(json!({
                "statusCode": status.as_u16(),
                "message": err.message(),
                "error": status.canonical_reason().unwrap_or("Error"),
            }))
        }
    })
}

/// A browser page of another origin (DNS rebinding, a malicious site) must not drive
/// this endpoint: an `Origin` whose host is not the request's `Host` is refused.
fn same_origin(req: &HttpRequest) -> Result<(), ApiError> {
    let Some(origin) = req.headers().get(ORIGIN) else {
        return Ok(());
    };
    let host = req.headers().get(HOST).and_then(|h| h.to_str().ok());
    let origin_host = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, rest)| rest.trim_end_matches('/'));
    match (origin_host, host) {
        (Some(origin), Some(host)) if origin.eq_ignore_ascii_case(host) => Ok(()),
        _ => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "Origin is not this server's",
        )),
    }
}

/// The method a request or a notification names (those rmcp knows are well named).
fn method_name(message: &ClientJsonRpcMessage) -> Option<&str> {
    match message {
        JsonRpcMessage::Request(request) => Some(request.request.method()),
        JsonRpcMessage::Notification(notification) => match &notification.notification {
            ClientNotification::CustomNotification(custom) => Some(&custom.method),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the message has an `id` other than `null`.
fn carries_id(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Id {
        #[serde(default)]
        id: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Id>(body).is_ok_and(|message| message.id.is_some())
}

fn rpc_error(status: StatusCode, error: ErrorData) -> HttpResponse {
    HttpResponse::build(status).json(ServerJsonRpcMessage::error(error, None))
}
