use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::{AgentId, OrgId};
use crate::ValidationError;

macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        // Every wire name is its variant in snake_case; saying so lets the OpenAPI
        // schema see the names, which it cannot read through the macro's literals.
        #[serde(rename_all = "snake_case")]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $wire)] $variant),+
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $wire),+ }
            }

            /// Parses a wire name.
            pub fn parse(value: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == value)
            }
        }
    };
}

wire_enum!(
    /// What an agent is for.
    AgentRole {
        /// Executes tasks.
        Worker = "worker",
        /// Registers and revokes agents.
        Hr = "hr",
        /// Top-level agent.
        Founder = "founder",
        /// Full administrative privileges.
        Admin = "admin",
    }
);

wire_enum!(
    /// How much an agent may do.
    AgentMode {
        /// Execute and coordinate.
        Worker = "worker",
        /// Spawn, assign and delegate; never executes a task.
        Orchestrator = "orchestrator",
        /// Read-only.
        Observer = "observer",
    }
);

wire_enum!(
    /// Lifecycle of an agent. Only `active` agents may authenticate.
    AgentStatus {
        /// Spawned, waiting for activation.
        Pending = "pending",
        /// May work and authenticate.
        Active = "active",
        /// Temporarily switched off.
        Suspended = "suspended",
        /// Permanently switched off.
        Revoked = "revoked",
    }
);

/// An agent's level in the hierarchy, 1..=10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Level(u8);

impl Level {
    /// The top level.
    pub const MAX: Self = Self(10);

    /// Checks the range.
    ///
    /// ```
    /// use muster_domain::model::Level;
    /// assert!(Level::new(10).is_ok());
    /// assert!(Level::new(0).is_err() && Level::new(11).is_err());
    /// ```
    pub fn new(value: i64) -> Result<Self, ValidationError> {
        u8::try_from(value)
            .ok()
            .filter(|v| (1..=10).contains(v))
            .map(Self)
            .ok_or_else(|| ValidationError::new("level must be between 1 and 10"))
    }

    /// The number.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// The level below, or `None` at level 1.
    pub fn below(self) -> Option<Self> {
        (self.0 > 1).then(|| Self(self.0 - 1))
    }
}

/// Percentage of a child's reward an agent takes for managing it, 0..=50.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(transparent)]
pub struct FeePct(u8);

impl FeePct {
    /// Checks the range.
    pub fn new(value: i64) -> Result<Self, ValidationError> {
        u8::try_from(value)
            .ok()
            .filter(|v| *v <= 50)
            .map(Self)
            .ok_or_else(|| ValidationError::new("managementFeePct must be between 0 and 50"))
    }

    /// The number.
    pub const fn get(self) -> u8 {
        self.0
    }
}

/// The human-readable agent identifier (`agentId`, sent as `X-Agent-ID`): 1..=100
/// visible ASCII characters (so no invisible, full-width or look-alike letters), unique
/// across the deployment regardless of case: `Bob-1` and `bob-1` cannot both exist. It
/// is kept as given (signing uses it exactly); [`key`](Self::key) is what uniqueness
/// compares.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct AgentHandle(String);

impl AgentHandle {
    /// Longest handle, in characters.
    pub const MAX_CHARS: usize = 100;

    /// Checks `value`. Only visible ASCII is allowed because the handle travels in an
    /// HTTP header.
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        if value.is_empty() || value.len() > Self::MAX_CHARS {
            return Err(ValidationError::new("agentId must be 1 to 100 characters"));
        }
        if !value.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ValidationError::new(
                "agentId may only contain visible ASCII characters",
            ));
        }
        Ok(Self(value.to_owned()))
    }

    /// The handle text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The form uniqueness compares: lower case (a handle is ASCII, so this is its case
    /// folding).
    ///
    /// ```
    /// use muster_domain::model::AgentHandle;
    /// let upper = AgentHandle::new("Bob-1").unwrap();
    /// assert_eq!(upper.key(), AgentHandle::new("bob-1").unwrap().key());
    /// assert_eq!(upper.as_str(), "Bob-1");
    /// ```
    pub fn key(&self) -> String {
        self.0.to_ascii_lowercase()
    }
}

/// An AI agent of an organization.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// Identity.
    pub id: AgentId,
    /// The owning organization.
    pub org_id: OrgId,
    /// Human-readable identifier, used to sign requests.
    pub handle: AgentHandle,
    /// Display name (at most 255 characters).
    pub name: String,
    /// Hierarchy level.
    pub level: Level,
    /// Model name (at most 100 characters).
    pub model: Option<String>,
    /// What it is for.
    pub role: AgentRole,
    /// How much it may do.
    pub mode: AgentMode,
    /// Lifecycle.
    pub status: AgentStatus,
    /// The agent that spawned it.
    pub parent_id: Option<AgentId>,
    /// Credits held.
    pub current_balance: i64,
    /// Credits it may spend per budget period; `None` for no limit.
    pub budget_period_limit: Option<i64>,
    /// Credits spent in the current period.
    pub budget_period_spent: i64,
    /// Start of the current budget period.
    pub budget_period_start: OffsetDateTime,
    /// Credits held for its open runs (decision D-106): still its own, but no other
    /// spending may use them.
    pub reserved_credits: i64,
    /// Whether a run's usage cost more than it could still spend: it may neither claim
    /// nor start a run while it can spend nothing (decision D-106).
    pub budget_exhausted: bool,
    /// Fee taken from children's rewards.
    pub management_fee_pct: FeePct,
    /// Reputation score, 0..=100.
    pub reputation_score: i32,
    /// Arbitrary JSON object.
    pub metadata: Map<String, Value>,
    /// When it was created.
    pub created_at: OffsetDateTime,
}

impl Agent {
    /// Longest `name`, in characters.
    pub const MAX_NAME_CHARS: usize = 255;
    /// Longest `model`, in characters.
    pub const MAX_MODEL_CHARS: usize = 100;

    /// A new agent with the defaults of decision D-50: level 1, role and mode `worker`,
    /// status `active`, no parent, balance 0, no budget limit with the period starting
    /// at `period_start`, no management fee, reputation 50, no metadata.
    pub fn new(
        id: AgentId,
        org_id: OrgId,
        handle: AgentHandle,
        name: String,
        now: OffsetDateTime,
        period_start: OffsetDateTime,
    ) -> Self {
        Self {
            id,
            org_id,
            handle,
            name,
            level: Level(1),
            model: None,
            role: AgentRole::Worker,
            mode: AgentMode::Worker,
            status: AgentStatus::Active,
            parent_id: None,
            current_balance: 0,
            budget_period_limit: None,
            budget_period_spent: 0,
            budget_period_start: period_start,
            reserved_credits: 0,
            budget_exhausted: false,
            management_fee_pct: FeePct::default(),
            reputation_score: crate::rules::reputation::INITIAL_SCORE,
            metadata: Map::new(),
            created_at: now,
        }
    }

    /// Checks a display name: trimmed, 1..=255 characters, holding a visible character
    /// and no bidirectional control.
    ///
    /// ```
    /// use muster_domain::model::Agent;
    /// assert_eq!(Agent::check_name(" Ada ").unwrap(), "Ada");
    /// assert!(Agent::check_name("  ").is_err());
    /// assert!(Agent::check_name("\u{200B}").is_err());
    /// ```
    pub fn check_name(value: &str) -> Result<String, ValidationError> {
        let name = value.trim();
        if name.is_empty() {
            return Err(ValidationError::new("name must not be empty"));
        }
        crate::validation::max_chars("name", name, Self::MAX_NAME_CHARS)?;
        crate::validation::no_nul("name", name)?;
        crate::validation::displayable("name", name)?;
        Ok(name.to_owned())
    }

    /// Checks a model name: at most 100 characters.
    pub fn check_model(value: &str) -> Result<String, ValidationError> {
        crate::validation::max_chars("model", value, Self::MAX_MODEL_CHARS)?;
        crate::validation::no_nul("model", value)?;
        Ok(value.to_owned())
    }
}

/// An agent's signing secret in plain text, between its generation and its sealing or
/// its one showing to the caller. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct AgentSecret(String);

impl AgentSecret {
    /// Wraps a secret.
    pub fn new(secret: String) -> Self {
        Self(secret)
    }

    /// The secret, for sealing or showing once.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for AgentSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentSecret(***)")
    }
}

/// An agent together with its signing secret, encrypted at rest. Only the
/// authentication path reads this. Its `Debug` leaves out the secret.
#[derive(Clone, PartialEq)]
pub struct AgentCredentials {
    /// The agent.
    pub agent: Agent,
    /// The secret as stored: sealed by the server key, never plain text.
    pub encrypted_secret: Vec<u8>,
}

impl std::fmt::Debug for AgentCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentCredentials")
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fee_range() {
        assert!(FeePct::new(0).is_ok() && FeePct::new(50).is_ok());
        assert!(FeePct::new(51).is_err() && FeePct::new(-1).is_err());
    }

    #[test]
    fn handle_rules() {
        assert!(AgentHandle::new("hr-acme").is_ok());
        assert!(AgentHandle::new(&"a".repeat(100)).is_ok());
        assert!(AgentHandle::new(&"a".repeat(101)).is_err());
        assert!(AgentHandle::new("has space").is_err());
        assert!(AgentHandle::new("").is_err());
        assert!(AgentHandle::new("naïve").is_err());
    }

    #[test]
    fn handles_look_alike_only_by_case_and_case_is_what_uniqueness_ignores() {
        // Invisible, full-width and look-alike letters cannot be in a handle at all.
        for lookalike in [
            "bob\u{200B}-1",
            "ｂｏｂ-1",
            "bоb-1",
            "bob\u{202E}-1",
            "\u{FEFF}bob",
        ] {
            assert!(AgentHandle::new(lookalike).is_err(), "{lookalike:?}");
        }
        let (upper, lower) = (
            AgentHandle::new("Bob-1").unwrap(),
            AgentHandle::new("bob-1").unwrap(),
        );
        assert_ne!(upper, lower, "kept as given");
        assert_eq!(upper.key(), "bob-1");
        assert_eq!(upper.key(), lower.key());
    }

    #[test]
    fn a_name_must_show_what_it_holds() {
        assert_eq!(
            Agent::check_name("\u{200B}\u{200D}").unwrap_err().message(),
            "name must contain a visible character"
        );
        assert!(Agent::check_name("Ada \u{202E}nimda").is_err());
        assert_eq!(Agent::check_name(" Ada Lovelace ").unwrap(), "Ada Lovelace");
    }

    #[test]
    fn a_model_name_is_kept_as_given_within_its_limit() {
        assert_eq!(Agent::check_model("gpt-5").unwrap(), "gpt-5");
        assert_eq!(Agent::check_model(" x ").unwrap(), " x ");
        let longest = "m".repeat(Agent::MAX_MODEL_CHARS);
        assert_eq!(Agent::check_model(&longest).unwrap(), longest);
        assert!(Agent::check_model(&format!("{longest}m")).is_err());
        assert!(Agent::check_model("a\0b").is_err());
    }

    #[test]
    fn debug_never_shows_a_secret() {
        let secret = AgentSecret::new("hunter2-agent-secret".to_owned());
        assert_eq!(format!("{secret:?}"), "AgentSecret(***)");
        assert_eq!(secret.expose(), "hunter2-agent-secret");
        let credentials = AgentCredentials {
            agent: sample(),
            encrypted_secret: vec![0xde, 0xad, 0xbe, 0xef],
        };
        let debug = format!("{credentials:?}");
        assert!(
            debug.starts_with("AgentCredentials { agent: Agent {"),
            "{debug}"
        );
        assert!(debug.contains("handle: AgentHandle(\"w-1\")"), "{debug}");
        assert!(debug.ends_with(", .. }"), "{debug}");
        assert!(!debug.contains("222"), "the sealed bytes stay out: {debug}");
    }

    fn sample() -> Agent {
        let at = time::OffsetDateTime::UNIX_EPOCH;
        Agent {
            id: AgentId::from_uuid(uuid::Uuid::nil()),
            org_id: crate::model::OrgId::from_uuid(uuid::Uuid::nil()),
            handle: AgentHandle::new("w-1").unwrap(),
            name: "W".into(),
            level: Level::new(1).unwrap(),
            model: None,
            role: AgentRole::Worker,
            mode: AgentMode::Worker,
            status: AgentStatus::Active,
            parent_id: None,
            current_balance: 0,
            budget_period_limit: None,
            budget_period_spent: 0,
            budget_period_start: at,
            reserved_credits: 0,
            budget_exhausted: false,
            management_fee_pct: FeePct::default(),
            reputation_score: 50,
            metadata: serde_json::Map::new(),
            created_at: at,
        }
    }

    #[test]
    fn enums_round_trip() {
        for role in AgentRole::ALL {
            assert_eq!(AgentRole::parse(role.as_str()), Some(*role));
        }
        for mode in AgentMode::ALL {
            assert_eq!(AgentMode::parse(mode.as_str()), Some(*mode));
        }
        for status in AgentStatus::ALL {
            assert_eq!(AgentStatus::parse(status.as_str()), Some(*status));
        }
    }
}
