use time::OffsetDateTime;

use super::{OrgId, UserId};
use crate::ValidationError;

/// What a human user may do (decision D-14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UserRole {
    /// Everything.
    Admin,
    /// Read and write tasks.
    Operator,
    /// Read only.
    Viewer,
}

impl UserRole {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Operator => "operator",
            Self::Viewer => "viewer",
        }
    }

    /// Parses a wire name.
    pub fn parse(value: &str) -> Option<Self> {
        [Self::Admin, Self::Operator, Self::Viewer]
            .into_iter()
            .find(|r| r.as_str() == value)
    }
}

/// An e-mail address, stored lower-cased (logins are case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    /// Trims, lower-cases and checks the rough shape `local@domain` (at most 254 chars).
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let value = value.trim().to_lowercase();
        let shape_ok = value.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && !domain.is_empty() && !domain.contains('@')
        });
        if !shape_ok
            || value.len() > 254
            || value.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(ValidationError::new("email must be a valid e-mail address"));
        }
        Ok(Self(value))
    }

    /// The normalized address.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A human user of an organization.
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    /// Identity.
    pub id: UserId,
    /// The owning organization.
    pub org_id: OrgId,
    /// Login address, unique within the organization.
    pub email: Email,
    /// Display name.
    pub name: String,
    /// Permissions.
    pub role: UserRole,
    /// Argon2id PHC string; never the password itself.
    pub password_hash: String,
    /// When it was created.
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_is_normalized_and_checked() {
        assert_eq!(
            Email::new(" Ada@Example.COM ").unwrap().as_str(),
            "ada@example.com"
        );
        for bad in ["", "ada", "@x", "ada@", "a@b@c", "a b@c"] {
            assert!(Email::new(bad).is_err(), "{bad}");
        }
    }
}
