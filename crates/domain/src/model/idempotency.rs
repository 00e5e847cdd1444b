//! `Idempotency-Key`: a client's name for one logical request, so that a retry of a POST
//! is answered from the first attempt instead of doing it again.

use crate::ValidationError;

/// A key with what it is scoped to: the verified credential, the method and the path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey {
    /// The credential (`agent:<uuid>`, `user:<uuid>`, `api_key:<uuid>`, `owner`).
    pub scope: String,
    /// The HTTP method.
    pub method: String,
    /// The request path, without the query.
    pub path: String,
    /// The client's key: 1 to 255 printable ASCII characters.
    pub key: String,
}

impl IdempotencyKey {
    /// Longest key accepted, in characters.
    pub const MAX_CHARS: usize = 255;
    /// How long a key is kept, in hours.
    pub const KEPT_HOURS: i64 = 24;

    /// Checks the client's `key`.
    ///
    /// ```
    /// use muster_domain::model::IdempotencyKey;
    /// assert!(IdempotencyKey::new("agent:1", "POST", "/tasks", "retry-1 ok").is_ok());
    /// assert!(IdempotencyKey::new("agent:1", "POST", "/tasks", "").is_err());
    /// assert!(IdempotencyKey::new("agent:1", "POST", "/tasks", "caf\u{e9}").is_err());
    /// ```
    pub fn new(scope: &str, method: &str, path: &str, key: &str) -> Result<Self, ValidationError> {
        let printable = key.bytes().all(|b| (0x20..=0x7e).contains(&b));
        if key.is_empty() || key.len() > Self::MAX_CHARS || !printable {
            return Err(ValidationError::new(
                "Idempotency-Key must be 1 to 255 printable ASCII characters",
            ));
        }
        Ok(Self {
            scope: scope.to_owned(),
            method: method.to_owned(),
            path: path.to_owned(),
            key: key.to_owned(),
        })
    }
}

/// A response kept for the retries of its request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    /// The HTTP status.
    pub status: u16,
    /// Its `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The body, byte for byte.
    pub body: Vec<u8>,
}

/// What a key's first sight finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begun {
    /// The key is new: this request goes ahead, and its response is kept.
    Claimed,
    /// The request was done already: its response, to answer again.
    Replay(StoredResponse),
    /// The same key is being handled by another request right now.
    InProgress,
    /// The key was used with another body.
    Mismatch,
}
