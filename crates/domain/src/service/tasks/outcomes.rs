//! What a task's move is worth to its assignee: the completion reward with the parent's
//! management fee (decision D-58) and reputation (D-63), written in the move's own
//! transaction.

use time::OffsetDateTime;

use super::TaskService;
use crate::model::{
    Actor, Agent, AgentId, AgentStatus, AuditEvent, CreditKind, CreditsEarned, Event, LedgerEntry,
    LedgerEntryId, ReputationEventId, Task, TaskStatus,
};
use crate::ports::{Lock, Transaction};
use crate::rules::reputation;
use crate::rules::reward::split_reward;
use crate::service::ServiceError;
use crate::service::locks::lock_agents;
use crate::service::scoring::rescore;

impl TaskService {
    /// Pays and scores the assignee of `after` for its move from `before`: locks the
    /// assignee (and, for a reward, its parent), updates their balances and score, and
    /// stores the ledger rows and reputation events. Answers the audit events to write.
    /// Agents are locked in ascending id order, after the task: one order for every use
    /// case (transfers too), so concurrent changes queue instead of deadlocking.
    pub(super) async fn settle(
        &self,
        tx: &mut dyn Transaction,
        actor: &Actor,
        before: &Task,
        after: &Task,
        now: OffsetDateTime,
    ) -> Result<Vec<Event>, ServiceError> {
        let Some(assignee_id) = after.assignee_id else {
            return Ok(Vec::new());
        };
        let kinds = reputation::outcome(before.status, after.status, after.due_at, now);
        let paid = after.status == TaskStatus::Done && self.reward > 0;
        if kinds.is_empty() && !paid {
            return Ok(Vec::new());
        }
        // The parent never changes, so a plain read finds it; then both rows are locked
        // in the one agent order (ascending id).
        let Some(unlocked) = tx.agent(actor.org_id, assignee_id, Lock::Nothing).await? else {
            return Ok(Vec::new());
        };
        let parent_id = unlocked.parent_id.filter(|_| paid);
        let ids: Vec<AgentId> = std::iter::once(assignee_id).chain(parent_id).collect();
        let mut locked = lock_agents(tx, actor.org_id, &ids).await?;
        let parent = match parent_id {
            Some(_) => locked.pop().filter(|p| p.status != AgentStatus::Revoked),
            None => None,
        };
        let mut assignee = locked.remove(0);
        let mut events = Vec::new();
        let mut ledger = Vec::new();
        if paid {
            let split = split_reward(self.reward, parent.as_ref().map(|p| p.management_fee_pct));
            let (entry, event) =
                self.credit(actor, &mut assignee, split.to_assignee, None, after, now);
            ledger.push(entry);
            events.push(event);
            if let Some(mut parent) = parent.filter(|_| split.fee > 0) {
                let (entry, event) =
                    self.credit(actor, &mut parent, split.fee, Some(assignee.id), after, now);
                ledger.push(entry);
                events.push(event);
                tx.update_agent(&parent, now).await?;
            }
        }
        let mut changes = Vec::new();
        for kind in kinds {
            let reason = format!("task {} {}", after.id, kind.as_str().replace('_', " "));
            let id = ReputationEventId::from_uuid(self.ids.new_id());
            let amount = kind.fixed_amount().unwrap_or(0);
            let scored = rescore(
                &mut assignee,
                id,
                (kind, amount),
                reason,
                Some(after.id),
                now,
            );
            events.push(self.event(actor, assignee.id.as_uuid(), now, &scored.audit));
            changes.push(scored.event);
        }
        tx.update_agent(&assignee, now).await?;
        if !ledger.is_empty() {
            tx.insert_ledger_entries(&ledger).await?;
        }
        if !changes.is_empty() {
            tx.insert_reputation_events(&changes).await?;
        }
        Ok(events)
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
        agent.current_balance = agent.current_balance.saturating_add(amount);
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
