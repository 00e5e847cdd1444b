//! `muster bootstrap`: a new organization with its first admin and HR agent.

use std::sync::Arc;

use anyhow::{Context, anyhow};
use muster_auth::keys::{ServerKey, generate_agent_secret};
use muster_auth::password::{PasswordCost, hash_password_at};
use muster_domain::model::{AgentHandle, AgentSecret, Email, OrgName, Password};
use muster_domain::service::{BootstrapRequest, BootstrapService, Conflict, ServiceError};
use muster_persistence::Database;
use serde::Serialize;
use uuid::Uuid;

use crate::adapters::{SystemClock, UuidV7Ids};

/// What the command was asked for.
#[derive(Clone)]
pub struct BootstrapInput {
    /// Organization name.
    pub org_name: String,
    /// First admin's e-mail.
    pub admin_email: String,
    /// First admin's password.
    pub admin_password: String,
    /// HR agent `agentId`; default `hr-<org slug>`.
    pub hr_agent_id: Option<String>,
    /// Credits granted to the new organization's treasury (0: none).
    pub treasury: i64,
    /// What the admin's password hash costs.
    pub password_cost: PasswordCost,
}

/// The one JSON object the command prints.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapOutput {
    /// The new organization.
    pub org_id: Uuid,
    /// Its admin.
    pub admin_user: AdminUser,
    /// Its HR agent, with the only copy of the signing secret.
    pub hr_agent: HrAgent,
}

/// `adminUser` of the output.
#[derive(Debug, Serialize)]
pub struct AdminUser {
    /// User id.
    pub id: Uuid,
    /// Normalized e-mail.
    pub email: String,
}

/// `hrAgent` of the output. Its `Debug` leaves out the secret.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HrAgent {
    /// Agent UUID.
    pub id: Uuid,
    /// Agent handle (`X-Agent-ID`).
    pub agent_id: String,
    /// Signing secret, 64 hex characters; shown once.
    pub secret: String,
}

/// Validates the input, hashes the password, seals a fresh HR secret and creates
/// everything in one transaction.
pub async fn bootstrap(
    db: &Database,
    key: &ServerKey,
    input: BootstrapInput,
) -> anyhow::Result<BootstrapOutput> {
    let org_name = OrgName::new(&input.org_name).map_err(|e| anyhow!("{e}"))?;
    let admin_email = Email::new(&input.admin_email).map_err(|e| anyhow!("{e}"))?;
    let hr_handle = input
        .hr_agent_id
        .as_deref()
        .map(AgentHandle::new)
        .transpose()
        .map_err(|e| anyhow!("--hr-agent-id: {e}"))?;
    let password = Password::new(&input.admin_password).map_err(|e| anyhow!("admin {e}"))?;
    let cost = input.password_cost;
    let admin_password_hash =
        tokio::task::spawn_blocking(move || hash_password_at(password.expose(), cost))
            .await
            .context("password hashing stopped")?
            .map_err(|e| anyhow!("cannot hash the password: {e}"))?;
    let secret = AgentSecret::new(generate_agent_secret().map_err(|e| anyhow!("{e}"))?);

    let service = BootstrapService::new(
        Arc::new(db.clone()),
        Arc::new(key.secret_cipher()),
        Arc::new(SystemClock),
        Arc::new(UuidV7Ids),
    );
    let request = BootstrapRequest {
        hr_handle,
        treasury: input.treasury,
        ..BootstrapRequest::new(org_name, admin_email, admin_password_hash, secret.clone())
    };
    let created = service.bootstrap(request).await.map_err(|e| match e {
        ServiceError::Conflict(conflict @ Conflict::HandleTaken { .. }) => {
            anyhow!("{conflict}: choose another --hr-agent-id")
        }
        other => anyhow::Error::new(other),
    })?;
    Ok(BootstrapOutput {
        org_id: created.organization.id.as_uuid(),
        admin_user: AdminUser {
            id: created.admin.id.as_uuid(),
            email: created.admin.email.as_str().to_owned(),
        },
        hr_agent: HrAgent {
            id: created.hr_agent.agent.id.as_uuid(),
            agent_id: created.hr_agent.agent.handle.as_str().to_owned(),
            secret: secret.expose().to_owned(),
        },
    })
}

// Hand-written so that the password and the agent secret never reach a log.
impl std::fmt::Debug for BootstrapInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BootstrapInput")
            .field("org_name", &self.org_name)
            .field("admin_email", &self.admin_email)
            .field("hr_agent_id", &self.hr_agent_id)
            .field("treasury", &self.treasury)
            .field("password_cost", &self.password_cost)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for HrAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HrAgent")
            .field("id", &self.id)
            .field("agent_id", &self.agent_id)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for BootstrapOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BootstrapOutput")
            .field("org_id", &self.org_id)
            .field("admin_user", &self.admin_user)
            .field("hr_agent", &self.hr_agent)
            .finish()
    }
}
