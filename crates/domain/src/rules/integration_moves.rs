//! How an integration moves a task (decision D-88): never around the transition table,
//! but along its shortest legal path, one recorded step at a time.

use crate::model::TaskStatus;

/// The statuses a task in `from` passes through to reach `target` (`done` or
/// `cancelled`), `from` excluded, along the shortest legal path. Toward `done` a task
/// that needs approval stops at `review` (only an approval closes it). A terminal task
/// never moves: the path is empty, as it is when `from` is already where the path ends.
///
/// ```
/// use muster_domain::model::TaskStatus::*;
/// use muster_domain::rules::integration_moves::path_to;
/// assert_eq!(path_to(Todo, Done, false), [InProgress, Done]);
/// assert_eq!(path_to(Todo, Done, true), [InProgress, Review]);
/// assert_eq!(path_to(Blocked, Cancelled, false), [Cancelled]);
/// assert!(path_to(Done, Cancelled, false).is_empty());
/// ```
pub fn path_to(from: TaskStatus, target: TaskStatus, approval_required: bool) -> Vec<TaskStatus> {
    if from.is_terminal() {
        return Vec::new();
    }
    let goal = if target == TaskStatus::Done && approval_required {
        TaskStatus::Review
    } else {
        target
    };
    if from == goal {
        return Vec::new();
    }
    // Breadth-first over the seven statuses: the first path found is a shortest one, and
    // the table's order makes the choice between equal paths fixed.
    let mut previous: [Option<TaskStatus>; 7] = [None; 7];
    let mut seen = [false; 7];
    let index = |s: TaskStatus| TaskStatus::ALL.iter().position(|x| *x == s).unwrap_or(0);
    let mut queue = std::collections::VecDeque::from([from]);
    seen[index(from)] = true;
    while let Some(at) = queue.pop_front() {
        if at == goal {
            let mut path = vec![goal];
            let mut step = goal;
            while let Some(before) = previous[index(step)] {
                if before == from {
                    break;
                }
                path.push(before);
                step = before;
            }
            path.reverse();
            return path;
        }
        for next in TaskStatus::ALL {
            // A done step is only taken as the goal itself, never on the way.
            let closes_early = next.is_terminal() && next != goal;
            if at.can_transition_to(next) && !seen[index(next)] && !closes_early {
                seen[index(next)] = true;
                previous[index(next)] = Some(at);
                queue.push_back(next);
            }
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TaskStatus::{Backlog, Blocked, Cancelled, Done, InProgress, Review, Todo};

    #[test]
    fn every_status_reaches_done_by_its_shortest_path() {
        let table = [
            (Backlog, false, vec![Todo, InProgress, Done]),
            (Todo, false, vec![InProgress, Done]),
            (InProgress, false, vec![Done]),
            (Review, false, vec![Done]),
            (Blocked, false, vec![InProgress, Done]),
            (Backlog, true, vec![Todo, InProgress, Review]),
            (Todo, true, vec![InProgress, Review]),
            (InProgress, true, vec![Review]),
            (Review, true, vec![]),
            (Blocked, true, vec![InProgress, Review]),
            (Done, false, vec![]),
            (Cancelled, false, vec![]),
        ];
        for (from, approval, path) in table {
            assert_eq!(
                path_to(from, Done, approval),
                path,
                "{from:?} (approval {approval})"
            );
        }
    }

    #[test]
    fn cancelling_is_one_step_from_any_open_status() {
        for from in [Backlog, Todo, InProgress, Review, Blocked] {
            assert_eq!(path_to(from, Cancelled, false), [Cancelled], "{from:?}");
            assert_eq!(path_to(from, Cancelled, true), [Cancelled], "{from:?}");
        }
        assert!(path_to(Done, Cancelled, false).is_empty());
        assert!(path_to(Cancelled, Cancelled, false).is_empty());
    }

    #[test]
    fn every_step_is_legal() {
        for from in TaskStatus::ALL {
            for target in [Done, Cancelled, Review, Blocked, InProgress] {
                for approval in [false, true] {
                    let path = path_to(from, target, approval);
                    let mut at = from;
                    for step in &path {
                        assert!(at.can_transition_to(*step), "{at:?} -> {step:?}");
                        at = *step;
                    }
                }
            }
        }
    }

    #[test]
    fn other_targets_follow_the_table_too() {
        assert_eq!(path_to(Todo, Blocked, false), [InProgress, Blocked]);
        assert_eq!(path_to(Blocked, InProgress, false), [InProgress]);
        assert_eq!(path_to(Todo, Review, false), [InProgress, Review]);
    }
}
