//! A2A push notification configs: outbound webhooks scoped to one task, whose deliveries
//! are the task's A2A status updates. They share the webhooks' target rules, signing,
//! retries and delivery log, and are managed through the A2A endpoints only.

use super::TaskId;
use crate::ValidationError;

/// The event types a push config hears: every move of its task (an approval, a claim,
/// a cancel and a lease running out are moves too, each with its `task.transitioned`).
pub const PUSH_EVENT_TYPES: [&str; 1] = ["task.transitioned"];

/// Most push configs one task may have.
pub const MAX_PUSH_CONFIGS_PER_TASK: usize = 10;

/// A push config's id within its task: 1..=128 characters of `A-Z a-z 0-9 . _ ~ : -`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PushConfigId(String);

impl PushConfigId {
    /// Longest id accepted, in characters.
    pub const MAX_CHARS: usize = 128;

    /// Checks `value`.
    ///
    /// ```
    /// use muster_domain::model::PushConfigId;
    /// assert_eq!(PushConfigId::new("cfg-1").unwrap().as_str(), "cfg-1");
    /// assert!(PushConfigId::new("").is_err());
    /// assert!(PushConfigId::new("a/b").is_err());
    /// ```
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let fits = !value.is_empty()
            && value.len() <= Self::MAX_CHARS
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | ':' | '-'));
        if fits {
            Ok(Self(value.to_owned()))
        } else {
            Err(ValidationError::new(format!(
                "id must be 1 to {} characters of letters, digits and . _ ~ : -",
                Self::MAX_CHARS
            )))
        }
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a receiver is told in `Authorization`: a scheme (`Bearer`, `Basic`, ...) and
/// its credentials. The header is sent only when both are given.
#[derive(Clone, PartialEq, Eq)]
pub struct PushAuth {
    scheme: String,
    credentials: Option<String>,
}

impl std::fmt::Debug for PushAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushAuth")
            .field("scheme", &self.scheme)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl PushAuth {
    /// Longest scheme accepted, in characters.
    pub const MAX_SCHEME_CHARS: usize = 64;
    /// Longest credentials accepted, in characters.
    pub const MAX_CREDENTIAL_CHARS: usize = 4_096;

    /// Checks a scheme (an HTTP token) and credentials (printable ASCII and spaces).
    ///
    /// ```
    /// use muster_domain::model::PushAuth;
    /// let auth = PushAuth::new("Bearer", Some("abc.def")).unwrap();
    /// assert_eq!(auth.header().as_deref(), Some("Bearer abc.def"));
    /// assert_eq!(PushAuth::new("Bearer", None).unwrap().header(), None);
    /// assert!(PushAuth::new("", None).is_err());
    /// assert!(PushAuth::new("Bearer", Some("a\nb")).is_err());
    /// ```
    pub fn new(scheme: &str, credentials: Option<&str>) -> Result<Self, ValidationError> {
        let token_char = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if scheme.is_empty()
            || scheme.len() > Self::MAX_SCHEME_CHARS
            || !scheme.chars().all(token_char)
        {
            return Err(ValidationError::new(format!(
                "authentication.scheme must be an HTTP authentication scheme such as Bearer \
                 (1 to {} characters)",
                Self::MAX_SCHEME_CHARS
            )));
        }
        let credentials = credentials.filter(|c| !c.is_empty());
        if let Some(credentials) = credentials
            && (credentials.len() > Self::MAX_CREDENTIAL_CHARS
                || !credentials.chars().all(|c| matches!(c, ' '..='~')))
        {
            return Err(ValidationError::new(format!(
                "authentication.credentials must be at most {} printable ASCII characters",
                Self::MAX_CREDENTIAL_CHARS
            )));
        }
        Ok(Self {
            scheme: scheme.to_owned(),
            credentials: credentials.map(str::to_owned),
        })
    }

    /// The scheme.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// The credentials, when given.
    pub fn credentials(&self) -> Option<&str> {
        self.credentials.as_deref()
    }

    /// The `Authorization` value, when there are credentials to send.
    pub fn header(&self) -> Option<String> {
        self.credentials
            .as_ref()
            .map(|credentials| format!("{} {credentials}", self.scheme))
    }
}

/// Longest push token accepted, in characters.
pub const MAX_PUSH_TOKEN_CHARS: usize = 255;

/// Checks a push token: 1..=255 printable ASCII characters (it travels in a header).
pub fn check_push_token(token: &str) -> Result<(), ValidationError> {
    if token.is_empty()
        || token.len() > MAX_PUSH_TOKEN_CHARS
        || !token.chars().all(|c| matches!(c, '!'..='~'))
    {
        return Err(ValidationError::new(
            "token must be 1 to 255 printable ASCII characters without spaces",
        ));
    }
    Ok(())
}

/// What makes a webhook a push config: its task and id there, and the sealed
/// `Authorization` to send (`SecretVault` purpose [`TaskPush::AUTH_PURPOSE`]). Its token
/// is the webhook's secret: sent in `X-A2A-Notification-Token` and signing the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskPush {
    /// The task whose updates it hears.
    pub task_id: TaskId,
    /// Its id within the task.
    pub config_id: PushConfigId,
    /// The sealed scheme and credentials (JSON), when given.
    pub sealed_auth: Option<Vec<u8>>,
}

impl TaskPush {
    /// The `SecretVault` purpose its authentication is sealed under.
    pub const AUTH_PURPOSE: &'static str = "a2a_push_auth";
}
