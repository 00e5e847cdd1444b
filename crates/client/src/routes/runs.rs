//! Runs of tasks, their logs and their usage (decision D-106): `/tasks/:id/runs`,
//! `/runs`, `/usage` and `/agents/:id/usage`.

use muster_wire::claims::HeartbeatBody;
use muster_wire::paging::{PageQuery, PageResponse};
use muster_wire::runs::{
    FinishRunBody, ListRunsQuery, LogBody, LogPageResponse, LogQuery, RunResponse, StartRunBody,
    StopRunBody, UsageAnswerResponse, UsageBody, UsageGroupResponse, UsageQueryParams,
    UsageSummaryResponse,
};
use reqwest::Method;
use uuid::Uuid;

use super::data;
use crate::stream::RunLogStream;
use crate::{Client, Error};

impl Client {
    /// `POST /tasks/:id/runs`: starts a run of a task this agent holds in progress,
    /// optionally holding `reserveCredits` for its usage.
    pub async fn start_run(
        &self,
        task_id: Uuid,
        body: &StartRunBody,
    ) -> Result<RunResponse, Error> {
        data(
            self.call(Method::POST, &format!("/tasks/{task_id}/runs"), body)
                .await,
        )
    }

    /// `GET /runs/:id`.
    pub async fn get_run(&self, id: Uuid) -> Result<RunResponse, Error> {
        data(self.get(&format!("/runs/{id}")).await)
    }

    /// `GET /runs`: a page of the organization's runs, newest first, filtered.
    pub async fn list_runs(
        &self,
        query: &ListRunsQuery,
    ) -> Result<PageResponse<RunResponse>, Error> {
        self.get_query("/runs", query).await
    }

    /// `GET /tasks/:id/runs`: a page of one task's runs, newest first.
    pub async fn list_task_runs(
        &self,
        task_id: Uuid,
        page: &PageQuery,
    ) -> Result<PageResponse<RunResponse>, Error> {
        self.get_query(&format!("/tasks/{task_id}/runs"), page)
            .await
    }

    /// `POST /runs/:id/log`: appends lines to a running run's log.
    pub async fn append_run_log(&self, id: Uuid, body: &LogBody) -> Result<RunResponse, Error> {
        data(
            self.call(Method::POST, &format!("/runs/{id}/log"), body)
                .await,
        )
    }

    /// `GET /runs/:id/log`: the lines numbered after `query.after`; pass the page's
    /// `last` as the next `after`.
    pub async fn run_log(&self, id: Uuid, query: &LogQuery) -> Result<LogPageResponse, Error> {
        self.get_query(&format!("/runs/{id}/log"), query).await
    }

    /// `GET /runs/:id/log/stream`: the lines numbered after `after` (0 for the whole
    /// log), then each new one as it is appended, until the run ends. It reconnects by
    /// itself and resumes after the last line handed out, so nothing is missed or seen
    /// twice. Nothing is sent until the first [`RunLogStream::next`].
    pub fn follow_run_log(&self, id: Uuid, after: i64) -> RunLogStream {
        RunLogStream::new(self.clone(), format!("/runs/{id}/log/stream"), after)
    }

    /// `POST /runs/:id/usage`: records the tokens one model used (and their cost). The
    /// answer's `report` is `None` when its `reportId` was already counted.
    pub async fn report_usage(
        &self,
        id: Uuid,
        body: &UsageBody,
    ) -> Result<UsageAnswerResponse, Error> {
        self.call(Method::POST, &format!("/runs/{id}/usage"), body)
            .await
    }

    /// `POST /runs/:id/heartbeat`: keeps the run's task leased.
    pub async fn heartbeat_run(
        &self,
        id: Uuid,
        body: &HeartbeatBody,
    ) -> Result<RunResponse, Error> {
        data(
            self.call(Method::POST, &format!("/runs/{id}/heartbeat"), body)
                .await,
        )
    }

    /// `POST /runs/:id/finish`: closes a running run with its final status.
    pub async fn finish_run(&self, id: Uuid, body: &FinishRunBody) -> Result<RunResponse, Error> {
        data(
            self.call(Method::POST, &format!("/runs/{id}/finish"), body)
                .await,
        )
    }

    /// `POST /runs/:id/stop`: asks the run's agent to stop it.
    pub async fn stop_run(&self, id: Uuid, body: &StopRunBody) -> Result<RunResponse, Error> {
        data(
            self.call(Method::POST, &format!("/runs/{id}/stop"), body)
                .await,
        )
    }

    /// `GET /usage`: the organization's usage, grouped (by agent unless
    /// `query.group_by` says otherwise), ordered by key.
    pub async fn usage(&self, query: &UsageQueryParams) -> Result<Vec<UsageGroupResponse>, Error> {
        let summary: UsageSummaryResponse = self.get_query("/usage", query).await?;
        Ok(summary.data)
    }

    /// `GET /agents/:id/usage`: one agent's usage, grouped (by model unless
    /// `query.group_by` says otherwise).
    pub async fn agent_usage(
        &self,
        agent: Uuid,
        query: &UsageQueryParams,
    ) -> Result<Vec<UsageGroupResponse>, Error> {
        let summary: UsageSummaryResponse = self
            .get_query(&format!("/agents/{agent}/usage"), query)
            .await?;
        Ok(summary.data)
    }
}
