//! Projects (issue 66): `/projects`.

use muster_wire::paging::PageResponse;
use muster_wire::projects::{
    CreateProjectRequest, ListProjectsQuery, PatchProjectRequest, ProjectResponse,
};
use reqwest::Method;
use uuid::Uuid;

use super::data;
use crate::{Client, Error};

impl Client {
    /// `POST /projects`: creates an active project.
    pub async fn create_project(
        &self,
        body: &CreateProjectRequest,
    ) -> Result<ProjectResponse, Error> {
        data(self.call(Method::POST, "/projects", body).await)
    }

    /// `GET /projects`: a page of the organization's projects, newest first.
    pub async fn list_projects(
        &self,
        query: &ListProjectsQuery,
    ) -> Result<PageResponse<ProjectResponse>, Error> {
        self.get_query("/projects", query).await
    }

    /// `GET /projects/:id`: the project with its progress.
    pub async fn get_project(&self, id: Uuid) -> Result<ProjectResponse, Error> {
        data(self.get(&format!("/projects/{id}")).await)
    }

    /// `PATCH /projects/:id`: changes the fields given.
    pub async fn update_project(
        &self,
        id: Uuid,
        body: &PatchProjectRequest,
    ) -> Result<ProjectResponse, Error> {
        data(
            self.call(Method::PATCH, &format!("/projects/{id}"), body)
                .await,
        )
    }

    /// `POST /projects/:id/archive`.
    pub async fn archive_project(&self, id: Uuid) -> Result<ProjectResponse, Error> {
        data(
            self.call_empty(Method::POST, &format!("/projects/{id}/archive"))
                .await,
        )
    }
}
