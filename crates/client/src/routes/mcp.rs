//! `POST /mcp`, one JSON-RPC message at a time (what `muster mcp` relays from stdio).

use reqwest::Method;

use crate::client::Extra;
use crate::error::from_answer;
use crate::{Client, Error};

impl Client {
    /// Sends one MCP JSON-RPC message to `POST /mcp` with this client's credentials:
    /// the JSON-RPC answer's bytes, or `None` for a notification (202). An answer that is
    /// not JSON-RPC (401, 403, 5xx: the API's error body) is an [`Error::Api`].
    ///
    /// Only a `tools/call` carries an `Idempotency-Key` (a tool may change something, and
    /// a retry after a lost answer must not do it twice); the other messages read.
    pub async fn mcp_message(&self, message: Vec<u8>) -> Result<Option<Vec<u8>>, Error> {
        let extra = Extra {
            no_idempotency_key: !calls_a_tool(&message),
            ..Extra::default()
        };
        let response = self
            .send(Method::POST, "/mcp", Some(message), extra)
            .await?;
        let status = response.status().as_u16();
        let body = response.bytes().await?;
        match status {
            202 => Ok(None),
            // 400 carries a JSON-RPC error (a malformed message) as much as 200 does.
            200 | 400 if is_json_rpc(&body) => Ok(Some(body.to_vec())),
            _ => Err(from_answer(status, &body)),
        }
    }
}

fn is_json_rpc(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .is_ok_and(|v| v.get("jsonrpc").is_some_and(|j| j == "2.0"))
}

/// Whether the message is a `tools/call` request.
fn calls_a_tool(message: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Named<'_>>(message)
        .is_ok_and(|m| m.method.as_deref() == Some("tools/call"))
}
