//! Routing a task to agents: candidates and auto-assign (decisions D-35, D-36).

use super::{TaskService, check_assignable, ensure_open, locked_task};
use crate::ValidationError;
use crate::model::{Actor, AgentId, Task, TaskId};
use crate::policy;
use crate::ports::transact;
use crate::rules::candidates::{Candidate, rank, requirements};
use crate::service::{Conflict, ServiceError};

/// The query of `GET /tasks/:id/candidates`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CandidateQuery {
    /// Least coverage, 0..=100 (default 0).
    pub min_coverage: u8,
    /// Most candidates answered, 1..=100 (default 10).
    pub max_results: u32,
}

impl CandidateQuery {
    /// Default `maxResults`.
    pub const DEFAULT_MAX_RESULTS: u32 = 10;
    /// Largest `maxResults`.
    pub const MAX_RESULTS: u32 = 100;

    /// Checks both ranges.
    pub fn new(
        min_coverage: Option<i64>,
        max_results: Option<i64>,
    ) -> Result<Self, ValidationError> {
        Ok(Self {
            min_coverage: coverage_threshold(min_coverage.unwrap_or(0))?,
            max_results: max_results.map_or(Ok(Self::DEFAULT_MAX_RESULTS), |n| {
                u32::try_from(n)
                    .ok()
                    .filter(|n| (1..=Self::MAX_RESULTS).contains(n))
                    .ok_or_else(|| {
                        ValidationError::new(format!(
                            "maxResults must be between 1 and {}",
                            Self::MAX_RESULTS
                        ))
                    })
            })?,
        })
    }
}

/// The body of `POST /tasks/:id/auto-assign`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoAssign {
    /// Least coverage, 0..=100 (default 1).
    pub min_coverage: u8,
    /// Agents not to choose.
    pub exclude: Vec<AgentId>,
}

impl AutoAssign {
    /// Checks the threshold (default 1, decision D-36).
    pub fn new(min_coverage: Option<i64>, exclude: Vec<AgentId>) -> Result<Self, ValidationError> {
        Ok(Self {
            min_coverage: coverage_threshold(min_coverage.unwrap_or(1))?,
            exclude,
        })
    }
}

fn coverage_threshold(value: i64) -> Result<u8, ValidationError> {
    u8::try_from(value)
        .ok()
        .filter(|v| *v <= 100)
        .ok_or_else(|| ValidationError::new("minCoverage must be between 0 and 100"))
}

impl TaskService {
    /// The agents of the actor's organization ranked for a task by capability coverage
    /// (decision D-35), those below `minCoverage` left out.
    pub async fn candidates(
        &self,
        actor: &Actor,
        id: TaskId,
        query: CandidateQuery,
    ) -> Result<Vec<Candidate>, ServiceError> {
        let task = self.get(actor, id).await?;
        let mut ranked = self.ranked(actor, &task).await?;
        ranked.retain(|c| c.coverage >= query.min_coverage);
        ranked.truncate(query.max_results as usize);
        Ok(ranked)
    }

    /// Assigns a task to its best candidate that is not excluded and reaches the
    /// threshold (decision D-36); none: 409 and the task is unchanged.
    pub async fn auto_assign(
        &self,
        actor: &Actor,
        id: TaskId,
        request: AutoAssign,
    ) -> Result<Task, ServiceError> {
        policy::may_write(actor)?;
        let task = self.get(actor, id).await?;
        ensure_open(&task)?;
        let chosen = self
            .ranked(actor, &task)
            .await?
            .into_iter()
            .find(|c| c.coverage >= request.min_coverage && !request.exclude.contains(&c.agent.id))
            .ok_or(Conflict::NoCandidate)?
            .agent
            .id;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let current = locked_task(tx, actor.org_id, id).await?;
                ensure_open(&current)?;
                super::workflow::lock_for_reassign(tx, &current, chosen).await?;
                check_assignable(tx, actor.org_id, chosen).await?;
                service.reassign(tx, &actor, current, chosen).await
            })
        })
        .await
    }

    async fn ranked(&self, actor: &Actor, task: &Task) -> Result<Vec<Candidate>, ServiceError> {
        let needed = requirements(&task.metadata)?;
        let roster = self.tasks.roster(actor.org_id).await?;
        Ok(rank(&needed, roster))
    }
}
