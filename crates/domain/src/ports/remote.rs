use async_trait::async_trait;

/// What Muster needs of a remote A2A agent's card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteCard {
    /// The agent's name.
    pub name: String,
    /// What it says it does.
    pub description: String,
    /// The URL of its JSON-RPC binding, where tasks are sent.
    pub endpoint: String,
    /// The ids of its skills (each becomes a capability of the agent that stands for
    /// it, when it is a valid capability name).
    pub skills: Vec<String>,
}

/// Reads an outside agent's A2A Agent Card, through the same target checks as
/// webhook deliveries (decision D-81), following no redirect.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CardFetcher: Send + Sync {
    /// The card at `url`, or why it could not be read (in words that name no secret).
    async fn fetch(&self, url: &str) -> Result<RemoteCard, String>;
}
