//! A2A's operations for the OpenAPI document: the card, both bindings and remote agents'
//! pushes. (Their request bodies are written out by the document's assembler: the
//! protocol's types carry no schema.)

use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(paths(
    super::rest::agent_card,
    super::jsonrpc::post,
    super::remote::push,
    super::rest::send_message,
    super::rest::stream_message,
    super::rest::list_tasks,
    super::rest::get_or_subscribe,
    super::rest::cancel_or_subscribe,
    super::rest::create_push_config,
    super::rest::list_push_configs,
    super::rest::get_push_config,
    super::rest::delete_push_config,
    super::rest::extended_card
))]
struct Paths;

/// A2A's operations and their schemas.
pub(crate) fn paths() -> utoipa::openapi::OpenApi {
    Paths::openapi()
}
