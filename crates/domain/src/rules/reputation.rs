//! Reputation: score, levels, and what task outcomes are worth (decision D-63).

use time::OffsetDateTime;

use crate::model::{AgentId, ReputationKind, TaskStatus};

/// The score every agent starts with.
pub const INITIAL_SCORE: i32 = 50;
/// Lowest score.
pub const MIN_SCORE: i32 = 0;
/// Highest score.
pub const MAX_SCORE: i32 = 100;

impl ReputationKind {
    /// The fixed amount of an outcome; `None` for bonuses and penalties, whose amount is
    /// chosen by the giver.
    pub const fn fixed_amount(self) -> Option<i32> {
        match self {
            Self::TaskCompleted => Some(5),
            Self::OnTimeDelivery => Some(2),
            Self::LateDelivery | Self::LevelDown => Some(-5),
            Self::TaskFailed => Some(-10),
            Self::TaskRework => Some(-3),
            Self::QualityBonus | Self::QualityPenalty => None,
        }
    }
}

/// The score after adding `amount`, clamped to 0..=100 (the event keeps the nominal
/// amount).
///
/// ```
/// use muster_domain::rules::reputation::apply;
/// assert_eq!(apply(98, 5), 100);
/// assert_eq!(apply(3, -10), 0);
/// assert_eq!(apply(50, -3), 47);
/// ```
pub fn apply(score: i32, amount: i32) -> i32 {
    score.saturating_add(amount).clamp(MIN_SCORE, MAX_SCORE)
}

/// The level name of a score: `untrusted` 0-20, `probation` 21-40, `trusted` 41-70,
/// `veteran` 71-85, `elite` 86-100.
pub const fn level(score: i32) -> &'static str {
    match score {
        i32::MIN..=20 => "untrusted",
        21..=40 => "probation",
        41..=70 => "trusted",
        71..=85 => "veteran",
        _ => "elite",
    }
}

/// Whether `creator` is in `assignee`'s own line (decision D-101): itself, one of its
/// ancestors (`assignee_ancestors`, its parent first) or one of its descendants (the
/// assignee is among `creator_ancestors`).
///
/// ```
/// use muster_domain::model::AgentId;
/// use muster_domain::rules::reputation::in_own_line;
/// let [root, child, other] = [1, 2, 3].map(|n| AgentId::from_uuid(uuid::Uuid::from_u128(n)));
/// assert!(in_own_line(root, child, &[root], &[]));
/// assert!(in_own_line(child, root, &[], &[root]));
/// assert!(!in_own_line(other, child, &[root], &[root]));
/// ```
pub fn in_own_line(
    creator: AgentId,
    assignee: AgentId,
    assignee_ancestors: &[AgentId],
    creator_ancestors: &[AgentId],
) -> bool {
    creator == assignee
        || assignee_ancestors.contains(&creator)
        || creator_ancestors.contains(&assignee)
}

/// What the assignee earns from `kinds` when the task's creator is in its own line: no
/// reputation for finishing its own work orders (neither completion nor on-time
/// delivery); the penalties stay.
pub fn earned_from_own_line(kinds: Vec<ReputationKind>) -> Vec<ReputationKind> {
    kinds
        .into_iter()
        .filter(|k| {
            !matches!(
                k,
                ReputationKind::TaskCompleted | ReputationKind::OnTimeDelivery
            )
        })
        .collect()
}

/// What the assignee's reputation gains or loses when its task moves `from` -> `to` at
/// `at`: completion (+ on time or late when the task has a due date), failure (cancelled
/// after work started), or rework (sent back from review).
pub fn outcome(
    from: TaskStatus,
    to: TaskStatus,
    due_at: Option<OffsetDateTime>,
    at: OffsetDateTime,
) -> Vec<ReputationKind> {
    use TaskStatus::{Blocked, Cancelled, Done, InProgress, Review};
    match (from, to) {
        (_, Done) => {
            let mut kinds = vec![ReputationKind::TaskCompleted];
            if let Some(due) = due_at {
                kinds.push(if at <= due {
                    ReputationKind::OnTimeDelivery
                } else {
                    ReputationKind::LateDelivery
                });
            }
            kinds
        }
        (InProgress | Review | Blocked, Cancelled) => vec![ReputationKind::TaskFailed],
        (Review, InProgress) => vec![ReputationKind::TaskRework],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use time::Duration;
    use time::macros::datetime;

    use super::*;

    #[test]
    fn own_line_earns_no_completion_but_keeps_penalties() {
        use ReputationKind::{LateDelivery, OnTimeDelivery, TaskCompleted};
        assert!(earned_from_own_line(vec![TaskCompleted, OnTimeDelivery]).is_empty());
        assert_eq!(
            earned_from_own_line(vec![TaskCompleted, LateDelivery]),
            vec![LateDelivery]
        );
        let id = |n| AgentId::from_uuid(uuid::Uuid::from_u128(n));
        // A grandparent is in the line; a sibling or a cousin is not.
        assert!(in_own_line(id(1), id(3), &[id(2), id(1)], &[]));
        assert!(in_own_line(id(3), id(1), &[], &[id(2), id(1)]));
        assert!(in_own_line(id(4), id(4), &[], &[]));
        assert!(!in_own_line(id(5), id(3), &[id(2), id(1)], &[id(2), id(1)]));
    }
    use TaskStatus::{Backlog, Blocked, Cancelled, Done, InProgress, Review, Todo};

    const AT: OffsetDateTime = datetime!(2026-01-02 03:04:05 UTC);

    #[test]
    fn levels_have_the_decided_bounds() {
        let cases = [
            (0, "untrusted"),
            (20, "untrusted"),
            (21, "probation"),
            (40, "probation"),
            (41, "trusted"),
            (70, "trusted"),
            (71, "veteran"),
            (85, "veteran"),
            (86, "elite"),
            (100, "elite"),
        ];
        for (score, name) in cases {
            assert_eq!(level(score), name, "{score}");
        }
    }

    #[test]
    fn fixed_amounts() {
        use ReputationKind as K;
        let cases = [
            (K::TaskCompleted, Some(5)),
            (K::OnTimeDelivery, Some(2)),
            (K::LateDelivery, Some(-5)),
            (K::TaskFailed, Some(-10)),
            (K::TaskRework, Some(-3)),
            (K::LevelDown, Some(-5)),
            (K::QualityBonus, None),
            (K::QualityPenalty, None),
        ];
        for (kind, amount) in cases {
            assert_eq!(kind.fixed_amount(), amount, "{kind:?}");
        }
    }

    #[test]
    fn score_clamps_at_both_ends() {
        assert_eq!(apply(100, 5), 100);
        assert_eq!(apply(0, -5), 0);
        assert_eq!(apply(95, 5), 100);
        assert_eq!(apply(50, 0), 50);
        assert_eq!(apply(i32::MAX, 1), 100);
    }

    #[test]
    fn outcomes_of_each_move() {
        use ReputationKind as K;
        let due_later = Some(AT + Duration::hours(1));
        let due_earlier = Some(AT - Duration::seconds(1));
        assert_eq!(outcome(InProgress, Done, None, AT), [K::TaskCompleted]);
        assert_eq!(
            outcome(Review, Done, due_later, AT),
            [K::TaskCompleted, K::OnTimeDelivery]
        );
        assert_eq!(
            outcome(InProgress, Done, Some(AT), AT),
            [K::TaskCompleted, K::OnTimeDelivery]
        );
        assert_eq!(
            outcome(InProgress, Done, due_earlier, AT),
            [K::TaskCompleted, K::LateDelivery]
        );
        for from in [InProgress, Review, Blocked] {
            assert_eq!(outcome(from, Cancelled, None, AT), [K::TaskFailed]);
        }
        for from in [Backlog, Todo] {
            assert!(outcome(from, Cancelled, None, AT).is_empty());
        }
        assert_eq!(outcome(Review, InProgress, None, AT), [K::TaskRework]);
        assert!(outcome(Blocked, InProgress, None, AT).is_empty());
        assert!(outcome(Todo, InProgress, None, AT).is_empty());
        assert!(outcome(InProgress, Review, due_earlier, AT).is_empty());
    }
}
