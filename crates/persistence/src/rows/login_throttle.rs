use diesel::prelude::*;
use muster_domain::model::{LoginThrottle, ThrottleKey};
use muster_domain::ports::RepositoryError;
use time::OffsetDateTime;

use crate::error::corrupt;
use crate::schema::login_throttles;
use crate::types::DbTime;

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = login_throttles, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct LoginThrottleRow {
    pub key_hash: Vec<u8>,
    pub failures: i32,
    pub last_failure_at: DbTime,
}

impl LoginThrottleRow {
    /// The row of the streak `throttle` under `key`. An empty streak (no last failure)
    /// is stamped with the epoch: the first to be purged.
    pub(crate) fn new(key: &ThrottleKey, throttle: &LoginThrottle) -> Self {
        Self {
            key_hash: key.0.to_vec(),
            // More never happen: an address is refused long before.
            failures: i32::try_from(throttle.failures).unwrap_or(i32::MAX),
            last_failure_at: DbTime(
                throttle
                    .last_failure_at
                    .unwrap_or(OffsetDateTime::UNIX_EPOCH),
            ),
        }
    }
}

impl TryFrom<LoginThrottleRow> for LoginThrottle {
    type Error = RepositoryError;

    fn try_from(row: LoginThrottleRow) -> Result<Self, Self::Error> {
        Ok(Self {
            failures: u32::try_from(row.failures).map_err(|e| corrupt("login failures", e))?,
            last_failure_at: Some(row.last_failure_at.0),
        })
    }
}
