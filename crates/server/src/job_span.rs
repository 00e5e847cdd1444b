//! The span of one run of a background job (lease expiry, escalation sweep, budget
//! roll-over, routines, purge, webhook delivery): a trace of its own, with the database
//! work and calls it made under it. Target `muster_jobs`, debug level: traces only,
//! never a log line.

use tracing::Span;
use tracing::field::Empty;

use muster_http::JobOutcome;

/// A span for one run of `job`.
pub fn job_span(job: &'static str) -> Span {
    tracing::debug_span!(
        target: "muster_jobs",
        "job",
        otel.name = job,
        muster.job = job,
        muster.job.done = Empty,
        otel.status_code = Empty,
    )
}

/// Records on `span` what the run came to.
pub fn finish(span: &Span, outcome: &JobOutcome) {
    match outcome {
        JobOutcome::Done(done) => {
            span.record("muster.job.done", i64::try_from(*done).unwrap_or(i64::MAX))
        }
        JobOutcome::Failed => span.record("otel.status_code", "ERROR"),
    };
}
