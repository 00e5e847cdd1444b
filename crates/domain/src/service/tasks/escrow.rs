//! A task's reward in escrow (decision D-101): taken from its payer when it is set or
//! raised, given back when it is lowered or the task is cancelled (or done by its own
//! payer, or by nobody), paid to the assignee when the task is done
//! ([`outcomes`](super::outcomes)). Each movement is a ledger row with the balance it
//! left and a `credits.*` event on the task.

use time::OffsetDateTime;

use super::TaskService;
use crate::model::{
    Actor, Agent, AuditEvent, CreditKind, CreditsEscrowed, CreditsRefunded, Event, EventId,
    LedgerEntry, LedgerEntryId, OrgId, PayerRef, RewardPayer, Task, Treasury, TreasuryEntry,
    TreasuryEntryId, TreasuryKind,
};
use crate::ports::{AgentsTx, IdGenerator, LedgerTx, Lock};
use crate::rules::budget::{check_spend, debit, roll_over};
use crate::service::agents::refuse;
use crate::service::locks::lock_agents;
use crate::service::{Conflict, ServiceError};

/// A payer's balance, locked, that a reward leaves or comes back to.
pub(crate) enum Purse<'a> {
    /// The paying agent (its budget period rolled over).
    Agent(&'a mut Agent),
    /// The organization's treasury.
    Treasury(&'a mut Treasury),
}

impl Purse<'_> {
    /// Whether `amount` may leave it now: within an agent's balance and budget period,
    /// or within the treasury's balance.
    fn can_fund(&self, amount: i64) -> Result<(), Conflict> {
        match self {
            Self::Agent(agent) => refuse(check_spend(agent, amount), amount),
            Self::Treasury(treasury) if treasury.balance < amount => {
                Err(Conflict::TreasuryInsufficient {
                    balance: treasury.balance,
                    amount,
                })
            }
            Self::Treasury(_) => Ok(()),
        }
    }

    /// Who it is, on the wire.
    fn payer(&self) -> PayerRef {
        match self {
            Self::Agent(agent) => PayerRef {
                kind: RewardPayer::Agent(agent.id).kind(),
                id: agent.id.as_uuid(),
            },
            Self::Treasury(treasury) => PayerRef {
                kind: RewardPayer::Treasury.kind(),
                id: treasury.org_id.as_uuid(),
            },
        }
    }

    /// Its balance.
    fn balance(&self) -> i64 {
        match self {
            Self::Agent(agent) => agent.current_balance,
            Self::Treasury(treasury) => treasury.balance,
        }
    }
}

/// The ledger rows a change writes, in order: agents' and the treasury's.
#[derive(Debug, Default)]
pub(crate) struct Books {
    ledger: Vec<LedgerEntry>,
    treasury: Vec<TreasuryEntry>,
}

impl Books {
    /// Adds an agent's ledger row.
    pub(crate) fn agent_row(&mut self, entry: LedgerEntry) {
        self.ledger.push(entry);
    }

    /// Writes the rows (after the task they name is stored).
    pub(crate) async fn write<T: LedgerTx + ?Sized>(self, tx: &mut T) -> Result<(), ServiceError> {
        if !self.ledger.is_empty() {
            tx.insert_ledger_entries(&self.ledger).await?;
        }
        if !self.treasury.is_empty() {
            tx.insert_treasury_entries(&self.treasury).await?;
        }
        Ok(())
    }
}

impl TaskService {
    /// Whether `payer` looks able to fund `amount`, read without a lock: a default
    /// reward its payer cannot fund locks nothing.
    pub(super) async fn seems_funded<T: AgentsTx + LedgerTx + ?Sized>(
        &self,
        tx: &mut T,
        org: OrgId,
        payer: RewardPayer,
        amount: i64,
        now: OffsetDateTime,
    ) -> Result<bool, ServiceError> {
        Ok(match payer {
            RewardPayer::Agent(id) => match tx.agent(org, id, Lock::Nothing).await? {
                Some(mut agent) => {
                    roll_over(&mut agent, self.period, now);
                    check_spend(&agent, amount).is_ok()
                }
                None => false,
            },
            RewardPayer::Treasury => tx.treasury(org, Lock::Nothing).await?.balance >= amount,
        })
    }

    /// Changes the reward of `task` (locked, open) to `reward`: the difference is taken
    /// from its payer or given back to it, locked after the task. Answers the events.
    pub(super) async fn rereward<T: AgentsTx + LedgerTx + ?Sized>(
        &self,
        tx: &mut T,
        actor: &Actor,
        task: &mut Task,
        reward: i64,
        now: OffsetDateTime,
    ) -> Result<(Vec<Event>, Books), ServiceError> {
        let mut books = Books::default();
        let difference = reward - task.reward;
        let mut agent = None;
        let mut treasury = None;
        let purse = match task.reward_payer {
            RewardPayer::Agent(id) => {
                let locked = agent.insert(lock_agents(tx, task.org_id, &[id]).await?.remove(0));
                roll_over(locked, self.period, now);
                Purse::Agent(locked)
            }
            RewardPayer::Treasury => {
                Purse::Treasury(treasury.insert(tx.treasury(task.org_id, Lock::Update).await?))
            }
        };
        let event = if difference > 0 {
            take(
                self.ids.as_ref(),
                actor,
                purse,
                task,
                difference,
                &mut books,
                now,
            )?
        } else {
            give_back(
                self.ids.as_ref(),
                actor,
                purse,
                task,
                (-difference, "lowered"),
                &mut books,
                now,
            )
        };
        task.reward = reward;
        if let Some(agent) = &agent {
            tx.update_agent(agent, now).await?;
        }
        if let Some(treasury) = &treasury {
            tx.update_treasury(treasury).await?;
        }
        Ok((vec![event], books))
    }
}

/// Moves `amount` out of `purse` into the escrow of `task`: its ledger row goes to
/// `books`, the `credits.escrowed` event is answered. A purse that cannot fund it is
/// refused (409) and changes nothing.
pub(crate) fn take(
    ids: &dyn IdGenerator,
    actor: &Actor,
    mut purse: Purse<'_>,
    task: &Task,
    amount: i64,
    books: &mut Books,
    now: OffsetDateTime,
) -> Result<Event, Conflict> {
    purse.can_fund(amount)?;
    match &mut purse {
        Purse::Agent(agent) => debit(agent, amount),
        Purse::Treasury(treasury) => {
            treasury.balance -= amount;
            treasury.updated_at = Some(now);
        }
    }
    book(ids, actor, &purse, -amount, task, books, now);
    let escrowed = AuditEvent::CreditsEscrowed(CreditsEscrowed {
        amount,
        payer: purse.payer(),
        balance_after: purse.balance(),
    });
    Ok(task_event(ids, actor, task, now, &escrowed))
}

/// Gives `amount` from the escrow of `task` back to `purse` for `reason`: its ledger
/// row goes to `books`, the `credits.refunded` event is answered.
pub(crate) fn give_back(
    ids: &dyn IdGenerator,
    actor: &Actor,
    mut purse: Purse<'_>,
    task: &Task,
    (amount, reason): (i64, &'static str),
    books: &mut Books,
    now: OffsetDateTime,
) -> Event {
    match &mut purse {
        Purse::Agent(agent) => crate::rules::budget::credit(agent, amount),
        Purse::Treasury(treasury) => {
            treasury.balance = treasury.balance.saturating_add(amount);
            treasury.updated_at = Some(now);
        }
    }
    book(ids, actor, &purse, amount, task, books, now);
    let refunded = AuditEvent::CreditsRefunded(CreditsRefunded {
        amount,
        payer: purse.payer(),
        balance_after: purse.balance(),
        reason,
    });
    task_event(ids, actor, task, now, &refunded)
}

/// The ledger row of a movement of `amount` (signed) of `purse` for `task`.
fn book(
    ids: &dyn IdGenerator,
    actor: &Actor,
    purse: &Purse<'_>,
    amount: i64,
    task: &Task,
    books: &mut Books,
    now: OffsetDateTime,
) {
    let (kind, treasury_kind, word) = if amount < 0 {
        (CreditKind::Escrowed, TreasuryKind::Escrowed, "escrow")
    } else {
        (CreditKind::Refunded, TreasuryKind::Refunded, "refund")
    };
    let reason = Some(format!("reward {word} for task {}", task.id));
    match purse {
        Purse::Agent(agent) => books.ledger.push(LedgerEntry {
            id: LedgerEntryId::from_uuid(ids.new_id()),
            org_id: agent.org_id,
            agent_id: agent.id,
            kind,
            amount,
            balance_after: agent.current_balance,
            reason,
            task_id: Some(task.id),
            counterparty_id: None,
            created_at: now,
        }),
        Purse::Treasury(treasury) => books.treasury.push(TreasuryEntry {
            id: TreasuryEntryId::from_uuid(ids.new_id()),
            org_id: treasury.org_id,
            kind: treasury_kind,
            amount,
            balance_after: treasury.balance,
            reason,
            task_id: Some(task.id),
            actor_id: actor.actor_id(),
            created_at: now,
        }),
    }
}

/// The audit record of `what`, done by `actor` to `task` at `at`.
fn task_event(
    ids: &dyn IdGenerator,
    actor: &Actor,
    task: &Task,
    at: OffsetDateTime,
    what: &AuditEvent,
) -> Event {
    Event::record(
        EventId::from_uuid(ids.new_id()),
        actor.org_id,
        actor.actor_id(),
        task.id.as_uuid(),
        at,
        what,
    )
}
