//! `/agents`: registration, spawning, reading, editing and the lifecycle.

use muster_wire::agents::{
    AgentResponse, CapacityResponse, HierarchyQuery, HierarchyResponse, ListAgentsQuery,
    PatchAgentRequest, PendingResponse, ReasonRequest, RegisterRequest, SpawnRequest,
    StatusResponse, WithSecret,
};
use muster_wire::auth::MessageResponse;
use muster_wire::guard::{GuardRequest, GuardResponse};
use muster_wire::paging::PageResponse;
use muster_wire::task_links::DataWithMessage;
use reqwest::Method;
use uuid::Uuid;

use super::data;
use crate::{Client, Error};

/// A change of an agent's status without a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// `POST /agents/:id/activate`: approve a pending agent.
    Activate,
    /// `POST /agents/:id/suspend`.
    Suspend,
    /// `POST /agents/:id/unsuspend`.
    Unsuspend,
    /// `POST /agents/:id/revoke`: for good.
    Revoke,
}

impl Lifecycle {
    fn path(self) -> &'static str {
        match self {
            Self::Activate => "activate",
            Self::Suspend => "suspend",
            Self::Unsuspend => "unsuspend",
            Self::Revoke => "revoke",
        }
    }
}

impl Client {
    /// `GET /agents`.
    pub async fn list_agents(
        &self,
        query: &ListAgentsQuery,
    ) -> Result<PageResponse<AgentResponse>, Error> {
        self.get_query("/agents", query).await
    }

    /// `POST /agents/register`: answers the agent and its signing secret (shown once).
    pub async fn register_agent(&self, body: &RegisterRequest) -> Result<WithSecret, Error> {
        self.call(Method::POST, "/agents/register", body).await
    }

    /// `POST /agents/spawn`: a child of the calling agent, with its secret.
    pub async fn spawn_agent(&self, body: &SpawnRequest) -> Result<WithSecret, Error> {
        self.call(Method::POST, "/agents/spawn", body).await
    }

    /// `GET /agents/:id`.
    pub async fn get_agent(&self, id: Uuid) -> Result<AgentResponse, Error> {
        data(self.get(&format!("/agents/{id}")).await)
    }

    /// `PATCH /agents/:id`.
    pub async fn update_agent(
        &self,
        id: Uuid,
        body: &PatchAgentRequest,
    ) -> Result<AgentResponse, Error> {
        data(
            self.call(Method::PATCH, &format!("/agents/{id}"), body)
                .await,
        )
    }

    /// Activates, suspends, unsuspends or revokes an agent.
    pub async fn change_agent_status(
        &self,
        id: Uuid,
        change: Lifecycle,
    ) -> Result<DataWithMessage<StatusResponse>, Error> {
        self.call_empty(Method::POST, &format!("/agents/{id}/{}", change.path()))
            .await
    }

    /// `POST /agents/:id/demote`.
    pub async fn demote_agent(
        &self,
        id: Uuid,
        body: &ReasonRequest,
    ) -> Result<DataWithMessage<StatusResponse>, Error> {
        self.call(Method::POST, &format!("/agents/{id}/demote"), body)
            .await
    }

    /// `DELETE /agents/:id/reject`: refuses a pending agent.
    pub async fn reject_agent(
        &self,
        id: Uuid,
        body: &ReasonRequest,
    ) -> Result<MessageResponse, Error> {
        self.call(Method::DELETE, &format!("/agents/{id}/reject"), body)
            .await
    }

    /// `GET /agents/pending`: agents waiting for approval.
    pub async fn list_pending_agents(&self) -> Result<Vec<PendingResponse>, Error> {
        data(self.get("/agents/pending").await)
    }

    /// `GET /agents/:id/hierarchy`: parents and children.
    pub async fn agent_hierarchy(
        &self,
        id: Uuid,
        query: &HierarchyQuery,
    ) -> Result<HierarchyResponse, Error> {
        data(
            self.get_query(&format!("/agents/{id}/hierarchy"), query)
                .await,
        )
    }

    /// `GET /agents/capacity`: how many more children the calling agent may spawn.
    pub async fn spawn_capacity(&self) -> Result<CapacityResponse, Error> {
        data(self.get("/agents/capacity").await)
    }

    /// `GET /agents/guard`: the runaway guard's thresholds.
    pub async fn runaway_guard(&self) -> Result<GuardResponse, Error> {
        data(self.get("/agents/guard").await)
    }

    /// `PATCH /agents/guard`.
    pub async fn set_runaway_guard(&self, body: &GuardRequest) -> Result<GuardResponse, Error> {
        data(self.call(Method::PATCH, "/agents/guard", body).await)
    }
}
