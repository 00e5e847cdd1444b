//! Budgets and credits.

use muster_wire::agent_money::{
    AmountRequest, BalanceResponse, BudgetRequest, BudgetResponse, CanSpendQuery, CanSpendResponse,
    LedgerResponse, TransferRequest, TransferResponse,
};
use muster_wire::paging::{PageQuery, PageResponse};
use muster_wire::task_links::DataWithMessage;
use reqwest::Method;
use uuid::Uuid;

use super::data;
use crate::{Client, Error};

impl Client {
    /// `GET /agents/:id/budget`.
    pub async fn agent_budget(&self, id: Uuid) -> Result<BudgetResponse, Error> {
        data(self.get(&format!("/agents/{id}/budget")).await)
    }

    /// `PATCH /agents/:id/budget`.
    pub async fn set_agent_budget(
        &self,
        id: Uuid,
        body: &BudgetRequest,
    ) -> Result<BudgetResponse, Error> {
        data(
            self.call(Method::PATCH, &format!("/agents/{id}/budget"), body)
                .await,
        )
    }

    /// `GET /agents/:id/budget/can-spend?amount=`.
    pub async fn can_spend(
        &self,
        id: Uuid,
        query: &CanSpendQuery,
    ) -> Result<CanSpendResponse, Error> {
        data(
            self.get_query(&format!("/agents/{id}/budget/can-spend"), query)
                .await,
        )
    }

    /// `GET /agents/budget/alerts`: agents near or over their limit.
    pub async fn budget_alerts(&self) -> Result<Vec<BudgetResponse>, Error> {
        data(self.get("/agents/budget/alerts").await)
    }

    /// `GET /agents/:id/credits/balance`.
    pub async fn balance(&self, id: Uuid) -> Result<BalanceResponse, Error> {
        data(self.get(&format!("/agents/{id}/credits/balance")).await)
    }

    /// `POST /agents/:id/credits/grant`.
    pub async fn grant_credits(
        &self,
        id: Uuid,
        body: &AmountRequest,
    ) -> Result<DataWithMessage<LedgerResponse>, Error> {
        self.call(Method::POST, &format!("/agents/{id}/credits/grant"), body)
            .await
    }

    /// `POST /agents/credits/spend`: the calling agent spends.
    pub async fn spend_credits(
        &self,
        body: &AmountRequest,
    ) -> Result<DataWithMessage<LedgerResponse>, Error> {
        self.call(Method::POST, "/agents/credits/spend", body).await
    }

    /// `POST /agents/credits/transfer`: from the calling agent to another.
    pub async fn transfer_credits(
        &self,
        body: &TransferRequest,
    ) -> Result<TransferResponse, Error> {
        data(
            self.call(Method::POST, "/agents/credits/transfer", body)
                .await,
        )
    }

    /// `GET /agents/:id/credits/history`.
    pub async fn credit_history(
        &self,
        id: Uuid,
        query: &PageQuery,
    ) -> Result<PageResponse<LedgerResponse>, Error> {
        self.get_query(&format!("/agents/{id}/credits/history"), query)
            .await
    }
}
