//! Routines (decision D-108): `/routines`.

use muster_wire::paging::PageResponse;
use muster_wire::routines::{
    CreateRoutineRequest, ListRoutinesQuery, PatchRoutineRequest, RoutineResponse,
};
use muster_wire::tasks::TaskResponse;
use reqwest::Method;
use uuid::Uuid;

use super::data;
use crate::{Client, Error};

impl Client {
    /// `POST /routines`: creates a routine owned by the caller.
    pub async fn create_routine(
        &self,
        body: &CreateRoutineRequest,
    ) -> Result<RoutineResponse, Error> {
        data(self.call(Method::POST, "/routines", body).await)
    }

    /// `GET /routines`: a page of the organization's routines, newest first.
    pub async fn list_routines(
        &self,
        query: &ListRoutinesQuery,
    ) -> Result<PageResponse<RoutineResponse>, Error> {
        self.get_query("/routines", query).await
    }

    /// `GET /routines/:id`.
    pub async fn get_routine(&self, id: Uuid) -> Result<RoutineResponse, Error> {
        data(self.get(&format!("/routines/{id}")).await)
    }

    /// `PATCH /routines/:id`: changes the fields given (the caller becomes its owner).
    pub async fn update_routine(
        &self,
        id: Uuid,
        body: &PatchRoutineRequest,
    ) -> Result<RoutineResponse, Error> {
        data(
            self.call(Method::PATCH, &format!("/routines/{id}"), body)
                .await,
        )
    }

    /// `DELETE /routines/:id`.
    pub async fn delete_routine(&self, id: Uuid) -> Result<(), Error> {
        self.call_empty::<()>(Method::DELETE, &format!("/routines/{id}"))
            .await
    }

    /// `POST /routines/:id/run`: the task it created.
    pub async fn run_routine(&self, id: Uuid) -> Result<TaskResponse, Error> {
        data(
            self.call_empty(Method::POST, &format!("/routines/{id}/run"))
                .await,
        )
    }
}
