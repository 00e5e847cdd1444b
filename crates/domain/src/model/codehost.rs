//! Code-host connections (decision D-87): an installation of the code host's app,
//! bound to one organization, whose signed events turn issues, pull requests and CI
//! results into tasks.

use time::OffsetDateTime;

use super::{CodeHostConnectionId, HookName, OrgId, TaskId};
use crate::ValidationError;

/// A connection to a code host installation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeHostConnection {
    /// Identity.
    pub id: CodeHostConnectionId,
    /// Its organization: where its tasks live.
    pub org_id: OrgId,
    /// The code host's installation id (unique across the deployment: events are routed
    /// by it).
    pub installation_id: InstallationId,
    /// What its owners call it.
    pub name: HookName,
    /// The one repository it listens to, when it is limited to one.
    pub repository: Option<RepositoryName>,
    /// The secret the code host signs events with, sealed (`SecretVault` purpose
    /// [`CodeHostConnection::SECRET_PURPOSE`]).
    pub sealed_secret: Vec<u8>,
    /// Whether its events have effects.
    pub enabled: bool,
    /// When it was created.
    pub created_at: OffsetDateTime,
    /// When it last changed.
    pub updated_at: OffsetDateTime,
}

impl CodeHostConnection {
    /// The `SecretVault` purpose its secret is sealed under.
    pub const SECRET_PURPOSE: &'static str = "codehost_connection";

    /// Whether events of `repository` (`owner/name`) are for this connection: all are
    /// when it is not limited to one repository. Names compare without regard to case,
    /// as the code host's do.
    pub fn covers(&self, repository: &str) -> bool {
        self.repository
            .as_ref()
            .is_none_or(|own| own.as_str().eq_ignore_ascii_case(repository))
    }
}

/// A code host installation id: a positive integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstallationId(i64);

impl InstallationId {
    /// Checks that `value` is positive.
    ///
    /// ```
    /// use muster_domain::model::InstallationId;
    /// assert_eq!(InstallationId::new(42).unwrap().get(), 42);
    /// assert!(InstallationId::new(0).is_err());
    /// ```
    pub fn new(value: i64) -> Result<Self, ValidationError> {
        if value > 0 {
            Ok(Self(value))
        } else {
            Err(ValidationError::new(
                "installationId must be a positive integer",
            ))
        }
    }

    /// The number.
    pub const fn get(self) -> i64 {
        self.0
    }
}

/// A repository's full name, `owner/name`: at most 255 characters, one slash, no blanks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepositoryName(String);

impl RepositoryName {
    /// Longest name accepted, in characters.
    pub const MAX_CHARS: usize = 255;

    /// Checks `value`.
    ///
    /// ```
    /// use muster_domain::model::RepositoryName;
    /// assert!(RepositoryName::new("acme/widgets").is_ok());
    /// assert!(RepositoryName::new("widgets").is_err());
    /// assert!(RepositoryName::new("acme/wid gets").is_err());
    /// ```
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let shape_ok = value.split_once('/').is_some_and(|(owner, name)| {
            !owner.is_empty() && !name.is_empty() && !name.contains('/')
        });
        if !shape_ok
            || value.chars().count() > Self::MAX_CHARS
            || value.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(ValidationError::new(
                "repository must be a full repository name, owner/name (at most 255 \
                 characters, no blanks)",
            ));
        }
        Ok(Self(value.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What kind of code-host item a task stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// An issue.
    Issue,
    /// A pull request.
    PullRequest,
}

impl LinkKind {
    /// The stored form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Issue => "issue",
            Self::PullRequest => "pull_request",
        }
    }

    /// The kind of a stored form.
    pub fn parse(value: &str) -> Option<Self> {
        [Self::Issue, Self::PullRequest]
            .into_iter()
            .find(|k| k.as_str() == value)
    }

    /// How people call it: "issue", "pull request".
    pub const fn label(self) -> &'static str {
        match self {
            Self::Issue => "issue",
            Self::PullRequest => "pull request",
        }
    }
}

/// One issue or pull request of a repository: what a link ties to one task.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ItemRef {
    /// The repository's full name, as the code host sent it.
    pub repository: String,
    /// Issue or pull request.
    pub kind: LinkKind,
    /// Its number in the repository.
    pub number: i64,
}

impl std::fmt::Display for ItemRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} #{} of {}",
            self.kind.label(),
            self.number,
            self.repository
        )
    }
}

/// The task an item of a connection is linked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeHostLink {
    /// The connection.
    pub connection_id: CodeHostConnectionId,
    /// The item.
    pub item: ItemRef,
    /// Its task.
    pub task_id: TaskId,
}
