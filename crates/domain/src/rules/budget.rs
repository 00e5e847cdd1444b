//! Budget periods, spending limits and the status of an agent's budget (decisions D-57,
//! D-59, D-60, D-61).

use time::{Duration, OffsetDateTime, Time};

use crate::model::Agent;

/// How long a budget period lasts. Periods start at 00:00 UTC: every day, every Monday,
/// or on the first of every month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BudgetPeriod {
    /// From midnight to midnight, UTC (the default).
    #[default]
    Day,
    /// From Monday 00:00 UTC.
    Week,
    /// From the first of the month, 00:00 UTC.
    Month,
}

impl BudgetPeriod {
    /// Parses `day`, `week` or `month`.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "day" => Some(Self::Day),
            "week" => Some(Self::Week),
            "month" => Some(Self::Month),
            _ => None,
        }
    }

    /// The start of the period that contains `at`.
    ///
    /// ```
    /// use muster_domain::rules::budget::BudgetPeriod;
    /// use time::macros::datetime;
    /// let at = datetime!(2026-11-26 15:30 UTC); // a Thursday
    /// assert_eq!(BudgetPeriod::Day.start_of(at), datetime!(2026-11-26 0:00 UTC));
    /// assert_eq!(BudgetPeriod::Week.start_of(at), datetime!(2026-11-23 0:00 UTC));
    /// assert_eq!(BudgetPeriod::Month.start_of(at), datetime!(2026-11-01 0:00 UTC));
    /// ```
    pub fn start_of(self, at: OffsetDateTime) -> OffsetDateTime {
        let at = at.to_offset(time::UtcOffset::UTC);
        let midnight = at.replace_time(Time::MIDNIGHT);
        match self {
            Self::Day => midnight,
            Self::Week => {
                midnight - Duration::days(i64::from(at.weekday().number_days_from_monday()))
            }
            Self::Month => midnight - Duration::days(i64::from(at.day()) - 1),
        }
    }
}

/// Starts a new period for `agent` when its current one began before the period that
/// contains `now`: nothing spent, `budgetPeriodStart` the new period's start, and no
/// longer held back by a run that exhausted the last one (decision D-106). Whether it
/// rolled over.
pub fn roll_over(agent: &mut Agent, period: BudgetPeriod, now: OffsetDateTime) -> bool {
    let start = period.start_of(now);
    if agent.budget_period_start < start {
        agent.budget_period_start = start;
        agent.budget_period_spent = 0;
        agent.budget_exhausted = false;
        true
    } else {
        false
    }
}

/// `limit - spent` as the budget status shows it (decision D-57): below 0 when the
/// period's spending passed a limit lowered after it; `None` without a limit.
///
/// ```
/// use muster_domain::rules::budget::budget_remaining;
/// assert_eq!(budget_remaining(Some(200), 3), Some(197));
/// assert_eq!(budget_remaining(Some(10), 25), Some(-15));
/// assert_eq!(budget_remaining(None, 5), None);
/// ```
pub fn budget_remaining(limit: Option<i64>, spent: i64) -> Option<i64> {
    limit.map(|limit| limit.saturating_sub(spent))
}

/// Credits the agent may still spend in this period: `limit - spent`, never below 0;
/// `None` without a limit.
pub fn period_remaining(agent: &Agent) -> Option<i64> {
    budget_remaining(agent.budget_period_limit, agent.budget_period_spent).map(|r| r.max(0))
}

/// `round(100 × spent / limit)`, halves up; 100 when the limit is 0; `None` without a
/// limit (decision D-57).
///
/// ```
/// use muster_domain::rules::budget::utilization;
/// assert_eq!(utilization(Some(200), 3), Some(2)); // 1.5 rounds up
/// assert_eq!(utilization(Some(0), 0), Some(100));
/// assert_eq!(utilization(None, 5), None);
/// ```
pub fn utilization(limit: Option<i64>, spent: i64) -> Option<i64> {
    let limit = i128::from(limit?);
    if limit <= 0 {
        return Some(100);
    }
    let percent = (200 * i128::from(spent.max(0)) + limit) / (2 * limit);
    Some(i64::try_from(percent).unwrap_or(i64::MAX))
}

/// What stops an agent from spending `amount`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpendRefusal {
    /// Its balance is below the amount.
    Insufficient {
        /// The balance.
        balance: i64,
    },
    /// The amount would take it past its period limit.
    OverLimit {
        /// What remains of the period's limit.
        remaining: i64,
    },
}

/// Whether `agent` may spend `amount` now: enough balance, and within its period limit
/// (decisions D-59, D-60), besides what it holds for its open runs (decision D-106).
/// Call [`roll_over`] first.
pub fn check_spend(agent: &Agent, amount: i64) -> Result<(), SpendRefusal> {
    let reserved = agent.reserved_credits.max(0);
    let balance = agent.current_balance.saturating_sub(reserved);
    if balance < amount {
        return Err(SpendRefusal::Insufficient { balance });
    }
    match period_remaining(agent).map(|r| r.saturating_sub(reserved).max(0)) {
        Some(remaining) if remaining < amount => Err(SpendRefusal::OverLimit { remaining }),
        _ => Ok(()),
    }
}

/// What the agent can spend at most right now: its balance, capped by the period
/// remainder (decision D-60), less what it holds for its open runs (decision D-106).
pub fn spendable(agent: &Agent) -> i64 {
    let balance = agent.current_balance.max(0);
    let free = period_remaining(agent).map_or(balance, |remaining| balance.min(remaining));
    free.saturating_sub(agent.reserved_credits.max(0)).max(0)
}

/// Whether `agent` is held back from claiming and starting runs: a run's usage cost
/// more than it could spend, and it still can spend nothing (decision D-106). Funding
/// it, or the next budget period, lets it work again.
pub fn held_back(agent: &Agent) -> bool {
    agent.budget_exhausted && spendable(agent) == 0
}

/// Adds `amount` to `agent`'s balance (a grant, a transfer, a reward, a refund). Funded,
/// it is no longer held back by a run that exhausted its credits (decision D-106).
pub fn credit(agent: &mut Agent, amount: i64) {
    agent.current_balance = agent.current_balance.saturating_add(amount);
    if amount > 0 {
        agent.budget_exhausted = false;
    }
}

/// Takes `amount` from `agent`'s balance and counts it as spent in the period. Call
/// [`check_spend`] first.
pub fn debit(agent: &mut Agent, amount: i64) {
    agent.current_balance = agent.current_balance.saturating_sub(amount);
    agent.budget_period_spent = agent.budget_period_spent.saturating_add(amount);
}

/// Utilization at which an agent appears in the budget alerts (decision D-61).
pub const ALERT_PERCENT: i64 = 80;

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::model::{AgentHandle, AgentId, OrgId};

    fn agent(balance: i64, limit: Option<i64>, spent: i64) -> Agent {
        let mut agent = Agent::new(
            AgentId::from_uuid(Uuid::nil()),
            OrgId::from_uuid(Uuid::nil()),
            AgentHandle::new("a").unwrap(),
            "A".into(),
            datetime!(2026-11-01 0:00 UTC),
            datetime!(2026-11-01 0:00 UTC),
        );
        agent.current_balance = balance;
        agent.budget_period_limit = limit;
        agent.budget_period_spent = spent;
        agent
    }

    #[test]
    fn periods_start_at_utc_midnight() {
        let sunday = datetime!(2026-11-29 23:59:59 UTC);
        assert_eq!(
            BudgetPeriod::Week.start_of(sunday),
            datetime!(2026-11-23 0:00 UTC)
        );
        let monday = datetime!(2026-11-30 0:00 UTC);
        assert_eq!(BudgetPeriod::Week.start_of(monday), monday);
        let new_year = datetime!(2027-01-01 0:00:01 UTC);
        assert_eq!(
            BudgetPeriod::Month.start_of(new_year),
            datetime!(2027-01-01 0:00 UTC)
        );
        let offset = datetime!(2026-11-26 01:00 +02:00); // 23:00 UTC the day before
        assert_eq!(
            BudgetPeriod::Day.start_of(offset),
            datetime!(2026-11-25 0:00 UTC)
        );
        for name in ["day", "week", "month"] {
            assert!(BudgetPeriod::parse(name).is_some());
        }
        assert_eq!(BudgetPeriod::parse("year"), None);
    }

    #[test]
    fn roll_over_resets_once_per_period() {
        let mut a = agent(10, Some(100), 40);
        let now = datetime!(2026-11-02 08:00 UTC);
        assert!(roll_over(&mut a, BudgetPeriod::Day, now));
        assert_eq!(a.budget_period_spent, 0);
        assert_eq!(a.budget_period_start, datetime!(2026-11-02 0:00 UTC));
        a.budget_period_spent = 5;
        assert!(!roll_over(&mut a, BudgetPeriod::Day, now));
        assert_eq!(a.budget_period_spent, 5);
        // A month period started on the 1st does not roll on the 2nd.
        let mut m = agent(10, Some(100), 40);
        assert!(!roll_over(&mut m, BudgetPeriod::Month, now));
    }

    #[test]
    fn spending_needs_balance_and_room_in_the_period() {
        assert_eq!(check_spend(&agent(10, None, 0), 10), Ok(()));
        assert_eq!(
            check_spend(&agent(9, None, 0), 10),
            Err(SpendRefusal::Insufficient { balance: 9 })
        );
        assert_eq!(
            check_spend(&agent(100, Some(50), 45), 6),
            Err(SpendRefusal::OverLimit { remaining: 5 })
        );
        assert_eq!(check_spend(&agent(100, Some(50), 45), 5), Ok(()));
        assert_eq!(
            check_spend(&agent(100, Some(0), 0), 1),
            Err(SpendRefusal::OverLimit { remaining: 0 })
        );
    }

    #[test]
    fn spendable_is_the_balance_capped_by_the_period() {
        assert_eq!(spendable(&agent(30, None, 0)), 30);
        assert_eq!(spendable(&agent(30, Some(100), 90)), 10);
        assert_eq!(spendable(&agent(5, Some(100), 90)), 5);
        assert_eq!(spendable(&agent(5, Some(10), 20)), 0);
    }

    #[test]
    fn what_is_held_for_runs_no_other_spending_may_use() {
        let mut a = agent(30, Some(100), 80);
        a.reserved_credits = 15;
        assert_eq!(spendable(&a), 5, "20 left in the period, 15 of them held");
        assert_eq!(check_spend(&a, 5), Ok(()));
        assert_eq!(
            check_spend(&a, 6),
            Err(SpendRefusal::OverLimit { remaining: 5 })
        );
        let mut b = agent(30, None, 0);
        b.reserved_credits = 25;
        assert_eq!(spendable(&b), 5);
        assert_eq!(
            check_spend(&b, 6),
            Err(SpendRefusal::Insufficient { balance: 5 })
        );
        b.reserved_credits = 40;
        assert_eq!(spendable(&b), 0, "never below zero");
    }

    #[test]
    fn funding_or_a_new_period_ends_an_exhaustion() {
        let mut a = agent(0, Some(10), 10);
        a.budget_exhausted = true;
        credit(&mut a, 0);
        assert!(a.budget_exhausted, "nothing came in");
        credit(&mut a, 5);
        assert_eq!(a.current_balance, 5);
        assert!(!a.budget_exhausted);
        a.budget_exhausted = true;
        assert!(roll_over(
            &mut a,
            BudgetPeriod::Day,
            datetime!(2026-11-02 08:00 UTC)
        ));
        assert!(!a.budget_exhausted);
    }

    #[test]
    fn an_exhausted_agent_is_held_back_only_while_it_can_spend_nothing() {
        let mut a = agent(0, None, 0);
        assert!(!held_back(&a), "no balance alone holds nobody back");
        a.budget_exhausted = true;
        assert!(held_back(&a));
        a.current_balance = 1;
        assert!(!held_back(&a), "funded");
        let mut b = agent(50, Some(10), 10);
        b.budget_exhausted = true;
        assert!(held_back(&b));
        b.budget_period_spent = 0;
        assert!(!held_back(&b), "a new period");
    }

    #[test]
    fn utilization_rounds_half_up() {
        assert_eq!(utilization(Some(100), 80), Some(80));
        assert_eq!(utilization(Some(3), 2), Some(67));
        assert_eq!(utilization(Some(3), 1), Some(33));
        assert_eq!(utilization(Some(10), 25), Some(250));
    }

    #[test]
    fn debit_moves_balance_into_spent() {
        let mut a = agent(10, Some(20), 3);
        debit(&mut a, 4);
        assert_eq!((a.current_balance, a.budget_period_spent), (6, 7));
    }
}
