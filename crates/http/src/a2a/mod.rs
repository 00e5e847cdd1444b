//! Agent-to-Agent (A2A v1.0): Muster as a durable task store for A2A clients.
//!
//! - `GET /.well-known/agent-card.json`: the public Agent Card ([`card`]).
//! - `POST /a2a/jsonrpc`: the JSON-RPC binding ([`jsonrpc`]).
//! - `/a2a/rest/...`: the HTTP+JSON binding ([`rest`]).
//! - `POST /a2a/remote/{agent}/tasks/{task}/push`: remote agents' updates of the tasks
//!   handed to them ([`remote`]).
//!
//! Both bindings authenticate exactly as the API does (a bearer token, an API key or an
//! agent's signature), run the same task use cases through [`ops`] and answer the
//! shapes of `muster-a2a`; streams are in [`stream`]. Every request but the card's must
//! carry `A2A-Version: 1.0` (header or query parameter): a request without it speaks
//! 0.3, which this server does not.

mod card;
mod document;
pub(crate) mod jsonrpc;
mod ops;
pub(crate) mod push;
mod remote;
pub(crate) mod rest;
mod stream;

use actix_web::HttpRequest;
use muster_a2a::{A2aError, ErrorKind, PROTOCOL_VERSION};

use crate::route_table::{Table, at};
pub(crate) use document::paths;

/// Adds A2A's routes to `table`: the card, both bindings and remote agents' pushes.
pub(crate) fn register(table: &mut Table<'_>) {
    table
        .get("/.well-known/agent-card.json", rest::agent_card)
        .post("/a2a/jsonrpc", jsonrpc::post)
        .post("/a2a/remote/{agent}/tasks/{task}/push", remote::push)
        .post("/a2a/rest/message:send", rest::send_message)
        .post("/a2a/rest/message:stream", rest::stream_message)
        .get("/a2a/rest/tasks", rest::list_tasks)
        .get("/a2a/rest/extendedAgentCard", rest::extended_card)
        .add(
            at("/a2a/rest/tasks/{target}")
                .get(rest::get_or_subscribe)
                .post(rest::cancel_or_subscribe),
        )
        .add(
            at("/a2a/rest/tasks/{target}/pushNotificationConfigs")
                .get(rest::list_push_configs)
                .post(rest::create_push_config),
        )
        .add(
            at("/a2a/rest/tasks/{target}/pushNotificationConfigs/{config}")
                .get(rest::get_push_config)
                .delete(rest::delete_push_config),
        );
}

/// The version header (and query parameter).
const VERSION_HEADER: &str = "A2A-Version";

/// Checks that the request speaks this server's version: `1.0` (a patch number, as in
/// `1.0.2`, is ignored). A request that names none speaks 0.3.
fn check_version(req: &HttpRequest) -> Result<(), A2aError> {
    let from_query = || {
        form_urlencoded::parse(req.query_string().as_bytes())
            .find(|(k, _)| k.eq_ignore_ascii_case(VERSION_HEADER))
            .map(|(_, v)| v.into_owned())
    };
    let asked = req
        .headers()
        .get(VERSION_HEADER)
        .map(|v| v.to_str().map(str::trim).unwrap_or_default().to_owned())
        .or_else(from_query)
        .filter(|v| !v.is_empty());
    let Some(asked) = asked else {
        return Err(A2aError::new(
            ErrorKind::VersionNotSupported,
            format!(
                "send {VERSION_HEADER}: {PROTOCOL_VERSION}; a request without it speaks A2A 0.3, \
                 which this server does not"
            ),
        ));
    };
    let mut numbers = asked.split('.');
    let major_minor = (numbers.next(), numbers.next());
    let patch_ok = numbers
        .next()
        .is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && numbers.next().is_none();
    if major_minor == (Some("1"), Some("0")) && patch_ok {
        return Ok(());
    }
    Err(A2aError::new(
        ErrorKind::VersionNotSupported,
        format!("A2A version {asked} is not supported: this server speaks {PROTOCOL_VERSION}"),
    ))
}
