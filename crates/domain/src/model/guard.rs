//! The runaway guard's settings and counts: per agent, an action-rate breaker (writes
//! per minute) and a spend-velocity breaker (credits per hour). See
//! [`crate::rules::guard`] for when one trips and [`crate::service::guard`] for what
//! tripping does.

use time::OffsetDateTime;

use crate::ValidationError;

/// One breaker's threshold: how much an agent may do in one window; `0` is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Threshold(i64);

impl Threshold {
    /// The breaker is off.
    pub const OFF: Self = Self(0);

    /// Checks `value` against `max` (`field` names it in the message).
    ///
    /// ```
    /// use muster_domain::model::Threshold;
    /// assert_eq!(Threshold::new("actionsPerMinute", 600, 1_000).unwrap().get(), 600);
    /// assert!(Threshold::new("actionsPerMinute", 0, 1_000).unwrap().is_off());
    /// assert!(Threshold::new("actionsPerMinute", -1, 1_000).is_err());
    /// assert!(Threshold::new("actionsPerMinute", 1_001, 1_000).is_err());
    /// ```
    pub fn new(field: &str, value: i64, max: i64) -> Result<Self, ValidationError> {
        if (0..=max).contains(&value) {
            Ok(Self(value))
        } else {
            Err(ValidationError::new(format!(
                "{field} must be between 0 (off) and {max}"
            )))
        }
    }

    /// A threshold read back from storage, where the database's check already held.
    pub const fn from_stored(value: i64) -> Self {
        Self(if value < 0 { 0 } else { value })
    }

    /// The number (`0` when off).
    pub const fn get(self) -> i64 {
        self.0
    }

    /// Whether this breaker never trips.
    pub const fn is_off(self) -> bool {
        self.0 == 0
    }
}

/// The two thresholds in force for an organization's agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Breakers {
    /// Writes an agent may make per minute.
    pub actions_per_minute: Threshold,
    /// Credits an agent may spend per hour (spends and transfers it sends).
    pub credits_per_hour: Threshold,
}

impl Breakers {
    /// Largest `actionsPerMinute`.
    pub const MAX_ACTIONS_PER_MINUTE: i64 = 1_000_000;
    /// Largest `creditsPerHour`.
    pub const MAX_CREDITS_PER_HOUR: i64 = 1_000_000_000_000;

    /// Whether both breakers are off (nothing to count).
    pub const fn all_off(&self) -> bool {
        self.actions_per_minute.is_off() && self.credits_per_hour.is_off()
    }
}

/// An organization's own choices; `None` follows the deployment's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GuardSettings {
    /// Its own writes-per-minute threshold.
    pub actions_per_minute: Option<Threshold>,
    /// Its own credits-per-hour threshold.
    pub credits_per_hour: Option<Threshold>,
}

impl GuardSettings {
    /// The thresholds in force: the organization's own where it has one, else `defaults`.
    pub fn in_force(&self, defaults: Breakers) -> Breakers {
        Breakers {
            actions_per_minute: self
                .actions_per_minute
                .unwrap_or(defaults.actions_per_minute),
            credits_per_hour: self.credits_per_hour.unwrap_or(defaults.credits_per_hour),
        }
    }
}

/// What one change adds to its agent's windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TallyAdd {
    /// Writes (one per change).
    pub actions: i64,
    /// Credits the agent spent or sent in the change.
    pub credits: i64,
    /// When the change happens.
    pub at: OffsetDateTime,
    /// A write window that started at or before this has ended; a new one starts `at`.
    pub actions_expired_at: OffsetDateTime,
    /// Likewise for the spend window (a new one starts only with credits spent).
    pub credits_expired_at: OffsetDateTime,
}

/// An agent's windows after a change was counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Writes in the current window, this one included.
    pub actions: i64,
    /// When the current write window started.
    pub actions_since: Option<OffsetDateTime>,
    /// Credits spent in the current spend window.
    pub credits: i64,
    /// When the current spend window started (`None`: nothing spent yet).
    pub credits_since: Option<OffsetDateTime>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threshold(value: i64) -> Threshold {
        Threshold::from_stored(value)
    }

    #[test]
    fn a_stored_threshold_below_zero_reads_as_off() {
        assert_eq!(threshold(-5).get(), 0);
        assert!(threshold(-5).is_off());
        assert_eq!(threshold(0).get(), 0);
        assert_eq!(threshold(7).get(), 7);
        assert!(!threshold(7).is_off());
    }

    #[test]
    fn nothing_is_counted_only_when_both_breakers_are_off() {
        let breakers = |actions, credits| Breakers {
            actions_per_minute: threshold(actions),
            credits_per_hour: threshold(credits),
        };
        assert!(breakers(0, 0).all_off());
        assert!(!breakers(5, 0).all_off());
        assert!(!breakers(0, 100).all_off());
    }

    #[test]
    fn an_organization_overrides_each_default_on_its_own() {
        let defaults = Breakers {
            actions_per_minute: threshold(60),
            credits_per_hour: threshold(1_000),
        };
        assert_eq!(GuardSettings::default().in_force(defaults), defaults);
        let own = GuardSettings {
            actions_per_minute: Some(threshold(0)),
            credits_per_hour: None,
        };
        assert_eq!(
            own.in_force(defaults),
            Breakers {
                actions_per_minute: threshold(0),
                credits_per_hour: threshold(1_000),
            }
        );
        let own = GuardSettings {
            actions_per_minute: None,
            credits_per_hour: Some(threshold(5)),
        };
        assert_eq!(
            own.in_force(defaults),
            Breakers {
                actions_per_minute: threshold(60),
                credits_per_hour: threshold(5),
            }
        );
    }
}
