//! A task's reward: its range, what its close does with the escrow, and the parent's
//! management fee (decisions D-58, D-101).

use crate::ValidationError;
use crate::model::{AgentId, FeePct, RewardPayer, TaskStatus};

/// The reward a task gets when its creator names none, unless configured otherwise.
pub const DEFAULT_TASK_REWARD: i64 = 10;

/// Largest reward of one task (the largest movement of credits, decision D-59).
pub const MAX_REWARD: i64 = 1_000_000_000;

/// Checks a reward: an integer from 0 to [`MAX_REWARD`].
///
/// ```
/// use muster_domain::rules::reward::reward_amount;
/// assert_eq!(reward_amount(0).unwrap(), 0);
/// assert!(reward_amount(-1).is_err() && reward_amount(1_000_000_001).is_err());
/// ```
pub fn reward_amount(value: i64) -> Result<i64, ValidationError> {
    if (0..=MAX_REWARD).contains(&value) {
        Ok(value)
    } else {
        Err(ValidationError::new(format!(
            "reward must be between 0 and {MAX_REWARD}"
        )))
    }
}

/// What a task's move does with the credits in its escrow (decision D-101).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// Nothing: the task stays open, or its escrow is empty.
    Keep,
    /// Paid to the assignee, with its parent's fee out of it.
    Pay {
        /// The assignee.
        to: AgentId,
        /// The escrow.
        amount: i64,
    },
    /// Back to the payer.
    Refund {
        /// The escrow.
        amount: i64,
        /// `cancelled`, `unassigned` (done with nobody to pay) or `self` (done by its
        /// own payer, who pays itself no fee).
        reason: &'static str,
    },
}

/// What closing a task moving `from` -> `to`, holding `escrow` from `payer`, with
/// `assignee`, does with the escrow: done pays the assignee (or refunds a payer that
/// did the work itself, or refunds when nobody is assigned); cancelled refunds; every
/// other move keeps it.
///
/// ```
/// use muster_domain::model::{AgentId, RewardPayer, TaskStatus};
/// use muster_domain::rules::reward::{Settlement, settle};
/// let (a, b) = (AgentId::from_uuid(uuid::Uuid::from_u128(1)), AgentId::from_uuid(uuid::Uuid::from_u128(2)));
/// let done = |assignee| settle(TaskStatus::Review, TaskStatus::Done, 10, RewardPayer::Agent(a), assignee);
/// assert_eq!(done(Some(b)), Settlement::Pay { to: b, amount: 10 });
/// assert_eq!(done(Some(a)), Settlement::Refund { amount: 10, reason: "self" });
/// assert_eq!(done(None), Settlement::Refund { amount: 10, reason: "unassigned" });
/// ```
pub fn settle(
    from: TaskStatus,
    to: TaskStatus,
    escrow: i64,
    payer: RewardPayer,
    assignee: Option<AgentId>,
) -> Settlement {
    if escrow <= 0 || from.is_terminal() {
        return Settlement::Keep;
    }
    match (to, assignee) {
        (TaskStatus::Done, Some(to)) if payer == RewardPayer::Agent(to) => Settlement::Refund {
            amount: escrow,
            reason: "self",
        },
        (TaskStatus::Done, Some(to)) => Settlement::Pay { to, amount: escrow },
        (TaskStatus::Done, None) => Settlement::Refund {
            amount: escrow,
            reason: "unassigned",
        },
        (TaskStatus::Cancelled, _) => Settlement::Refund {
            amount: escrow,
            reason: "cancelled",
        },
        _ => Settlement::Keep,
    }
}

/// How one reward is shared between the assignee and its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RewardSplit {
    /// What the assignee keeps.
    pub to_assignee: i64,
    /// What the parent takes: `fee_pct`% of the reward, rounded down.
    pub fee: i64,
}

/// Splits `reward` for an assignee whose parent takes `fee_pct` (no parent: no fee).
///
/// ```
/// use muster_domain::model::FeePct;
/// use muster_domain::rules::reward::split_reward;
/// let split = split_reward(10, Some(FeePct::new(15).unwrap()));
/// assert_eq!((split.to_assignee, split.fee), (9, 1)); // 1.5 rounds down
/// ```
pub fn split_reward(reward: i64, fee_pct: Option<FeePct>) -> RewardSplit {
    let fee = fee_pct.map_or(0, |pct| reward.max(0) * i64::from(pct.get()) / 100);
    RewardSplit {
        to_assignee: reward - fee,
        fee,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(n: u128) -> AgentId {
        AgentId::from_uuid(uuid::Uuid::from_u128(n))
    }

    #[test]
    fn closing_settles_the_escrow_and_nothing_else_does() {
        use TaskStatus::{Backlog, Blocked, Cancelled, Done, InProgress, Review, Todo};
        let (a, b) = (agent(1), agent(2));
        let treasury = RewardPayer::Treasury;
        assert_eq!(
            settle(Review, Done, 7, treasury, Some(b)),
            Settlement::Pay { to: b, amount: 7 }
        );
        assert_eq!(
            settle(Todo, Cancelled, 7, RewardPayer::Agent(a), Some(b)),
            Settlement::Refund {
                amount: 7,
                reason: "cancelled"
            }
        );
        assert_eq!(
            settle(Todo, Cancelled, 7, treasury, None),
            Settlement::Refund {
                amount: 7,
                reason: "cancelled"
            }
        );
        assert_eq!(
            settle(InProgress, Done, 7, RewardPayer::Agent(b), Some(b)),
            Settlement::Refund {
                amount: 7,
                reason: "self"
            }
        );
        for (from, to) in [
            (Todo, InProgress),
            (InProgress, Review),
            (Review, InProgress),
            (Todo, Blocked),
            (Backlog, Todo),
        ] {
            assert_eq!(settle(from, to, 7, treasury, Some(b)), Settlement::Keep);
        }
        // An empty escrow, or a task already closed, settles nothing.
        assert_eq!(settle(Review, Done, 0, treasury, Some(b)), Settlement::Keep);
        assert_eq!(settle(Done, Done, 7, treasury, Some(b)), Settlement::Keep);
    }

    #[test]
    fn reward_range() {
        assert!(reward_amount(MAX_REWARD).is_ok());
        assert_eq!(
            reward_amount(-5).unwrap_err().message(),
            "reward must be between 0 and 1000000000"
        );
    }

    #[test]
    fn fee_is_a_floored_share_of_the_reward() {
        let pct = |p| Some(FeePct::new(p).unwrap());
        let cases = [
            (10, None, 10, 0),
            (10, pct(0), 10, 0),
            (10, pct(10), 9, 1),
            (10, pct(19), 9, 1),
            (10, pct(20), 8, 2),
            (10, pct(50), 5, 5),
            (7, pct(50), 4, 3),
            (0, pct(50), 0, 0),
            (1_000, pct(33), 670, 330),
        ];
        for (reward, fee_pct, keep, fee) in cases {
            let split = split_reward(reward, fee_pct);
            assert_eq!(
                (split.to_assignee, split.fee),
                (keep, fee),
                "{reward} {fee_pct:?}"
            );
            assert_eq!(split.to_assignee + split.fee, reward);
        }
    }
}
