//! The completion reward and the parent's management fee (decision D-58).

use crate::model::FeePct;

/// Credits paid when a task reaches `done` unless configured otherwise.
pub const DEFAULT_TASK_REWARD: i64 = 10;

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
