//! Claims with leases: the request bodies (a claimed task is a
//! [`TaskResponse`](super::tasks::TaskResponse), with its `leaseExpiresAt`).

use muster_domain::model::{CapabilityName, Lease, Reason};
use muster_domain::service::ClaimRequest;
use serde::{Deserialize, Serialize};

use muster_domain::ValidationError;

/// Body of `POST /tasks/claim` (all optional; no body at all is `{}`).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Vec<String>>,
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 86400))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_seconds: Option<i64>,
    /// Credits to hold for the claimed task: the first run the agent starts on it takes
    /// them over (drawn before its free balance, the rest released at finish); they go
    /// back when the task leaves the agent without a run. A claim whose reservation
    /// cannot be made is refused (409 `budget_exhausted`).
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1_000_000_000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve_credits: Option<i64>,
    /// Claim only a task of this project (404 `project_not_found` when there is none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<uuid::Uuid>,
}

impl ClaimBody {
    /// The checked request.
    pub fn into_request(self) -> Result<ClaimRequest, ValidationError> {
        let request = ClaimRequest {
            capabilities: self
                .capabilities
                .map(|names| {
                    names
                        .iter()
                        .map(|n| CapabilityName::new(n))
                        .collect::<Result<Vec<_>, _>>()
                })
                .transpose()?,
            lease: Lease::seconds(self.lease_seconds)?,
            reserve_credits: self.reserve_credits.unwrap_or(0),
            project_id: self
                .project_id
                .map(muster_domain::model::ProjectId::from_uuid),
        };
        request.check()?;
        Ok(request)
    }
}

/// Body of `POST /tasks/:id/heartbeat` (optional).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HeartbeatBody {
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 86400))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_seconds: Option<i64>,
}

impl HeartbeatBody {
    /// The checked lease.
    pub fn lease(&self) -> Result<Lease, ValidationError> {
        Lease::seconds(self.lease_seconds)
    }
}

/// Body of `POST /tasks/:id/release` (optional; no body at all is `{}`).
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReleaseBody {
    /// Why the task is given back (at most 2,000 characters once trimmed; blank is
    /// none): the transition to `todo` carries "released: " and it.
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ReleaseBody {
    /// The checked reason, trimmed; `None` when left out or blank.
    pub fn reason(&self) -> Result<Option<Reason>, ValidationError> {
        self.reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(|r| Reason::new(r.to_owned()))
            .transpose()
    }
}
