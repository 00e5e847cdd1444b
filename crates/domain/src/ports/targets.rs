use async_trait::async_trait;

/// Why an outbound webhook URL may not be called (decision D-81).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetRefusal {
    /// Not an absolute URL with a host.
    #[error("url must be an absolute https URL")]
    Invalid,
    /// A scheme other than https (while plain http is not allowed).
    #[error("url must use https")]
    NotHttps,
    /// The host is, or resolves to, an internal or private address.
    #[error("Webhook URL cannot target internal/private IP addresses")]
    Private,
    /// The host name does not resolve.
    #[error("url host cannot be resolved")]
    Unresolvable,
}

/// Checks an outbound webhook URL (decision D-81) where it is registered or changed.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TargetGuard: Send + Sync {
    /// `Ok` when `url` is https and every address its host resolves to is public (or the
    /// operator allows otherwise).
    async fn check(&self, url: &str) -> Result<(), TargetRefusal>;
}
