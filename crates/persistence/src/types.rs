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
use muster_domain::model::instant;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

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
        Ok(Self(OffsetDateTime::parse(&text, &Rfc3339)?))
    }
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
