//! What makes a POST body a message this endpoint answers: a JSON-RPC 2.0 message as
//! rmcp reads it, a method name of 1 to 100 characters, and an id JSON-RPC allows (a
//! request is never mistaken for a notification); and the message as the OpenAPI
//! document describes it.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ErrorData, JsonRpcMessage, NumberOrString, RequestId,
    ServerJsonRpcMessage,
};
use serde_json::Value;

/// One JSON-RPC 2.0 message, as the document describes it (the protocol defines each
/// method's `params`).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // documentation only: the body is read as rmcp's message types
pub(crate) struct RpcMessage {
    /// Always `2.0`.
    #[schema(pattern = "^2\\.0$")]
    jsonrpc: String,
    /// The request's id, an integer or a string; left out on a notification.
    #[schema(schema_with = crate::rpc_id::message_schema)]
    id: Option<i64>,
    /// The method: `initialize`, `ping`, `tools/list`, `tools/call`, or a notification's.
    #[schema(min_length = 1, max_length = 100)]
    method: String,
    /// Its parameters.
    #[schema(value_type = Option<Object>)]
    params: Option<serde_json::Value>,
}

/// The longest method name a message may carry.
const METHOD_MAX: usize = 100;

/// Why a body is not answered as a message: the JSON-RPC error, and the request's id
/// when it could be read.
#[derive(Debug)]
pub(crate) struct Refused {
    pub error: ErrorData,
    pub id: Option<RequestId>,
}

impl Refused {
    /// The `400` answer.
    pub fn answer(self) -> HttpResponse {
        self.answer_with(StatusCode::BAD_REQUEST)
    }

    /// The answer with `status`.
    pub fn answer_with(self, status: StatusCode) -> HttpResponse {
        HttpResponse::build(status).json(ServerJsonRpcMessage::error(self.error, self.id))
    }
}

/// Reads `body` as one message, refusing what the document does not allow.
pub(crate) fn read(body: &[u8]) -> Result<ClientJsonRpcMessage, Refused> {
    let unreadable = |err: serde_json::Error| Refused {
        error: ErrorData::parse_error(format!("not a JSON-RPC 2.0 message: {err}"), None),
        id: None,
    };
    let mut value: Value = serde_json::from_slice(body).map_err(unreadable)?;
    // An integer id written as `7.0` is the integer rmcp reads.
    if let Some(id) = value.get_mut("id")
        && let Some(read) = crate::rpc_id::read(id)
    {
        *id = read;
    }
    let message: ClientJsonRpcMessage =
        serde_json::from_value(value.clone()).map_err(unreadable)?;
    let well_named = |method: &str| !method.is_empty() && method.chars().count() <= METHOD_MAX;
    let bad_name = |id: Option<RequestId>| Refused {
        error: ErrorData::invalid_request(
            format!("method must be 1 to {METHOD_MAX} characters"),
            None,
        ),
        id,
    };
    match &message {
        JsonRpcMessage::Request(request) if !well_named(request.request.method()) => {
            Err(bad_name(Some(request.id.clone())))
        }
        JsonRpcMessage::Notification(notification) => {
            if let ClientNotification::CustomNotification(custom) = &notification.notification
                && !well_named(&custom.method)
            {
                return Err(bad_name(None));
            }
            // rmcp reads a message as a notification when it cannot read it as a request;
            // one that carries an id was meant as a request and must be answered.
            match misread_request(value) {
                Some(refused) => Err(refused),
                None => Ok(message),
            }
        }
        _ => Ok(message),
    }
}

/// What is wrong with a message read as a notification although it carries an id:
/// the id itself, or (the id being fine) the request's params.
fn misread_request(message: Value) -> Option<Refused> {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        id: Option<Value>,
        #[serde(default)]
        method: Option<String>,
    }
    let head: Head = serde_json::from_value(message).ok()?;
    let id = head.id?;
    let id = match crate::rpc_id::read(&id) {
        Some(Value::Number(n)) if n.as_i64().is_some() => NumberOrString::Number(n.as_i64()?),
        Some(Value::String(s)) => NumberOrString::String(s.into()),
        _ => {
            return Some(Refused {
                error: ErrorData::invalid_request("id must be a 64-bit integer or a string", None),
                id: None,
            });
        }
    };
    let method = head.method.unwrap_or_default();
    Some(Refused {
        error: ErrorData::invalid_params(format!("the params do not fit {method}"), None),
        id: Some(id),
    })
}
