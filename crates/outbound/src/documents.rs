//! Reading a document from another server (an A2A Agent Card): one GET through the
//! same target checks as webhook deliveries (decision D-81), following no redirect,
//! within a deadline, the body capped.

use http_body_util::Full;
use hyper::Request;
use hyper::body::Bytes;
use hyper::header::{ACCEPT, HeaderValue, USER_AGENT};

use tracing::{Instrument, Span};

use crate::http_client::HttpClient;
use crate::ssrf::{TargetPolicy, parse_target};
use crate::tracing_calls::{call_span, propagate, record_outcome};

/// GETs documents from URLs the policy allows.
#[derive(Debug, Clone)]
pub struct DocumentFetcher {
    client: HttpClient,
    policy: TargetPolicy,
}

impl DocumentFetcher {
    /// A fetcher applying `policy`, through a client guarded by it.
    pub fn new(policy: TargetPolicy) -> Result<Self, rustls::Error> {
        Ok(Self {
            client: HttpClient::guarded(policy)?,
            policy,
        })
    }

    /// The body of a 2xx answer to `GET url` asking for JSON; otherwise why not, in
    /// words that name no header or body.
    pub async fn get_json(&self, url: &str) -> Result<Vec<u8>, String> {
        let span = call_span("a2a.card", "GET", url);
        let (status, result) = self.traced_get(url, &span).instrument(span.clone()).await;
        record_outcome(&span, status, result.is_err());
        result
    }

    /// The answer's status (when there was one) and the body or why not.
    async fn traced_get(&self, url: &str, span: &Span) -> (Option<u16>, Result<Vec<u8>, String>) {
        match self.get_in(url, span).await {
            Ok((status, body)) => (Some(status), body),
            Err(error) => (None, Err(error)),
        }
    }

    async fn get_in(
        &self,
        url: &str,
        span: &Span,
    ) -> Result<(u16, Result<Vec<u8>, String>), String> {
        // Literal addresses never reach the client's resolver: check them here.
        parse_target(url, self.policy).map_err(|refusal| format!("target refused: {refusal}"))?;
        let mut request = Request::get(url)
            .header(ACCEPT, HeaderValue::from_static("application/json"))
            .header(
                USER_AGENT,
                HeaderValue::from_static(concat!("Muster/", env!("CARGO_PKG_VERSION"))),
            )
            .body(Full::new(Bytes::new()))
            .map_err(|_| "the URL is not valid HTTP".to_owned())?;
        propagate(span, &mut request);
        let response = self
            .client
            .send(request)
            .await
            .map_err(|err| crate::hooks::describe(&err))?;
        let status = response.status.as_u16();
        if !response.status.is_success() {
            return Ok((status, Err(format!("the server answered {status}"))));
        }
        Ok((status, Ok(response.body.to_vec())))
    }
}
