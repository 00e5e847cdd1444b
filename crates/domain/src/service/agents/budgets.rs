//! Budgets: the period limit, what is left of it, and who is close to it (decisions
//! D-57, D-60, D-61).

use time::OffsetDateTime;

use super::{AgentService, budget_limit, locked_agent};
use crate::model::{Actor, Agent, AgentBudgetUpdated, AgentId, AgentStatus, AuditEvent};
use crate::policy;
use crate::ports::transact;
use crate::rules::budget::{
    ALERT_PERCENT, budget_remaining, check_spend, roll_over, spendable, utilization,
};
use crate::service::ServiceError;

/// The budget status object of `GET /agents/:id/budget` (decision D-57).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetStatus {
    /// The agent.
    pub agent_id: AgentId,
    /// Credits held.
    pub current_balance: i64,
    /// Credits it may spend per period; `None` for no limit.
    pub budget_period_limit: Option<i64>,
    /// Spent this period.
    pub budget_period_spent: i64,
    /// `limit - spent`, below 0 once spending passed a lowered limit; `None` without a
    /// limit.
    pub budget_remaining: Option<i64>,
    /// Start of the current period.
    pub budget_period_start: OffsetDateTime,
    /// `round(100 × spent / limit)`; 100 when the limit is 0; `None` without a limit.
    pub utilization_percent: Option<i64>,
}

impl BudgetStatus {
    /// The status of `agent` (its period already rolled over when due).
    pub fn of(agent: &Agent) -> Self {
        Self {
            agent_id: agent.id,
            current_balance: agent.current_balance,
            budget_period_limit: agent.budget_period_limit,
            budget_period_spent: agent.budget_period_spent,
            budget_remaining: budget_remaining(
                agent.budget_period_limit,
                agent.budget_period_spent,
            ),
            budget_period_start: agent.budget_period_start,
            utilization_percent: utilization(agent.budget_period_limit, agent.budget_period_spent),
        }
    }
}

/// The answer of `GET /agents/:id/budget/can-spend` (decision D-60).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CanSpend {
    /// Active, with the balance, and within the period limit.
    pub can_spend: bool,
    /// The balance, capped by the period remainder.
    pub remaining: i64,
}

impl AgentService {
    /// The budget status of the agent `id`.
    pub async fn budget(&self, actor: &Actor, id: AgentId) -> Result<BudgetStatus, ServiceError> {
        Ok(BudgetStatus::of(&self.find(actor.org_id, id).await?))
    }

    /// Sets the period limit of the agent `id` (decision D-57): its parent, a level-10
    /// agent or an admin. `reset_period` also starts the period afresh, nothing spent.
    pub async fn set_budget(
        &self,
        actor: &Actor,
        id: AgentId,
        limit: i64,
        reset_period: bool,
    ) -> Result<BudgetStatus, ServiceError> {
        policy::may_write(actor)?;
        let limit = budget_limit(limit)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut agent = locked_agent(tx, actor.org_id, id).await?;
                policy::may_set_budget(&actor, &agent)?;
                let now = service.clock.now();
                roll_over(&mut agent, service.period, now);
                agent.budget_period_limit = Some(limit);
                if reset_period {
                    agent.budget_period_spent = 0;
                    agent.budget_period_start = service.period.start_of(now);
                }
                tx.update_agent(&agent, now).await?;
                let updated = AuditEvent::AgentBudgetUpdated(AgentBudgetUpdated {
                    budget_period_limit: Some(limit),
                });
                tx.append_events(&[service.event(&actor, id, now, &updated)])
                    .await?;
                Ok(BudgetStatus::of(&agent))
            })
        })
        .await
    }

    /// Whether the agent `id` could spend `amount` now (decision D-60).
    pub async fn can_spend(
        &self,
        actor: &Actor,
        id: AgentId,
        amount: i64,
    ) -> Result<CanSpend, ServiceError> {
        let agent = self.find(actor.org_id, id).await?;
        Ok(CanSpend {
            can_spend: agent.status == AgentStatus::Active && check_spend(&agent, amount).is_ok(),
            remaining: spendable(&agent),
        })
    }

    /// Active agents with a limit above 0 that used at least 80% of it, highest
    /// utilization first (decision D-61).
    pub async fn budget_alerts(&self, actor: &Actor) -> Result<Vec<BudgetStatus>, ServiceError> {
        let mut alerts = self.budgets(actor).await?;
        alerts.retain(|status| {
            status
                .utilization_percent
                .is_some_and(|u| u >= ALERT_PERCENT)
        });
        Ok(alerts)
    }

    /// The budget status of every active agent with a limit above 0, its period rolled
    /// over when due, highest utilization first (the dashboard's spend page).
    pub async fn budgets(&self, actor: &Actor) -> Result<Vec<BudgetStatus>, ServiceError> {
        let now = self.clock.now();
        let mut statuses: Vec<BudgetStatus> = self
            .agents
            .limited(actor.org_id)
            .await?
            .into_iter()
            .map(|agent| BudgetStatus::of(&self.current(agent, now)))
            .collect();
        statuses.sort_by(|a, b| {
            b.utilization_percent
                .cmp(&a.utilization_percent)
                .then(a.agent_id.cmp(&b.agent_id))
        });
        Ok(statuses)
    }
}
