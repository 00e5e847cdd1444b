//! Reputation: the score, its history, bonuses and penalties, and the trust
//! leaderboard (decisions D-63, D-65).

use super::{AgentService, locked_agent};
use crate::ValidationError;
use crate::model::{
    Actor, Agent, AgentId, Reason, ReputationEvent, ReputationEventId, ReputationKind,
};
use crate::policy;
use crate::ports::transact;
use crate::rules::reputation::level;
use crate::service::ServiceError;
use crate::service::scoring::rescore;

/// The summary of `GET /agents/:id/reputation`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReputationSummary {
    /// The agent.
    pub agent_id: AgentId,
    /// Score, 0..=100.
    pub reputation_score: i32,
    /// Its level name.
    pub level: &'static str,
    /// How many reputation events it has.
    pub total_events: u64,
}

/// One row of the trust leaderboard (decision D-65).
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderboardEntry {
    /// The agent.
    pub agent: Agent,
    /// Its level name.
    pub reputation_level: &'static str,
    /// Tasks it completed.
    pub tasks_completed: u64,
}

/// A bonus or penalty: its reason and amount (decision D-63).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoreChange {
    /// Why (required, at most 2,000 characters).
    pub reason: Reason,
    /// How much, 1..=50 (default 10).
    pub amount: i32,
}

impl ScoreChange {
    /// Default amount of a bonus or penalty.
    pub const DEFAULT_AMOUNT: i32 = 10;
    /// Largest amount of a bonus or penalty.
    pub const MAX_AMOUNT: i32 = 50;

    /// Checks the reason (not blank) and the amount.
    pub fn new(reason: Reason, amount: Option<i64>) -> Result<Self, ValidationError> {
        if reason.as_str().trim().is_empty() {
            return Err(ValidationError::new("reason must not be empty"));
        }
        let amount = match amount {
            None => Self::DEFAULT_AMOUNT,
            Some(value) => i32::try_from(value)
                .ok()
                .filter(|a| (1..=Self::MAX_AMOUNT).contains(a))
                .ok_or_else(|| {
                    ValidationError::new(format!(
                        "amount must be between 1 and {}",
                        Self::MAX_AMOUNT
                    ))
                })?,
        };
        Ok(Self { reason, amount })
    }
}

/// Default and largest page of the reputation history.
pub const HISTORY_DEFAULT_LIMIT: u32 = 20;
/// Largest page of the reputation history.
pub const HISTORY_MAX_LIMIT: u32 = 100;
/// Default length of the trust leaderboard.
pub const LEADERBOARD_DEFAULT_LIMIT: u32 = 10;
/// Longest trust leaderboard.
pub const LEADERBOARD_MAX_LIMIT: u32 = 100;

/// Checks a `limit` of 1..=`max`, `default` when absent.
pub fn limit_of(value: Option<i64>, default: u32, max: u32) -> Result<u32, ValidationError> {
    let Some(value) = value else {
        return Ok(default);
    };
    u32::try_from(value)
        .ok()
        .filter(|v| (1..=max).contains(v))
        .ok_or_else(|| ValidationError::new(format!("limit must be between 1 and {max}")))
}

impl AgentService {
    /// The reputation summary of the agent `id`.
    pub async fn reputation(
        &self,
        actor: &Actor,
        id: AgentId,
    ) -> Result<ReputationSummary, ServiceError> {
        let agent = self.find(actor.org_id, id).await?;
        let (_, total) = self
            .agents
            .reputation_history(actor.org_id, id, 0, 0)
            .await?;
        Ok(ReputationSummary {
            agent_id: id,
            reputation_score: agent.reputation_score,
            level: level(agent.reputation_score),
            total_events: total,
        })
    }

    /// The reputation events of the agent `id`, newest first, and how many there are.
    pub async fn reputation_history(
        &self,
        actor: &Actor,
        id: AgentId,
        limit: u32,
        offset: u64,
    ) -> Result<(Vec<ReputationEvent>, u64), ServiceError> {
        self.find(actor.org_id, id).await?;
        Ok(self
            .agents
            .reputation_history(actor.org_id, id, limit, offset)
            .await?)
    }

    /// Gives the agent `id` a quality bonus (decision D-63).
    pub async fn bonus(
        &self,
        actor: &Actor,
        id: AgentId,
        change: ScoreChange,
    ) -> Result<ReputationEvent, ServiceError> {
        self.score(actor, id, ReputationKind::QualityBonus, change)
            .await
    }

    /// Gives the agent `id` a quality penalty, stored as a negative amount.
    pub async fn penalty(
        &self,
        actor: &Actor,
        id: AgentId,
        change: ScoreChange,
    ) -> Result<ReputationEvent, ServiceError> {
        self.score(actor, id, ReputationKind::QualityPenalty, change)
            .await
    }

    async fn score(
        &self,
        actor: &Actor,
        id: AgentId,
        kind: ReputationKind,
        change: ScoreChange,
    ) -> Result<ReputationEvent, ServiceError> {
        policy::may_write(actor)?;
        let amount = match kind {
            ReputationKind::QualityPenalty => -change.amount,
            _ => change.amount,
        };
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut agent = locked_agent(tx, actor.org_id, id).await?;
                policy::may_score(&actor, &agent)?;
                let now = service.clock.now();
                let event_id = ReputationEventId::from_uuid(service.ids.new_id());
                let reason = change.reason.as_str().to_owned();
                let scored = rescore(&mut agent, event_id, (kind, amount), reason, None, now);
                tx.update_agent(&agent, now).await?;
                tx.insert_reputation_events(std::slice::from_ref(&scored.event))
                    .await?;
                tx.append_events(&[service.event(&actor, id, now, &scored.audit)])
                    .await?;
                Ok(scored.event)
            })
        })
        .await
    }

    /// Active agents by reputation, highest first (decision D-65).
    pub async fn leaderboard(
        &self,
        actor: &Actor,
        limit: u32,
    ) -> Result<Vec<LeaderboardEntry>, ServiceError> {
        Ok(self
            .agents
            .leaderboard(actor.org_id, limit)
            .await?
            .into_iter()
            .map(|(agent, tasks_completed)| LeaderboardEntry {
                reputation_level: level(agent.reputation_score),
                agent,
                tasks_completed,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_change_ranges() {
        let reason = || Reason::new("good work".into()).unwrap();
        assert_eq!(ScoreChange::new(reason(), None).unwrap().amount, 10);
        assert_eq!(ScoreChange::new(reason(), Some(50)).unwrap().amount, 50);
        for bad in [0, 51, -5] {
            assert_eq!(
                ScoreChange::new(reason(), Some(bad)).unwrap_err().message(),
                "amount must be between 1 and 50"
            );
        }
        assert!(ScoreChange::new(Reason::new("  ".into()).unwrap(), None).is_err());
    }

    #[test]
    fn limits() {
        assert_eq!(limit_of(None, 20, 100).unwrap(), 20);
        assert_eq!(limit_of(Some(100), 20, 100).unwrap(), 100);
        assert_eq!(
            limit_of(Some(101), 20, 100).unwrap_err().message(),
            "limit must be between 1 and 100"
        );
        assert!(limit_of(Some(0), 20, 100).is_err());
    }
}
