//! Portable SQL types: one declaration, a native type on each engine.
//!
//! | type | PostgreSQL | SQLite |
//! |---|---|---|
//! | [`PortableUuid`] | `uuid` | TEXT, hyphenated lower case |
//! | [`PortableTimestamp`] | `timestamptz` | TEXT, `YYYY-MM-DDTHH:MM:SS.mmmZ` (fixed width, so text order is time order) |
//! | [`PortableJson`] | `jsonb` | TEXT |
//!
//! Values cross the boundary through the wrappers [`DbUuid`], [`DbTime`] and [`DbJson`].

use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{Jsonb, Text, Timestamptz};
use diesel::sqlite::{Sqlite, SqliteValue};
use muster_domain::model::{TokenHash, instant};
use muster_domain::ports::RepositoryError;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::error::corrupt;

/// UUID: `uuid` on PostgreSQL, TEXT on SQLite.
#[derive(
    Debug, Clone, Copy, Default, diesel::sql_types::SqlType, diesel::query_builder::QueryId,
)]
#[diesel(postgres_type(oid = 2950, array_oid = 2951))]
#[diesel(sqlite_type(name = "Text"))]
pub struct PortableUuid;

/// Instant in UTC: `timestamptz` on PostgreSQL, fixed-width RFC 3339 TEXT on SQLite.
#[derive(
    Debug, Clone, Copy, Default, diesel::sql_types::SqlType, diesel::query_builder::QueryId,
)]
#[diesel(postgres_type(oid = 1184, array_oid = 1185))]
#[diesel(sqlite_type(name = "Text"))]
pub struct PortableTimestamp;

/// JSON document: `jsonb` on PostgreSQL, TEXT on SQLite.
#[derive(
    Debug, Clone, Copy, Default, diesel::sql_types::SqlType, diesel::query_builder::QueryId,
)]
#[diesel(postgres_type(oid = 3802, array_oid = 3807))]
#[diesel(sqlite_type(name = "Text"))]
pub struct PortableJson;

/// A UUID column value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = PortableUuid)]
pub struct DbUuid(pub Uuid);

/// A timestamp column value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = PortableTimestamp)]
pub struct DbTime(pub OffsetDateTime);

/// A JSON column value.
#[derive(Debug, Clone, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = PortableJson)]
pub struct DbJson(pub serde_json::Value);

/// An id of the domain as a UUID column value.
pub(crate) fn db_uuid(id: impl Into<Uuid>) -> DbUuid {
    DbUuid(id.into())
}

/// A stored SHA-256 hash (`what` names the column for the error): exactly 32 bytes.
pub(crate) fn token_hash(what: &'static str, bytes: &[u8]) -> Result<TokenHash, RepositoryError> {
    <[u8; 32]>::try_from(bytes)
        .map(TokenHash)
        .map_err(|_| corrupt(what, format!("{} bytes, not 32", bytes.len())))
}

impl ToSql<PortableUuid, Pg> for DbUuid {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <Uuid as ToSql<diesel::sql_types::Uuid, Pg>>::to_sql(&self.0, out)
    }
}

impl FromSql<PortableUuid, Pg> for DbUuid {
    fn from_sql(bytes: PgValue<'_>) -> deserialize::Result<Self> {
        <Uuid as FromSql<diesel::sql_types::Uuid, Pg>>::from_sql(bytes).map(Self)
    }
}

impl ToSql<PortableUuid, Sqlite> for DbUuid {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.0.hyphenated().to_string());
        Ok(IsNull::No)
    }
}

impl FromSql<PortableUuid, Sqlite> for DbUuid {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        Ok(Self(Uuid::parse_str(&text)?))
    }
}

impl ToSql<PortableTimestamp, Pg> for DbTime {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        // Same precision as the SQLite text form, so both engines store the same instant.
        let at = instant::to_millis(self.0);
        <OffsetDateTime as ToSql<Timestamptz, Pg>>::to_sql(&at, &mut out.reborrow())
    }
}

impl FromSql<PortableTimestamp, Pg> for DbTime {
    fn from_sql(bytes: PgValue<'_>) -> deserialize::Result<Self> {
        <OffsetDateTime as FromSql<Timestamptz, Pg>>::from_sql(bytes).map(Self)
    }
}

impl ToSql<PortableTimestamp, Sqlite> for DbTime {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(instant::format_millis(self.0)?);
        Ok(IsNull::No)
    }
}

impl FromSql<PortableTimestamp, Sqlite> for DbTime {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        match parse_stored(&text) {
            Some(at) => Ok(Self(at)),
            None => Ok(Self(OffsetDateTime::parse(&text, &Rfc3339)?)),
        }
    }
}

/// The text that [`instant::format_millis`] writes, `YYYY-MM-DDTHH:MM:SS.mmmZ`, read
/// by hand: `time`'s RFC 3339 parser was 1.3 % of a task list's CPU on SQLite. `None`
/// for any other text, which that parser then reads (or refuses).
fn parse_stored(text: &str) -> Option<OffsetDateTime> {
    use time::{Date, Month, PrimitiveDateTime, Time};

    let &[
        y0,
        y1,
        y2,
        y3,
        b'-',
        mo0,
        mo1,
        b'-',
        d0,
        d1,
        b'T',
        h0,
        h1,
        b':',
        mi0,
        mi1,
        b':',
        s0,
        s1,
        b'.',
        ms0,
        ms1,
        ms2,
        b'Z',
    ] = text.as_bytes()
    else {
        return None;
    };
    let number = |digits: &[u8]| {
        digits.iter().try_fold(0u16, |value, &digit| {
            digit
                .is_ascii_digit()
                .then(|| value * 10 + u16::from(digit - b'0'))
        })
    };
    let byte = |digits: &[u8]| number(digits).and_then(|value| u8::try_from(value).ok());
    let month = Month::try_from(byte(&[mo0, mo1])?).ok()?;
    let date = Date::from_calendar_date(
        i32::from(number(&[y0, y1, y2, y3])?),
        month,
        byte(&[d0, d1])?,
    )
    .ok()?;
    let time = Time::from_hms_milli(
        byte(&[h0, h1])?,
        byte(&[mi0, mi1])?,
        byte(&[s0, s1])?,
        number(&[ms0, ms1, ms2])?,
    )
    .ok()?;
    Some(PrimitiveDateTime::new(date, time).assume_utc())
}

impl ToSql<PortableJson, Pg> for DbJson {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <serde_json::Value as ToSql<Jsonb, Pg>>::to_sql(&self.0, out)
    }
}

impl FromSql<PortableJson, Pg> for DbJson {
    fn from_sql(bytes: PgValue<'_>) -> deserialize::Result<Self> {
        <serde_json::Value as FromSql<Jsonb, Pg>>::from_sql(bytes).map(Self)
    }
}

impl ToSql<PortableJson, Sqlite> for DbJson {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(serde_json::to_string(&self.0)?);
        Ok(IsNull::No)
    }
}

impl FromSql<PortableJson, Sqlite> for DbJson {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        Ok(Self(serde_json::from_str(&text)?))
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    /// What `format_millis` writes reads back as the same instant, across the years.
    #[test]
    fn stored_text_reads_back_as_written() {
        let step = time::Duration::milliseconds(86_399_999_937);
        let mut next = Some(datetime!(0000-01-01 00:00:00 UTC));
        while let Some(at) = next {
            let text = instant::format_millis(at).unwrap();
            assert_eq!(parse_stored(&text), Some(instant::to_millis(at)), "{text}");
            next = at.checked_add(step);
        }
    }

    /// Any other text is left to the RFC 3339 parser: other widths, offsets, impossible
    /// dates and times, stray characters.
    #[test]
    fn other_text_is_not_read_by_hand() {
        for text in [
            "2026-11-22T01:02:03Z",
            "2026-11-22T01:02:03.4567Z",
            "2026-11-22T01:02:03.456+00:00",
            "2026-02-30T01:02:03.456Z",
            "2026-13-01T01:02:03.456Z",
            "2026-11-22T24:02:03.456Z",
            "2026-11-22T01:60:03.456Z",
            "2026-11-22T01:02:60.456Z",
            "2026-11-22 01:02:03.456Z",
            "2026-11-2xT01:02:03.456Z",
            "+026-11-22T01:02:03.456Z",
            "",
        ] {
            assert_eq!(parse_stored(text), None, "{text}");
        }
        assert_eq!(
            parse_stored("2024-02-29T23:59:59.999Z"),
            Some(datetime!(2024-02-29 23:59:59.999 UTC))
        );
    }
}
