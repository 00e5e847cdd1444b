//! One row struct per table, shared by both engines (`check_for_backend(Pg, Sqlite)`),
//! and the conversions to and from the domain model.

mod agent;
mod api_key;
mod capability;
mod codehost;
mod comment;
mod dependency;
mod escalation;
mod event;
mod inbound_key;
mod ledger;
mod login_throttle;
mod oauth_state;
mod organization;
mod recovery_code;
mod refresh_token;
mod task;
mod template;
mod treasury;
mod user;
mod webhook;

pub(crate) use agent::{AgentChanges, AgentRow};
pub(crate) use api_key::ApiKeyRow;
pub(crate) use capability::CapabilityRow;
pub(crate) use codehost::{ConnectionRow, HostDeliveryRow, LinkRow};
pub(crate) use comment::CommentRow;
pub(crate) use dependency::DependencyRow;
pub(crate) use escalation::EscalationRow;
pub(crate) use event::EventRow;
pub(crate) use inbound_key::InboundKeyRow;
pub(crate) use ledger::{LedgerRow, ReputationRow};
pub(crate) use login_throttle::LoginThrottleRow;
pub(crate) use oauth_state::OAuthStateRow;
pub(crate) use organization::OrganizationRow;
pub(crate) use recovery_code::RecoveryCodeRow;
pub(crate) use refresh_token::RefreshTokenRow;
pub(crate) use task::TaskRow;
pub(crate) use template::TemplateRow;
pub(crate) use treasury::{TreasuryEntryRow, TreasuryRow};
pub(crate) use user::{UserChanges, UserRow};
pub(crate) use webhook::{AttemptRow, DeliveryRow, SubscriptionRow, WebhookRow};

use muster_domain::model::TokenHash;
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::types::DbUuid;

pub(crate) fn db_uuid(id: impl Into<uuid::Uuid>) -> DbUuid {
    DbUuid(id.into())
}

/// A stored SHA-256 hash (`what` names the column for the error): exactly 32 bytes.
pub(crate) fn token_hash(what: &'static str, bytes: &[u8]) -> Result<TokenHash, RepositoryError> {
    <[u8; 32]>::try_from(bytes)
        .map(TokenHash)
        .map_err(|_| corrupt(what, format!("{} bytes, not 32", bytes.len())))
}
