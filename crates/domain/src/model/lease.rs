//! How long a claimed task stays with the agent that claimed it without a heartbeat.

use time::Duration;

use crate::ValidationError;

/// A claim's lease: 1 second to 24 hours, 15 minutes when none is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease(Duration);

impl Lease {
    /// The lease when none is asked for, in seconds.
    pub const DEFAULT_SECONDS: i64 = 15 * 60;
    /// The longest lease, in seconds.
    pub const MAX_SECONDS: i64 = 24 * 60 * 60;

    /// `leaseSeconds` checked, or the default.
    ///
    /// ```
    /// use muster_domain::model::Lease;
    /// assert_eq!(Lease::seconds(None).unwrap().duration().whole_minutes(), 15);
    /// assert!(Lease::seconds(Some(86_400)).is_ok());
    /// assert!(Lease::seconds(Some(0)).is_err());
    /// assert!(Lease::seconds(Some(86_401)).is_err());
    /// ```
    pub fn seconds(value: Option<i64>) -> Result<Self, ValidationError> {
        let seconds = value.unwrap_or(Self::DEFAULT_SECONDS);
        if (1..=Self::MAX_SECONDS).contains(&seconds) {
            Ok(Self(Duration::seconds(seconds)))
        } else {
            Err(ValidationError::new(format!(
                "leaseSeconds must be between 1 and {}",
                Self::MAX_SECONDS
            )))
        }
    }

    /// Its length.
    pub const fn duration(self) -> Duration {
        self.0
    }
}
