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

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    fn connection(repository: Option<&str>) -> CodeHostConnection {
        CodeHostConnection {
            id: CodeHostConnectionId::from_uuid(Uuid::from_u128(1)),
            org_id: OrgId::from_uuid(Uuid::from_u128(2)),
            installation_id: InstallationId::new(42).unwrap(),
            name: HookName::new("github").unwrap(),
            repository: repository.map(|name| RepositoryName::new(name).unwrap()),
            sealed_secret: Vec::new(),
            enabled: true,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_connection_covers_its_repository_in_any_case_or_all_when_unlimited() {
        let limited = connection(Some("Acme/Widgets"));
        assert!(limited.covers("Acme/Widgets"));
        assert!(limited.covers("acme/widgets"));
        assert!(!limited.covers("acme/gadgets"));
        assert!(!limited.covers("acme/widgets-2"));
        let unlimited = connection(None);
        assert!(unlimited.covers("acme/widgets"));
        assert!(unlimited.covers("anyone/anything"));
    }

    #[test]
    fn a_repository_name_is_kept_as_given() {
        assert_eq!(
            RepositoryName::new("Acme/Widgets").unwrap().as_str(),
            "Acme/Widgets"
        );
        let longest = format!("a/{}", "b".repeat(RepositoryName::MAX_CHARS - 2));
        assert_eq!(RepositoryName::new(&longest).unwrap().as_str(), longest);
        assert!(RepositoryName::new(&format!("{longest}b")).is_err());
        for bad in [
            "widgets",
            "/widgets",
            "acme/",
            "a/b/c",
            "acme/wid gets",
            "acme/\u{7}",
        ] {
            assert!(RepositoryName::new(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn link_kinds_have_a_stored_form_and_a_label() {
        for (kind, stored, label) in [
            (LinkKind::Issue, "issue", "issue"),
            (LinkKind::PullRequest, "pull_request", "pull request"),
        ] {
            assert_eq!(kind.as_str(), stored);
            assert_eq!(LinkKind::parse(stored), Some(kind));
            assert_eq!(kind.label(), label);
        }
        assert_eq!(LinkKind::parse("pull request"), None);
        assert_eq!(LinkKind::parse("Issue"), None);
        assert_eq!(LinkKind::parse(""), None);
    }

    #[test]
    fn an_item_reads_as_people_name_it() {
        let item = ItemRef {
            repository: "acme/widgets".to_owned(),
            kind: LinkKind::PullRequest,
            number: 7,
        };
        assert_eq!(item.to_string(), "pull request #7 of acme/widgets");
    }
}
