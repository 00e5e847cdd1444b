//! `/tasks`: create, read, list, edit, move, claim.

use muster_wire::Data;
use muster_wire::claims::{ClaimBody, HeartbeatBody, ReleaseBody};
use muster_wire::paging::PageResponse;
use muster_wire::tasks::{
    CreateTaskRequest, ListTasksQuery, PatchTaskRequest, TaskResponse, TransitionRequest,
};
use reqwest::{Method, StatusCode};
use uuid::Uuid;

use super::data;
use crate::client::decode;
use crate::{Client, Error};

impl Client {
    /// `GET /tasks`: a page of tasks, filtered.
    pub async fn list_tasks(
        &self,
        query: &ListTasksQuery,
    ) -> Result<PageResponse<TaskResponse>, Error> {
        self.get_query("/tasks", query).await
    }

    /// `POST /tasks`.
    pub async fn create_task(&self, body: &CreateTaskRequest) -> Result<TaskResponse, Error> {
        data(self.call(Method::POST, "/tasks", body).await)
    }

    /// `GET /tasks/:id`.
    pub async fn get_task(&self, id: Uuid) -> Result<TaskResponse, Error> {
        data(self.get(&format!("/tasks/{id}")).await)
    }

    /// `PATCH /tasks/:id`: only the fields set in `body` change.
    pub async fn update_task(
        &self,
        id: Uuid,
        body: &PatchTaskRequest,
    ) -> Result<TaskResponse, Error> {
        data(
            self.call(Method::PATCH, &format!("/tasks/{id}"), body)
                .await,
        )
    }

    /// `POST /tasks/:id/transition`: moves a task to another status.
    pub async fn transition_task(
        &self,
        id: Uuid,
        body: &TransitionRequest,
    ) -> Result<TaskResponse, Error> {
        data(
            self.call(Method::POST, &format!("/tasks/{id}/transition"), body)
                .await,
        )
    }

    /// `POST /tasks/claim`: the next task this agent may take, leased to it; `None`
    /// when there is nothing to claim (204).
    pub async fn claim_task(&self, body: &ClaimBody) -> Result<Option<TaskResponse>, Error> {
        let body = serde_json::to_vec(body).map_err(|err| Error::Request(err.to_string()))?;
        let response = self
            .send(
                Method::POST,
                "/tasks/claim",
                Some(body),
                crate::client::Extra::default(),
            )
            .await?;
        if response.status() == StatusCode::NO_CONTENT {
            return Ok(None);
        }
        decode::<Data<TaskResponse>>(response)
            .await
            .map(|d| Some(d.data))
    }

    /// `POST /tasks/:id/heartbeat`: keeps a claimed task's lease.
    pub async fn heartbeat_task(
        &self,
        id: Uuid,
        body: &HeartbeatBody,
    ) -> Result<TaskResponse, Error> {
        data(
            self.call(Method::POST, &format!("/tasks/{id}/heartbeat"), body)
                .await,
        )
    }

    /// `POST /tasks/:id/release`: gives a task the caller holds (assigned to it and
    /// `in_progress`) back to the pool: `todo`, unassigned, claimable by any agent.
    pub async fn release_task(&self, id: Uuid, body: &ReleaseBody) -> Result<TaskResponse, Error> {
        data(
            self.call(Method::POST, &format!("/tasks/{id}/release"), body)
                .await,
        )
    }
}
