use time::OffsetDateTime;

use super::{OrgId, UserId};
use crate::ValidationError;

/// What a human user may do (decision D-14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

/// An e-mail address, stored in one form: NFKC (full-width and other compatibility
/// letters become plain ones) and lower case, so that logins ignore case and width and
/// two addresses that differ only so are one. Invisible characters (zero-width spaces,
/// joiners, bidirectional controls) are refused, never quietly taken out.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    /// Normalizes (NFKC, trimmed, lower case) and checks the rough shape `local@domain`
    /// (at most 254 characters).
    ///
    /// ```
    /// use muster_domain::model::Email;
    /// let plain = Email::new("Bob@Example.com").unwrap();
    /// assert_eq!(Email::new("ＢＯＢ＠ｅｘａｍｐｌｅ．ｃｏｍ").unwrap(), plain);
    /// assert!(Email::new("bob\u{200B}@example.com").is_err());
    /// ```
    pub fn new(value: &str) -> Result<Self, ValidationError> {
        let folded = crate::validation::nfkc(&crate::validation::nfkc(value).to_lowercase());
        let value = folded.trim();
        if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ValidationError::new("email must be a valid e-mail address"));
        }
        if value.chars().any(crate::validation::is_invisible) {
            return Err(ValidationError::new(
                "email must not contain invisible characters (zero-width or direction controls)",
            ));
        }
        Self::shaped(value)
    }

    /// An address as stored: trimmed and lower-cased as [`new`](Self::new) always did,
    /// without the later rules (an address stored earlier is still read).
    pub fn stored(value: &str) -> Result<Self, ValidationError> {
        let value = value.trim().to_lowercase();
        if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ValidationError::new("email must be a valid e-mail address"));
        }
        Self::shaped(&value)
    }

    /// Checks the rough shape `local@domain` and the length.
    fn shaped(value: &str) -> Result<Self, ValidationError> {
        let shape_ok = value.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && !domain.is_empty() && !domain.contains('@')
        });
        if !shape_ok || value.len() > 254 {
            return Err(ValidationError::new("email must be a valid e-mail address"));
        }
        Ok(Self(value.to_owned()))
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

/// A human user of an organization. Its `Debug` leaves out the password hash and the
/// sealed second-factor secrets.
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
    /// Whether the address was verified (by an identity provider).
    pub email_verified: bool,
    /// Time-based one-time passwords (decision D-15).
    pub totp: TotpSettings,
    /// Last successful login.
    pub last_login_at: Option<OffsetDateTime>,
    /// When it was created.
    pub created_at: OffsetDateTime,
}

impl User {
    /// A new user with no login history and no second factor.
    pub fn new(
        id: UserId,
        org_id: OrgId,
        email: Email,
        name: String,
        role: UserRole,
        password_hash: String,
        created_at: OffsetDateTime,
    ) -> Self {
        Self {
            id,
            org_id,
            email,
            name,
            role,
            password_hash,
            email_verified: false,
            totp: TotpSettings::default(),
            last_login_at: None,
            created_at,
        }
    }
}

impl std::fmt::Debug for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("User")
            .field("id", &self.id)
            .field("org_id", &self.org_id)
            .field("email", &self.email)
            .field("name", &self.name)
            .field("role", &self.role)
            .field("totp_enabled", &self.totp.enabled)
            .field("created_at", &self.created_at)
            .finish_non_exhaustive()
    }
}

/// A user's second factor (decision D-15). Secrets are sealed for storage by the
/// credential adapter, bound to the user, and never leave it in the clear.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TotpSettings {
    /// Whether logins need a code.
    pub enabled: bool,
    /// The sealed secret in use, when enabled.
    pub secret: Option<Vec<u8>>,
    /// The sealed secret of a setup not yet verified.
    pub pending_secret: Option<Vec<u8>>,
    /// The last time step accepted: a code of that step or before is not accepted again.
    pub last_step: Option<i64>,
}

impl std::fmt::Debug for TotpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TotpSettings")
            .field("enabled", &self.enabled)
            .field("last_step", &self.last_step)
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

    #[test]
    fn addresses_that_look_alike_are_one_or_refused() {
        let plain = Email::new("bob@example.com").unwrap();
        // Full-width letters and other compatibility forms are their plain letters.
        for same in [
            "ｂｏｂ@example.com",
            "ＢＯＢ＠ＥＸＡＭＰＬＥ．ＣＯＭ",
            "Bob@Example.com",
            "\u{3000}bob@example.com",
        ] {
            assert_eq!(Email::new(same).unwrap(), plain, "{same:?}");
        }
        // Mathematical capitals fold to plain ones before lower-casing.
        assert_eq!(Email::new("\u{1D401}ob@example.com").unwrap(), plain);
        for hidden in [
            "bob\u{200B}@example.com",
            "b\u{200D}ob@example.com",
            "bob@exa\u{2060}mple.com",
            "\u{FEFF}bob@example.com",
            "bob@\u{202E}moc.elpmaxe",
        ] {
            let err = Email::new(hidden).unwrap_err();
            assert!(err.message().contains("invisible"), "{hidden:?}: {err}");
        }
        // An address stored before these rules is still read as it was.
        assert_eq!(
            Email::stored("ｂｏｂ@example.com").unwrap().as_str(),
            "ｂｏｂ@example.com"
        );
        assert!(Email::stored("bob\u{200B}@example.com").is_ok());
    }

    #[test]
    fn roles_round_trip_their_wire_names_exactly() {
        for (role, wire) in [
            (UserRole::Admin, "admin"),
            (UserRole::Operator, "operator"),
            (UserRole::Viewer, "viewer"),
        ] {
            assert_eq!(role.as_str(), wire);
            assert_eq!(UserRole::parse(wire), Some(role));
        }
        for other in ["", "Admin", "owner", "view"] {
            assert_eq!(UserRole::parse(other), None, "{other:?}");
        }
    }

    #[test]
    fn debug_shows_who_but_no_hash_and_no_second_factor_secret() {
        let mut user = User::new(
            UserId::from_uuid(uuid::Uuid::from_u128(1)),
            OrgId::from_uuid(uuid::Uuid::from_u128(2)),
            Email::new("ada@example.com").unwrap(),
            "Ada".to_owned(),
            UserRole::Operator,
            "$argon2id$v=19$m=19456,t=2,p=1$SECRETHASH".to_owned(),
            OffsetDateTime::UNIX_EPOCH,
        );
        user.totp = TotpSettings {
            enabled: true,
            secret: Some(vec![0xab; 4]),
            pending_secret: Some(vec![0xcd; 4]),
            last_step: Some(42),
        };
        let debug = format!("{user:?}");
        for shown in [
            "ada@example.com",
            "\"Ada\"",
            "Operator",
            "totp_enabled: true",
        ] {
            assert!(debug.contains(shown), "{shown} missing from {debug}");
        }
        assert!(!debug.contains("SECRETHASH"), "{debug}");
        let totp = format!("{:?}", user.totp);
        assert_eq!(
            totp,
            "TotpSettings { enabled: true, last_step: Some(42), .. }"
        );
        assert!(!debug.contains("171") && !debug.contains("205"), "{debug}");
    }
}
