//! `POST /a2a/jsonrpc`: one JSON-RPC 2.0 request per POST. Answers, errors included,
//! are HTTP 200 with a JSON-RPC response, as JSON-RPC over HTTP has it (a body that is
//! not a JSON-RPC request, an unknown method, bad params, an unsupported version); only
//! what fails before the request is read (credentials, size, content type) keeps its
//! HTTP status. The streaming methods answer Server-Sent Events whose data are JSON-RPC
//! responses, their own errors included.

use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use muster_a2a::types::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, SendMessageRequest, SendMessageResponse,
    SubscribeToTaskRequest,
};
use muster_a2a::{A2aError, ErrorKind};
use muster_domain::model::Actor;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::stream::{self, Framing, Until};
use super::{card, check_version, ops, push};
use crate::error::ApiError;
use crate::extract::Authenticated;
use crate::state::AppState;

/// One JSON-RPC 2.0 request, as the document describes it (A2A defines each method's
/// `params`).
#[derive(utoipa::ToSchema)]
#[schema(as = A2aRequest)]
#[allow(dead_code)] // documentation only: the body is read as JSON
pub(crate) struct RequestDoc {
    /// Always `2.0`.
    #[schema(pattern = "^2\\.0$")]
    jsonrpc: String,
    /// The request's id: an integer (64-bit) or a string.
    #[schema(schema_with = crate::rpc_id::request_schema)]
    id: i64,
    /// The method: `SendMessage`, `GetTask`, ...
    #[schema(min_length = 1, max_length = 100)]
    method: String,
    /// Its parameters.
    #[schema(value_type = Option<Object>)]
    params: Option<Value>,
}

/// The longest method name read.
const METHOD_MAX: usize = 100;

/// A request as read: its id, method and params.
pub(crate) struct Call {
    id: Value,
    method: String,
    params: Value,
}

/// `POST /a2a/jsonrpc`.
#[utoipa::path(
    post,
    path = "/a2a/jsonrpc",
    operation_id = "a2aJsonRpc",
    tag = "a2a",
    summary = "A2A v1.0, JSON-RPC binding",
    description = "One JSON-RPC 2.0 request per POST with `A2A-Version: 1.0`: `SendMessage`, \
        `SendStreamingMessage`, `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`, \
        `GetExtendedAgentCard` and the push notification config methods \
        (`CreateTaskPushNotificationConfig`, `GetTaskPushNotificationConfig`, \
        `ListTaskPushNotificationConfigs`, `DeleteTaskPushNotificationConfig`). Errors \
        are JSON-RPC errors with HTTP 200 and a `google.rpc.ErrorInfo` in `data`, those \
        of a body that is not a JSON-RPC 2.0 request and of a missing or unsupported \
        version included. The streaming methods answer `text/event-stream`, each event a \
        JSON-RPC response; an error of theirs (an unknown or closed task, no room for a \
        stream) is a stream of one `error` event.",
    params(("A2A-Version" = Option<String>, Header, description = "The protocol version: `1.0` (a patch number is ignored); a missing or other value is answered with the JSON-RPC error -32009 (HTTP 200, as every protocol error here)")),
    request_body(content = RequestDoc, description = "A JSON-RPC 2.0 request"),
    responses(
        (status = 200, description = "The JSON-RPC response (a result or an error), or a stream of them", content((Object = "application/json"), (String = "text/event-stream"))),
        (status = 400, description = "Not an error of the request itself (those are 200): an `Idempotency-Key` that is not 1 to 255 printable ASCII characters, or a body that could not be read", body = crate::error::ErrorBody<'static>),
        (status = 401, description = "No valid credentials", body = crate::error::ErrorBody<'static>)
    ),
    security(("agentId" = [], "agentTimestamp" = [], "agentNonce" = [], "agentSignature" = []), ("userToken" = []), ("apiKey" = []))
)]
pub(crate) async fn post(
    state: Data<AppState>,
    req: HttpRequest,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    // JSON-RPC over HTTP answers every error of the protocol with 200 and the error
    // object (D-104): clients and the A2A TCK read the error from the body.
    let call = match read(&auth.body) {
        Ok(call) => call,
        Err((id, error)) => return Ok(answer(&id, Err(error))),
    };
    if let Err(error) = check_version(&req) {
        // The key covers the body only: a retry with the right header must run.
        crate::idempotency::let_key_go(&req);
        return Ok(answer(&call.id, Err(error)));
    }
    let result = match dispatch(&state, &auth, &req, &call).await {
        Ok(Reply::Result(value)) => Ok(value),
        Ok(Reply::Stream(response)) => return Ok(response),
        Err(error) => Err(error),
    };
    if matches!(&result, Err(e) if e.kind == ErrorKind::Internal) {
        // Answered 200 as the protocol wants, but a retry must run it again.
        crate::idempotency::let_key_go(&req);
    }
    Ok(answer(&call.id, result))
}

/// What a method answers.
enum Reply {
    Result(Value),
    Stream(HttpResponse),
}

async fn dispatch(
    state: &Data<AppState>,
    auth: &Authenticated,
    req: &HttpRequest,
    call: &Call,
) -> Result<Reply, A2aError> {
    let actor = &auth.actor;
    let result = match call.method.as_str() {
        "SendMessage" => {
            let (task, history) = ops::send(state, actor, params(&call.params)?).await?;
            let task = ops::view(state, actor, &task, history).await?;
            json!(SendMessageResponse { task })
        }
        "SendStreamingMessage" => {
            let request: SendMessageRequest = params(&call.params)?;
            let framing = Framing::JsonRpc(call.id.clone());
            let opened = send_streaming(state, actor, request, framing.clone()).await;
            return Ok(Reply::Stream(streamed(&framing, opened)));
        }
        "GetTask" => json!(ops::get(state, actor, &params::<GetTaskRequest>(&call.params)?).await?),
        "ListTasks" => {
            json!(ops::list(state, actor, &params::<ListTasksRequest>(&call.params)?).await?)
        }
        "CancelTask" => {
            json!(ops::cancel(state, actor, &params::<CancelTaskRequest>(&call.params)?).await?)
        }
        "SubscribeToTask" => {
            let request: SubscribeToTaskRequest = params(&call.params)?;
            let framing = Framing::JsonRpc(call.id.clone());
            let opened = subscribe(state, actor, &request, framing.clone()).await;
            return Ok(Reply::Stream(streamed(&framing, opened)));
        }
        "GetExtendedAgentCard" => json!(card::extended(state, actor, req).await?),
        "CreateTaskPushNotificationConfig" => {
            json!(push::create(state, actor, &params(&call.params)?).await?)
        }
        "GetTaskPushNotificationConfig" => {
            json!(push::get(state, actor, &params(&call.params)?).await?)
        }
        "ListTaskPushNotificationConfigs" => {
            json!(push::list(state, actor, &params(&call.params)?).await?)
        }
        "DeleteTaskPushNotificationConfig" => {
            push::delete(state, actor, &params(&call.params)?).await?;
            Value::Null
        }
        method => {
            return Err(A2aError::new(
                ErrorKind::MethodNotFound,
                format!("method {method} is not an A2A 1.0 method this server has"),
            ));
        }
    };
    Ok(Reply::Result(result))
}

/// `SendStreamingMessage`, its params read: the stream of the task it created.
async fn send_streaming(
    state: &Data<AppState>,
    actor: &Actor,
    request: SendMessageRequest,
    framing: Framing,
) -> Result<HttpResponse, A2aError> {
    let slot = stream::reserve(state, actor)?;
    let (task, history) = ops::send(state, actor, request).await?;
    let first = ops::view(state, actor, &task, history).await?;
    Ok(stream::open(
        state.clone(),
        actor.clone(),
        (task, first),
        Until::Interrupted,
        framing,
        slot,
    ))
}

/// `SubscribeToTask`, its params read: the stream of that task.
async fn subscribe(
    state: &Data<AppState>,
    actor: &Actor,
    request: &SubscribeToTaskRequest,
    framing: Framing,
) -> Result<HttpResponse, A2aError> {
    let slot = stream::reserve(state, actor)?;
    let task = ops::subscribable(state, actor, &request.id).await?;
    let first = ops::view(state, actor, &task, None).await?;
    Ok(stream::open(
        state.clone(),
        actor.clone(),
        (task, first),
        Until::Terminal,
        framing,
        slot,
    ))
}

/// A streaming method's answer: its stream, or its error as a stream of one `error`
/// event. A client that asked for a stream reads the answer as one: the A2A SDKs and
/// the TCK raise the error such an event carries, while a plain JSON answer is a broken
/// stream to some of them.
fn streamed(framing: &Framing, opened: Result<HttpResponse, A2aError>) -> HttpResponse {
    opened.unwrap_or_else(|error| stream::refused(framing, &error))
}

/// Reads the request; an unreadable one is answered with the id it carries, if any.
pub(crate) fn read(body: &[u8]) -> Result<Call, (Value, A2aError)> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        let error = A2aError::new(ErrorKind::Parse, format!("the body is not JSON: {e}"));
        (Value::Null, error)
    })?;
    let invalid =
        |id: Value, message: &str| (id, A2aError::new(ErrorKind::InvalidRequest, message));
    let Value::Object(mut request) = value else {
        return Err(invalid(
            Value::Null,
            "send one JSON-RPC request object (batches are not supported)",
        ));
    };
    let id = match request.remove("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) if crate::rpc_id::read(&id).is_some() => {
            crate::rpc_id::read(&id).unwrap_or(id)
        }
        Some(Value::Null) | None => {
            return Err(invalid(
                Value::Null,
                "the request needs an id (a string or a number): A2A has no notifications",
            ));
        }
        Some(_) => {
            return Err(invalid(
                Value::Null,
                "id must be a string or a 64-bit integer",
            ));
        }
    };
    if request.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(invalid(id, "jsonrpc must be \"2.0\""));
    }
    let method = match request.remove("method") {
        Some(Value::String(method))
            if !method.is_empty() && method.chars().count() <= METHOD_MAX =>
        {
            method
        }
        _ => {
            return Err(invalid(
                id,
                "method must be a string of 1 to 100 characters",
            ));
        }
    };
    let params = match request.remove("params") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(params @ Value::Object(_)) => params,
        Some(_) => return Err(invalid(id, "params must be an object")),
    };
    Ok(Call { id, method, params })
}

fn params<T: DeserializeOwned>(params: &Value) -> Result<T, A2aError> {
    serde_json::from_value(params.clone())
        .map_err(|e| A2aError::invalid_params(format!("the params do not fit: {e}")))
}

fn answer(id: &Value, result: Result<Value, A2aError>) -> HttpResponse {
    let body = match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error.json_rpc()}),
    };
    HttpResponse::Ok().json(body)
}
