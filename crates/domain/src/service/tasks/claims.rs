//! Agents pulling work: an atomic claim with a lease, heartbeats that extend it, and
//! the expiry that hands the work of a silent agent back (beyond the contract).

use crate::service::runs::{lose_open_run, refuse_unfundable, reserve_for_claim};
use time::OffsetDateTime;

use super::{TaskService, locked_task};
use crate::model::{
    Actor, ActorKind, AgentId, AuditEvent, Capability, CapabilityName, Lease, OrgId, ProjectId,
    Reason, Run, Task, TaskAssigned, TaskClaimed, TaskId, TaskLeaseExpired, TaskStatus, instant,
};
use crate::policy::{self, Forbidden};
use crate::ports::{AgentsTx, LedgerTx, Lock, ProjectsTx, RunsTx, TasksTx, WebhooksTx, transact};
use crate::rules::budget::roll_over;
use crate::rules::candidates::requirements;
use crate::service::{Conflict, Entity, NotFound, ServiceError};

/// Candidates read per round of a claim.
const PAGE: u32 = 25;

/// A task whose lapsed lease the sweep handed back, and the open run it lost with it.
struct HandedBack {
    lost: Option<Run>,
}

/// One claim in progress: who, until when, why, at what time.
struct Claim<'a> {
    agent: AgentId,
    until: OffsetDateTime,
    reason: &'a Reason,
    now: OffsetDateTime,
}

/// What an agent asks for when it claims work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRequest {
    /// Claim only with these of its capabilities (all of them when `None`).
    pub capabilities: Option<Vec<CapabilityName>>,
    /// How long it holds the task without a heartbeat.
    pub lease: Lease,
    /// Credits of the agent to hold for the task (0 for none): its first run on the task
    /// takes them over, and they go back when the task leaves the agent without one
    /// (decision D-106).
    pub reserve_credits: i64,
    /// Claim only a task of this project (issue 66).
    pub project_id: Option<ProjectId>,
}

impl ClaimRequest {
    /// Checks the reservation: from 0 to 1,000,000,000 credits.
    pub fn check(&self) -> Result<(), crate::ValidationError> {
        crate::rules::usage::check_amount(
            "reserveCredits",
            self.reserve_credits,
            crate::service::CreditAmount::MAX,
        )
    }
}

impl TaskService {
    /// Gives the calling agent the best claimable task: `todo`, unassigned, every
    /// blocking dependency done, every required capability (decision D-35) covered by
    /// the agent's; urgent first, then oldest. It is assigned and moved to
    /// `in_progress` in one conditional update of the task, so among any number of
    /// racers, on any number of instances, one wins it and the others go on to the next
    /// task. `None` when nothing is claimable. Expired leases of the organization are
    /// handed back first. A claim with `reserve_credits` holds them for the task in the
    /// same transaction (decision D-106); one whose reservation cannot be made, or by an
    /// agent held back by an exhausted budget, is refused (409 `budget_exhausted`) and
    /// claims nothing.
    pub async fn claim(
        &self,
        actor: &Actor,
        request: ClaimRequest,
    ) -> Result<Option<Task>, ServiceError> {
        request.check()?;
        let agent = claimer(actor)?;
        self.expire_leases(Some(actor.org_id), PAGE).await?;
        let held = self.tasks.claimer_capabilities(actor.org_id, agent).await?;
        let offered: Vec<Capability> = match &request.capabilities {
            None => held,
            Some(names) => held
                .into_iter()
                .filter(|c| names.contains(&c.name))
                .collect(),
        };
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                service
                    .claim_in(tx, &actor, agent, &offered, &request)
                    .await
            })
        })
        .await
    }

    async fn claim_in<
        T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + RunsTx + ProjectsTx + ?Sized,
    >(
        &self,
        tx: &mut T,
        actor: &Actor,
        agent: AgentId,
        offered: &[Capability],
        request: &ClaimRequest,
    ) -> Result<Option<Task>, ServiceError> {
        let now = self.clock.now();
        // An agent whose budget a run exhausted claims nothing until it can spend again,
        // nor one whose reservation cannot be made (decision D-106). A first look without
        // a lock; the reservation is checked again with the agent locked.
        if let Some(mut claimer) = tx.agent(actor.org_id, agent, Lock::Nothing).await? {
            roll_over(&mut claimer, self.period, now);
            refuse_unfundable(&claimer, request.reserve_credits)?;
        }
        if let Some(project) = request.project_id
            && tx
                .project(actor.org_id, project, Lock::Nothing)
                .await?
                .is_none()
        {
            return Err(NotFound::new(Entity::Project, project).into());
        }
        let until = instant::to_millis(now + request.lease.duration());
        let reason = Reason::new("claimed".to_owned())?;
        let mut offset = 0;
        loop {
            let page = tx
                .claim_candidates(actor.org_id, request.project_id, offset, PAGE)
                .await?;
            let eligible: Vec<&Task> = page.iter().filter(|t| covered(t, offered)).collect();
            // First the candidates no other claimer holds right now, without waiting;
            // then, in order, those that were held, waiting for their holders: a task is
            // only skipped once its holder committed a change to it.
            let mut held = Vec::new();
            let mut rest = eligible.as_slice();
            while !rest.is_empty() {
                let ids: Vec<TaskId> = rest.iter().map(|t| t.id).collect();
                let locked = tx.try_lock_first_claimable(actor.org_id, &ids).await?;
                // Every candidate before the one locked was held (or taken meanwhile).
                let Some(at) = locked.and_then(|id| ids.iter().position(|&i| i == id)) else {
                    held.extend_from_slice(rest);
                    break;
                };
                held.extend_from_slice(&rest[..at]);
                let claim = Claim {
                    agent,
                    until,
                    reason: &reason,
                    now,
                };
                if let Some(claimed) = self.take(tx, actor, rest[at], &claim).await? {
                    return self.reserve(tx, request, claimed, now).await;
                }
                rest = &rest[at + 1..];
            }
            for task in held {
                let claim = Claim {
                    agent,
                    until,
                    reason: &reason,
                    now,
                };
                if let Some(claimed) = self.take(tx, actor, task, &claim).await? {
                    return self.reserve(tx, request, claimed, now).await;
                }
            }
            if page.len() < PAGE as usize {
                return Ok(None);
            }
            offset += PAGE;
        }
    }

    /// Holds the claim's reservation for the task just `claimed`, with the claimer locked
    /// after the task; a reservation that no longer fits refuses the whole claim.
    async fn reserve<T: AgentsTx + RunsTx + ?Sized>(
        &self,
        tx: &mut T,
        request: &ClaimRequest,
        claimed: Task,
        now: OffsetDateTime,
    ) -> Result<Option<Task>, ServiceError> {
        if let Some(agent) = claimed.assignee_id {
            let at = (self.period, now);
            reserve_for_claim(
                tx,
                claimed.org_id,
                agent,
                claimed.id,
                request.reserve_credits,
                at,
            )
            .await?;
        }
        Ok(Some(claimed))
    }

    /// Assigns and starts `task` for the claim through the conditional update of the
    /// task; `None` when someone changed it first (or a dependency reopened).
    async fn take<T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + RunsTx + ?Sized>(
        &self,
        tx: &mut T,
        actor: &Actor,
        task: &Task,
        claim: &Claim<'_>,
    ) -> Result<Option<Task>, ServiceError> {
        let mut claimed = task.clone();
        claimed.assignee_id = Some(claim.agent);
        claimed.lease_expires_at = Some(claim.until);
        let before = vec![
            AuditEvent::TaskAssigned(TaskAssigned {
                assignee_id: claim.agent,
                previous_assignee_id: None,
            }),
            AuditEvent::TaskClaimed(TaskClaimed {
                agent_id: claim.agent,
                lease_expires_at: stamp(claim.until)?,
            }),
        ];
        let moved = self
            .move_to(
                tx,
                actor,
                task,
                claimed,
                TaskStatus::InProgress,
                Some(claim.reason.clone()),
                before,
                claim.now,
            )
            .await;
        match moved {
            Ok(task) => Ok(Some(task)),
            Err(ServiceError::Conflict(
                Conflict::ChangedConcurrently { .. } | Conflict::OpenDependencies { .. },
            )) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Extends the caller's claim on `id` to `lease` from now. Only the agent holding an
    /// unexpired claim may (409 otherwise).
    pub async fn heartbeat(
        &self,
        actor: &Actor,
        id: TaskId,
        lease: Lease,
    ) -> Result<Task, ServiceError> {
        let agent = claimer(actor)?;
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked_task(tx, actor.org_id, id).await?;
                let Some(expires) = current.lease_expires_at else {
                    return Err(Conflict::NotLeaseHolder.into());
                };
                if current.assignee_id != Some(agent) || current.status != TaskStatus::InProgress {
                    return Err(Conflict::NotLeaseHolder.into());
                }
                let now = service.clock.now();
                if expires <= now {
                    return Err(Conflict::LeaseExpired.into());
                }
                let mut task = current.clone();
                task.lease_expires_at = Some(instant::to_millis(now + lease.duration()));
                service.save(tx, &current, task, now, Vec::new()).await
            })
        })
        .await
    }

    /// Hands back tasks whose claim's lease ran out (of `org`, or of every organization):
    /// each goes to `todo`, unassigned, with `task.lease_expired` and its transition, in
    /// its own transaction; one that changed meanwhile is left alone. At most `limit`
    /// per call; answers the tasks handed back. The run observer hears of each run lost
    /// with its task, once the hand-back committed.
    pub async fn expire_leases(
        &self,
        org: Option<OrgId>,
        limit: u32,
    ) -> Result<Vec<TaskId>, ServiceError> {
        let now = self.clock.now();
        let due = self.tasks.expired_leases(org, now, limit).await?;
        let mut expired = Vec::new();
        for (org, id) in due {
            let service = self.clone();
            let done = transact(self.uow.as_ref(), move |tx| {
                Box::pin(async move { service.expire_in(tx, org, id, now).await })
            })
            .await;
            match done {
                Ok(Some(back)) => {
                    if let Some(run) = &back.lost {
                        self.runs.run_ended(run);
                    }
                    expired.push(id);
                }
                Ok(None) | Err(ServiceError::Conflict(_)) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(expired)
    }

    async fn expire_in<T: AgentsTx + TasksTx + LedgerTx + WebhooksTx + RunsTx + ?Sized>(
        &self,
        tx: &mut T,
        org: OrgId,
        id: TaskId,
        now: OffsetDateTime,
    ) -> Result<Option<HandedBack>, ServiceError> {
        let current = locked_task(tx, org, id).await?;
        let Some(expired_at) = current.lease_expires_at.filter(|at| *at <= now) else {
            return Ok(None);
        };
        if current.status != TaskStatus::InProgress {
            return Ok(None);
        }
        // Its open run is lost with the lease, before the task goes back (decision D-106).
        let lost = lose_open_run(tx, self.ids.as_ref(), org, id, now).await?;
        let mut task = current.clone();
        task.assignee_id = None;
        let before = vec![AuditEvent::TaskLeaseExpired(TaskLeaseExpired {
            agent_id: current.assignee_id,
            lease_expired_at: stamp(expired_at)?,
        })];
        let actor = Actor {
            org_id: org,
            kind: ActorKind::System,
        };
        let reason = Reason::new("lease expired".to_owned())?;
        self.move_to(
            tx,
            &actor,
            &current,
            task,
            TaskStatus::Todo,
            Some(reason),
            before,
            now,
        )
        .await?;
        Ok(Some(HandedBack { lost }))
    }
}

/// The agent claiming: an agent that executes work (not an orchestrator or observer).
fn claimer(actor: &Actor) -> Result<AgentId, ServiceError> {
    let Some(agent) = actor.agent_id() else {
        return Err(Forbidden::AgentRequired.into());
    };
    policy::may_transition(actor, TaskStatus::InProgress)?;
    Ok(agent)
}

/// Whether `offered` meets every capability `task` requires; a task whose requirements
/// cannot be read is never claimed.
fn covered(task: &Task, offered: &[Capability]) -> bool {
    requirements(&task.metadata).is_ok_and(|needed| {
        needed.iter().all(|need| {
            offered
                .iter()
                .any(|have| need.met_by(&have.name, have.proficiency))
        })
    })
}

fn stamp(at: OffsetDateTime) -> Result<String, ServiceError> {
    instant::format_millis(at).map_err(ServiceError::internal)
}
