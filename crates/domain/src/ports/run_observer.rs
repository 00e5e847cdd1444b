//! What the run use cases tell the outside once a change is committed: a usage report
//! recorded, a run ended (decision D-106). For counters such as the server's metrics;
//! no rule depends on it.

use crate::model::{Run, UsageReport};

/// Hears run changes after their transaction commits, each exactly once: a unit of work
/// whose work runs again (after its pre-hooks were asked) or rolls back tells nothing,
/// and a repeated `reportId` is not a new report. Called on the request's path (or the
/// lease sweep's), so an implementation must be quick and cannot fail.
pub trait RunObserver: Send + Sync {
    /// A usage report was recorded and paid.
    fn usage_recorded(&self, report: &UsageReport);

    /// A run ended: its agent finished it (`succeeded`, `failed`, `cancelled`,
    /// `stopped`), or the lease sweep lost it (`lost`). `run.ended_at` is set.
    fn run_ended(&self, run: &Run);
}

/// The observer that hears nothing: the services' default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unobserved;

impl RunObserver for Unobserved {
    fn usage_recorded(&self, _report: &UsageReport) {}

    fn run_ended(&self, _run: &Run) {}
}
