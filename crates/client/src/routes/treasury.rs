//! The organization's treasury (decision D-101).

use muster_wire::agent_money::AmountRequest;
use muster_wire::paging::{PageQuery, PageResponse};
use muster_wire::treasury::{TreasuryEntryResponse, TreasuryResponse};
use reqwest::Method;

use super::data;
use crate::{Client, Error};

impl Client {
    /// `GET /org/treasury`: the caller's organization's treasury.
    pub async fn treasury(&self) -> Result<TreasuryResponse, Error> {
        data(self.get("/org/treasury").await)
    }

    /// `GET /org/treasury/history`: its ledger, newest first.
    pub async fn treasury_history(
        &self,
        query: &PageQuery,
    ) -> Result<PageResponse<TreasuryEntryResponse>, Error> {
        self.get_query("/org/treasury/history", query).await
    }

    /// `POST /org/treasury/grant`: creates credits in the treasury.
    pub async fn grant_treasury(
        &self,
        body: &AmountRequest,
    ) -> Result<TreasuryEntryResponse, Error> {
        data(self.call(Method::POST, "/org/treasury/grant", body).await)
    }
}
