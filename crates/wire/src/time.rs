//! Timestamps on the wire: RFC 3339 UTC with milliseconds (decision D-6).

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

use muster_domain::model::instant;

use muster_domain::ValidationError;

/// Formats `at` as `2026-11-22T01:02:03.456Z`.
pub fn format(at: OffsetDateTime) -> String {
    instant::format_millis(at).unwrap_or_else(|_| at.to_string())
}

/// Serde for `OffsetDateTime` fields: written as [`format`] does, read as any RFC 3339.
pub mod rfc3339 {
    use serde::{Deserializer, Serializer};
    use time::OffsetDateTime;

    /// Writes `at` with milliseconds in UTC.
    pub fn serialize<S: Serializer>(at: &OffsetDateTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format(*at))
    }

    /// Reads an RFC 3339 timestamp.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<OffsetDateTime, D::Error> {
        time::serde::rfc3339::deserialize(d)
    }
}

/// Serde for optional `OffsetDateTime` fields (`null` when absent).
pub mod option {
    use serde::{Deserializer, Serializer};
    use time::OffsetDateTime;

    /// Writes `at` with milliseconds in UTC, or `null`.
    #[allow(clippy::ref_option)] // serde's `serialize_with` passes `&Option<T>`
    pub fn serialize<S: Serializer>(at: &Option<OffsetDateTime>, s: S) -> Result<S::Ok, S::Error> {
        match at {
            Some(at) => s.serialize_str(&super::format(*at)),
            None => s.serialize_none(),
        }
    }

    /// Reads an RFC 3339 timestamp or `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<OffsetDateTime>, D::Error> {
        time::serde::rfc3339::option::deserialize(d)
    }
}

/// Which end of a day a date-only value stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayEdge {
    /// 00:00:00.000 UTC.
    Start,
    /// 23:59:59.999 UTC.
    End,
}

/// Parses an ISO 8601 date-time (any offset), or a plain date (`2026-11-22`) taken as the
/// given edge of that UTC day. The result is truncated to milliseconds.
pub fn parse(field: &str, value: &str, edge: DayEdge) -> Result<OffsetDateTime, ValidationError> {
    let invalid = || ValidationError::new(format!("{field} must be an ISO 8601 date-time"));
    let at = if let Ok(at) = OffsetDateTime::parse(value, &Rfc3339) {
        at
    } else {
        let date = Date::parse(value, format_description!("[year]-[month]-[day]"))
            .map_err(|_| invalid())?;
        let time = match edge {
            DayEdge::Start => Time::MIDNIGHT,
            DayEdge::End => Time::from_hms_milli(23, 59, 59, 999).map_err(|_| invalid())?,
        };
        PrimitiveDateTime::new(date, time).assume_utc()
    };
    // Years outside 1..=9999 cannot be written as RFC 3339 (and converting an extreme
    // offset to UTC could leave the supported range altogether).
    let at = at
        .checked_to_offset(UtcOffset::UTC)
        .filter(|at| (1..=9999).contains(&at.year()))
        .ok_or_else(invalid)?;
    Ok(instant::to_millis(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_milliseconds_in_utc() {
        let at = OffsetDateTime::parse("2026-11-22T03:02:03.456789+02:00", &Rfc3339).unwrap();
        assert_eq!(format(at), "2026-11-22T01:02:03.456Z");
    }

    #[test]
    fn a_timestamp_reads_back_as_it_was_written() {
        #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        struct At {
            #[serde(with = "rfc3339")]
            at: OffsetDateTime,
            #[serde(with = "option")]
            until: Option<OffsetDateTime>,
        }
        let at = OffsetDateTime::parse("2026-11-22T01:02:03.456Z", &Rfc3339).unwrap();
        for value in [
            At {
                at,
                until: Some(at),
            },
            At { at, until: None },
        ] {
            let json = serde_json::to_string(&value).unwrap();
            assert_eq!(serde_json::from_str::<At>(&json).unwrap(), value, "{json}");
        }
    }

    #[test]
    fn parses_date_times_and_dates() {
        let at = parse("dueAt", "2026-11-22T01:02:03.456789Z", DayEdge::Start).unwrap();
        assert_eq!(format(at), "2026-11-22T01:02:03.456Z");
        assert_eq!(
            format(parse("d", "2026-11-22", DayEdge::Start).unwrap()),
            "2026-11-22T00:00:00.000Z"
        );
        assert_eq!(
            format(parse("d", "2026-11-22", DayEdge::End).unwrap()),
            "2026-11-22T23:59:59.999Z"
        );
        for out_of_range in [
            "9999-12-31T23:59:59-23:59",
            "0000-01-01T00:00:00+00:01",
            "0000-06-01",
        ] {
            let err = parse("dueAt", out_of_range, DayEdge::Start).unwrap_err();
            assert_eq!(
                err.message(),
                "dueAt must be an ISO 8601 date-time",
                "{out_of_range}"
            );
        }
        let err = parse("dueAt", "tomorrow", DayEdge::Start).unwrap_err();
        assert_eq!(err.message(), "dueAt must be an ISO 8601 date-time");
    }
}
