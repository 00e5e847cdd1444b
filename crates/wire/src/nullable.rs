//! Telling a field left out from a field set to `null` in `PATCH` bodies.

use serde::{Deserialize, Deserializer};

use muster_domain::ValidationError;

/// A `PATCH` field: left out, `null`, or a value. Use with `#[serde(default)]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Patch<T> {
    /// Not in the body: leave the field as it is.
    #[default]
    Absent,
    /// `null`: clear the field.
    Null,
    /// A new value.
    Value(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(deserializer).map(|v| v.map_or(Self::Null, Self::Value))
    }
}

impl<T> Patch<T> {
    /// A field that may be left out but not cleared: `null` is refused naming `field`.
    pub fn required(self, field: &str) -> Result<Option<T>, ValidationError> {
        match self {
            Self::Absent => Ok(None),
            Self::Null => Err(ValidationError::new(format!("{field} must not be null"))),
            Self::Value(v) => Ok(Some(v)),
        }
    }

    /// A clearable field, each value checked with `check`: `None` leaves it,
    /// `Some(None)` clears it.
    pub fn clearable<U, E>(
        self,
        check: impl FnOnce(T) -> Result<U, E>,
    ) -> Result<Option<Option<U>>, E> {
        match self {
            Self::Absent => Ok(None),
            Self::Null => Ok(Some(None)),
            Self::Value(v) => check(v).map(|u| Some(Some(u))),
        }
    }
}
