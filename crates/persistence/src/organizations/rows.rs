//! The `organizations` row and its conversions to and from the domain model.

use diesel::prelude::*;
use muster_domain::model::{OrgId, OrgName, Organization};
use muster_domain::ports::RepositoryError;

use crate::error::corrupt;
use crate::schema::organizations;
use crate::types::{DbTime, DbUuid};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = organizations, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct OrganizationRow {
    pub id: DbUuid,
    pub name: String,
    pub is_default: bool,
    pub created_at: DbTime,
}

impl From<&Organization> for OrganizationRow {
    fn from(org: &Organization) -> Self {
        Self {
            id: DbUuid(org.id.as_uuid()),
            name: org.name.as_str().to_owned(),
            is_default: org.is_default,
            created_at: DbTime(org.created_at),
        }
    }
}

impl TryFrom<OrganizationRow> for Organization {
    type Error = RepositoryError;

    fn try_from(row: OrganizationRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: OrgId::from_uuid(row.id.0),
            name: OrgName::new(&row.name).map_err(|e| corrupt("organization name", e))?,
            is_default: row.is_default,
            created_at: row.created_at.0,
        })
    }
}
