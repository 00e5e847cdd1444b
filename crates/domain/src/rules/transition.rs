//! The task status workflow (the transition table of the interface contract).

use crate::model::{Task, TaskStatus};

impl TaskStatus {
    /// Whether `POST /tasks/:id/transition` may move a task from `self` to `to`.
    /// Staying in the same status is not a transition (decision D-30).
    ///
    /// ```
    /// use muster_domain::model::TaskStatus::*;
    /// assert!(Todo.can_transition_to(InProgress));
    /// assert!(!Todo.can_transition_to(Done));
    /// assert!(!Done.can_transition_to(Todo));
    /// ```
    pub const fn can_transition_to(self, to: Self) -> bool {
        use TaskStatus::{Backlog, Blocked, Cancelled, Done, InProgress, Review, Todo};
        matches!(
            (self, to),
            (Backlog, Todo | Cancelled)
                | (Todo, InProgress | Backlog | Cancelled)
                | (InProgress, Review | Blocked | Todo | Done | Cancelled)
                | (Review, Done | InProgress | Cancelled)
                | (Blocked, InProgress | Cancelled)
        )
    }
}

/// Why a requested transition is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    /// The table has no such move (decision D-30).
    #[error("Invalid transition: {} -> {}", from.as_str(), to.as_str())]
    NotAllowed {
        /// Current status.
        from: TaskStatus,
        /// Requested status.
        to: TaskStatus,
    },
    /// The task needs `POST /tasks/:id/approve` to reach `done` (decision D-33).
    #[error("Task requires approval")]
    ApprovalRequired,
}

/// Checks a transition request against the table and the approval rule.
pub fn check_transition(task: &Task, to: TaskStatus) -> Result<(), TransitionError> {
    if !task.status.can_transition_to(to) {
        return Err(TransitionError::NotAllowed {
            from: task.status,
            to,
        });
    }
    if to == TaskStatus::Done && task.approval_required {
        return Err(TransitionError::ApprovalRequired);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskStatus::{Backlog, Blocked, Cancelled, Done, InProgress, Review, Todo};

    /// The contract's table, written out row by row.
    const ALLOWED: [(TaskStatus, TaskStatus); 15] = [
        (Backlog, Todo),
        (Backlog, Cancelled),
        (Todo, InProgress),
        (Todo, Backlog),
        (Todo, Cancelled),
        (InProgress, Review),
        (InProgress, Blocked),
        (InProgress, Todo),
        (InProgress, Done),
        (InProgress, Cancelled),
        (Review, Done),
        (Review, InProgress),
        (Review, Cancelled),
        (Blocked, InProgress),
        (Blocked, Cancelled),
    ];

    #[test]
    fn all_49_pairs_match_the_contract_table() {
        let mut checked = 0;
        for from in TaskStatus::ALL {
            for to in TaskStatus::ALL {
                let expected = ALLOWED.contains(&(from, to));
                assert_eq!(from.can_transition_to(to), expected, "{from:?} -> {to:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, 49);
    }

    #[test]
    fn terminal_states_have_no_exit() {
        for to in TaskStatus::ALL {
            assert!(!Done.can_transition_to(to));
            assert!(!Cancelled.can_transition_to(to));
        }
        assert!(Done.is_terminal() && Cancelled.is_terminal());
        assert!(
            !TaskStatus::ALL
                .iter()
                .any(|s| !s.is_terminal() && s.can_transition_to(*s))
        );
    }

    #[test]
    fn disallowed_message_names_both_states() {
        let err = TransitionError::NotAllowed {
            from: Todo,
            to: Done,
        };
        assert_eq!(err.to_string(), "Invalid transition: todo -> done");
    }
}
