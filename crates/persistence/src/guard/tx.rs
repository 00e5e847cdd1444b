//! [`GuardTx`] on a unit of work's transaction: the runaway guard's windows and thresholds.

use async_trait::async_trait;
use muster_domain::model::{AgentId, GuardSettings, OrgId, Tally, TallyAdd, Threshold};
use muster_domain::ports::{GuardTx, RepositoryError};

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::queries;

#[async_trait]
impl GuardTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.tally_agent", skip_all, fields(otel.kind = "client"))]
    async fn tally_agent(
        &mut self,
        org: OrgId,
        actor: uuid::Uuid,
        add: &TallyAdd,
    ) -> Result<Option<Tally>, RepositoryError> {
        let row = queries::tally(&mut self.conn, org, actor, add)
            .await
            .map_err(from_diesel)?;
        Ok(
            row.map(|(actions, actions_since, credits, credits_since)| Tally {
                actions: i64::from(actions),
                actions_since: actions_since.map(|t| t.0),
                credits,
                credits_since: credits_since.map(|t| t.0),
            }),
        )
    }

    #[tracing::instrument(level = "debug", name = "db.tx.reset_tally", skip_all, fields(otel.kind = "client"))]
    async fn reset_tally(&mut self, org: OrgId, id: AgentId) -> Result<(), RepositoryError> {
        queries::reset_tally(&mut self.conn, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.guard_settings", skip_all, fields(otel.kind = "client"))]
    async fn guard_settings(&mut self, org: OrgId) -> Result<GuardSettings, RepositoryError> {
        let stored = queries::guard_settings(&mut self.conn, org)
            .await
            .map_err(from_diesel)?;
        let (actions, credits) = stored.unwrap_or_default();
        Ok(GuardSettings {
            actions_per_minute: actions.map(|n| Threshold::from_stored(i64::from(n))),
            credits_per_hour: credits.map(Threshold::from_stored),
        })
    }

    #[tracing::instrument(level = "debug", name = "db.tx.set_guard_settings", skip_all, fields(otel.kind = "client"))]
    async fn set_guard_settings(
        &mut self,
        org: OrgId,
        settings: &GuardSettings,
    ) -> Result<(), RepositoryError> {
        let actions = settings
            .actions_per_minute
            .map(|t| i32::try_from(t.get()).unwrap_or(i32::MAX));
        let credits = settings.credits_per_hour.map(Threshold::get);
        queries::set_guard_settings(&mut self.conn, org, actions, credits)
            .await
            .map_err(from_diesel)
    }
}
