//! The rules of a run (decision D-106): who may start one and when, what its log
//! keeps, and when it is asked to stop.

use crate::ValidationError;
use crate::model::{AgentId, Run, StopReason, Task, TaskStatus};

/// Bytes of log text a run keeps; past them, one marker line and nothing more.
pub const MAX_LOG_BYTES: i64 = 10 * 1024 * 1024;

/// Lines one append may carry.
pub const MAX_LINES_PER_APPEND: usize = 10_000;

/// Lines one page of a log holds at most.
pub const MAX_LOG_PAGE: u32 = 1_000;

/// The text of the line a log ends with when it reached [`MAX_LOG_BYTES`].
pub const TRUNCATION_MARKER: &str =
    "[muster] this run's log reached 10 MiB: later lines are not kept";

/// The longest `adapter`, `model` or `provider`, in characters.
pub const MAX_NAME_CHARS: usize = 100;

/// The longest `summary`, in characters.
pub const MAX_SUMMARY_CHARS: usize = 10_000;

/// The longest `reportId`, in characters.
pub const MAX_REPORT_ID_CHARS: usize = 200;

/// The longest free-text reason of a stop someone asks for, in characters (counted
/// before it is trimmed).
pub const MAX_STOP_NOTE_CHARS: usize = 500;

/// Why a run may not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartRefusal {
    /// The task is not `in_progress`.
    NotInProgress(TaskStatus),
    /// The task is not assigned to the caller.
    NotAssignee,
}

/// Whether `agent` may start a run of `task`: it is `in_progress` and assigned to it.
pub fn may_start(task: &Task, agent: AgentId) -> Result<(), StartRefusal> {
    if task.status != TaskStatus::InProgress {
        return Err(StartRefusal::NotInProgress(task.status));
    }
    if task.assignee_id != Some(agent) {
        return Err(StartRefusal::NotAssignee);
    }
    Ok(())
}

/// What an append keeps of the lines given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Append {
    /// How many of the lines, from the first, are kept.
    pub keep: usize,
    /// Whether the truncation marker follows them (the log is full from now on).
    pub truncate: bool,
}

/// Keeps lines while the log stays within [`MAX_LOG_BYTES`]; the first line that
/// would not fit ends the log with the marker. A full log keeps nothing.
///
/// ```
/// use muster_domain::rules::runs::{Append, MAX_LOG_BYTES, append};
/// assert_eq!(append(0, false, [3, 4]), Append { keep: 2, truncate: false });
/// assert_eq!(append(MAX_LOG_BYTES - 5, false, [3, 4]), Append { keep: 1, truncate: true });
/// assert_eq!(append(0, true, [1]), Append { keep: 0, truncate: false });
/// ```
pub fn append(kept: i64, truncated: bool, line_bytes: impl IntoIterator<Item = usize>) -> Append {
    if truncated {
        return Append {
            keep: 0,
            truncate: false,
        };
    }
    let mut total = kept;
    let mut keep = 0;
    for bytes in line_bytes {
        let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        if total.saturating_add(bytes) > MAX_LOG_BYTES {
            return Append {
                keep,
                truncate: true,
            };
        }
        total += bytes;
        keep += 1;
    }
    Append {
        keep,
        truncate: false,
    }
}

/// Asks `run` to stop for `reason`; the first reason given stays. Whether this changed
/// it (a closed run, or one already asked, is left as it is).
pub fn request_stop(run: &mut Run, reason: StopReason) -> bool {
    if !run.status.is_open() || run.stop_requested {
        return false;
    }
    run.stop_requested = true;
    run.stop_reason = Some(reason);
    true
}

/// The checked free text of a stop someone asks for: at most [`MAX_STOP_NOTE_CHARS`]
/// characters and no NUL, trimmed; nothing when blank.
pub fn stop_note(reason: Option<String>) -> Result<Option<String>, ValidationError> {
    let Some(reason) = reason else {
        return Ok(None);
    };
    crate::validation::max_chars("reason", &reason, MAX_STOP_NOTE_CHARS)?;
    crate::validation::no_nul("reason", &reason)?;
    let trimmed = reason.trim();
    Ok((!trimmed.is_empty()).then(|| trimmed.to_owned()))
}

/// Why the open run of a task that changed from `before` to `after` must stop: the task
/// was cancelled, or it no longer belongs to the run's agent.
pub fn stop_for_task_change(run: &Run, before: &Task, after: &Task) -> Option<StopReason> {
    if after.status == TaskStatus::Cancelled && before.status != TaskStatus::Cancelled {
        return Some(StopReason::Cancelled);
    }
    if after.assignee_id != Some(run.agent_id) {
        return Some(StopReason::Reassigned);
    }
    None
}

#[cfg(test)]
mod tests {
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;
    use crate::model::{OrgId, RunId, RunStatus, RunUsage, TaskId, Title};

    fn agent(n: u128) -> AgentId {
        AgentId::from_uuid(Uuid::from_u128(n))
    }

    fn task(status: TaskStatus, assignee: Option<AgentId>) -> Task {
        let title = Title::new("t").unwrap_or_else(|_| unreachable!());
        let mut task = Task::new(
            TaskId::from_uuid(Uuid::from_u128(9)),
            OrgId::from_uuid(Uuid::from_u128(1)),
            title,
            OffsetDateTime::UNIX_EPOCH,
        );
        task.status = status;
        task.assignee_id = assignee;
        task
    }

    fn run(status: RunStatus) -> Run {
        Run {
            id: RunId::from_uuid(Uuid::from_u128(5)),
            org_id: OrgId::from_uuid(Uuid::from_u128(1)),
            task_id: TaskId::from_uuid(Uuid::from_u128(9)),
            agent_id: agent(2),
            status,
            adapter: None,
            model: None,
            started_at: OffsetDateTime::UNIX_EPOCH,
            ended_at: None,
            exit_code: None,
            summary: None,
            stop_requested: false,
            stop_reason: None,
            usage: RunUsage::default(),
            log_bytes: 0,
            log_lines: 0,
            log_truncated: false,
            reserved_credits: 0,
            credits_per_usd: 1_000,
            trace_id: None,
        }
    }

    #[test]
    fn only_the_assignee_of_a_task_in_progress_may_start_a_run() {
        assert_eq!(
            may_start(&task(TaskStatus::InProgress, Some(agent(2))), agent(2)),
            Ok(())
        );
        assert_eq!(
            may_start(&task(TaskStatus::InProgress, Some(agent(3))), agent(2)),
            Err(StartRefusal::NotAssignee)
        );
        assert_eq!(
            may_start(&task(TaskStatus::InProgress, None), agent(2)),
            Err(StartRefusal::NotAssignee)
        );
        for status in [TaskStatus::Todo, TaskStatus::Review, TaskStatus::Done] {
            assert_eq!(
                may_start(&task(status, Some(agent(2))), agent(2)),
                Err(StartRefusal::NotInProgress(status))
            );
        }
    }

    #[test]
    fn a_log_keeps_lines_up_to_its_limit_then_one_marker() {
        assert_eq!(
            append(0, false, []),
            Append {
                keep: 0,
                truncate: false
            }
        );
        assert_eq!(
            append(MAX_LOG_BYTES - 10, false, [10, 1]),
            Append {
                keep: 1,
                truncate: true
            },
            "exactly full keeps the line, the next one truncates"
        );
        assert_eq!(
            append(MAX_LOG_BYTES, false, [0, 0]),
            Append {
                keep: 2,
                truncate: false
            },
            "empty lines still fit"
        );
        assert_eq!(
            append(0, false, [usize::MAX]),
            Append {
                keep: 0,
                truncate: true
            }
        );
        assert_eq!(
            append(5, true, [0]),
            Append {
                keep: 0,
                truncate: false
            }
        );
        let six_mib = 6 * 1024 * 1024;
        assert_eq!(
            append(0, false, [six_mib, six_mib]),
            Append {
                keep: 1,
                truncate: true
            },
            "the lines of one append add up"
        );
    }

    #[test]
    fn a_log_keeps_the_ten_mib_its_marker_names() {
        assert_eq!(MAX_LOG_BYTES, 10_485_760);
        assert!(TRUNCATION_MARKER.contains("10 MiB"));
    }

    #[test]
    fn a_stop_is_asked_once_with_its_first_reason_and_never_of_a_closed_run() {
        let mut open = run(RunStatus::Running);
        assert!(request_stop(&mut open, StopReason::Budget));
        assert!(!request_stop(&mut open, StopReason::Requested));
        assert_eq!(
            (open.stop_requested, open.stop_reason),
            (true, Some(StopReason::Budget))
        );
        let mut closed = run(RunStatus::Succeeded);
        assert!(!request_stop(&mut closed, StopReason::Requested));
        assert!(!closed.stop_requested);
    }

    #[test]
    fn a_cancelled_or_reassigned_task_stops_its_run() {
        let open = run(RunStatus::Running);
        let mine = task(TaskStatus::InProgress, Some(agent(2)));
        let cancelled = task(TaskStatus::Cancelled, Some(agent(2)));
        let theirs = task(TaskStatus::InProgress, Some(agent(3)));
        let nobodys = task(TaskStatus::Todo, None);
        let reviewed = task(TaskStatus::Review, Some(agent(2)));
        assert_eq!(
            stop_for_task_change(&open, &mine, &cancelled),
            Some(StopReason::Cancelled)
        );
        assert_eq!(
            stop_for_task_change(&open, &mine, &theirs),
            Some(StopReason::Reassigned)
        );
        assert_eq!(
            stop_for_task_change(&open, &mine, &nobodys),
            Some(StopReason::Reassigned)
        );
        assert_eq!(stop_for_task_change(&open, &mine, &reviewed), None);
        assert_eq!(stop_for_task_change(&open, &mine, &mine), None);
    }

    #[test]
    fn a_stop_note_is_trimmed_bounded_and_blank_is_none() {
        assert_eq!(stop_note(None), Ok(None));
        assert_eq!(stop_note(Some("  \n ".to_owned())), Ok(None));
        assert_eq!(
            stop_note(Some("  over budget \n".to_owned())),
            Ok(Some("over budget".to_owned()))
        );
        let longest = "é".repeat(MAX_STOP_NOTE_CHARS);
        assert_eq!(stop_note(Some(longest.clone())), Ok(Some(longest)));
        assert_eq!(
            stop_note(Some("x".repeat(MAX_STOP_NOTE_CHARS + 1)))
                .unwrap_err()
                .message(),
            "reason must be at most 500 characters"
        );
        assert!(stop_note(Some("a\0b".to_owned())).is_err());
    }
}
