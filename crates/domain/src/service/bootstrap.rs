use std::sync::Arc;

use serde_json::{Map, json};

use super::{Happening, ServiceError, record};
use crate::model::{
    Agent, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentRole, AgentSecret, AgentStatus,
    Email, EventSeverity, FeePct, Level, OrgId, OrgName, Organization, User, UserId, UserRole,
    event_types,
};
use crate::ports::{Clock, IdGenerator, NewOrganization, OrganizationRepository, SecretSealer};

/// Input of `muster bootstrap`, validated; the password arrives already hashed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapRequest {
    /// Name of the new organization.
    pub org_name: OrgName,
    /// Login of its first admin.
    pub admin_email: Email,
    /// Argon2id PHC hash of the admin's password.
    pub admin_password_hash: String,
    /// `agentId` of the HR agent; defaults to `hr-<org slug>`.
    pub hr_handle: Option<AgentHandle>,
    /// The HR agent's new signing secret; sealed for storage by the service.
    pub hr_secret: AgentSecret,
}

/// Creating an organization with its first admin user and HR agent.
#[derive(Clone)]
pub struct BootstrapService {
    orgs: Arc<dyn OrganizationRepository>,
    sealer: Arc<dyn SecretSealer>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for BootstrapService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BootstrapService").finish_non_exhaustive()
    }
}

impl BootstrapService {
    /// Wires the service to its ports.
    pub fn new(
        orgs: Arc<dyn OrganizationRepository>,
        sealer: Arc<dyn SecretSealer>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            orgs,
            sealer,
            clock,
            ids,
        }
    }

    /// Creates the organization, an `admin` user and an active HR agent (role `hr`,
    /// level 10) in one change. The first organization ever created becomes the
    /// default one (decision D-14). A taken HR `agentId` answers a conflict.
    pub async fn bootstrap(&self, req: BootstrapRequest) -> Result<NewOrganization, ServiceError> {
        let now = self.clock.now();
        let org_id = OrgId::from_uuid(self.ids.new_id());
        let is_default = !self.orgs.any_exists().await?;
        let handle = match req.hr_handle {
            Some(handle) => handle,
            None => AgentHandle::new(&default_hr_handle(&req.org_name))?,
        };
        let admin = User {
            id: UserId::from_uuid(self.ids.new_id()),
            org_id,
            name: "Administrator".into(),
            email: req.admin_email,
            role: UserRole::Admin,
            password_hash: req.admin_password_hash,
            created_at: now,
        };
        let agent = Agent {
            id: AgentId::from_uuid(self.ids.new_id()),
            org_id,
            name: format!("HR of {}", req.org_name.as_str()),
            handle,
            level: Level::MAX,
            model: None,
            role: AgentRole::Hr,
            mode: AgentMode::Worker,
            status: AgentStatus::Active,
            parent_id: None,
            current_balance: 0,
            budget_period_limit: None,
            budget_period_spent: 0,
            budget_period_start: now,
            management_fee_pct: FeePct::default(),
            reputation_score: 50,
            metadata: Map::new(),
            created_at: now,
        };
        let encrypted_secret = self
            .sealer
            .seal(agent.id, &req.hr_secret)
            .map_err(|e| ServiceError::Internal(e.to_string()))?;
        let events = vec![
            record(
                self.ids.as_ref(),
                org_id,
                None,
                now,
                Happening {
                    event_type: event_types::USER_CREATED,
                    entity_type: "user",
                    entity_id: admin.id.as_uuid(),
                    severity: EventSeverity::Info,
                    payload: json!({ "email": admin.email.as_str(), "role": admin.role.as_str() }),
                },
            ),
            record(
                self.ids.as_ref(),
                org_id,
                None,
                now,
                Happening {
                    event_type: event_types::AGENT_REGISTERED,
                    entity_type: "agent",
                    entity_id: agent.id.as_uuid(),
                    severity: EventSeverity::Info,
                    payload: json!({ "agentId": agent.handle.as_str(), "role": "hr", "level": 10 }),
                },
            ),
        ];
        let new = NewOrganization {
            organization: Organization {
                id: org_id,
                name: req.org_name,
                is_default,
                created_at: now,
            },
            admin,
            hr_agent: AgentCredentials {
                agent,
                encrypted_secret,
            },
            events,
        };
        self.orgs.create(&new).await?;
        Ok(new)
    }
}

/// `hr-<slug>`, cut to fit the 100-character limit of an `agentId`.
fn default_hr_handle(org_name: &OrgName) -> String {
    let slug = org_name.slug();
    let room = AgentHandle::MAX_CHARS - "hr-".len();
    let cut: String = slug.chars().take(room).collect();
    format!("hr-{}", cut.trim_end_matches('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_handle_fits_an_agent_id() {
        let long = OrgName::new(&"Acme ".repeat(50)).unwrap();
        let handle = default_hr_handle(&long);
        assert!(handle.len() <= AgentHandle::MAX_CHARS);
        assert!(AgentHandle::new(&handle).is_ok());
        assert!(!handle.ends_with('-'));
        assert_eq!(
            default_hr_handle(&OrgName::new("Acme Corp").unwrap()),
            "hr-acme-corp"
        );
    }
}
