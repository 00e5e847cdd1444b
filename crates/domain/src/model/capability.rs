use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::{AgentId, CapabilityId, OrgId};
use crate::ValidationError;
use crate::validation::no_nul;

/// How well an agent masters a capability; ordered `Basic < Standard < Expert`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Proficiency {
    /// Can do it.
    Basic,
    /// Does it well; the default.
    #[default]
    Standard,
    /// The one to ask.
    Expert,
}

impl Proficiency {
    /// Every value, weakest first.
    pub const ALL: [Self; 3] = [Self::Basic, Self::Standard, Self::Expert];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Basic => "basic",
            Self::Standard => "standard",
            Self::Expert => "expert",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == value)
    }

    /// Points in the candidate ranking's proficiency sum: basic 1, standard 2, expert 3
    /// (decision D-35).
    pub const fn points(self) -> u32 {
        match self {
            Self::Basic => 1,
            Self::Standard => 2,
            Self::Expert => 3,
        }
    }
}

/// A capability name: trimmed and lower-cased, 1..=100 characters (decision D-50).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct CapabilityName(String);

impl CapabilityName {
    /// Longest name accepted, in characters.
    pub const MAX_CHARS: usize = 100;

    /// Normalizes `value` (trim, lower case) and checks it.
    ///
    /// ```
    /// use muster_domain::model::CapabilityName;
    /// assert_eq!(CapabilityName::new("  Rust ").unwrap().as_str(), "rust");
    /// assert!(CapabilityName::new(" ").is_err());
    /// ```
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let normal = value.trim().to_lowercase();
        let chars = normal.chars().count();
        if chars == 0 || chars > Self::MAX_CHARS {
            return Err(ValidationError::new(format!(
                "capability must be 1 to {} characters",
                Self::MAX_CHARS
            )));
        }
        no_nul("capability", &normal)?;
        Ok(Self(normal))
    }

    /// The normalized name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A capability an agent declares, with its proficiency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capability {
    /// Identity.
    pub id: CapabilityId,
    /// The owning organization.
    pub org_id: OrgId,
    /// The agent that has it.
    pub agent_id: AgentId,
    /// What it is.
    pub name: CapabilityName,
    /// How well.
    pub proficiency: Proficiency,
    /// When it was declared.
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proficiency_order_and_points() {
        assert!(Proficiency::Basic < Proficiency::Standard);
        assert!(Proficiency::Standard < Proficiency::Expert);
        let points: Vec<u32> = Proficiency::ALL.iter().map(|p| p.points()).collect();
        assert_eq!(points, [1, 2, 3]);
        for p in Proficiency::ALL {
            assert_eq!(Proficiency::parse(p.as_str()), Some(p));
        }
        assert_eq!(Proficiency::default(), Proficiency::Standard);
    }

    #[test]
    fn names_are_normalized_and_bounded() {
        assert_eq!(CapabilityName::new("SQL").unwrap().as_str(), "sql");
        assert!(CapabilityName::new(&"a".repeat(100)).is_ok());
        assert_eq!(
            CapabilityName::new(&"a".repeat(101)).unwrap_err().message(),
            "capability must be 1 to 100 characters"
        );
    }
}
