//! Liveness, readiness and the API's own description.

use serde::Deserialize;

use crate::{Client, Error};

/// `{status}` of `/health` and `/ready`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Status {
    /// `ok` or `ready`.
    pub status: String,
}

impl Client {
    /// `GET /health`: the process is up.
    pub async fn health(&self) -> Result<Status, Error> {
        self.get("/health").await
    }

    /// `GET /ready`: the database answers.
    pub async fn ready(&self) -> Result<Status, Error> {
        self.get("/ready").await
    }

    /// `GET /openapi.json`: the OpenAPI 3.1 document of the server.
    pub async fn openapi(&self) -> Result<serde_json::Value, Error> {
        self.get("/openapi.json").await
    }

    /// `GET /metrics`: Prometheus text.
    pub async fn metrics(&self) -> Result<String, Error> {
        let response = self
            .send(
                reqwest::Method::GET,
                "/metrics",
                None,
                crate::client::Extra::default(),
            )
            .await?;
        let status = response.status().as_u16();
        let body = response.text().await?;
        if (200..300).contains(&status) {
            Ok(body)
        } else {
            Err(crate::error::from_answer(status, body.as_bytes()))
        }
    }
}
