use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Uuid);

        impl $name {
            /// Wraps a UUID.
            pub const fn from_uuid(id: Uuid) -> Self {
                Self(id)
            }

            /// The UUID inside.
            pub const fn as_uuid(self) -> Uuid {
                self.0
            }
        }

        impl From<Uuid> for $name {
            fn from(id: Uuid) -> Self {
                Self(id)
            }
        }

        impl From<$name> for Uuid {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(
    /// Identifies an organization, the tenant every row belongs to.
    OrgId
);
id_type!(
    /// Identifies a task.
    TaskId
);
id_type!(
    /// An agent's UUID (the `id` field; its human-readable `agentId` is an [`AgentHandle`](super::AgentHandle)).
    AgentId
);
id_type!(
    /// Identifies an audit event.
    EventId
);
id_type!(
    /// Identifies a human user.
    UserId
);
id_type!(
    /// Identifies an API key.
    ApiKeyId
);
id_type!(
    /// Identifies one refresh token.
    RefreshTokenId
);
id_type!(
    /// Identifies a login: every refresh token rotated from one login shares it, so that
    /// reuse of a rotated token can end the whole login (decision D-13).
    LoginFamilyId
);
id_type!(
    /// Identifies a dependency between two tasks.
    DependencyId
);
id_type!(
    /// Identifies a comment on a task.
    CommentId
);
id_type!(
    /// Identifies an escalation of a task.
    EscalationId
);
id_type!(
    /// Identifies a task template.
    TemplateId
);
id_type!(
    /// Identifies one capability an agent declares.
    CapabilityId
);
id_type!(
    /// Identifies one movement of credits.
    LedgerEntryId
);
id_type!(
    /// Identifies one change of an agent's reputation.
    ReputationEventId
);
id_type!(
    /// Identifies one movement of an organization's treasury.
    TreasuryEntryId
);
id_type!(
    /// Identifies one run: an attempt at a task by its assignee (decision D-106).
    RunId
);
id_type!(
    /// Identifies one usage report of a run.
    UsageReportId
);
id_type!(
    /// Identifies a project: tasks grouped under a goal (issue 66).
    ProjectId
);
id_type!(
    /// Identifies a routine: work that recurs on a schedule (decision D-108).
    RoutineId
);
id_type!(
    /// Identifies an outbound webhook.
    WebhookId
);
id_type!(
    /// Identifies one recorded attempt to call an outbound webhook.
    DeliveryAttemptId
);
id_type!(
    /// Identifies an inbound webhook key.
    InboundKeyId
);
id_type!(
    /// Identifies a code-host connection.
    CodeHostConnectionId
);
