//! Claims with leases: the request bodies and the claimed task with its lease.

use muster_domain::model::{CapabilityName, Lease, Task};
use muster_domain::service::ClaimRequest;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::tasks::TaskResponse;
use crate::ApiError;

/// Body of `POST /tasks/claim` (all optional; no body at all is `{}`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimBody {
    capabilities: Option<Vec<String>>,
    lease_seconds: Option<i64>,
}

impl ClaimBody {
    /// The checked request.
    pub fn into_request(self) -> Result<ClaimRequest, ApiError> {
        Ok(ClaimRequest {
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
        })
    }
}

/// Body of `POST /tasks/:id/heartbeat` (optional).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HeartbeatBody {
    lease_seconds: Option<i64>,
}

impl HeartbeatBody {
    /// The checked lease.
    pub fn lease(&self) -> Result<Lease, ApiError> {
        Ok(Lease::seconds(self.lease_seconds)?)
    }
}

/// A claimed task: the task as everywhere, and until when the claim holds.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimedTaskResponse {
    #[serde(flatten)]
    task: TaskResponse,
    #[serde(serialize_with = "super::time::serialize_option")]
    lease_expires_at: Option<OffsetDateTime>,
}

impl From<Task> for ClaimedTaskResponse {
    fn from(task: Task) -> Self {
        let lease_expires_at = task.lease_expires_at;
        Self {
            task: task.into(),
            lease_expires_at,
        }
    }
}
