//! `muster mcp`: MCP's stdio transport (one JSON-RPC message per line) relayed to the
//! server's `POST /mcp`, signed as the configured agent. Only protocol messages go to
//! stdout; logs go to stderr.

use muster_client::Client;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Relays until stdin ends.
pub async fn relay(client: &Client) -> anyhow::Result<()> {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let answer = match client.mcp_message(line.clone().into_bytes()).await {
            Ok(Some(answer)) => answer,
            Ok(None) => continue,
            // The server could not be reached, or refused the credentials: a request
            // still gets an answer, as a JSON-RPC error carrying the reason.
            Err(err) => match request_id(&line) {
                Some(id) => serde_json::to_vec(&json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {"code": -32603, "message": err.to_string()},
                }))?,
                None => continue,
            },
        };
        stdout.write_all(&answer).await?;
        stdout.write_all(b"\n").await?;
        stdout.flush().await?;
    }
    Ok(())
}

/// The id of a request (a notification has none).
fn request_id(line: &str) -> Option<Value> {
    serde_json::from_str::<Value>(line)
        .ok()?
        .get("id")
        .filter(|id| !id.is_null())
        .cloned()
}
