//! What a task's move is worth: its escrowed reward paid out with the parent's management
//! fee or given back (decisions D-58, D-101), and the assignee's reputation (D-63), written
//! in the move's own transaction.

use time::OffsetDateTime;

use super::TaskService;
use super::escrow::{Books, Purse, give_back};
use crate::model::{
    Actor, Agent, AgentId, AgentStatus, AuditEvent, Author, CreditKind, CreditsEarned, Event,
    LedgerEntry, LedgerEntryId, OrgId, ReputationEventId, ReputationKind, RewardPayer, Task,
    TaskStatus,
};
use crate::ports::{AgentsTx, LedgerTx, Lock};
use crate::rules::reputation;
use crate::rules::reward::{Settlement, settle, split_reward};
use crate::service::ServiceError;
use crate::service::locks::lock_agents;
use crate::service::scoring::rescore;

impl TaskService {
    /// Settles the move of `after` from `before`: the escrow paid to the assignee (with
    /// its parent's fee) or given back to the payer (decision D-101), and the assignee's
    /// reputation, none of it for finishing a work order of its own line. Locks the
    /// agents it changes in ascending id order after the task, then the treasury: one
    /// order for every use case, so concurrent changes queue instead of deadlocking.
    /// Answers the audit events to write.
    pub(super) async fn settle<T: AgentsTx + LedgerTx + ?Sized>(
        &self,
        tx: &mut T,
        actor: &Actor,
        before: &Task,
        after: &Task,
        now: OffsetDateTime,
    ) -> Result<Vec<Event>, ServiceError> {
        let org = actor.org_id;
        let settlement = settle(
            before.status,
            after.status,
            before.reward,
            before.reward_payer,
            after.assignee_id,
        );
        let kinds = self.scored(tx, org, before, after, now).await?;
        if kinds.is_empty() && settlement == Settlement::Keep {
            return Ok(Vec::new());
        }
        let ids = to_lock(tx, org, before, after, settlement, !kinds.is_empty()).await?;
        let mut agents = lock_agents(tx, org, &ids).await?;
        let untouched = agents.clone();
        let mut treasury = None;
        let mut events = Vec::new();
        let mut books = Books::default();
        match settlement {
            Settlement::Keep => {}
            Settlement::Pay { to, amount } => {
                for (entry, event) in self.pay(actor, &mut agents, to, amount, after, now) {
                    books.agent_row(entry);
                    events.push(event);
                }
            }
            Settlement::Refund { amount, reason } => {
                let purse = match before.reward_payer {
                    RewardPayer::Agent(payer) => match locked_mut(&mut agents, payer) {
                        Some(agent) => Purse::Agent(agent),
                        None => return Err(ServiceError::internal("the payer was not locked")),
                    },
                    RewardPayer::Treasury => {
                        Purse::Treasury(treasury.insert(tx.treasury(org, Lock::Update).await?))
                    }
                };
                let ids = self.ids.as_ref();
                events.push(give_back(
                    ids,
                    actor,
                    purse,
                    after,
                    (amount, reason),
                    &mut books,
                    now,
                ));
            }
        }
        let mut changes = Vec::new();
        if let Some(assignee) = after.assignee_id.and_then(|id| locked_mut(&mut agents, id)) {
            for kind in kinds {
                let reason = format!("task {} {}", after.id, kind.as_str().replace('_', " "));
                let id = ReputationEventId::from_uuid(self.ids.new_id());
                let amount = kind.fixed_amount().unwrap_or(0);
                let scored = rescore(assignee, id, (kind, amount), reason, Some(after.id), now);
                events.push(self.event(actor, assignee.id.as_uuid(), now, &scored.audit));
                changes.push(scored.event);
            }
        }
        for (agent, was) in agents.iter().zip(&untouched) {
            if agent != was {
                tx.update_agent(agent, now).await?;
            }
        }
        if let Some(treasury) = &treasury {
            tx.update_treasury(treasury).await?;
        }
        books.write(tx).await?;
        if !changes.is_empty() {
            tx.insert_reputation_events(&changes).await?;
        }
        Ok(events)
    }

    /// What the assignee's reputation gets from the move: none of the completion for a
    /// work order of its own line.
    async fn scored<T: AgentsTx + ?Sized>(
        &self,
        tx: &mut T,
        org: OrgId,
        before: &Task,
        after: &Task,
        now: OffsetDateTime,
    ) -> Result<Vec<ReputationKind>, ServiceError> {
        let Some(assignee) = after.assignee_id else {
            return Ok(Vec::new());
        };
        let kinds = reputation::outcome(before.status, after.status, after.due_at, now);
        if after.status == TaskStatus::Done
            && !kinds.is_empty()
            && let Some(creator) = after.creator.and_then(Author::agent)
            && self.in_own_line(tx, org, creator, assignee).await?
        {
            return Ok(reputation::earned_from_own_line(kinds));
        }
        Ok(kinds)
    }

    /// Pays `amount` from the escrow of `task` to the locked assignee `to`, with its
    /// locked parent's fee out of it (none to a revoked parent): the ledger rows and
    /// `credits.earned` events.
    fn pay(
        &self,
        actor: &Actor,
        agents: &mut [Agent],
        to: AgentId,
        amount: i64,
        task: &Task,
        now: OffsetDateTime,
    ) -> Vec<(LedgerEntry, Event)> {
        let parent = locked(agents, to)
            .and_then(|a| a.parent_id)
            .and_then(|p| locked(agents, p))
            .filter(|p| p.status != AgentStatus::Revoked)
            .map(|p| (p.id, p.management_fee_pct));
        let split = split_reward(amount, parent.map(|(_, pct)| pct));
        let mut paid = Vec::new();
        if let Some(assignee) = locked_mut(agents, to) {
            paid.push(self.credit(actor, assignee, split.to_assignee, None, task, now));
        }
        if let Some((parent, _)) = parent.filter(|_| split.fee > 0)
            && let Some(parent) = locked_mut(agents, parent)
        {
            paid.push(self.credit(actor, parent, split.fee, Some(to), task, now));
        }
        paid
    }

    /// Whether `creator` is `assignee` or in its line (an ancestor or a descendant):
    /// both parent chains read with no lock (parents never change), each at most
    /// [`MAX_LINE`] long.
    async fn in_own_line<T: AgentsTx + ?Sized>(
        &self,
        tx: &mut T,
        org: OrgId,
        creator: AgentId,
        assignee: AgentId,
    ) -> Result<bool, ServiceError> {
        if creator == assignee {
            return Ok(true);
        }
        let above_assignee = ancestors(tx, org, assignee).await?;
        if above_assignee.contains(&creator) {
            return Ok(true);
        }
        let above_creator = ancestors(tx, org, creator).await?;
        Ok(reputation::in_own_line(
            creator,
            assignee,
            &above_assignee,
            &above_creator,
        ))
    }

    /// Adds `amount` credits earned by finishing `task` to `agent`: its reward, or, with
    /// `fee_from` (the child whose reward it comes out of), a management fee. Answers the
    /// ledger row and the `credits.earned` event.
    fn credit(
        &self,
        actor: &Actor,
        agent: &mut Agent,
        amount: i64,
        fee_from: Option<AgentId>,
        task: &Task,
        now: OffsetDateTime,
    ) -> (LedgerEntry, Event) {
        let (kind, source) = match fee_from {
            Some(_) => (CreditKind::Fee, "management_fee"),
            None => (CreditKind::Earned, "reward"),
        };
        crate::rules::budget::credit(agent, amount);
        let entry = LedgerEntry {
            id: LedgerEntryId::from_uuid(self.ids.new_id()),
            org_id: actor.org_id,
            agent_id: agent.id,
            kind,
            amount,
            balance_after: agent.current_balance,
            reason: Some(format!("{source} for task {}", task.id)),
            task_id: Some(task.id),
            counterparty_id: fee_from,
            created_at: now,
        };
        let earned = AuditEvent::CreditsEarned(CreditsEarned {
            amount,
            task_id: task.id,
            source: source.to_owned(),
            balance_after: agent.current_balance,
        });
        (entry, self.event(actor, agent.id.as_uuid(), now, &earned))
    }
}

/// The agents a settlement changes, in ascending id order: the assignee (when `scored`
/// or paid), its parent (paid a fee; parents never change, so a plain read finds it) and
/// the paying agent (given back its escrow).
async fn to_lock<T: AgentsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    before: &Task,
    after: &Task,
    settlement: Settlement,
    scored: bool,
) -> Result<Vec<AgentId>, ServiceError> {
    let mut ids: Vec<AgentId> = Vec::new();
    if let Some(assignee) = after.assignee_id
        && (scored || matches!(settlement, Settlement::Pay { .. }))
    {
        ids.push(assignee);
    }
    if let Settlement::Pay { to, .. } = settlement
        && let Some(parent) = tx
            .agent(org, to, Lock::Nothing)
            .await?
            .and_then(|a| a.parent_id)
    {
        ids.push(parent);
    }
    if let Settlement::Refund { .. } = settlement
        && let Some(payer) = before.reward_payer.agent()
    {
        ids.push(payer);
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// Longest parent chain walked: deeper than any hierarchy of levels 10 to 1.
const MAX_LINE: usize = 32;

/// The ancestors of `agent`, its parent first.
async fn ancestors<T: AgentsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    agent: AgentId,
) -> Result<Vec<AgentId>, ServiceError> {
    let mut chain = Vec::new();
    let mut next = tx
        .agent(org, agent, Lock::Nothing)
        .await?
        .and_then(|a| a.parent_id);
    while let Some(parent) = next {
        if chain.len() >= MAX_LINE || chain.contains(&parent) || parent == agent {
            break;
        }
        chain.push(parent);
        next = tx
            .agent(org, parent, Lock::Nothing)
            .await?
            .and_then(|a| a.parent_id);
    }
    Ok(chain)
}

/// The locked agent `id`.
fn locked(agents: &[Agent], id: AgentId) -> Option<&Agent> {
    agents.iter().find(|a| a.id == id)
}

/// The locked agent `id`, to change.
fn locked_mut(agents: &mut [Agent], id: AgentId) -> Option<&mut Agent> {
    agents.iter_mut().find(|a| a.id == id)
}
