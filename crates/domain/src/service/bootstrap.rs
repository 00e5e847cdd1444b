use std::sync::Arc;

use serde_json::Map;

use super::agents::CreditAmount;
use super::treasury::grant_to;
use super::{Conflict, ServiceError};
use crate::ValidationError;
use crate::model::{
    Actor, ActorKind, Agent, AgentCredentials, AgentHandle, AgentId, AgentMode, AgentRegistered,
    AgentRole, AgentSecret, AgentStatus, AuditEvent, Email, Event, EventId, FeePct, Level, OrgId,
    OrgName, Organization, Treasury, TreasuryEntry, User, UserCreated, UserId, UserRole,
};
use crate::ports::{
    AgentsTx, Clock, IdGenerator, LedgerTx, Lock, OrganizationsTx, RepositoryError, SecretSealer,
    UniqueKey, UnitOfWork, WebhooksTx, transact,
};

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
    /// Credits to grant the new organization's treasury (decision D-101):
    /// 0..=1,000,000,000, 0 for none.
    pub treasury: i64,
}

impl BootstrapRequest {
    /// Organization `org_name` with its admin `admin_email` (password already hashed)
    /// and its HR agent's `hr_secret`; the HR agent is `hr-<org slug>` and the treasury
    /// starts empty.
    pub fn new(
        org_name: OrgName,
        admin_email: Email,
        admin_password_hash: String,
        hr_secret: AgentSecret,
    ) -> Self {
        Self {
            org_name,
            admin_email,
            admin_password_hash,
            hr_handle: None,
            hr_secret,
            treasury: 0,
        }
    }
}

/// Everything `muster bootstrap` creates, written together.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrganization {
    /// The organization.
    pub organization: Organization,
    /// Its first admin user.
    pub admin: User,
    /// Its HR agent, with the sealed secret.
    pub hr_agent: AgentCredentials,
    /// Its treasury, with the operator's grant.
    pub treasury: Treasury,
    /// The grant's ledger row, when there is one.
    pub treasury_grant: Option<TreasuryEntry>,
    /// The audit events of the above.
    pub events: Vec<Event>,
}

/// Creating an organization with its first admin user and HR agent.
#[derive(Clone)]
pub struct BootstrapService {
    uow: Arc<dyn UnitOfWork>,
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
        uow: Arc<dyn UnitOfWork>,
        sealer: Arc<dyn SecretSealer>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            uow,
            sealer,
            clock,
            ids,
        }
    }

    /// Creates the organization, an `admin` user and an active HR agent (role `hr`,
    /// level 10) in one transaction. The first organization ever created becomes the
    /// default one (decision D-14). A taken HR `agentId` answers
    /// [`Conflict::HandleTaken`].
    pub async fn bootstrap(&self, req: BootstrapRequest) -> Result<NewOrganization, ServiceError> {
        let new = self.prepare(req)?;
        match store(self.uow.as_ref(), new.clone()).await {
            // Another bootstrap made the first organization between our check and our
            // insert (PostgreSQL runs them side by side). Now there is one: try again,
            // as a non-default organization.
            Err(ServiceError::Conflict(Conflict::Duplicate(UniqueKey::DefaultOrganization))) => {
                store(self.uow.as_ref(), new).await
            }
            other => other,
        }
    }

    /// Builds the rows and their events; whether the organization is the default one is
    /// decided inside the transaction.
    fn prepare(&self, req: BootstrapRequest) -> Result<NewOrganization, ServiceError> {
        if !(0..=CreditAmount::MAX).contains(&req.treasury) {
            return Err(ValidationError::new(format!(
                "treasury must be between 0 and {}",
                CreditAmount::MAX
            ))
            .into());
        }
        let now = self.clock.now();
        let org_id = OrgId::from_uuid(self.ids.new_id());
        let handle = match req.hr_handle {
            Some(handle) => handle,
            None => AgentHandle::new(&default_hr_handle(&req.org_name))?,
        };
        let admin = User::new(
            UserId::from_uuid(self.ids.new_id()),
            org_id,
            req.admin_email,
            "Administrator".into(),
            UserRole::Admin,
            req.admin_password_hash,
            now,
        );
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
            reserved_credits: 0,
            budget_exhausted: false,
            management_fee_pct: FeePct::default(),
            reputation_score: 50,
            metadata: Map::new(),
            created_at: now,
        };
        let encrypted_secret = self
            .sealer
            .seal(agent.id, &req.hr_secret)
            .map_err(ServiceError::internal)?;
        let user_created = AuditEvent::UserCreated(UserCreated {
            email: admin.email.as_str().to_owned(),
            role: admin.role,
        });
        let agent_registered = AuditEvent::AgentRegistered(AgentRegistered {
            agent_id: agent.handle.as_str().to_owned(),
            role: agent.role,
            level: agent.level,
        });
        let mut events: Vec<Event> = [
            (admin.id.as_uuid(), user_created),
            (agent.id.as_uuid(), agent_registered),
        ]
        .iter()
        .map(|(entity, what)| {
            Event::record(
                EventId::from_uuid(self.ids.new_id()),
                org_id,
                None,
                *entity,
                now,
                what,
            )
        })
        .collect();
        let (treasury, treasury_grant) = self.fund(org_id, req.treasury, &mut events, now);
        Ok(NewOrganization {
            organization: Organization {
                id: org_id,
                name: req.org_name,
                is_default: false,
                created_at: now,
            },
            admin,
            hr_agent: AgentCredentials {
                agent,
                encrypted_secret,
            },
            treasury,
            treasury_grant,
            events,
        })
    }
}

impl BootstrapService {
    /// The new organization's treasury with the operator's grant of `amount` (none for
    /// 0), its event added to `events`.
    fn fund(
        &self,
        org_id: OrgId,
        amount: i64,
        events: &mut Vec<Event>,
        now: time::OffsetDateTime,
    ) -> (Treasury, Option<TreasuryEntry>) {
        let mut treasury = Treasury::empty(org_id);
        let operator = Actor {
            org_id,
            kind: ActorKind::System,
        };
        let grant = (amount > 0).then(|| {
            let (entry, event) = grant_to(
                self.ids.as_ref(),
                &operator,
                &mut treasury,
                amount,
                Some("bootstrap".to_owned()),
                now,
            );
            events.push(event);
            entry
        });
        (treasury, grant)
    }
}

/// Writes `new` in one transaction, making it the default organization when it is the
/// first.
async fn store(
    uow: &dyn UnitOfWork,
    mut new: NewOrganization,
) -> Result<NewOrganization, ServiceError> {
    transact(uow, move |tx| {
        Box::pin(async move {
            new.organization.is_default = !tx.any_organization().await?;
            write(tx, &new).await?;
            Ok(new)
        })
    })
    .await
}

async fn write<T: OrganizationsTx + AgentsTx + LedgerTx + WebhooksTx + ?Sized>(
    tx: &mut T,
    new: &NewOrganization,
) -> Result<(), ServiceError> {
    tx.insert_organization(&new.organization).await?;
    tx.insert_user(&new.admin).await?;
    tx.insert_agent(&new.hr_agent)
        .await
        .map_err(|err| match err {
            RepositoryError::Duplicate(UniqueKey::AgentHandle) => {
                ServiceError::from(Conflict::HandleTaken {
                    handle: new.hr_agent.agent.handle.as_str().to_owned(),
                })
            }
            other => other.into(),
        })?;
    // The treasury row is made here (locking it creates it), then funded.
    tx.treasury(new.organization.id, Lock::Update).await?;
    if let Some(grant) = &new.treasury_grant {
        tx.update_treasury(&new.treasury).await?;
        tx.insert_treasury_entries(std::slice::from_ref(grant))
            .await?;
    }
    tx.append_events(&new.events).await?;
    Ok(())
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
