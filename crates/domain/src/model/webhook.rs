//! Outbound webhooks: a URL of the organization's that hears about events (post-hooks)
//! or is asked before an action (pre-hooks), decisions D-81 to D-85.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{DeliveryAttemptId, EventId, OrgId, RemoteAgentLink, TaskPush, WebhookId};
use crate::ValidationError;
use crate::validation::{max_chars, no_nul};

/// When a hook is called: before an action (and may block it) or after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum HookType {
    /// Asked before the action; a `canBlock` hook may refuse it (decision D-84).
    Pre,
    /// Told after the action, from the stored events (decision D-83).
    Post,
}

impl HookType {
    /// The wire form (`pre` / `post`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pre => "pre",
            Self::Post => "post",
        }
    }

    /// Parses the wire form.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "pre" => Some(Self::Pre),
            "post" => Some(Self::Post),
            _ => None,
        }
    }
}

/// A hook's name: trimmed, 1..=255 characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct HookName(String);

impl HookName {
    /// Trims and checks `value`.
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(ValidationError::new("name must not be empty"));
        }
        max_chars("name", trimmed, 255)?;
        no_nul("name", trimmed)?;
        Ok(Self(trimmed.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The URL a hook is called at, as given (trimmed), at most 2,048 characters. Whether it
/// may be called (https, public address, decision D-81) is the `TargetGuard` port's
/// question, asked at registration and again at every delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct HookUrl(String);

impl HookUrl {
    /// Longest URL accepted, in characters.
    pub const MAX_CHARS: usize = 2_048;

    /// Trims and checks the length of `value`.
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(ValidationError::new("url must not be empty"));
        }
        max_chars("url", trimmed, Self::MAX_CHARS)?;
        no_nul("url", trimmed)?;
        Ok(Self(trimmed.to_owned()))
    }

    /// The URL text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The event types a hook subscribes to: at least one, each a dotted type such as
/// `task.created` (1..=100 characters of `a-z`, `0-9`, `_` and `.`) or `*` for every
/// type; de-duplicated in order, at most 100.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct HookEvents(Vec<String>);

impl HookEvents {
    /// The subscription to every event type.
    pub const ALL: &'static str = "*";
    /// Most event types one hook may list.
    pub const MAX_ITEMS: usize = 100;

    /// Checks and de-duplicates `types`.
    ///
    /// ```
    /// use muster_domain::model::HookEvents;
    /// let events = HookEvents::new(vec!["task.created".into(), "task.created".into()]).unwrap();
    /// assert_eq!(events.as_slice(), ["task.created"]);
    /// assert!(events.matches("task.created") && !events.matches("task.done"));
    /// assert!(HookEvents::new(vec!["*".into()]).unwrap().matches("task.done"));
    /// assert!(HookEvents::new(vec![]).is_err());
    /// ```
    pub fn new(types: Vec<String>) -> Result<Self, ValidationError> {
        if types.is_empty() {
            return Err(ValidationError::new("events must not be empty"));
        }
        if types.len() > Self::MAX_ITEMS {
            return Err(ValidationError::new(format!(
                "events must have at most {} items",
                Self::MAX_ITEMS
            )));
        }
        let mut unique: Vec<String> = Vec::with_capacity(types.len());
        for (index, event_type) in types.into_iter().enumerate() {
            let event_type = event_type.trim().to_owned();
            if !is_event_type(&event_type) {
                return Err(ValidationError::new(format!(
                    "events[{index}] must be `*` or a dotted event type such as task.created"
                )));
            }
            if !unique.contains(&event_type) {
                unique.push(event_type);
            }
        }
        Ok(Self(unique))
    }

    /// Whether an event of `event_type` is delivered to the hook.
    pub fn matches(&self, event_type: &str) -> bool {
        crate::rules::hearing::subscribed(&self.0, event_type)
    }

    /// The subscribed types, in the order given.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }
}

fn is_event_type(value: &str) -> bool {
    value == HookEvents::ALL
        || (!value.is_empty()
            && value.chars().count() <= 100
            && value
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.')
            && !value.starts_with('.')
            && !value.ends_with('.'))
}

/// How long a call to the hook may take: 1,000..=30,000 ms, 5,000 by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct HookTimeout(u32);

impl HookTimeout {
    /// Shortest timeout, in milliseconds.
    pub const MIN_MS: u32 = 1_000;
    /// Longest timeout, in milliseconds.
    pub const MAX_MS: u32 = 30_000;
    /// The timeout of a hook registered without one.
    pub const DEFAULT: Self = Self(5_000);

    /// Checks the range.
    pub fn new(ms: i64) -> Result<Self, ValidationError> {
        u32::try_from(ms)
            .ok()
            .filter(|ms| (Self::MIN_MS..=Self::MAX_MS).contains(ms))
            .map(Self)
            .ok_or_else(|| {
                ValidationError::new(format!(
                    "timeoutMs must be between {} and {}",
                    Self::MIN_MS,
                    Self::MAX_MS
                ))
            })
    }

    /// Milliseconds.
    pub fn ms(self) -> u32 {
        self.0
    }
}

/// A registered outbound webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    /// Identity.
    pub id: WebhookId,
    /// Its organization.
    pub org_id: OrgId,
    /// What its owners call it (named in `webhook.blocked` messages).
    pub name: HookName,
    /// Where it is called.
    pub url: HookUrl,
    /// The signing secret, sealed (`SecretVault` purpose [`Webhook::SECRET_PURPOSE`]);
    /// `None` when deliveries go unsigned.
    pub sealed_secret: Option<Vec<u8>>,
    /// Which events it hears about.
    pub events: HookEvents,
    /// Before or after the action.
    pub hook_type: HookType,
    /// Whether its `allow: false` blocks the action (pre-hooks only).
    pub can_block: bool,
    /// How long a call may take.
    pub timeout: HookTimeout,
    /// Whether it is called at all.
    pub enabled: bool,
    /// Failed calls since the last success (10 disable the hook).
    pub consecutive_failures: u32,
    /// The most recent failure.
    pub last_error: Option<String>,
    /// The task and id of an A2A push notification config; `None` for the
    /// organization's own webhooks.
    pub push: Option<TaskPush>,
    /// The remote A2A agent this hook hands tasks to; `None` for the organization's
    /// own webhooks and for push configs.
    pub remote: Option<RemoteAgentLink>,
    /// When it was registered.
    pub created_at: OffsetDateTime,
    /// When it last changed.
    pub updated_at: OffsetDateTime,
}

impl Webhook {
    /// Whether it is one of the organization's own webhooks: not an A2A push config
    /// nor a remote agent's hand-over channel, which `/webhooks` never shows.
    pub fn is_own(&self) -> bool {
        self.push.is_none() && self.remote.is_none()
    }

    /// The `SecretVault` purpose its secret is sealed under.
    pub const SECRET_PURPOSE: &'static str = "webhook";
    /// Longest `secret` accepted, in characters.
    pub const MAX_SECRET_CHARS: usize = 255;

    /// Whether an event of `event_type` is delivered to (or, for a pre-hook, asked of)
    /// this hook now.
    pub fn hears(&self, event_type: &str) -> bool {
        self.enabled && self.events.matches(event_type)
    }
}

/// One recorded call of a hook: a post-hook delivery attempt, a pre-hook question or a
/// test delivery (`GET /api/v1/webhooks/:id/deliveries`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryAttempt {
    /// Identity.
    pub id: DeliveryAttemptId,
    /// The hook's organization.
    pub org_id: OrgId,
    /// The hook called.
    pub webhook_id: WebhookId,
    /// The delivered event; `None` for a test delivery.
    pub event_id: Option<EventId>,
    /// The event type sent (`webhook.test` for a test delivery).
    pub event_type: String,
    /// The `X-Service-Delivery` header sent, the same for every attempt at one event.
    pub delivery_id: Uuid,
    /// 1 for the first attempt at this delivery, 2 for the first retry, ...
    pub attempt: u32,
    /// The receiver's status code, when it answered.
    pub status_code: Option<u16>,
    /// How long the call took.
    pub duration_ms: u32,
    /// Why it failed; `None` when it succeeded.
    pub error: Option<String>,
    /// When the call was made.
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_types_round_trip_their_wire_names_exactly() {
        for (kind, wire) in [(HookType::Pre, "pre"), (HookType::Post, "post")] {
            assert_eq!(kind.as_str(), wire);
            assert_eq!(HookType::parse(wire), Some(kind));
        }
        for other in ["", "Pre", "before", "post "] {
            assert_eq!(HookType::parse(other), None, "{other:?}");
        }
    }

    #[test]
    fn a_hook_url_is_trimmed_and_bounded() {
        assert_eq!(
            HookUrl::new("  https://hooks.example/in ")
                .unwrap()
                .as_str(),
            "https://hooks.example/in"
        );
        let longest = format!("https://x/{}", "a".repeat(HookUrl::MAX_CHARS - 10));
        assert_eq!(HookUrl::new(&longest).unwrap().as_str(), longest);
        assert!(HookUrl::new(&format!("{longest}a")).is_err());
        assert!(HookUrl::new("   ").is_err());
    }

    #[test]
    fn event_types_are_dotted_lowercase_names_or_everything() {
        let hundred = "a".repeat(100);
        for good in [
            "*",
            "task.created",
            "agent_1.suspended",
            "x",
            hundred.as_str(),
        ] {
            assert!(HookEvents::new(vec![good.to_owned()]).is_ok(), "{good:?}");
        }
        let long = "a".repeat(101);
        for bad in [
            "",
            ".task",
            "task.",
            "Task.created",
            "task-created",
            "task created",
            "**",
            "task.*",
            long.as_str(),
        ] {
            assert!(HookEvents::new(vec![bad.to_owned()]).is_err(), "{bad:?}");
        }
        let events = HookEvents::new(vec![
            " task.created ".to_owned(),
            "task.done".to_owned(),
            "task.created".to_owned(),
        ])
        .unwrap();
        assert_eq!(events.as_slice(), ["task.created", "task.done"]);
        assert!(events.matches("task.done"));
        assert!(!events.matches("task.cancelled"));
        let everything = HookEvents::new(vec!["*".to_owned()]).unwrap();
        assert!(everything.matches("agent.suspended"));
    }

    #[test]
    fn a_timeout_is_kept_in_milliseconds_within_its_range() {
        assert_eq!(HookTimeout::new(1_000).unwrap().ms(), 1_000);
        assert_eq!(HookTimeout::new(30_000).unwrap().ms(), 30_000);
        assert_eq!(HookTimeout::DEFAULT.ms(), 5_000);
        for bad in [999, 30_001, -1, i64::MAX] {
            assert!(HookTimeout::new(bad).is_err(), "{bad}");
        }
    }
}
