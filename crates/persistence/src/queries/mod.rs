//! Query pieces: plain async functions over a [`Conn`](crate::conn::Conn), one module
//! per table. The same function serves a read on a pooled connection and a step of a
//! unit of work; errors stay Diesel's until the port boundary maps them.

pub(crate) mod agents;
pub(crate) mod api_keys;
pub(crate) mod capabilities;
pub(crate) mod claims;
pub(crate) mod codehost;
pub(crate) mod comments;
pub(crate) mod deliveries;
pub(crate) mod dependencies;
pub(crate) mod escalations;
pub(crate) mod events;
pub(crate) mod fixed;
pub(crate) mod inbound_keys;
pub(crate) mod ledger;
pub(crate) mod login_throttles;
pub(crate) mod nonces;
pub(crate) mod oauth_states;
pub(crate) mod organizations;
#[cfg(test)]
pub(crate) mod plan;
pub(crate) mod recovery_codes;
pub(crate) mod refresh_tokens;
pub(crate) mod tasks;
pub(crate) mod templates;
pub(crate) mod treasuries;
pub(crate) mod users;
pub(crate) mod webhooks;
