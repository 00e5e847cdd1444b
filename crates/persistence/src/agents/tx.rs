//! [`AgentsTx`] on a unit of work's transaction: agents and their capabilities.

use async_trait::async_trait;
use muster_domain::model::{
    Agent, AgentCredentials, AgentId, Capability, CapabilityId, Level, OrgId,
};
use muster_domain::ports::{AgentsTx, Lock, RepositoryError};
use time::OffsetDateTime;

use crate::error::from_diesel;
use crate::transaction::DbTransaction;

use super::capabilities::CapabilityRow;
use super::rows::{AgentChanges, AgentRow};
use super::{capabilities, queries as agents};

#[async_trait]
impl AgentsTx for DbTransaction<'_> {
    #[tracing::instrument(level = "debug", name = "db.tx.agent", skip_all, fields(otel.kind = "client"))]
    async fn agent(
        &mut self,
        org: OrgId,
        id: AgentId,
        lock: Lock,
    ) -> Result<Option<Agent>, RepositoryError> {
        let row = agents::find(&mut self.conn, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(|r| AgentCredentials::try_from(r).map(|c| c.agent))
            .transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_agent", skip_all, fields(otel.kind = "client"))]
    async fn insert_agent(&mut self, agent: &AgentCredentials) -> Result<(), RepositoryError> {
        agents::insert(&mut self.conn, &AgentRow::from(agent))
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_agent", skip_all, fields(otel.kind = "client"))]
    async fn update_agent(
        &mut self,
        agent: &Agent,
        at: OffsetDateTime,
    ) -> Result<bool, RepositoryError> {
        agents::update(
            &mut self.conn,
            agent.org_id,
            agent.id,
            &AgentChanges::new(agent, at),
        )
        .await
        .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_agent", skip_all, fields(otel.kind = "client"))]
    async fn delete_agent(&mut self, org: OrgId, id: AgentId) -> Result<bool, RepositoryError> {
        agents::delete(&mut self.conn, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.live_children", skip_all, fields(otel.kind = "client"))]
    async fn live_children(&mut self, org: OrgId, parent: AgentId) -> Result<u32, RepositoryError> {
        let n = agents::live_children(&mut self.conn, org, parent)
            .await
            .map_err(from_diesel)?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    #[tracing::instrument(level = "debug", name = "db.tx.capability", skip_all, fields(otel.kind = "client"))]
    async fn capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
        lock: Lock,
    ) -> Result<Option<Capability>, RepositoryError> {
        let row = capabilities::find(&mut self.conn, org, id, Some(lock))
            .await
            .map_err(from_diesel)?;
        row.map(Capability::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.tx.insert_capabilities", skip_all, fields(otel.kind = "client"))]
    async fn insert_capabilities(&mut self, rows: &[Capability]) -> Result<(), RepositoryError> {
        let rows: Vec<CapabilityRow> = rows.iter().map(CapabilityRow::from).collect();
        capabilities::insert(&mut self.conn, &rows)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.update_capability", skip_all, fields(otel.kind = "client"))]
    async fn update_capability(
        &mut self,
        capability: &Capability,
    ) -> Result<bool, RepositoryError> {
        capabilities::set_proficiency(
            &mut self.conn,
            capability.org_id,
            capability.id,
            capability.proficiency.as_str(),
        )
        .await
        .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.delete_capability", skip_all, fields(otel.kind = "client"))]
    async fn delete_capability(
        &mut self,
        org: OrgId,
        id: CapabilityId,
    ) -> Result<bool, RepositoryError> {
        capabilities::delete(&mut self.conn, org, id)
            .await
            .map_err(from_diesel)
    }

    #[tracing::instrument(level = "debug", name = "db.tx.roll_budget_periods", skip_all, fields(otel.kind = "client"))]
    async fn roll_budget_periods(&mut self, start: OffsetDateTime) -> Result<u64, RepositoryError> {
        let n = agents::roll_budget_periods(&mut self.conn, start)
            .await
            .map_err(from_diesel)?;
        Ok(u64::try_from(n).unwrap_or(u64::MAX))
    }

    #[tracing::instrument(level = "debug", name = "db.tx.senior_agent_above", skip_all, fields(otel.kind = "client"))]
    async fn senior_agent_above(
        &mut self,
        org: OrgId,
        level: Option<Level>,
    ) -> Result<Option<Agent>, RepositoryError> {
        let row = agents::senior_above(&mut self.conn, org, level)
            .await
            .map_err(from_diesel)?;
        row.map(|r| AgentCredentials::try_from(r).map(|c| c.agent))
            .transpose()
    }
}
