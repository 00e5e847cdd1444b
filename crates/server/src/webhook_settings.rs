//! Outbound webhook settings (decisions D-81, D-83) and the delivery worker.

use tracing::Instrument;

use crate::job_span::{finish, job_span};
use std::sync::Arc;
use std::time::Duration;

use std::collections::HashMap;

use clap::builder::BoolishValueParser;
use muster_domain::model::AgentId;
use muster_domain::ports::TargetGuard;
use muster_domain::rules::delivery::RetrySchedule;
use muster_domain::service::DeliveryService;
use muster_http::{JobOutcome, Metrics};
use muster_outbound::{ResolvingTargetGuard, TargetPolicy};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::metrics_settings::record;

/// How outbound webhooks are called. `Debug` never shows the chat token.
#[derive(Clone, clap::Args)]
pub struct WebhookSettings {
    /// Let webhooks target private, loopback and other internal addresses. Off by
    /// default: it would let anyone who may register a hook reach internal services.
    #[arg(long, env = "MUSTER_WEBHOOK_ALLOW_PRIVATE", default_value_t = false,
          value_parser = BoolishValueParser::new(), action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true")]
    pub webhook_allow_private: bool,
    /// Let webhooks use plain `http://` URLs. Off by default: deliveries carry the
    /// organization's events.
    #[arg(long, env = "MUSTER_WEBHOOK_ALLOW_HTTP", default_value_t = false,
          value_parser = BoolishValueParser::new(), action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true")]
    pub webhook_allow_http: bool,
    /// Hooks delivered to at the same time by this instance (each hook gets one call at
    /// a time, in event order).
    #[arg(long, env = "MUSTER_WEBHOOK_CONCURRENCY", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub webhook_concurrency: u32,
    /// Milliseconds between two looks at the outbox for due deliveries; 0 turns this
    /// instance's delivery worker off.
    #[arg(long, env = "MUSTER_WEBHOOK_POLL_MS", default_value_t = 200)]
    pub webhook_poll_ms: u64,
    /// Waits between attempts at one event (decision D-83; tests shorten them).
    #[arg(skip)]
    pub retry_schedule: RetrySchedule,
    /// Chat author ids and the agents they act as: `author=agent-uuid,...` or a JSON
    /// object `{"author": "agent-uuid"}`. Unmapped authors act as the service in the
    /// default organization and may only create tasks; unmapped bots are ignored.
    #[arg(long, env = "MUSTER_CHAT_AGENT_MAP", default_value = "",
          value_parser = parse_agent_map)]
    pub chat_agent_map: AgentMap,
    /// The token every chat request must carry in `X-Chat-Token` (at least 16
    /// characters). Without it the chat integration is off: its route answers 404.
    #[arg(long, env = "MUSTER_CHAT_TOKEN", hide_env_values = true)]
    pub chat_token: Option<String>,
}

/// The shortest chat token accepted: a shared secret anyone who reaches the port may
/// guess at.
const MIN_CHAT_TOKEN_CHARS: usize = 16;

/// Chat author ids and agent UUIDs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentMap(pub HashMap<String, AgentId>);

fn parse_agent_map(value: &str) -> Result<AgentMap, String> {
    let value = value.trim();
    let pairs: Vec<(String, String)> = if value.starts_with('{') {
        let object: HashMap<String, String> = serde_json::from_str(value)
            .map_err(|e| format!("expected a JSON object of author id to agent UUID: {e}"))?;
        object.into_iter().collect()
    } else {
        value
            .split(',')
            .map(str::trim)
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                pair.split_once('=')
                    .map(|(a, b)| (a.trim().to_owned(), b.trim().to_owned()))
                    .ok_or_else(|| format!("expected author=agent-uuid, got `{pair}`"))
            })
            .collect::<Result<_, _>>()?
    };
    pairs
        .into_iter()
        .map(|(author, agent)| {
            let agent = uuid::Uuid::parse_str(&agent)
                .map_err(|_| format!("`{agent}` (for chat author `{author}`) is not a UUID"))?;
            Ok((author, AgentId::from_uuid(agent)))
        })
        .collect::<Result<_, String>>()
        .map(AgentMap)
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            webhook_allow_private: false,
            webhook_allow_http: false,
            webhook_concurrency: 16,
            webhook_poll_ms: 200,
            retry_schedule: RetrySchedule::default(),
            chat_agent_map: AgentMap::default(),
            chat_token: None,
        }
    }
}

impl std::fmt::Debug for WebhookSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookSettings")
            .field("webhook_allow_private", &self.webhook_allow_private)
            .field("webhook_allow_http", &self.webhook_allow_http)
            .field("webhook_concurrency", &self.webhook_concurrency)
            .field("webhook_poll_ms", &self.webhook_poll_ms)
            .field("retry_schedule", &self.retry_schedule)
            .field("chat_agent_map", &self.chat_agent_map)
            .field(
                "chat_token",
                &self.chat_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl WebhookSettings {
    /// The chat token, when the chat integration is on (decision D-100). An empty
    /// setting is no setting (`MUSTER_CHAT_TOKEN=` keeps it off); surrounding blanks are
    /// not part of it.
    ///
    /// # Errors
    /// A token shorter than 16 characters.
    pub fn chat_token(&self) -> anyhow::Result<Option<String>> {
        let Some(token) = self
            .chat_token
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        else {
            return Ok(None);
        };
        if token.chars().count() < MIN_CHAT_TOKEN_CHARS {
            anyhow::bail!("MUSTER_CHAT_TOKEN must be at least {MIN_CHAT_TOKEN_CHARS} characters");
        }
        Ok(Some(token.to_owned()))
    }

    /// How often the worker looks for due deliveries; `None` when it is off.
    pub fn poll_every(&self) -> Option<Duration> {
        (self.webhook_poll_ms > 0).then(|| Duration::from_millis(self.webhook_poll_ms))
    }

    /// What hooks may reach.
    pub fn policy(&self) -> TargetPolicy {
        TargetPolicy {
            allow_private: self.webhook_allow_private,
            allow_http: self.webhook_allow_http,
        }
    }

    /// Warns at start about every setting that weakens the defaults.
    pub fn warn_if_relaxed(&self) {
        if self.webhook_allow_private {
            tracing::warn!(
                "MUSTER_WEBHOOK_ALLOW_PRIVATE is on: webhooks may call private and internal \
                 addresses of this network"
            );
        }
        if self.webhook_allow_http {
            tracing::warn!(
                "MUSTER_WEBHOOK_ALLOW_HTTP is on: webhooks may deliver over unencrypted http"
            );
        }
    }
}

/// Background worker: every `every`, leases the hooks with deliveries due (as many as
/// there are free slots) and drains each on its own task. A slow or hanging receiver
/// holds only its own slot, for at most its timeout per call.
pub async fn deliver_webhooks(
    deliveries: DeliveryService,
    every: Duration,
    concurrency: u32,
    metrics: Option<Arc<Metrics>>,
) {
    let slots = Arc::new(Semaphore::new(concurrency as usize));
    let mut running = JoinSet::new();
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        while running.try_join_next().is_some() {}
        let free = u32::try_from(slots.available_permits()).unwrap_or(u32::MAX);
        let span = job_span("webhook_delivery");
        let leased = match deliveries.lease(free).instrument(span.clone()).await {
            Ok(leased) => leased,
            Err(err) => {
                tracing::warn!(%err, "could not look for due webhook deliveries");
                record(metrics.as_ref(), "webhook_delivery", JobOutcome::Failed);
                continue;
            }
        };
        let hooks = u64::try_from(leased.len()).unwrap_or(u64::MAX);
        finish(&span, &JobOutcome::Done(hooks));
        record(
            metrics.as_ref(),
            "webhook_delivery",
            JobOutcome::Done(hooks),
        );
        for (org, hook) in leased {
            let Ok(permit) = slots.clone().acquire_owned().await else {
                return;
            };
            let deliveries = deliveries.clone();
            let metrics = metrics.clone();
            // The drain's reads in a span of their own; each call it makes continues
            // the trace of the change that queued it.
            let drain = job_span("webhook_delivery.drain");
            running.spawn(async move {
                match deliveries.drain(org, hook).instrument(drain).await {
                    Ok(report) => {
                        if let Some(metrics) = &metrics {
                            metrics.deliveries(report.delivered.into(), report.failed.into());
                        }
                        if report.disabled {
                            tracing::warn!(%hook, "webhook disabled after consecutive failures");
                        } else {
                            tracing::debug!(%hook, ?report, "webhook deliveries");
                        }
                    }
                    Err(err) => tracing::warn!(%hook, %err, "webhook delivery failed"),
                }
                drop(permit);
            });
        }
    }
}

/// The URL check at registration (decision D-81).
pub fn target_guard(hooks: &WebhookSettings) -> Arc<dyn TargetGuard> {
    Arc::new(ResolvingTargetGuard::new(hooks.policy()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(value: Option<&str>) -> anyhow::Result<Option<String>> {
        WebhookSettings {
            chat_token: value.map(str::to_owned),
            ..WebhookSettings::default()
        }
        .chat_token()
    }

    #[test]
    fn debug_never_shows_the_chat_token() {
        let settings = WebhookSettings {
            chat_token: Some("s3cret-chat-token-value".into()),
            ..WebhookSettings::default()
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }

    #[test]
    fn the_chat_token_turns_chat_on_and_a_short_one_is_refused() {
        assert_eq!(token(None).unwrap(), None);
        assert_eq!(token(Some("  ")).unwrap(), None, "empty is off");
        let short = token(Some("s3cret")).unwrap_err().to_string();
        assert!(short.contains("at least 16 characters"), "{short}");
        assert_eq!(
            token(Some(" chat-token-0123456789 ")).unwrap().as_deref(),
            Some("chat-token-0123456789")
        );
    }
}
