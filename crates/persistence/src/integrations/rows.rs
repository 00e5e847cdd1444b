//! The rows of `codehost_connections`, `codehost_links` and `codehost_deliveries`, and
//! their conversions to and from the domain model.

use diesel::prelude::*;
use muster_domain::model::{
    CodeHostConnection, CodeHostConnectionId, CodeHostLink, HookName, InstallationId,
    IntegrationAction, IntegrationAnswer, ItemRef, LinkKind, OrgId, RepositoryName, TaskId,
};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::schema::{codehost_connections, codehost_deliveries, codehost_links};
use crate::types::{DbTime, DbUuid};

/// A `codehost_connections` row.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = codehost_connections, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_null = true)]
pub(crate) struct ConnectionRow {
    pub id: DbUuid,
    pub org_id: DbUuid,
    pub installation_id: i64,
    pub name: String,
    pub repository: Option<String>,
    pub sealed_secret: Vec<u8>,
    pub enabled: bool,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&CodeHostConnection> for ConnectionRow {
    fn from(c: &CodeHostConnection) -> Self {
        Self {
            id: DbUuid(c.id.as_uuid()),
            org_id: DbUuid(c.org_id.as_uuid()),
            installation_id: c.installation_id.get(),
            name: c.name.as_str().to_owned(),
            repository: c.repository.as_ref().map(|r| r.as_str().to_owned()),
            sealed_secret: c.sealed_secret.clone(),
            enabled: c.enabled,
            created_at: DbTime(c.created_at),
            updated_at: DbTime(c.updated_at),
        }
    }
}

impl TryFrom<ConnectionRow> for CodeHostConnection {
    type Error = RepositoryError;

    fn try_from(row: ConnectionRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: CodeHostConnectionId::from_uuid(row.id.0),
            org_id: OrgId::from_uuid(row.org_id.0),
            installation_id: InstallationId::new(row.installation_id)
                .map_err(|e| corrupt("code-host installation id", e))?,
            name: HookName::new(&row.name).map_err(|e| corrupt("code-host connection name", e))?,
            repository: row
                .repository
                .as_deref()
                .map(RepositoryName::new)
                .transpose()
                .map_err(|e| corrupt("code-host repository", e))?,
            sealed_secret: row.sealed_secret,
            enabled: row.enabled,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}

/// A `codehost_links` row.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = codehost_links, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct LinkRow {
    pub connection_id: DbUuid,
    pub repository: String,
    pub kind: String,
    pub number: i64,
    pub task_id: DbUuid,
    pub linked_at: DbTime,
}

impl TryFrom<LinkRow> for CodeHostLink {
    type Error = RepositoryError;

    fn try_from(row: LinkRow) -> Result<Self, Self::Error> {
        Ok(Self {
            connection_id: CodeHostConnectionId::from_uuid(row.connection_id.0),
            item: ItemRef {
                repository: row.repository,
                kind: LinkKind::parse(&row.kind)
                    .ok_or_else(|| corrupt("code-host link kind", &row.kind))?,
                number: row.number,
            },
            task_id: TaskId::from_uuid(row.task_id.0),
        })
    }
}

/// A `codehost_deliveries` row: a claimed delivery, and once recorded its answer.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = codehost_deliveries, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct HostDeliveryRow {
    pub connection_id: DbUuid,
    pub delivery_id: String,
    pub received_at: DbTime,
    pub action: Option<String>,
    pub task_id: Option<DbUuid>,
    pub reason: Option<String>,
}

impl HostDeliveryRow {
    /// The recorded answer; `None` before it is recorded.
    pub(crate) fn answer(self) -> Result<Option<IntegrationAnswer>, RepositoryError> {
        let Some(action) = self.action else {
            return Ok(None);
        };
        Ok(Some(IntegrationAnswer {
            action: IntegrationAction::parse(&action)
                .ok_or_else(|| corrupt("code-host delivery action", &action))?,
            task_id: self.task_id.map(|id| TaskId::from_uuid(id.0)),
            reason: self.reason,
        }))
    }
}
