//! The budget period roll-over job (decision D-57).

use std::sync::Arc;

use crate::ports::{Clock, UnitOfWork, transact};
use crate::rules::budget::BudgetPeriod;
use crate::service::ServiceError;

/// Starts the new budget period for every agent whose period has ended: one
/// conditional update in one transaction, so it is atomic, and running it again (on
/// another instance, or twice in one period) changes nothing.
#[derive(Clone)]
pub struct BudgetRollover {
    uow: Arc<dyn UnitOfWork>,
    clock: Arc<dyn Clock>,
    period: BudgetPeriod,
}

impl std::fmt::Debug for BudgetRollover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BudgetRollover")
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}

impl BudgetRollover {
    /// Wires the job to its ports.
    pub fn new(uow: Arc<dyn UnitOfWork>, clock: Arc<dyn Clock>, period: BudgetPeriod) -> Self {
        Self { uow, clock, period }
    }

    /// Rolls over every agent whose period began before the current one; how many.
    pub async fn run_once(&self) -> Result<u64, ServiceError> {
        let start = self.period.start_of(self.clock.now());
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move { Ok(tx.roll_budget_periods(start).await?) })
        })
        .await
    }
}
