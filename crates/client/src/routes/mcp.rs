//! `POST /mcp`, one JSON-RPC message at a time (what `muster mcp` relays from stdio).

use reqwest::Method;

use crate::client::Extra;
use crate::error::from_answer;
use crate::{Client, Error};

impl Client {
    /// Sends one MCP JSON-RPC message to `POST /mcp` with this client's credentials:
    /// the JSON-RPC answer's bytes, or `None` for a notification (202). An answer that is
    /// not JSON-RPC (401, 403, 5xx: the API's error body) is an [`Error::Api`].
    pub async fn mcp_message(&self, message: Vec<u8>) -> Result<Option<Vec<u8>>, Error> {
        let response = self
            .send(Method::POST, "/mcp", Some(message), Extra::default())
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
