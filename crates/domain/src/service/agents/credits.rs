//! Credits: balance, grants, spending, transfers and the ledger (decisions D-58, D-59).
//! Every movement locks the agents it touches in ascending id order
//! ([`lock_agents`]), checks the balance and the period limit on the locked rows, and
//! writes the new balances with one ledger row per agent in the same transaction: a
//! balance never goes negative and a period limit is never exceeded, however many
//! requests race.

use time::OffsetDateTime;
use uuid::Uuid;

use super::AgentService;
use crate::ValidationError;
use crate::model::{
    Actor, Agent, AgentId, AgentStatus, AuditEvent, CreditKind, CreditsGranted, CreditsTransferred,
    LedgerEntry, LedgerEntryId, Reason,
};
use crate::policy;
use crate::ports::transact;
use crate::rules::budget::{SpendRefusal, check_spend, credit, debit, roll_over};
use crate::service::locks::lock_agents;
use crate::service::{Conflict, Page, PageRequest, ServiceError};

/// An amount of credits to move: 1..=1,000,000,000 (decision D-59).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CreditAmount(i64);

impl CreditAmount {
    /// Largest amount of one movement.
    pub const MAX: i64 = 1_000_000_000;

    /// Checks the range.
    ///
    /// ```
    /// use muster_domain::service::CreditAmount;
    /// assert!(CreditAmount::new(1).is_ok() && CreditAmount::new(1_000_000_000).is_ok());
    /// assert!(CreditAmount::new(0).is_err() && CreditAmount::new(1_000_000_001).is_err());
    /// ```
    pub fn new(value: i64) -> Result<Self, ValidationError> {
        if (1..=Self::MAX).contains(&value) {
            Ok(Self(value))
        } else {
            Err(ValidationError::new(format!(
                "amount must be between 1 and {}",
                Self::MAX
            )))
        }
    }

    /// The number.
    pub const fn get(self) -> i64 {
        self.0
    }
}

/// The result of a transfer (decision D-59).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// The transfer (the id of the sender's ledger row).
    pub transfer_id: Uuid,
    /// The sender.
    pub from_agent_id: AgentId,
    /// The receiver.
    pub to_agent_id: AgentId,
    /// How many credits.
    pub amount: i64,
    /// Why.
    pub reason: Option<String>,
    /// The sender's balance afterwards.
    pub from_balance: i64,
    /// The receiver's balance afterwards.
    pub to_balance: i64,
    /// When.
    pub created_at: OffsetDateTime,
}

/// One page of an agent's ledger, newest first.
pub type LedgerPage = Page<LedgerEntry, LedgerEntryId>;

impl AgentService {
    /// The agent `id` with its balance.
    pub async fn balance(&self, actor: &Actor, id: AgentId) -> Result<Agent, ServiceError> {
        self.find(actor.org_id, id).await
    }

    /// Creates `amount` credits for the active agent `id` (decision D-58): admin users
    /// and founder or admin agents only.
    pub async fn grant(
        &self,
        actor: &Actor,
        id: AgentId,
        amount: CreditAmount,
        reason: Option<Reason>,
    ) -> Result<LedgerEntry, ServiceError> {
        policy::may_grant_credits(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut agent = lock_agents(tx, actor.org_id, &[id]).await?.remove(0);
                ensure_active(&agent)?;
                let now = service.clock.now();
                roll_over(&mut agent, service.period, now);
                credit(&mut agent, amount.get());
                let reason = reason.map(|r| r.as_str().to_owned());
                let entry = service.entry(
                    &agent,
                    CreditKind::Granted,
                    amount.get(),
                    reason.as_deref(),
                    None,
                    now,
                );
                tx.update_agent(&agent, now).await?;
                tx.insert_ledger_entries(std::slice::from_ref(&entry))
                    .await?;
                let granted = AuditEvent::CreditsGranted(CreditsGranted {
                    amount: amount.get(),
                    reason,
                    balance_after: agent.current_balance,
                });
                tx.append_events(&[service.event(&actor, id, now, &granted)])
                    .await?;
                Ok(entry)
            })
        })
        .await
    }

    /// Spends `amount` of the calling agent's credits (decision D-58): within its
    /// balance (409) and its period limit (409).
    pub async fn spend(
        &self,
        actor: &Actor,
        amount: CreditAmount,
        reason: Option<Reason>,
    ) -> Result<LedgerEntry, ServiceError> {
        let id = policy::acting_agent(actor)?;
        policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut agent = lock_agents(tx, actor.org_id, &[id]).await?.remove(0);
                let now = service.clock.now();
                roll_over(&mut agent, service.period, now);
                refuse(check_spend(&agent, amount.get()), amount.get())?;
                debit(&mut agent, amount.get());
                let reason = reason.map(|r| r.as_str().to_owned());
                let entry = service.entry(
                    &agent,
                    CreditKind::Spent,
                    -amount.get(),
                    reason.as_deref(),
                    None,
                    now,
                );
                tx.update_agent(&agent, now).await?;
                tx.insert_ledger_entries(std::slice::from_ref(&entry))
                    .await?;
                let spent = AuditEvent::CreditsSpent(CreditsGranted {
                    amount: amount.get(),
                    reason,
                    balance_after: agent.current_balance,
                });
                tx.append_events(&[service.event(&actor, id, now, &spent)])
                    .await?;
                Ok(entry)
            })
        })
        .await
    }

    /// Sends `amount` credits from the calling agent to `to` (decision D-59): not to
    /// itself (400); to an active agent of the organization (404, 409) that is its
    /// child, parent or sibling unless the caller is at level 10 (403); within the
    /// sender's balance and period limit (409). Two ledger rows, one transaction.
    pub async fn transfer(
        &self,
        actor: &Actor,
        to: AgentId,
        amount: CreditAmount,
        reason: Option<Reason>,
    ) -> Result<Transfer, ServiceError> {
        let from = policy::acting_agent(actor)?;
        policy::may_write(actor)?;
        if from == to {
            return Err(ValidationError::new("cannot transfer credits to yourself").into());
        }
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut pair = lock_agents(tx, actor.org_id, &[from, to]).await?;
                let mut receiver = pair.remove(1);
                let mut sender = pair.remove(0);
                ensure_active(&receiver)?;
                policy::may_transfer(&sender, &receiver)?;
                let now = service.clock.now();
                roll_over(&mut sender, service.period, now);
                refuse(check_spend(&sender, amount.get()), amount.get())?;
                debit(&mut sender, amount.get());
                credit(&mut receiver, amount.get());
                let reason = reason.map(|r| r.as_str().to_owned());
                let out = service.entry(
                    &sender,
                    CreditKind::TransferOut,
                    -amount.get(),
                    reason.as_deref(),
                    Some(to),
                    now,
                );
                let into = service.entry(
                    &receiver,
                    CreditKind::TransferIn,
                    amount.get(),
                    reason.as_deref(),
                    Some(from),
                    now,
                );
                tx.update_agent(&sender, now).await?;
                tx.update_agent(&receiver, now).await?;
                tx.insert_ledger_entries(&[out.clone(), into]).await?;
                let transfer = Transfer {
                    transfer_id: out.id.as_uuid(),
                    from_agent_id: from,
                    to_agent_id: to,
                    amount: amount.get(),
                    reason: reason.clone(),
                    from_balance: sender.current_balance,
                    to_balance: receiver.current_balance,
                    created_at: now,
                };
                let moved = AuditEvent::CreditsTransferred(CreditsTransferred {
                    transfer_id: transfer.transfer_id,
                    from_agent_id: from,
                    to_agent_id: to,
                    amount: amount.get(),
                    reason,
                });
                tx.append_events(&[service.event(&actor, from, now, &moved)])
                    .await?;
                Ok(transfer)
            })
        })
        .await
    }

    /// The ledger of the agent `id`, newest first (decision D-7 paging).
    pub async fn history(
        &self,
        actor: &Actor,
        id: AgentId,
        page: PageRequest<LedgerEntryId>,
    ) -> Result<LedgerPage, ServiceError> {
        page.check()?;
        self.find(actor.org_id, id).await?;
        let rows = self
            .agents
            .ledger(actor.org_id, id, page.cursor, page.fetch())
            .await?;
        Ok(Page::cut(rows, page.limit, |e| e.id))
    }

    /// A ledger row of `agent` (whose balance already moved) for `amount`.
    fn entry(
        &self,
        agent: &Agent,
        kind: CreditKind,
        amount: i64,
        reason: Option<&str>,
        counterparty: Option<AgentId>,
        now: OffsetDateTime,
    ) -> LedgerEntry {
        LedgerEntry {
            id: LedgerEntryId::from_uuid(self.ids.new_id()),
            org_id: agent.org_id,
            agent_id: agent.id,
            kind,
            amount,
            balance_after: agent.current_balance,
            reason: reason.map(str::to_owned),
            task_id: None,
            counterparty_id: counterparty,
            created_at: now,
        }
    }
}

/// Credits move only to and from active agents.
fn ensure_active(agent: &Agent) -> Result<(), Conflict> {
    if agent.status == AgentStatus::Active {
        Ok(())
    } else {
        Err(Conflict::AgentNotActive { agent: agent.id })
    }
}

/// A refused spend (or escrow) of `amount` as its 409.
pub(crate) fn refuse(verdict: Result<(), SpendRefusal>, amount: i64) -> Result<(), Conflict> {
    verdict.map_err(|refusal| match refusal {
        SpendRefusal::Insufficient { balance } => Conflict::InsufficientBalance { balance, amount },
        SpendRefusal::OverLimit { remaining } => Conflict::BudgetExceeded { remaining },
    })
}
