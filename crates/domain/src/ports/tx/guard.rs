//! [`GuardTx`]: what a transaction reads and writes of the runaway guard: agents' tallies
//! and the organization's thresholds.

use async_trait::async_trait;

use crate::model::{AgentId, GuardSettings, OrgId, Tally, TallyAdd};
use crate::ports::RepositoryError;

/// The runaway guard: agents' tallies and the organization's thresholds. Part of
/// [`Transaction`](crate::ports::Transaction); every method is scoped to one organization
/// except where it says otherwise.
#[async_trait]
pub trait GuardTx: Send {
    /// Counts `add` on the runaway-guard windows of the agent whose UUID is `actor`, in
    /// one statement that also locks its row until the commit (so parallel changes of
    /// one agent count one after the other), exactly as
    /// [`rules::guard::count`](crate::rules::guard::count) says; the windows after it.
    /// `None` when `actor` is no agent of `org` (a user, say).
    async fn tally_agent(
        &mut self,
        org: OrgId,
        actor: uuid::Uuid,
        add: &TallyAdd,
    ) -> Result<Option<Tally>, RepositoryError>;

    /// Empties both runaway-guard windows of the agent `id` (when it is unsuspended).
    async fn reset_tally(&mut self, org: OrgId, id: AgentId) -> Result<(), RepositoryError>;

    /// The organization's own runaway-guard thresholds.
    async fn guard_settings(&mut self, org: OrgId) -> Result<GuardSettings, RepositoryError>;

    /// Replaces the organization's own runaway-guard thresholds.
    async fn set_guard_settings(
        &mut self,
        org: OrgId,
        settings: &GuardSettings,
    ) -> Result<(), RepositoryError>;
}
