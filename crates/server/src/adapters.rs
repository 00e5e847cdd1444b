//! The tiny adapters of the clock and id ports, and the card reader that joins the
//! outbound client to the A2A card format.

use async_trait::async_trait;
use muster_domain::model::instant;
use muster_domain::ports::{CardFetcher, Clock, IdGenerator, RemoteCard};
use muster_outbound::DocumentFetcher;
use time::OffsetDateTime;
use uuid::Uuid;

/// Reads remote agents' A2A cards with the guarded outbound client.
#[derive(Debug, Clone)]
pub struct A2aCards(pub DocumentFetcher);

#[async_trait]
impl CardFetcher for A2aCards {
    async fn fetch(&self, url: &str) -> Result<RemoteCard, String> {
        let body = self.0.get_json(url).await?;
        muster_a2a::remote::parse_card(&body)
    }
}

/// The system clock, in UTC, truncated to milliseconds (decision D-6).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn current(&self) -> OffsetDateTime {
        instant::to_millis(OffsetDateTime::now_utc())
    }
}

/// UUID v7 ids: unique and ordered by creation time.
#[derive(Debug, Clone, Copy, Default)]
pub struct UuidV7Ids;

impl IdGenerator for UuidV7Ids {
    fn generate(&self) -> Uuid {
        Uuid::now_v7()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_has_millisecond_precision() {
        let now = SystemClock.now();
        assert_eq!(now.nanosecond() % 1_000_000, 0);
        assert_eq!(now.offset(), time::UtcOffset::UTC);
    }

    #[test]
    fn ids_are_v7_and_increase() {
        let (a, b) = (UuidV7Ids.new_id(), UuidV7Ids.new_id());
        assert_eq!(a.get_version_num(), 7);
        assert!(a < b);
    }
}
