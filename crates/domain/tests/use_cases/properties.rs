//! Property tests of the rules: random inputs, checked against what must always hold.
//! proptest shrinks a failure to its smallest case and records it under
//! `proptest-regressions/`, where it is replayed first on every later run.

use crate::common;

use proptest::prelude::*;
use uuid::Uuid;

use muster_domain::model::{
    Agent, AgentHandle, AgentId, AgentMode, AgentStatus, CapabilityName, FeePct, Proficiency,
    TaskStatus,
};
use muster_domain::rules::candidates::{Candidate, Requirement, RosterEntry, rank, rank_all};
use muster_domain::rules::reputation::{MAX_SCORE, MIN_SCORE, apply, level};
use muster_domain::rules::reward::split_reward;

fn status() -> impl Strategy<Value = TaskStatus> {
    prop::sample::select(TaskStatus::ALL.to_vec())
}

fn terminal(status: TaskStatus) -> bool {
    matches!(status, TaskStatus::Done | TaskStatus::Cancelled)
}

/// Whether some sequence of allowed moves leads from `from` to `to`, searched over the
/// table itself.
fn reachable(from: TaskStatus, to: TaskStatus) -> bool {
    let mut seen = vec![from];
    let mut next = 0;
    while let Some(&at) = seen.get(next) {
        if at == to {
            return true;
        }
        for step in TaskStatus::ALL {
            if at.can_transition_to(step) && !seen.contains(&step) {
                seen.push(step);
            }
        }
        next += 1;
    }
    false
}

proptest! {
    /// A random walk of requested moves, applied when the table allows them: a status
    /// to itself is never a move and a terminal status is never left; an open task can
    /// always be cancelled in one move and can still be finished; and `done` is only
    /// entered from `in_progress` or `review`, where work was started.
    #[test]
    fn random_walks_keep_the_tables_promises(
        start in status(),
        requests in prop::collection::vec(status(), 0..64),
    ) {
        let mut current = start;
        for to in requests {
            let allowed = current.can_transition_to(to);
            prop_assert!(!(allowed && current == to), "a status to itself is not a move");
            if terminal(current) {
                prop_assert!(!allowed, "{current:?} -> {to:?} leaves a terminal status");
            } else {
                prop_assert!(
                    current.can_transition_to(TaskStatus::Cancelled),
                    "{current:?} cannot be cancelled"
                );
                prop_assert!(reachable(current, TaskStatus::Done), "{current:?} can never be done");
            }
            if allowed && to == TaskStatus::Done {
                prop_assert!(
                    matches!(current, TaskStatus::InProgress | TaskStatus::Review),
                    "{current:?} -> done skips the work"
                );
            }
            if allowed {
                current = to;
            }
        }
    }

    /// Any sequence of changes keeps a score within 0..=100; a gain never lowers it and
    /// a loss never raises it; every score has a level.
    #[test]
    fn reputation_stays_clamped(
        start in MIN_SCORE..=MAX_SCORE,
        changes in prop::collection::vec(any::<i32>(), 0..32),
    ) {
        let mut score = start;
        for amount in changes {
            let next = apply(score, amount);
            prop_assert!((MIN_SCORE..=MAX_SCORE).contains(&next));
            if amount >= 0 { prop_assert!(next >= score); } else { prop_assert!(next <= score); }
            prop_assert!(!level(next).is_empty());
            score = next;
        }
    }

    /// A reward is shared without creating or losing a credit; the fee is the largest
    /// whole number of credits not above `pct`% of the reward (checked by multiplying
    /// back, not by the rule's own division), so never more than half; with no parent
    /// the assignee keeps everything.
    #[test]
    fn reward_split_conserves_credits(reward in 0_i64..=1_000_000_000, pct in 0_i64..=50) {
        let split = split_reward(reward, Some(FeePct::new(pct).unwrap()));
        prop_assert_eq!(split.to_assignee + split.fee, reward);
        prop_assert!(split.fee * 100 <= reward * pct, "{split:?} is more than {pct}%");
        prop_assert!((split.fee + 1) * 100 > reward * pct, "{split:?} is not rounded down");
        let alone = split_reward(reward, None);
        prop_assert_eq!((alone.to_assignee, alone.fee), (reward, 0));
    }

    /// Ranking is a total order on the agents: the same roster in any order ranks the
    /// same, each neighbour pair is in order, and `rank` keeps exactly the eligible ones.
    #[test]
    fn ranking_is_deterministic_and_total(
        roster in prop::collection::vec(entry(), 0..12),
        needed in prop::collection::vec(requirement(), 0..4),
        seed in any::<u64>(),
    ) {
        let roster = unique_handles(roster);
        let ranked = rank_all(&needed, roster.clone());
        let mut shuffled = roster.clone();
        shuffle(&mut shuffled, seed);
        prop_assert_eq!(handles(&rank_all(&needed, shuffled)), handles(&ranked));
        for pair in ranked.windows(2) {
            prop_assert!(in_order(&pair[0], &pair[1]), "{:?} before {:?}", pair[0].agent.handle, pair[1].agent.handle);
        }
        let eligible: Vec<_> = handles(&ranked)
            .into_iter()
            .filter(|h| roster.iter().any(|e| e.agent.handle.as_str() == h
                && e.agent.status == AgentStatus::Active && e.agent.mode == AgentMode::Worker))
            .collect();
        prop_assert_eq!(handles(&rank(&needed, roster)), eligible);
    }
}

fn in_order(a: &Candidate, b: &Candidate) -> bool {
    let key = |c: &Candidate| {
        (
            std::cmp::Reverse(c.coverage),
            std::cmp::Reverse(c.proficiency_sum),
            c.open_tasks,
            std::cmp::Reverse(c.agent.reputation_score),
            c.agent.handle.as_str().to_owned(),
        )
    };
    key(a) < key(b)
}

fn handles(ranked: &[Candidate]) -> Vec<String> {
    ranked
        .iter()
        .map(|c| c.agent.handle.as_str().to_owned())
        .collect()
}

fn unique_handles(mut roster: Vec<RosterEntry>) -> Vec<RosterEntry> {
    for (i, entry) in roster.iter_mut().enumerate() {
        entry.agent.handle = AgentHandle::new(&format!("agent-{i}")).unwrap();
    }
    roster
}

/// A Fisher-Yates shuffle driven by a small xorshift, so that proptest's seed decides it.
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let j = usize::try_from(seed % (i as u64 + 1)).unwrap();
        items.swap(i, j);
    }
}

const SKILLS: [&str; 4] = ["rust", "sql", "review", "ops"];

fn proficiency() -> impl Strategy<Value = Proficiency> {
    prop::sample::select(vec![
        Proficiency::Basic,
        Proficiency::Standard,
        Proficiency::Expert,
    ])
}

fn requirement() -> impl Strategy<Value = Requirement> {
    (
        prop::sample::select(SKILLS.to_vec()),
        prop::option::of(proficiency()),
    )
        .prop_map(|(name, min)| Requirement {
            capability: CapabilityName::new(name).unwrap(),
            min,
        })
}

fn entry() -> impl Strategy<Value = RosterEntry> {
    (
        prop::collection::vec((prop::sample::select(SKILLS.to_vec()), proficiency()), 0..4),
        0_u32..5,
        0_i32..=100,
        prop::sample::select(AgentStatus::ALL.to_vec()),
        prop::sample::select(AgentMode::ALL.to_vec()),
    )
        .prop_map(
            |(skills, open_tasks, reputation, status, mode)| RosterEntry {
                agent: agent(reputation, status, mode),
                capabilities: skills
                    .into_iter()
                    .map(|(name, level)| (CapabilityName::new(name).unwrap(), level))
                    .collect(),
                open_tasks,
            },
        )
}

fn agent(reputation: i32, status: AgentStatus, mode: AgentMode) -> Agent {
    let mut agent = common::sample_agent(AgentId::from_uuid(Uuid::now_v7()), mode, status);
    agent.reputation_score = reputation;
    agent
}
