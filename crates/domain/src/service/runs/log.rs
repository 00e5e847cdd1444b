//! A run's log: appended by its agent in batches, kept up to 10 MiB with one marker
//! line after, and read back in pages (decision D-106).

use super::{RunService, ensure_open, locked_run, runner};
use crate::ValidationError;
use crate::model::{Actor, LogLine, LogStream, NewLogLine, Run, RunId};
use crate::ports::transact;
use crate::rules::runs::{MAX_LINES_PER_APPEND, MAX_LOG_PAGE, TRUNCATION_MARKER, append};
use crate::service::ServiceError;

/// One page of a run's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogPage {
    /// The lines, in order.
    pub lines: Vec<LogLine>,
    /// The number of the last line given: pass it as `after` for the next page
    /// (the `after` asked when the page is empty).
    pub last: i64,
    /// Whether the log was cut at its limit.
    pub truncated: bool,
}

impl RunService {
    /// Appends `lines` to the log of the caller's open run `id`: kept while the log
    /// stays within 10 MiB; the first line past it is replaced by one marker line, and
    /// later appends keep nothing (they still answer the run, so its agent learns of a
    /// stop). At most 10,000 lines a call.
    pub async fn append_log(
        &self,
        actor: &Actor,
        id: RunId,
        lines: Vec<NewLogLine>,
    ) -> Result<Run, ServiceError> {
        if lines.len() > MAX_LINES_PER_APPEND {
            return Err(ValidationError::new(format!(
                "lines must hold at most {MAX_LINES_PER_APPEND} lines"
            ))
            .into());
        }
        for line in &lines {
            crate::validation::no_nul("text", &line.text)?;
        }
        let (service, actor) = (self.clone(), actor.clone());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut run = locked_run(tx, actor.org_id, id).await?;
                runner(&actor, &run)?;
                ensure_open(&run)?;
                let now = service.clock.now();
                let decided = append(
                    run.log_bytes,
                    run.log_truncated,
                    lines.iter().map(|l| l.text.len()),
                );
                let mut kept: Vec<LogLine> = lines
                    .into_iter()
                    .take(decided.keep)
                    .map(|line| LogLine {
                        org_id: run.org_id,
                        run_id: run.id,
                        seq: 0,
                        stream: line.stream,
                        text: line.text,
                        at: now,
                    })
                    .collect();
                if decided.truncate {
                    kept.push(LogLine {
                        org_id: run.org_id,
                        run_id: run.id,
                        seq: 0,
                        stream: LogStream::System,
                        text: TRUNCATION_MARKER.to_owned(),
                        at: now,
                    });
                    run.log_truncated = true;
                }
                if kept.is_empty() {
                    return Ok(run);
                }
                for line in &mut kept {
                    run.log_lines += 1;
                    line.seq = run.log_lines;
                    run.log_bytes = run
                        .log_bytes
                        .saturating_add(i64::try_from(line.text.len()).unwrap_or(i64::MAX));
                }
                tx.insert_log_lines(&kept).await?;
                tx.update_run(&run).await?;
                Ok(run)
            })
        })
        .await
    }

    /// Up to `limit` (1..=1,000) lines of the log of run `id`, numbered after `after`.
    pub async fn log(
        &self,
        actor: &Actor,
        id: RunId,
        after: i64,
        limit: u32,
    ) -> Result<LogPage, ServiceError> {
        if !(1..=MAX_LOG_PAGE).contains(&limit) {
            return Err(ValidationError::new(format!(
                "limit must be between 1 and {MAX_LOG_PAGE}"
            ))
            .into());
        }
        if after < 0 {
            return Err(ValidationError::new("after must be 0 or more").into());
        }
        let run = self.get(actor, id).await?;
        let lines = self.runs.log_lines(actor.org_id, id, after, limit).await?;
        let last = lines.last().map_or(after, |l| l.seq);
        Ok(LogPage {
            lines,
            last,
            truncated: run.log_truncated,
        })
    }
}
