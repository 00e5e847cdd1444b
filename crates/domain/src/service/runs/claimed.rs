//! Credits reserved at claim (decision D-106): a claim with `reserveCredits` holds them
//! for its task while the agent holds the task in progress; the first run the agent
//! starts on it takes them over (its usage draws them first, its end releases the rest),
//! and a task that leaves the agent without one gives them back. The agent's
//! `reserved_credits` always equals what its open runs and its claims hold.

use time::OffsetDateTime;

use crate::model::{AgentId, ClaimReservation, OrgId, Task, TaskId, TaskStatus};
use crate::ports::{AgentsTx, Lock, RunsTx};
use crate::rules::budget::{BudgetPeriod, check_spend, held_back, roll_over, spendable};
use crate::service::locks::lock_agents;
use crate::service::{Conflict, ServiceError};

/// Reserves `credits` of `agent` for its claim of `task`: refused (409
/// `budget_exhausted`) when the agent is held back or the credits do not fit what it may
/// spend. Call in the claim's transaction, after the task is locked and taken; nothing
/// when `credits` is 0.
pub(crate) async fn reserve_for_claim<T: AgentsTx + RunsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    agent: AgentId,
    task: TaskId,
    credits: i64,
    (period, now): (BudgetPeriod, OffsetDateTime),
) -> Result<(), ServiceError> {
    if credits <= 0 {
        return Ok(());
    }
    let mut claimer = lock_agents(tx, org, &[agent]).await?.remove(0);
    roll_over(&mut claimer, period, now);
    refuse_unfundable(&claimer, credits)?;
    claimer.reserved_credits = claimer.reserved_credits.saturating_add(credits);
    tx.update_agent(&claimer, now).await?;
    let held = ClaimReservation {
        org_id: org,
        task_id: task,
        agent_id: agent,
        credits,
        created_at: now,
    };
    tx.insert_claim_reservation(&held).await?;
    Ok(())
}

/// Refuses (409 `budget_exhausted`) an agent held back by an exhausted budget, or one
/// that cannot hold `reserve` more credits. Call [`roll_over`] first.
pub(crate) fn refuse_unfundable(
    agent: &crate::model::Agent,
    reserve: i64,
) -> Result<(), ServiceError> {
    if held_back(agent) || (reserve > 0 && check_spend(agent, reserve).is_err()) {
        return Err(Conflict::BudgetExhausted {
            spendable: spendable(agent),
            needed: reserve.max(1),
        }
        .into());
    }
    Ok(())
}

/// Takes the reservation of the claim of `task` for a run that `agent` starts on it:
/// answers the credits the run holds on top of its own reservation (already counted in
/// the agent's `reserved_credits`, so they are not added again). A reservation of
/// another agent (the task changed hands without giving it back) is released instead.
/// Call with the task locked, before the agent is.
pub(crate) async fn take_for_run<T: AgentsTx + RunsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    task: TaskId,
    agent: AgentId,
    now: OffsetDateTime,
) -> Result<i64, ServiceError> {
    let Some(held) = tx.claim_reservation(org, task, Lock::Update).await? else {
        return Ok(0);
    };
    if held.agent_id == agent {
        tx.delete_claim_reservation(org, task).await?;
        Ok(held.credits)
    } else {
        give_back(tx, &held, now).await?;
        Ok(0)
    }
}

/// Gives back the claim's reservation of a task that changed from `before` to `after`
/// when the change ends the claim: the task leaves `in_progress` (done, review, blocked,
/// cancelled, back to `todo` with a lapsed lease) or its assignee. Call in the change's
/// transaction with the task locked, after any other agent of the change is locked (the
/// holder is locked last: the one order of agent locks holds because the changes that
/// lock others either lock the holder with them or lock no agent). Reads nothing unless
/// the task was in progress with an assignee and the change ends that.
pub(crate) async fn release_claim<T: AgentsTx + RunsTx + ?Sized>(
    tx: &mut T,
    before: &Task,
    after: &Task,
    now: OffsetDateTime,
) -> Result<(), ServiceError> {
    if !ends_claim(before, after) {
        return Ok(());
    }
    let Some(held) = tx
        .claim_reservation(before.org_id, before.id, Lock::Update)
        .await?
    else {
        return Ok(());
    };
    give_back(tx, &held, now).await
}

/// Whether the change from `before` to `after` ends the claim that held `before`.
fn ends_claim(before: &Task, after: &Task) -> bool {
    before.status == TaskStatus::InProgress
        && before.assignee_id.is_some()
        && (after.status != TaskStatus::InProgress || after.assignee_id != before.assignee_id)
}

/// The holder of the claim of `current` that a reassignment to `assignee` would release,
/// to be locked in one go with the assignee (in ascending id order) before either.
pub(crate) async fn holder_losing<T: RunsTx + ?Sized>(
    tx: &mut T,
    current: &Task,
    assignee: AgentId,
) -> Result<Option<AgentId>, ServiceError> {
    let after = Task {
        assignee_id: Some(assignee),
        ..current.clone()
    };
    if !ends_claim(current, &after) {
        return Ok(None);
    }
    Ok(tx
        .claim_reservation(current.org_id, current.id, Lock::Update)
        .await?
        .map(|held| held.agent_id))
}

/// Removes `held` and gives its credits back to what its agent may spend.
async fn give_back<T: AgentsTx + RunsTx + ?Sized>(
    tx: &mut T,
    held: &ClaimReservation,
    now: OffsetDateTime,
) -> Result<(), ServiceError> {
    tx.delete_claim_reservation(held.org_id, held.task_id)
        .await?;
    if let Some(mut agent) = tx.agent(held.org_id, held.agent_id, Lock::Update).await? {
        agent.reserved_credits = agent.reserved_credits.saturating_sub(held.credits).max(0);
        tx.update_agent(&agent, now).await?;
    }
    Ok(())
}
