use time::OffsetDateTime;

use super::{OrgId, UserId};
use crate::ValidationError;

/// What a human user may do (decision D-14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
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

/// A password as typed, before hashing: 8..=128 characters (decision D-14). Its `Debug`
/// never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// Checks the length.
    ///
    /// ```
    /// use muster_domain::model::Password;
    /// assert!(Password::new("correct horse").is_ok());
    /// assert!(Password::new("short").is_err());
    /// assert_eq!(format!("{:?}", Password::new("correct horse").unwrap()), "Password(***)");
    /// ```
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        if !(8..=128).contains(&value.chars().count()) {
            return Err(ValidationError::new("password must be 8 to 128 characters"));
        }
        Ok(Self(value.to_owned()))
    }

    /// The password, for hashing or verifying only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(***)")
    }
}

/// A human user of an organization. Its `Debug` leaves out the password hash.
#[derive(Clone, PartialEq)]
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

impl std::fmt::Debug for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("User")
            .field("id", &self.id)
            .field("org_id", &self.org_id)
            .field("email", &self.email)
            .field("name", &self.name)
            .field("role", &self.role)
            .field("created_at", &self.created_at)
            .finish_non_exhaustive()
    }
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
