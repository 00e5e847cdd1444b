//! Telling a field left out from a field set to `null` in `PATCH` bodies.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

/// Writes `null` or the value; pair with `skip_serializing_if = "Patch::is_absent"` so a
/// field left out stays out.
impl<T: Serialize> Serialize for Patch<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Absent | Self::Null => serializer.serialize_none(),
            Self::Value(v) => v.serialize(serializer),
        }
    }
}

impl<T> Patch<T> {
    /// Whether the field was left out.
    pub fn is_absent(&self) -> bool {
        matches!(self, Self::Absent)
    }

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

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::Patch;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Body {
        #[serde(default, skip_serializing_if = "Patch::is_absent")]
        due: Patch<String>,
    }

    #[test]
    fn a_patch_field_keeps_left_out_null_and_value_apart_both_ways() {
        for (patch, json) in [
            (Patch::Absent, "{}"),
            (Patch::Null, r#"{"due":null}"#),
            (Patch::Value("x".to_owned()), r#"{"due":"x"}"#),
        ] {
            let body = Body { due: patch };
            assert_eq!(serde_json::to_string(&body).ok().as_deref(), Some(json));
            assert_eq!(serde_json::from_str::<Body>(json).ok(), Some(body));
        }
    }
}
