//! The domain's `AgentRepository` on [`Database`]: agents, their capabilities, roster,
//! ledger and reputation.

use std::collections::HashMap;

use async_trait::async_trait;
use muster_domain::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, Capability, CapabilityName, LedgerEntry,
    LedgerEntryId, OrgId, ReputationEvent,
};
use muster_domain::ports::{AgentFilter, AgentRepository, RepositoryError};
use muster_domain::rules::candidates::RosterEntry;

use crate::Database;
use crate::error::{corrupt, from_diesel};
use crate::ledger::queries as ledger;

use super::roster::roster_of;
use super::rows::agents_of;
use super::{capabilities, queries as agents};

#[async_trait]
impl AgentRepository for Database {
    #[tracing::instrument(level = "debug", name = "db.agents.get", skip_all, fields(otel.kind = "client"))]
    async fn get(&self, org: OrgId, id: AgentId) -> Result<Option<Agent>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = agents::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(|r| AgentCredentials::try_from(r).map(|c| c.agent))
            .transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.agents.anywhere", skip_all, fields(otel.kind = "client"))]
    async fn anywhere(&self, id: AgentId) -> Result<Option<Agent>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = agents::find_anywhere(&mut pooled.conn(), id)
            .await
            .map_err(from_diesel)?;
        row.map(|r| AgentCredentials::try_from(r).map(|c| c.agent))
            .transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.agents.find_credentials", skip_all, fields(otel.kind = "client"))]
    async fn find_credentials(
        &self,
        handle: &AgentHandle,
    ) -> Result<Option<AgentCredentials>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = agents::find_by_handle(&mut pooled.conn(), handle)
            .await
            .map_err(from_diesel)?;
        row.map(AgentCredentials::try_from).transpose()
    }

    #[tracing::instrument(level = "debug", name = "db.agents.list", skip_all, fields(otel.kind = "client"))]
    async fn list(
        &self,
        org: OrgId,
        filter: &AgentFilter,
        before: Option<AgentId>,
        limit: u32,
    ) -> Result<Vec<Agent>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = agents::list(&mut pooled.conn(), org, filter, before, limit)
            .await
            .map_err(from_diesel)?;
        agents_of(rows)
    }

    #[tracing::instrument(level = "debug", name = "db.agents.capabilities", skip_all, fields(otel.kind = "client"))]
    async fn capabilities(
        &self,
        org: OrgId,
        agent: AgentId,
    ) -> Result<Vec<Capability>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = capabilities::of_agent(&mut pooled.conn(), org, agent)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Capability::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.agents.capability_names", skip_all, fields(otel.kind = "client"))]
    async fn capability_names(&self, org: OrgId) -> Result<Vec<CapabilityName>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let names = capabilities::names(&mut pooled.conn(), org)
            .await
            .map_err(from_diesel)?;
        names
            .iter()
            .map(|n| CapabilityName::new(n).map_err(|e| corrupt("capability", e)))
            .collect()
    }

    #[tracing::instrument(level = "debug", name = "db.agents.roster", skip_all, fields(otel.kind = "client"))]
    async fn roster(
        &self,
        org: OrgId,
        active_only: bool,
    ) -> Result<Vec<RosterEntry>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        roster_of(&mut pooled.conn(), org, active_only).await
    }

    #[tracing::instrument(level = "debug", name = "db.agents.pending", skip_all, fields(otel.kind = "client"))]
    async fn pending(
        &self,
        org: OrgId,
        parent: Option<AgentId>,
    ) -> Result<Vec<Agent>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = agents::pending(&mut pooled.conn(), org, parent)
            .await
            .map_err(from_diesel)?;
        agents_of(rows)
    }

    #[tracing::instrument(level = "debug", name = "db.agents.children", skip_all, fields(otel.kind = "client"))]
    async fn children(
        &self,
        org: OrgId,
        parents: &[AgentId],
    ) -> Result<Vec<Agent>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = agents::children(&mut pooled.conn(), org, parents)
            .await
            .map_err(from_diesel)?;
        agents_of(rows)
    }

    #[tracing::instrument(level = "debug", name = "db.agents.limited", skip_all, fields(otel.kind = "client"))]
    async fn limited(&self, org: OrgId) -> Result<Vec<Agent>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = agents::limited(&mut pooled.conn(), org)
            .await
            .map_err(from_diesel)?;
        agents_of(rows)
    }

    #[tracing::instrument(level = "debug", name = "db.agents.ledger", skip_all, fields(otel.kind = "client"))]
    async fn ledger(
        &self,
        org: OrgId,
        agent: AgentId,
        before: Option<LedgerEntryId>,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = ledger::of_agent(&mut pooled.conn(), org, agent, before, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(LedgerEntry::try_from).collect()
    }

    #[tracing::instrument(level = "debug", name = "db.agents.reputation_history", skip_all, fields(otel.kind = "client"))]
    async fn reputation_history(
        &self,
        org: OrgId,
        agent: AgentId,
        limit: u32,
        offset: u64,
    ) -> Result<(Vec<ReputationEvent>, u64), RepositoryError> {
        let mut pooled = self.pooled().await?;
        let mut conn = pooled.conn();
        let rows = if limit == 0 {
            Vec::new()
        } else {
            ledger::reputation_of(&mut conn, org, agent, limit, offset)
                .await
                .map_err(from_diesel)?
        };
        let total = ledger::reputation_count(&mut conn, org, agent)
            .await
            .map_err(from_diesel)?;
        let events = rows
            .into_iter()
            .map(ReputationEvent::try_from)
            .collect::<Result<_, _>>()?;
        Ok((events, u64::try_from(total).unwrap_or(0)))
    }

    #[tracing::instrument(level = "debug", name = "db.agents.leaderboard", skip_all, fields(otel.kind = "client"))]
    async fn leaderboard(
        &self,
        org: OrgId,
        limit: u32,
    ) -> Result<Vec<(Agent, u64)>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let mut conn = pooled.conn();
        let top = agents_of(
            agents::top_reputation(&mut conn, org, limit)
                .await
                .map_err(from_diesel)?,
        )?;
        let ids: Vec<AgentId> = top.iter().map(|a| a.id).collect();
        let completed: HashMap<uuid::Uuid, i64> = ledger::completed_counts(&mut conn, org, &ids)
            .await
            .map_err(from_diesel)?
            .into_iter()
            .map(|(id, n)| (id.0, n))
            .collect();
        Ok(top
            .into_iter()
            .map(|agent| {
                let n = completed.get(&agent.id.as_uuid()).copied().unwrap_or(0);
                (agent, u64::try_from(n).unwrap_or(0))
            })
            .collect())
    }
}
