//! Capabilities, matching and reputation.

use muster_wire::agent_skills::{
    AddCapabilityRequest, HistoryQuery, HistoryResponse, LeaderboardQuery, LeaderboardResponse,
    MatchRequest, MatchResponse, ProficiencyRequest, ReputationEventResponse, ScoreRequest,
    SummaryResponse,
};
use muster_wire::agents::CapabilityResponse;
use muster_wire::auth::MessageResponse;
use muster_wire::task_links::DataWithMessage;
use reqwest::Method;
use uuid::Uuid;

use super::data;
use crate::{Client, Error};

/// Which way a reputation change goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreDirection {
    /// `POST /agents/:id/reputation/bonus`.
    Bonus,
    /// `POST /agents/:id/reputation/penalty`.
    Penalty,
}

impl Client {
    /// `GET /agents/capabilities`: every capability name in use.
    pub async fn capability_names(&self) -> Result<Vec<String>, Error> {
        data(self.get("/agents/capabilities").await)
    }

    /// `GET /agents/:id/capabilities`.
    pub async fn agent_capabilities(&self, id: Uuid) -> Result<Vec<CapabilityResponse>, Error> {
        data(self.get(&format!("/agents/{id}/capabilities")).await)
    }

    /// `POST /agents/:id/capabilities`.
    pub async fn add_capability(
        &self,
        id: Uuid,
        body: &AddCapabilityRequest,
    ) -> Result<CapabilityResponse, Error> {
        data(
            self.call(Method::POST, &format!("/agents/{id}/capabilities"), body)
                .await,
        )
    }

    /// `PATCH /agents/capabilities/:capabilityId`.
    pub async fn update_capability(
        &self,
        capability_id: Uuid,
        body: &ProficiencyRequest,
    ) -> Result<CapabilityResponse, Error> {
        let path = format!("/agents/capabilities/{capability_id}");
        data(self.call(Method::PATCH, &path, body).await)
    }

    /// `DELETE /agents/capabilities/:capabilityId`.
    pub async fn remove_capability(&self, capability_id: Uuid) -> Result<MessageResponse, Error> {
        self.call_empty(
            Method::DELETE,
            &format!("/agents/capabilities/{capability_id}"),
        )
        .await
    }

    /// `GET /agents/capabilities/match`: agents holding the capabilities, ranked.
    pub async fn match_agents(&self, query: &MatchRequest) -> Result<Vec<MatchResponse>, Error> {
        data(self.get_query("/agents/capabilities/match", query).await)
    }

    /// `GET /agents/capabilities/best-match`.
    pub async fn best_match(&self, query: &MatchRequest) -> Result<MatchResponse, Error> {
        data(
            self.get_query("/agents/capabilities/best-match", query)
                .await,
        )
    }

    /// `GET /agents/:id/reputation`.
    pub async fn reputation(&self, id: Uuid) -> Result<SummaryResponse, Error> {
        data(self.get(&format!("/agents/{id}/reputation")).await)
    }

    /// `GET /agents/:id/reputation/history`.
    pub async fn reputation_history(
        &self,
        id: Uuid,
        query: &HistoryQuery,
    ) -> Result<HistoryResponse, Error> {
        self.get_query(&format!("/agents/{id}/reputation/history"), query)
            .await
    }

    /// A reputation bonus or penalty.
    pub async fn score_agent(
        &self,
        id: Uuid,
        direction: ScoreDirection,
        body: &ScoreRequest,
    ) -> Result<DataWithMessage<ReputationEventResponse>, Error> {
        let which = match direction {
            ScoreDirection::Bonus => "bonus",
            ScoreDirection::Penalty => "penalty",
        };
        self.call(
            Method::POST,
            &format!("/agents/{id}/reputation/{which}"),
            body,
        )
        .await
    }

    /// `GET /agents/leaderboard/trust`.
    pub async fn trust_leaderboard(
        &self,
        query: &LeaderboardQuery,
    ) -> Result<Vec<LeaderboardResponse>, Error> {
        data(self.get_query("/agents/leaderboard/trust", query).await)
    }
}
