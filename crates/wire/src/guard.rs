//! The runaway guard's thresholds: `GET` and `PATCH /agents/guard`.

use muster_domain::model::{Breakers, GuardSettings, Threshold};
use muster_domain::service::guard::{GuardPatch, GuardView};
use serde::{Deserialize, Serialize};

use super::nullable::Patch;
use muster_domain::ValidationError;

/// Body of `PATCH /agents/guard`: each field left out stays as it is, `null` returns it
/// to the deployment's default, `0` switches the breaker off.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardRequest {
    /// Writes an agent may make per minute.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 0, maximum = 1_000_000))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub actions_per_minute: Patch<i64>,
    /// Credits an agent may spend (or send) per hour.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 0, maximum = 1_000_000_000_000_i64))]
    #[serde(skip_serializing_if = "Patch::is_absent")]
    pub credits_per_hour: Patch<i64>,
}

impl GuardRequest {
    /// The checked change.
    pub fn into_patch(self) -> Result<GuardPatch, ValidationError> {
        let actions = self.actions_per_minute.clearable(|n| {
            Threshold::new("actionsPerMinute", n, Breakers::MAX_ACTIONS_PER_MINUTE)
        })?;
        let credits = self
            .credits_per_hour
            .clearable(|n| Threshold::new("creditsPerHour", n, Breakers::MAX_CREDITS_PER_HOUR))?;
        Ok(GuardPatch {
            actions_per_minute: actions,
            credits_per_hour: credits,
        })
    }
}

/// Two thresholds; `0` is off.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ThresholdsResponse {
    /// Writes per agent per minute.
    pub actions_per_minute: i64,
    /// Credits spent per agent per hour.
    pub credits_per_hour: i64,
}

impl From<Breakers> for ThresholdsResponse {
    fn from(b: Breakers) -> Self {
        Self {
            actions_per_minute: b.actions_per_minute.get(),
            credits_per_hour: b.credits_per_hour.get(),
        }
    }
}

/// The organization's own thresholds; `null` follows the default.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OwnThresholdsResponse {
    /// Writes per agent per minute, or `null`.
    pub actions_per_minute: Option<i64>,
    /// Credits spent per agent per hour, or `null`.
    pub credits_per_hour: Option<i64>,
}

impl From<GuardSettings> for OwnThresholdsResponse {
    fn from(s: GuardSettings) -> Self {
        Self {
            actions_per_minute: s.actions_per_minute.map(Threshold::get),
            credits_per_hour: s.credits_per_hour.map(Threshold::get),
        }
    }
}

/// The runaway guard of the caller's organization: the thresholds in force at the top,
/// then where they come from.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GuardResponse {
    /// Writes per agent per minute in force (`0`: off).
    pub actions_per_minute: i64,
    /// Credits per agent per hour in force (`0`: off).
    pub credits_per_hour: i64,
    /// The organization's own choices.
    pub own: OwnThresholdsResponse,
    /// The deployment's defaults.
    pub defaults: ThresholdsResponse,
}

impl From<GuardView> for GuardResponse {
    fn from(v: GuardView) -> Self {
        Self {
            actions_per_minute: v.in_force.actions_per_minute.get(),
            credits_per_hour: v.in_force.credits_per_hour.get(),
            own: v.own.into(),
            defaults: v.defaults.into(),
        }
    }
}
