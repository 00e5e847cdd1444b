//! Inbound webhook keys (decision D-80): a URL credential with which another system
//! creates tasks in the organization, with the defaults those tasks get.

use time::OffsetDateTime;

use super::{AgentId, HookName, InboundKeyId, OrgId, Tags, TaskPriority};

/// An inbound webhook key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundKey {
    /// Identity.
    pub id: InboundKeyId,
    /// Its organization: where its tasks are created.
    pub org_id: OrgId,
    /// What its owners call it.
    pub name: HookName,
    /// The credential in the URL: `iwk_` and 64 lowercase hex characters.
    pub key: String,
    /// The body-signing secret, sealed (`SecretVault` purpose
    /// [`InboundKey::SECRET_PURPOSE`]).
    pub sealed_secret: Vec<u8>,
    /// Assignee of tasks that name none.
    pub default_agent_id: Option<AgentId>,
    /// Priority of tasks that name none.
    pub default_priority: TaskPriority,
    /// Tags every task gets (before its own).
    pub default_tags: Tags,
    /// Whether requests with it are accepted.
    pub enabled: bool,
    /// When a request last created tasks with it.
    pub last_used_at: Option<OffsetDateTime>,
    /// When it was created.
    pub created_at: OffsetDateTime,
    /// When it last changed.
    pub updated_at: OffsetDateTime,
}

impl InboundKey {
    /// The `SecretVault` purpose its secret is sealed under.
    pub const SECRET_PURPOSE: &'static str = "inbound_webhook";
    /// What every key starts with.
    pub const PREFIX: &'static str = "iwk_";

    /// Whether `value` has the shape of a key (`iwk_` + 64 lowercase hex), checked before
    /// any lookup.
    ///
    /// ```
    /// use muster_domain::model::InboundKey;
    /// assert!(InboundKey::is_key(&format!("iwk_{}", "a1".repeat(32))));
    /// assert!(!InboundKey::is_key("iwk_ABC"));
    /// ```
    pub fn is_key(value: &str) -> bool {
        value.strip_prefix(Self::PREFIX).is_some_and(|hex| {
            hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_the_prefix_and_64_lowercase_hex_digits() {
        let hex = "0123456789abcdef".repeat(4);
        assert!(InboundKey::is_key(&format!("iwk_{hex}")));
        for bad in [
            String::new(),
            "iwk_".to_owned(),
            format!("iwk_{}", &hex[..63]),
            format!("iwk_{hex}0"),
            format!("iwk_{}", hex.to_uppercase()),
            format!("iwk_{}g", &hex[..63]),
            format!("msk_{hex}"),
            format!("IWK_{hex}"),
            "iwk_abc".to_owned(),
        ] {
            assert!(!InboundKey::is_key(&bad), "{bad:?}");
        }
    }
}
