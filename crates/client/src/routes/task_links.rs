//! What hangs off a task: approval, assignment, comments, dependencies, escalations,
//! candidates and templates.

use muster_wire::paging::{PageQuery, PageResponse};
use muster_wire::routing::{
    AutoAssignRequest, CandidateResponse, CandidatesQuery, CreateTemplateRequest,
    InstantiateRequest, TemplateResponse,
};
use muster_wire::task_links::{
    AssignRequest, CommentRequest, CommentResponse, DataWithMessage, DependencyRequest,
    DependencyResponse, EmptyRequest, EscalateRequest, EscalationResponse,
};
use muster_wire::tasks::TaskResponse;
use reqwest::Method;
use uuid::Uuid;

use super::data;
use crate::{Client, Error};

impl Client {
    /// `POST /tasks/:id/approve`.
    pub async fn approve_task(&self, id: Uuid) -> Result<TaskResponse, Error> {
        data(
            self.call(
                Method::POST,
                &format!("/tasks/{id}/approve"),
                &EmptyRequest {},
            )
            .await,
        )
    }

    /// `POST /tasks/:id/assign`.
    pub async fn assign_task(&self, id: Uuid, body: &AssignRequest) -> Result<TaskResponse, Error> {
        data(
            self.call(Method::POST, &format!("/tasks/{id}/assign"), body)
                .await,
        )
    }

    /// `POST /tasks/:id/auto-assign`: to the best candidate.
    pub async fn auto_assign_task(
        &self,
        id: Uuid,
        body: &AutoAssignRequest,
    ) -> Result<TaskResponse, Error> {
        data(
            self.call(Method::POST, &format!("/tasks/{id}/auto-assign"), body)
                .await,
        )
    }

    /// `GET /tasks/:id/candidates`: agents ranked for the task.
    pub async fn task_candidates(
        &self,
        id: Uuid,
        query: &CandidatesQuery,
    ) -> Result<Vec<CandidateResponse>, Error> {
        data(
            self.get_query(&format!("/tasks/{id}/candidates"), query)
                .await,
        )
    }

    /// `GET /tasks/:id/comments`.
    pub async fn list_comments(
        &self,
        id: Uuid,
        query: &PageQuery,
    ) -> Result<PageResponse<CommentResponse>, Error> {
        self.get_query(&format!("/tasks/{id}/comments"), query)
            .await
    }

    /// `POST /tasks/:id/comments`.
    pub async fn comment_on_task(
        &self,
        id: Uuid,
        body: &CommentRequest,
    ) -> Result<CommentResponse, Error> {
        data(
            self.call(Method::POST, &format!("/tasks/{id}/comments"), body)
                .await,
        )
    }

    /// `GET /tasks/:id/dependencies`.
    pub async fn list_dependencies(&self, id: Uuid) -> Result<Vec<DependencyResponse>, Error> {
        data(self.get(&format!("/tasks/{id}/dependencies")).await)
    }

    /// `POST /tasks/:id/dependencies`: the task waits for another.
    pub async fn add_dependency(
        &self,
        id: Uuid,
        body: &DependencyRequest,
    ) -> Result<DependencyResponse, Error> {
        data(
            self.call(Method::POST, &format!("/tasks/{id}/dependencies"), body)
                .await,
        )
    }

    /// `DELETE /tasks/:id/dependencies/:depId`.
    pub async fn remove_dependency(
        &self,
        id: Uuid,
        dependency_id: Uuid,
    ) -> Result<DataWithMessage<DependencyResponse>, Error> {
        self.call_empty(
            Method::DELETE,
            &format!("/tasks/{id}/dependencies/{dependency_id}"),
        )
        .await
    }

    /// `POST /tasks/:id/escalate`.
    pub async fn escalate_task(
        &self,
        id: Uuid,
        body: &EscalateRequest,
    ) -> Result<DataWithMessage<EscalationResponse>, Error> {
        self.call(Method::POST, &format!("/tasks/{id}/escalate"), body)
            .await
    }

    /// `GET /tasks/:id/escalations`.
    pub async fn list_escalations(
        &self,
        id: Uuid,
        query: &PageQuery,
    ) -> Result<PageResponse<EscalationResponse>, Error> {
        self.get_query(&format!("/tasks/{id}/escalations"), query)
            .await
    }

    /// `POST /tasks/:id/create-template`: the task becomes a reusable template.
    pub async fn create_template(
        &self,
        id: Uuid,
        body: &CreateTemplateRequest,
    ) -> Result<TemplateResponse, Error> {
        data(
            self.call(Method::POST, &format!("/tasks/{id}/create-template"), body)
                .await,
        )
    }

    /// `GET /tasks/templates`.
    pub async fn list_templates(
        &self,
        query: &PageQuery,
    ) -> Result<PageResponse<TemplateResponse>, Error> {
        self.get_query("/tasks/templates", query).await
    }

    /// `POST /tasks/templates/:id/instantiate`: a new task from a template.
    pub async fn instantiate_template(
        &self,
        id: Uuid,
        body: &InstantiateRequest,
    ) -> Result<TaskResponse, Error> {
        data(
            self.call(
                Method::POST,
                &format!("/tasks/templates/{id}/instantiate"),
                body,
            )
            .await,
        )
    }
}
