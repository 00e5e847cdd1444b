//! Escalations, asked for (decision D-37) or found by the sweep
//! ([`EscalationSweep`](crate::service::EscalationSweep)).

use time::OffsetDateTime;

use super::{TaskService, check_assignable, ensure_open, locked_task};
use crate::model::{
    Actor, ActorKind, Agent, AgentId, AuditEvent, Escalation, EscalationId, EscalationReason,
    OrgId, Reason, Task, TaskEscalated, TaskId,
};
use crate::policy;
use crate::ports::{AgentsTx, Lock, RunsTx, TasksTx, WebhooksTx, transact};
use crate::rules::escalation::{SweepThresholds, fallback_target, is_due};
use crate::service::runs::release_claim;
use crate::service::{Conflict, Page, PageRequest, ServiceError};

/// What `POST /tasks/:id/escalate` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEscalation {
    /// Why.
    pub reason: EscalationReason,
    /// Free text.
    pub notes: Option<Reason>,
    /// Who should take over; when `None`, the assignee's parent or the most senior
    /// agent above the assignee.
    pub target: Option<AgentId>,
}

impl TaskService {
    /// Escalates an open task (decision D-37): hands it to the named target (an active
    /// agent that executes work: 404 unknown, 409 otherwise), else to the assignee's
    /// parent, else to the most senior agent above the assignee; nobody: 409. Stores
    /// the escalation and writes `task.escalated` (severity warning).
    pub async fn escalate(
        &self,
        actor: &Actor,
        id: TaskId,
        new: NewEscalation,
    ) -> Result<Escalation, ServiceError> {
        policy::may_write(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let org = actor.org_id;
                let current = locked_task(tx, org, id).await?;
                ensure_open(&current)?;
                let target = if let Some(target) = new.target {
                    check_assignable(tx, org, target).await?.id
                } else {
                    let assignee = assignee_of(tx, &current).await?;
                    successor(tx, org, assignee.as_ref())
                        .await?
                        .ok_or(Conflict::NoEscalationTarget)?
                };
                let escalation = Escalation {
                    id: EscalationId::from_uuid(service.ids.new_id()),
                    org_id: org,
                    task_id: id,
                    reason: new.reason,
                    notes: new.notes,
                    from_agent_id: current.assignee_id,
                    to_agent_id: Some(target),
                    actor_id: actor.actor_id(),
                    automatic: false,
                    created_at: service.clock.now(),
                };
                tx.insert_escalation(&escalation).await?;
                service.hand_over(tx, &actor, current, &escalation).await?;
                Ok(escalation)
            })
        })
        .await
    }

    /// Escalates the task `id` of `org` for `reason` if it is still due at `now` (the
    /// sweep's query may be stale by the time the row is locked) and was not escalated
    /// automatically for that reason before. Answers the escalation, or `None` when
    /// nothing was done. A task with nobody to hand it to is still recorded, so that it
    /// is reported once and not retried forever.
    pub async fn escalate_overdue(
        &self,
        org: OrgId,
        id: TaskId,
        reason: EscalationReason,
        thresholds: SweepThresholds,
        now: OffsetDateTime,
    ) -> Result<Option<Escalation>, ServiceError> {
        let service = self.clone();
        let actor = Actor {
            org_id: org,
            kind: ActorKind::System,
        };
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let Some(current) = tx.task(org, id, Lock::Update).await? else {
                    return Ok(None);
                };
                let assignee = assignee_of(tx, &current).await?;
                if !is_due(&current, assignee.as_ref(), reason, &thresholds, now) {
                    return Ok(None);
                }
                let target = match &assignee {
                    Some(agent) => successor(tx, org, Some(agent)).await?,
                    None => None,
                };
                let escalation = Escalation {
                    id: EscalationId::from_uuid(service.ids.new_id()),
                    org_id: org,
                    task_id: id,
                    reason,
                    notes: None,
                    from_agent_id: current.assignee_id,
                    to_agent_id: target,
                    actor_id: None,
                    automatic: true,
                    created_at: now,
                };
                if !tx.insert_escalation(&escalation).await? {
                    return Ok(None);
                }
                service.hand_over(tx, &actor, current, &escalation).await?;
                Ok(Some(escalation))
            })
        })
        .await
    }

    /// Escalations of a task of the actor's organization, newest first (decision D-7).
    pub async fn escalations(
        &self,
        actor: &Actor,
        task: TaskId,
        page: PageRequest<EscalationId>,
    ) -> Result<Page<Escalation, EscalationId>, ServiceError> {
        page.check()?;
        self.get(actor, task).await?;
        let rows = self
            .tasks
            .escalations(actor.org_id, task, page.cursor, page.fetch())
            .await?;
        Ok(Page::cut(rows, page.limit, |e| e.id))
    }

    /// Writes `task.escalated` and reassigns `current` to the escalation's target when
    /// there is one other than its assignee; what the previous assignee's claim reserved
    /// goes back to it (decision D-106).
    async fn hand_over<T: AgentsTx + TasksTx + WebhooksTx + RunsTx + ?Sized>(
        &self,
        tx: &mut T,
        actor: &Actor,
        current: Task,
        escalation: &Escalation,
    ) -> Result<(), ServiceError> {
        let now = escalation.created_at;
        let what = AuditEvent::TaskEscalated(TaskEscalated {
            escalation_id: escalation.id.as_uuid(),
            reason: escalation.reason.as_str().to_owned(),
            from_agent_id: escalation.from_agent_id,
            to_agent_id: escalation.to_agent_id,
        });
        let event = self.task_event_at(actor, current.id, now, &what);
        match escalation.to_agent_id {
            Some(target) if current.assignee_id != Some(target) => {
                let mut task = current.clone();
                task.assignee_id = Some(target);
                release_claim(tx, &current, &task, now).await?;
                self.save(tx, &current, task, now, vec![event]).await?;
            }
            _ => tx.append_events(&[event]).await?,
        }
        Ok(())
    }
}

/// The task's assignee, if it has one: share-locked, or locked for update when it holds
/// a claim's reservation on the task, which a hand-over gives back to it (a share lock
/// raised to an update later would deadlock two escalations of its tasks on PostgreSQL).
async fn assignee_of<T: AgentsTx + RunsTx + ?Sized>(
    tx: &mut T,
    task: &Task,
) -> Result<Option<Agent>, ServiceError> {
    let Some(id) = task.assignee_id else {
        return Ok(None);
    };
    let held = tx
        .claim_reservation(task.org_id, task.id, Lock::Update)
        .await?;
    let lock = if held.is_some_and(|held| held.agent_id == id) {
        Lock::Update
    } else {
        Lock::Share
    };
    Ok(tx.agent(task.org_id, id, lock).await?)
}

/// Who takes over from `assignee` (decision D-37): its parent if it can take work,
/// else the most senior agent above it. Nobody without an assignee.
async fn successor<T: AgentsTx + ?Sized>(
    tx: &mut T,
    org: OrgId,
    assignee: Option<&Agent>,
) -> Result<Option<AgentId>, ServiceError> {
    let Some(assignee) = assignee else {
        return Ok(None);
    };
    let parent = match assignee.parent_id {
        Some(parent) => tx.agent(org, parent, Lock::Share).await?,
        None => None,
    };
    if let Some(chosen) = fallback_target(parent.as_ref(), None) {
        return Ok(Some(chosen.id));
    }
    let senior = tx.senior_agent_above(org, Some(assignee.level)).await?;
    Ok(fallback_target(None, senior.as_ref()).map(|agent| agent.id))
}
