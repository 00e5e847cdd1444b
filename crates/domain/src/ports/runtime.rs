use time::OffsetDateTime;
use uuid::Uuid;

/// The current time. Adapters return UTC truncated to milliseconds, the precision every
/// timestamp is stored and shown with (decision D-6).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> OffsetDateTime;
}

/// New identifiers (UUID v7, decision D-6).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait IdGenerator: Send + Sync {
    /// A fresh, time-ordered id.
    fn new_id(&self) -> Uuid;
}
