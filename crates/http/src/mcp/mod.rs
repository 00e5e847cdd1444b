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
mod message;
mod project_calls;
mod routine_calls;
mod run_calls;
mod schema;

use actix_web::http::StatusCode;
use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use muster_domain::model::Actor;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientJsonRpcMessage, ClientRequest, ErrorCode,
    ErrorData, Implementation, InitializeResult, ListToolsResult, ProtocolVersion,
    ServerCapabilities, ServerJsonRpcMessage, ServerResult,
};
use serde_json::json;

use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::route_table::Table;
use crate::state::AppState;
pub(crate) use message::read as read_message;
pub(crate) use schema::ToolSchemas;
#[cfg(test)]
pub(crate) use schema::unmatched;

/// The protocol revisions this endpoint speaks (all answer the same way).
const VERSIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
];

const INSTRUCTIONS: &str = "Muster coordinates work between agents and people. Claim the \
next task with claim_task, keep its lease with heartbeat_task, report with comment_on_task \
and finish with transition_task (status done, or review when it needs approval), or give it \
back for another agent with release_task. Record the \
attempt with start_run, append_run_log, report_usage (tokens and cost, paid from your \
credits) and finish_run; stop when an answer says stopRequested. Results are the JSON of \
Muster's HTTP API.";

/// The methods answered (the others are -32601).
const ANSWERED: [&str; 4] = ["initialize", "ping", "tools/list", "tools/call"];

/// Adds `POST /mcp` to `table`. Its handler takes the tools' schemas from the app's
/// data, a [`ToolSchemas`].
pub(crate) fn register(table: &mut Table<'_>) {
    table.post("/mcp", post);
}

/// The operation of the OpenAPI document.
#[derive(utoipa::OpenApi)]
#[openapi(paths(post))]
struct Paths;

/// `POST /mcp` for the OpenAPI document, with its schemas.
pub(crate) fn paths() -> utoipa::openapi::OpenApi {
    <Paths as utoipa::OpenApi>::openapi()
}

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
    request_body(content = message::RpcMessage, description = "A JSON-RPC 2.0 message"),
    responses(
        (status = 200, description = "The JSON-RPC response", body = Object),
        (status = 202, description = "A notification or a response was received"),
        (status = 400, description = "Not a JSON-RPC message, or an unsupported MCP-Protocol-Version", body = Object),
        (status = 403, description = "A Host this server does not answer to, or an Origin that is not its own (DNS rebinding, another site's page)", body = crate::error::ErrorBody<'static>)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
async fn post(
    state: Data<AppState>,
    tools: Data<ToolSchemas>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
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
    let message = match message::read(&auth.body) {
        Ok(message) => message,
        Err(refused) => return Ok(refused.answer()),
    };
    let ClientJsonRpcMessage::Request(request) = message else {
        // Notifications (`notifications/initialized`, cancellations) and responses need
        // no answer.
        return Ok(HttpResponse::Accepted().finish());
    };
    let answer = match answer(&state, &tools, &auth.actor, request.request, &req).await {
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
    tools: &ToolSchemas,
    actor: &Actor,
    request: ClientRequest,
    req: &HttpRequest,
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
            ListToolsResult::with_all_items(catalog::visible_to(actor, tools)),
        )),
        ClientRequest::CallToolRequest(call) => Ok(ServerResult::CallToolResult(
            call_tool(state, actor, call.params, req).await?,
        )),
        // A method this endpoint answers arrives as a custom one when its params do not
        // fit it.
        other if ANSWERED.contains(&other.method()) => Err(ErrorData::invalid_params(
            format!("the params do not fit {}", other.method()),
            None,
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
    req: &HttpRequest,
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
            if status.is_server_error() {
                // Answered 200 as the protocol wants, but a retry must run it again.
                crate::idempotency::let_key_go(req);
            }
            CallToolResult::structured_error(json!({
                "statusCode": status.as_u16(),
                "code": err.code(),
                "message": err.message(),
                "error": status.canonical_reason().unwrap_or("Error"),
            }))
        }
    })
}

fn rpc_error(status: StatusCode, error: ErrorData) -> HttpResponse {
    message::Refused { error, id: None }.answer_with(status)
}
