//! The credits of one organization on the in-memory store, read whole (decision D-101):
//! every agent, the treasury, every task and escrow, both ledgers and the event count,
//! so a test can state the conservation equation and that a refusal changed nothing.

use futures_executor::block_on;
use muster_domain::model::{
    Agent, AgentId, CreditKind, LedgerEntry, OrgId, Task, TaskStatus, Treasury, TreasuryEntry,
    TreasuryKind,
};
use muster_domain::ports::{
    AgentFilter, AgentRepository, EventFilter, EventLog, TaskFilter, TaskRepository,
    TreasuryRepository,
};

use super::world::World;

/// Everything that holds or records credits in one organization.
#[derive(Debug, Clone, PartialEq)]
pub struct Books {
    /// Every agent, by ascending id.
    pub agents: Vec<Agent>,
    /// The treasury.
    pub treasury: Treasury,
    /// Every task, by ascending id.
    pub tasks: Vec<Task>,
    /// Every agent's ledger rows, newest first per agent, agents by ascending id.
    pub ledger: Vec<LedgerEntry>,
    /// The treasury's ledger, newest first.
    pub treasury_entries: Vec<TreasuryEntry>,
    /// How many audit events the organization has.
    pub events: u64,
}

/// More than any test makes.
const ALL: u32 = 100_000;

impl Books {
    /// The books of `world`'s organization, as committed now.
    pub fn of(world: &World) -> Self {
        Self::of_org(world, world.org)
    }

    /// The books of `org` in `world`'s store.
    pub fn of_org(world: &World, org: OrgId) -> Self {
        let store = &world.store;
        let mut agents = block_on(AgentRepository::list(
            store,
            org,
            &AgentFilter::default(),
            None,
            ALL,
        ))
        .unwrap();
        agents.sort_by_key(|a| a.id);
        let mut tasks = block_on(TaskRepository::list(
            store,
            org,
            &TaskFilter::default(),
            None,
            ALL,
        ))
        .unwrap();
        tasks.sort_by_key(|t| t.id);
        let ledger = agents
            .iter()
            .flat_map(|a| block_on(store.ledger(org, a.id, None, ALL)).unwrap())
            .collect();
        let events = block_on(EventLog::list(store, org, &EventFilter::default(), 0, 1))
            .unwrap()
            .total;
        Self {
            treasury: block_on(TreasuryRepository::treasury(store, org)).unwrap(),
            treasury_entries: block_on(TreasuryRepository::history(store, org, None, ALL)).unwrap(),
            agents,
            tasks,
            ledger,
            events,
        }
    }

    /// The agent `id`.
    pub fn agent(&self, id: AgentId) -> &Agent {
        self.agents.iter().find(|a| a.id == id).unwrap()
    }

    /// The balance of the agent `id`.
    pub fn balance(&self, id: AgentId) -> i64 {
        self.agent(id).current_balance
    }

    /// The rewards held for tasks that are neither done nor cancelled.
    pub fn escrow(&self) -> i64 {
        self.tasks
            .iter()
            .filter(|t| !matches!(t.status, TaskStatus::Done | TaskStatus::Cancelled))
            .map(|t| t.reward)
            .sum()
    }

    /// Every credit ever created: grants to agents and to the treasury.
    pub fn granted(&self) -> i64 {
        let to_agents: i64 = self
            .ledger
            .iter()
            .filter(|e| e.kind == CreditKind::Granted)
            .map(|e| e.amount)
            .sum();
        let to_treasury: i64 = self
            .treasury_entries
            .iter()
            .filter(|e| e.kind == TreasuryKind::Granted)
            .map(|e| e.amount)
            .sum();
        to_agents + to_treasury
    }

    /// Every credit ever destroyed: agents' spends and runs' usage (positive).
    pub fn spent(&self) -> i64 {
        -self
            .ledger
            .iter()
            .filter(|e| matches!(e.kind, CreditKind::Spent | CreditKind::Usage))
            .map(|e| e.amount)
            .sum::<i64>()
    }

    /// The credits that exist now: agents' balances, the treasury, open escrows.
    pub fn held(&self) -> i64 {
        self.agents.iter().map(|a| a.current_balance).sum::<i64>()
            + self.treasury.balance
            + self.escrow()
    }

    /// What must hold at every commit (decision D-101): held = granted − spent; no
    /// balance, treasury or reward below 0; every ledger adds up to its balance, its
    /// newest row showing it; every escrow row names a task.
    pub fn check(&self) -> Result<(), String> {
        let (held, granted, spent) = (self.held(), self.granted(), self.spent());
        if held != granted - spent {
            return Err(format!(
                "held {held} != granted {granted} - spent {spent} (agents {:?}, treasury {}, escrow {})",
                self.agents
                    .iter()
                    .map(|a| a.current_balance)
                    .collect::<Vec<_>>(),
                self.treasury.balance,
                self.escrow()
            ));
        }
        if let Some(agent) = self.agents.iter().find(|a| a.current_balance < 0) {
            return Err(format!(
                "{} is at {}",
                agent.handle.as_str(),
                agent.current_balance
            ));
        }
        if self.treasury.balance < 0 {
            return Err(format!("the treasury is at {}", self.treasury.balance));
        }
        if let Some(task) = self.tasks.iter().find(|t| t.reward < 0) {
            return Err(format!("task {} holds {}", task.id, task.reward));
        }
        for agent in &self.agents {
            let rows: Vec<&LedgerEntry> = self
                .ledger
                .iter()
                .filter(|e| e.agent_id == agent.id)
                .collect();
            let sum: i64 = rows.iter().map(|e| e.amount).sum();
            if sum != agent.current_balance {
                return Err(format!(
                    "{}'s ledger adds up to {sum}, its balance is {}",
                    agent.handle.as_str(),
                    agent.current_balance
                ));
            }
            if let Some(newest) = rows.first()
                && newest.balance_after != agent.current_balance
            {
                return Err(format!(
                    "{}'s newest row: {newest:?}",
                    agent.handle.as_str()
                ));
            }
        }
        let sum: i64 = self.treasury_entries.iter().map(|e| e.amount).sum();
        if sum != self.treasury.balance {
            return Err(format!(
                "the treasury's ledger adds up to {sum}, its balance is {}",
                self.treasury.balance
            ));
        }
        if let Some(newest) = self.treasury_entries.first()
            && newest.balance_after != self.treasury.balance
        {
            return Err(format!("the treasury's newest row: {newest:?}"));
        }
        let escrow_rows = self
            .ledger
            .iter()
            .filter(|e| matches!(e.kind, CreditKind::Escrowed | CreditKind::Refunded))
            .map(|e| e.task_id)
            .chain(
                self.treasury_entries
                    .iter()
                    .filter(|e| e.kind != TreasuryKind::Granted)
                    .map(|e| e.task_id),
            );
        for task_id in escrow_rows {
            if !task_id.is_some_and(|id| self.tasks.iter().any(|t| t.id == id)) {
                return Err(format!("an escrow row names task {task_id:?}"));
            }
        }
        Ok(())
    }
}
